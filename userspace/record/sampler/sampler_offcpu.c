// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --off-cpu (see struct perch_offcpu_start): the sampler's program on sched_switch and the
 * drain of its off-CPU maps. A thread's key is named at the drain of the buffer it left the CPU
 * in (a key with no count); its blocked time lands in the off-CPU map of the buffer active when
 * it runs again, periods later for a long block. So every key a drain names is kept here, key
 * bytes to key id (the latest naming wins: a frame-pointer stack id is a bucket in a stack map
 * that is cleared every drain), and each off-CPU entry goes with its key id and nanoseconds to
 * the off-CPU function (the recording's OFFCPU block). Memory follows the distinct keys, as the
 * recording's keys do. With --timeline each block also comes as a span through the `offspans`
 * ring (struct perch_offspan): read at every drain, a span of the drained buffer gets its key id
 * then, one of the other buffer waits for that buffer's drain, and each goes to the span
 * function (the recording's OFFSPANS block). A switch-out in its process's early window
 * (PERCH_KEY_EARLY: its stack waits for the process's tables) is named when sampler_early.c has
 * walked it, at most PERCH_EARLY_NS later: its blocks and spans wait for that (held, bounded).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "sampler_impl.h"
#include "sampler_offcpu.h"

struct named_key {
	struct perch_key key;
	uint32_t id;
};

extern const struct sampler_part sampler_offcpu_part;

#define SPAN_RING_MIN (256u * 1024) /* bytes */
/* Blocks (and spans) of early keys waiting for their names at most; more count as unkeyed. */
#define HELD_MAX      65536
#define SPAN_RING_MAX (64u * 1024 * 1024) /* bytes */

struct offcpu_probe {
	struct perch_key *keys; /* one drain's entries */
	uint64_t *vals;
	struct perch_key *held_keys; /* early keys' blocks waiting for their names */
	uint64_t *held_vals;
	size_t nheld, cap_held, cap_held_vals;
	struct named_key *named; /* every key named so far */
	size_t nnamed, cap_named;
	struct u64map named_tab; /* key hash -> index in named */
	sampler_offcpu_fn fn;
	void *ctx;
	uint64_t unkeyed;
	struct ring_buffer *rb;	       /* --timeline: the block spans */
	struct perch_offspan *waiting; /* read, not yet drained: of the other buffer */
	size_t nwaiting, capwaiting;
	sampler_offspan_fn span_fn;
	void *span_ctx;
	uint64_t spans, spans_unkeyed;
};

/* Its state (sampler_part_state()), or NULL: no --off-cpu. */
static struct offcpu_probe *probe(const struct sampler *sp)
{
	return sampler_part_state(sp, &sampler_offcpu_part);
}

/* Room for the spans of 64k blocks a drain period (a context-switch-heavy target blocks ~100k
 * times a second: the drain comes ten times a second), times the CPUs' share of it. */
static __u32 span_ring_size(const struct sampler *sp)
{
	uint64_t need = (uint64_t)(sp->ncpus > 0 ? sp->ncpus : 1) * 16384 *
			(sizeof(struct perch_offspan) + 8);
	__u32 size = SPAN_RING_MIN;

	while (size < need && size < SPAN_RING_MAX)
		size *= 2;
	return size;
}

/* Before loading: its program and maps on or off. */
static void offcpu_setup(struct sampler *sp)
{
	bool on = sp->o->off_cpu;

	struct sample_bpf *skel = sp->skel;

	skel->rodata->off_cpu_min_ns = sp->o->off_cpu_min_ns;
	bpf_map__set_max_entries(skel->maps.offspans,
				 on && sp->timeline ? span_ring_size(sp) : 4096);
	if (on)
		return;
	bpf_program__set_autoload(skel->progs.on_switch, false);
	bpf_map__set_max_entries(skel->maps.offcpu_start, 1);
	bpf_map__set_max_entries(skel->maps.offcpu0, 1);
	bpf_map__set_max_entries(skel->maps.offcpu1, 1);
}

static int on_span(void *ctx, void *data, size_t len)
{
	struct offcpu_probe *oc = ctx;

	if (len < sizeof(struct perch_offspan) ||
	    vec_grow(&oc->waiting, &oc->capwaiting, oc->nwaiting + 1, sizeof(*oc->waiting), 256)) {
		oc->spans_unkeyed++;
		return 0;
	}
	memcpy(&oc->waiting[oc->nwaiting++], data, sizeof(struct perch_offspan));
	return 0;
}

/* After loading: its buffers (0 or the enum perch_exit, logged). */
static int offcpu_open(struct sampler *sp)
{
	struct offcpu_probe *oc;

	if (!sp->o->off_cpu)
		return 0;
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return PERCH_EXIT_INTERNAL;
	sampler_part_set_state(sp, &sampler_offcpu_part, oc);
	oc->keys = calloc(PERCH_COUNT_ENTRIES, sizeof(*oc->keys));
	oc->vals = calloc(PERCH_COUNT_ENTRIES, sizeof(*oc->vals));
	if (!oc->keys || !oc->vals)
		return PERCH_EXIT_INTERNAL;
	if (!sp->timeline)
		return 0;
	oc->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.offspans), on_span, oc, NULL);
	if (!oc->rb) {
		log_err("off-CPU span ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

void sampler__on_off_cpu(struct sampler *sp, sampler_offcpu_fn fn, void *ctx)
{
	struct offcpu_probe *oc = probe(sp);

	if (!oc)
		return;
	oc->fn = fn;
	oc->ctx = ctx;
}

uint64_t sampler__off_cpu_unkeyed(const struct sampler *sp)
{
	const struct offcpu_probe *oc = probe(sp);

	return oc ? oc->unkeyed : 0;
}

void sampler__on_off_span(struct sampler *sp, sampler_offspan_fn fn, void *ctx)
{
	struct offcpu_probe *oc = probe(sp);

	if (!oc)
		return;
	oc->span_fn = fn;
	oc->span_ctx = ctx;
}

uint64_t sampler__off_spans(const struct sampler *sp)
{
	const struct offcpu_probe *oc = probe(sp);

	return oc ? oc->spans : 0;
}

uint64_t sampler__off_spans_unkeyed(const struct sampler *sp)
{
	const struct offcpu_probe *oc = probe(sp);

	return oc ? oc->spans_unkeyed : 0;
}

static void offcpu_free(struct sampler *sp)
{
	struct offcpu_probe *oc = probe(sp);

	if (!oc)
		return;
	free(oc->keys);
	free(oc->vals);
	free(oc->named);
	free(oc->held_keys);
	free(oc->held_vals);
	u64map__clear(&oc->named_tab);
	ring_buffer__free(oc->rb);
	free(oc->waiting);
	free(oc);
	sampler_part_set_state(sp, &sampler_offcpu_part, NULL);
}

static uint64_t key_hash(const struct perch_key *key)
{
	return fnv64_bytes(FNV64_OFFSET, key, sizeof(*key));
}

/* The key id last given to key's bytes, or SAMPLER_NO_KEY. */
static uint32_t named_id(const struct offcpu_probe *oc, const struct perch_key *key)
{
	uint64_t i;

	if (!u64map__get(&oc->named_tab, key_hash(key), &i) || i >= oc->nnamed ||
	    memcmp(&oc->named[i].key, key, sizeof(*key)))
		return SAMPLER_NO_KEY;
	return oc->named[i].id;
}

/* Key named id (a hash shared by two different keys keeps the first). */
static void name_key(struct offcpu_probe *oc, const struct perch_key *key, uint32_t id)
{
	uint64_t h = key_hash(key), i;

	if (u64map__get(&oc->named_tab, h, &i)) {
		if (i < oc->nnamed && !memcmp(&oc->named[i].key, key, sizeof(*key)))
			oc->named[i].id = id;
		return;
	}
	if (vec_grow(&oc->named, &oc->cap_named, oc->nnamed + 1, sizeof(*oc->named), 256) ||
	    u64map__put(&oc->named_tab, h, oc->nnamed))
		return; /* its blocks count as unkeyed */
	oc->named[oc->nnamed++] = (struct named_key){*key, id};
}

/* Read every (key, ns) of the idle off-CPU map and delete it. */
static size_t take_offcpu(struct offcpu_probe *oc, int map_fd)
{
	__u32 count = PERCH_COUNT_ENTRIES;
	struct perch_key cursor, *prev = NULL;
	size_t n = 0;
	int err;

	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, &cursor, oc->keys, oc->vals, &count,
					      NULL);
	if (err == 0 || errno == ENOENT)
		return count;
	/* No batch operations on this kernel: one key at a time. */
	while (n < PERCH_COUNT_ENTRIES && bpf_map_get_next_key(map_fd, prev, &oc->keys[n]) == 0) {
		if (bpf_map_lookup_elem(map_fd, &oc->keys[n], &oc->vals[n]) == 0)
			n++;
		cursor = oc->keys[n ? n - 1 : 0];
		prev = &cursor;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &oc->keys[i]);
	return n;
}

/* An early key with no name yet: not at the last drain, it waits. */
static bool unnamed_early(const struct perch_key *key, uint32_t id, bool last)
{
	return id == SAMPLER_NO_KEY && (key->flags & PERCH_KEY_EARLY) && !last;
}

/* The spans read so far: those of buffer `which` to their key ids (named by now), the others
 * kept for their buffer's drain (or, an early key's, for its name). */
static void spans_drained(struct offcpu_probe *oc, unsigned int which, bool last)
{
	size_t kept = 0;

	if (!oc->rb)
		return;
	ring_buffer__consume(oc->rb);
	for (size_t i = 0; i < oc->nwaiting; i++) {
		const struct perch_offspan *o = &oc->waiting[i];
		uint32_t key;

		if (o->buf != which && !last) {
			oc->waiting[kept++] = *o;
			continue;
		}
		key = named_id(oc, &o->key);
		if (unnamed_early(&o->key, key, last) && kept < HELD_MAX) {
			oc->waiting[kept++] = *o;
			continue;
		}
		if (key == SAMPLER_NO_KEY) {
			oc->spans_unkeyed++;
			continue;
		}
		oc->spans++;
		if (oc->span_fn)
			oc->span_fn(oc->span_ctx, key, o->start_ns, o->end_ns);
	}
	oc->nwaiting = kept;
}

void sampler_offcpu_early_named(struct sampler *sp, const struct perch_key *key, uint32_t id)
{
	struct offcpu_probe *oc = probe(sp);

	if (oc && id != SAMPLER_NO_KEY)
		name_key(oc, key, id);
}

/* key's ns blocked to its key id; an early key not named yet held for a later drain. */
static void block_drained(struct offcpu_probe *oc, const struct perch_key *key, uint64_t ns,
			  bool last)
{
	uint32_t id = named_id(oc, key);

	if (unnamed_early(key, id, last) && oc->nheld < HELD_MAX &&
	    !vec_grow(&oc->held_keys, &oc->cap_held, oc->nheld + 1, sizeof(*oc->held_keys), 64) &&
	    !vec_grow(&oc->held_vals, &oc->cap_held_vals, oc->nheld + 1, sizeof(*oc->held_vals),
		      64)) {
		oc->held_keys[oc->nheld] = *key;
		oc->held_vals[oc->nheld++] = ns;
		return;
	}
	if (id == SAMPLER_NO_KEY) {
		oc->unkeyed++;
		return;
	}
	if (oc->fn)
		oc->fn(oc->ctx, id, ns);
}

/* The drain of buffer `which`: its keys named, its blocked times to their key ids (and the
 * held ones' whose early keys got their names since). */
static void offcpu_drained(struct sampler *sp, const struct sampler_drain *d)
{
	struct offcpu_probe *oc = probe(sp);
	struct bpf_map *map;
	size_t m, nheld;

	if (!oc)
		return;
	for (size_t i = 0; i < d->n; i++) {
		if (d->key_ids[i] != SAMPLER_NO_KEY)
			name_key(oc, &sp->keys[i], d->key_ids[i]);
	}
	nheld = oc->nheld;
	oc->nheld = 0;
	for (size_t i = 0; i < nheld; i++) { /* held again in place: i >= oc->nheld */
		struct perch_key key = oc->held_keys[i];

		block_drained(oc, &key, oc->held_vals[i], d->last);
	}
	map = d->which ? sp->skel->maps.offcpu1 : sp->skel->maps.offcpu0;
	m = take_offcpu(oc, bpf_map__fd(map));
	for (size_t i = 0; i < m; i++)
		block_drained(oc, &oc->keys[i], oc->vals[i], d->last);
	spans_drained(oc, d->which, d->last);
}

const struct sampler_part sampler_offcpu_part = {
	.name = "off-CPU",
	.setup = offcpu_setup,
	.open = offcpu_open,
	.drained = offcpu_drained,
	.free = offcpu_free,
};
