// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFCPU block (recording.h): each key's off-CPU nanoseconds so far (`perch record
 * --off-cpu`), written by the writer as totals change, loaded by the reader into
 * rec_sample.offcpu_ns. Both sides here: the block is small and only --off-cpu makes it.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_OFFCPU 2 /* key, ns: a byte each at least */

/* The writer's side, in w->state[REC_OFFCPU]. */
struct wr_offcpu {
	uint64_t *ns;	/* by key: off-CPU ns so far */
	uint8_t *dirty; /* by key: changed since its last OFFCPU block */
	size_t n, cap;
};

static_assert(REC_OFFCPU < WR_STATES, "the writer's state slots");

/* Room for key (its total and dirty flag zeroed); NULL: out of memory. */
static struct wr_offcpu *room(struct rec_writer *w, uint32_t key)
{
	struct wr_offcpu *o = w->state[REC_OFFCPU];
	size_t cap;

	if (!o && !(o = w->state[REC_OFFCPU] = calloc(1, sizeof(*o))))
		return NULL;
	if (key < o->n)
		return o;
	cap = o->cap;
	if (vec_grow(&o->ns, &o->cap, key + 1, sizeof(*o->ns), 64) ||
	    vec_grow(&o->dirty, &cap, key + 1, sizeof(*o->dirty), 64))
		return NULL;
	for (size_t i = o->n; i <= key; i++) {
		o->ns[i] = 0;
		o->dirty[i] = 0;
	}
	o->n = key + 1;
	return o;
}

int rec_writer__offcpu(struct rec_writer *w, uint32_t key, uint64_t ns)
{
	struct wr_offcpu *o;

	if (!w || key >= w->nkeys)
		return -EINVAL;
	if (w->err)
		return w->err;
	o = room(w, key);
	if (!o)
		return -ENOMEM;
	if (!ns)
		return 0;
	o->ns[key] = o->ns[key] + ns < ns ? UINT64_MAX : o->ns[key] + ns;
	o->dirty[key] = 1;
	return 0;
}

/* The totals that changed since the last block (all: every nonzero total, for compaction). */
static int write_offcpu(struct rec_writer *w, bool all)
{
	struct wr_offcpu *o = w->state[REC_OFFCPU];
	uint32_t n = 0;
	int err;

	if (!o)
		return 0;
	err = wr_block_start(&w->block);
	for (size_t k = 0; !err && k < o->n; k++) {
		if (!o->ns[k] || (!all && !o->dirty[k]))
			continue;
		if (buf_reserve(&w->block, 2 * ULEB_MAX))
			return -ENOMEM;
		put_uleb(&w->block, k);
		put_uleb(&w->block, o->ns[k]);
		o->dirty[k] = 0;
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
	struct wr_offcpu *o = w->state[REC_OFFCPU];

	if (!o)
		return;
	free(o->ns);
	free(o->dirty);
	free(o);
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
