// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ORIGINS block (recording.h): which recording each process of a merged file came from,
 * written by `perch merge` through the writer, loaded by the reader. Both sides here: the block
 * is small and only perch merge makes it.
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_ORIGIN 3 /* pid, origin, source pid: a byte each at least */

int rec_writer__origin(struct rec_writer *w, uint32_t pid, uint32_t origin, uint32_t source_pid)
{
	uint64_t known;

	if (!w || !origin || origin >= w->nstrs)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (u64map__get(&w->origin_tab, pid, &known))
		return -EEXIST;
	if (vec_grow(&w->origins, &w->cap_origins, w->norigins + 1, sizeof(*w->origins), 16) ||
	    u64map__put(&w->origin_tab, pid, w->norigins))
		return -ENOMEM;
	w->origins[w->norigins++] = (struct rec_origin){pid, origin, source_pid};
	return 0;
}

static int put_origin(struct rec_writer *w, size_t i)
{
	if (buf_reserve(&w->block, 3 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(&w->block, w->origins[i].pid);
	put_uleb(&w->block, w->origins[i].origin);
	put_uleb(&w->block, w->origins[i].source_pid);
	return 0;
}

/* After the strings they name (a row of writer_blocks.c's table after the definitions). */
static int flush_origins(struct rec_writer *w)
{
	return wr_write_range(w, REC_ORIGINS, &w->origins_done, w->norigins, put_origin);
}

static void restart_origins(struct rec_writer *w, bool in_file)
{
	w->origins_done = in_file ? w->norigins : 0;
}

static void free_origins(struct rec_writer *w)
{
	free(w->origins);
	u64map__clear(&w->origin_tab);
}

const struct wr_block wr_origins_block = {REC_ORIGINS, flush_origins, NULL, restart_origins,
					  free_origins};

int parse_origins(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	size_t before = r->norigins;
	uint32_t n;

	if (!cur_count(c, MIN_ORIGIN, &n))
		return -EBADMSG;
	if (vec_grow(&r->origins, &L->cap_origins, r->norigins + n, sizeof(*r->origins), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct rec_origin *o = &r->origins[r->norigins];

		if (!cur_uleb32(c, &o->pid) || !cur_uleb32(c, &o->origin) ||
		    !cur_uleb32(c, &o->source_pid) || !o->origin || o->origin >= r->nstrings) {
			r->norigins = before; /* a damaged block adds nothing */
			return -EBADMSG;
		}
		r->norigins++;
	}
	if (c->left)
		r->norigins = before;
	return c->left ? -EBADMSG : 0;
}

const struct rec_origin *recording__origin(const struct recording *r, uint32_t pid)
{
	for (size_t i = 0; r && i < r->norigins; i++) {
		if (r->origins[i].pid == pid)
			return &r->origins[i];
	}
	return NULL;
}
