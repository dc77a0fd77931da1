// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: the region stacks of samples (see regions_impl.h). The sampler keys each
 * sample by the hash of its thread's region stack and keeps the stack (name ids of the runtime)
 * in a map; here a hash becomes the names' string ids in the recording, each stack read from the
 * map once and each name made a string once per process.
 */
#include <bpf/bpf.h>
#include "lib/vec.h"
#include "regions_impl.h"

static const struct perch_rstack *get_stack(struct regions *rg, uint64_t hash)
{
	struct perch_rstack st;
	uint64_t idx;

	if (u64map__get(&rg->stack_index, hash, &idx))
		return &rg->stacks[idx];
	if (bpf_map_lookup_elem(rg->stacks_fd, &hash, &st))
		return NULL;
	if (vec_grow(&rg->stacks, &rg->capstacks, rg->nstacks + 1, sizeof(*rg->stacks), 16))
		return NULL;
	if (u64map__put(&rg->stack_index, hash, rg->nstacks))
		return NULL;
	rg->stacks[rg->nstacks] = st;
	return &rg->stacks[rg->nstacks++];
}

/* Where name id's string is cached: by id, and the names beyond the table at 0. */
static uint32_t *string_slot(struct rproc *p, uint32_t id)
{
	if (!p->name_strs || (id > p->nnames && id != PERCH_NAME_TOO_MANY))
		return NULL;
	return &p->name_strs[id == PERCH_NAME_TOO_MANY ? 0 : id];
}

uint32_t regions_name_string(struct regions *rg, struct rproc *p, uint32_t id)
{
	uint32_t str, *slot;

	if (id > p->nnames && id <= PERCH_MAX_NAMES) {
		regions_read_registry(p);
		regions_read_names(p);
	}
	slot = string_slot(p, id);
	if (slot && *slot)
		return *slot;
	str = rec_writer__string(rg->w, regions_name_of(p, id));
	if (slot)
		*slot = str;
	return str;
}

uint32_t regions__names(struct regions *rg, uint32_t pid, uint64_t hash, uint32_t *out,
			uint32_t max)
{
	const struct perch_rstack *st;
	struct rproc *p;
	uint32_t n, k = 0;

	if (!rg || !hash)
		return 0;
	p = regions_find_proc(rg, pid);
	st = get_stack(rg, hash);
	if (!p || !st)
		return 0;
	n = st->depth < PERCH_REGION_DEPTH ? st->depth : PERCH_REGION_DEPTH;
	for (uint32_t i = 0; i < n && k < max; i++) {
		uint32_t str = regions_name_string(rg, p, st->ids[i]);

		if (str)
			out[k++] = str;
	}
	return k;
}
