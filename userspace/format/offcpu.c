// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFCPU block (recording.h): each key's off-CPU nanoseconds so far (`perch record
 * --off-cpu`), written by the writer as totals change, loaded by the reader into
 * rec_sample.offcpu_ns. Both sides here: the block is small and only --off-cpu makes it.
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_OFFCPU 2 /* key, ns: a byte each at least */

int rec_writer__offcpu(struct rec_writer *w, uint32_t key, uint64_t ns)
{
	size_t cap;

	if (!w || key >= w->nkeys)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (key >= w->noffcpu) {
		cap = w->cap_offcpu;
		if (vec_grow(&w->offcpu, &w->cap_offcpu, key + 1, sizeof(*w->offcpu), 64) ||
		    vec_grow(&w->offcpu_dirty, &cap, key + 1, sizeof(*w->offcpu_dirty), 64))
			return -ENOMEM;
		for (size_t i = w->noffcpu; i <= key; i++) {
			w->offcpu[i] = 0;
			w->offcpu_dirty[i] = 0;
		}
		w->noffcpu = key + 1;
	}
	if (!ns)
		return 0;
	w->offcpu[key] = w->offcpu[key] + ns < ns ? UINT64_MAX : w->offcpu[key] + ns;
	w->offcpu_dirty[key] = 1;
	return 0;
}

/* The totals that changed since the last block (all: every nonzero total, for compaction). */
static int write_offcpu(struct rec_writer *w, bool all)
{
	uint32_t n = 0;
	int err = wr_block_start(&w->block);

	for (size_t k = 0; !err && k < w->noffcpu; k++) {
		if (!w->offcpu[k] || (!all && !w->offcpu_dirty[k]))
			continue;
		if (buf_reserve(&w->block, 2 * ULEB_MAX))
			return -ENOMEM;
		put_uleb(&w->block, k);
		put_uleb(&w->block, w->offcpu[k]);
		w->offcpu_dirty[k] = 0;
		n++;
	}
	if (err || !n)
		return err;
	return wr_write_block(w, REC_OFFCPU, &w->block, n);
}

/* After KEYS (its row of writer_blocks.c's table): only keys the file defines. */
static int flush_offcpu(struct rec_writer *w)
{
	return write_offcpu(w, false);
}

static int rewrite_offcpu(struct rec_writer *w, const struct wr_rewrite *rw)
{
	(void)rw;
	return write_offcpu(w, true);
}

static void free_offcpu(struct rec_writer *w)
{
	free(w->offcpu);
	free(w->offcpu_dirty);
}

const struct wr_block wr_offcpu_block = {REC_OFFCPU, flush_offcpu, rewrite_offcpu, NULL,
					 free_offcpu};

/* A later block's total replaces an earlier one's: totals only grow. */
int parse_offcpu(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n, key;
	uint64_t ns;

	struct cur check;

	if (!cur_count(c, MIN_OFFCPU, &n))
		return -EBADMSG;
	check = *c; /* checked whole first: a damaged block changes nothing */
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_uleb32(&check, &key) || !cur_uleb(&check, &ns) || key >= L->nkeys)
			return -EBADMSG;
	}
	if (check.left)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		cur_uleb32(c, &key);
		cur_uleb(c, &ns);
		r->samples[L->key_sample[key]].offcpu_ns = ns;
	}
	return 0;
}
