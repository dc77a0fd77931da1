// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFSPANS block (recording.h): each off-CPU block of `perch record --timeline --off-cpu`
 * as a timed span of its key, the time axis of OFFCPU's totals. Both sides here, as OFFCPU's:
 * the writer appends spans to a pending block under the --max-size cap the timeline shares (its
 * blocks are copied as they are when the file is compacted), the reader loads them into
 * recording.offspans, sorted by start (model/sampleset.c turns them into off-CPU or wall time
 * per window for `perch report --view=off|wall`).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_OFFSPAN 3 /* key, start delta, duration: a byte each at least */

/* The writer's side, in w->state[REC_OFFSPANS]. */
struct wr_offspans {
	struct buf pending; /* the pending OFFSPANS block */
	uint32_t n;
	uint64_t last, dropped;
};

static_assert(REC_OFFSPANS < WR_STATES, "the writer's state slots");

int rec_writer__offspan(struct rec_writer *w, uint32_t key, uint64_t start_ns, uint64_t end_ns)
{
	uint8_t bytes[3 * ULEB_MAX];
	struct buf e = {bytes, 0, sizeof(bytes)};
	struct wr_offspans *o;
	int err;

	if (!w || key >= w->nkeys || end_ns < start_ns)
		return -EINVAL;
	if (w->err)
		return w->err;
	o = w->state[REC_OFFSPANS];
	if (!o && !(o = w->state[REC_OFFSPANS] = calloc(1, sizeof(*o))))
		return -ENOMEM;
	err = wr_time_ok(w, start_ns);
	if (err)
		return err;
	put_uleb(&e, key);
	put_sleb(&e, (int64_t)(start_ns - (o->pending.len ? o->last : 0)));
	put_uleb(&e, end_ns - start_ns);
	err = wr_timeline_room(w, &e, &o->dropped);
	if (!err)
		err = wr_timeline_add(w, &o->pending, &o->n, &e);
	if (!err)
		o->last = start_ns;
	return err;
}

uint64_t rec_writer__offspans_dropped(const struct rec_writer *w)
{
	const struct wr_offspans *o = w ? w->state[REC_OFFSPANS] : NULL;

	return o ? o->dropped : 0;
}

/* Its pending block, under the timeline's cap; copied as it is into a compacted file (with the
 * TIMELINE row's blocks). */
static int flush_offspans(struct rec_writer *w)
{
	struct wr_offspans *o = w->state[REC_OFFSPANS];

	return o ? wr_timeline_write(w, REC_OFFSPANS, &o->pending, &o->n) : 0;
}

static void free_offspans(struct rec_writer *w)
{
	struct wr_offspans *o = w->state[REC_OFFSPANS];

	if (!o)
		return;
	free(o->pending.data);
	free(o);
}

const struct wr_block wr_offspans_block = {REC_OFFSPANS, flush_offspans, NULL, NULL, free_offspans};

/* A span's start: the one before plus a signed delta, never out of u64's range. */
static bool read_span(struct cur *c, const struct loaded *L, uint64_t *t, struct rec_offspan *s)
{
	uint64_t next, duration;
	int64_t delta;
	uint32_t key;

	if (!cur_uleb32(c, &key) || !cur_sleb(c, &delta) || !cur_uleb(c, &duration) ||
	    key >= L->nkeys)
		return false;
	next = *t + (uint64_t)delta;
	if ((delta > 0 && next < *t) || (delta < 0 && next > *t) || duration > UINT64_MAX - next)
		return false;
	*t = next;
	*s = (struct rec_offspan){next, next + duration, L->key_sample[key]};
	return true;
}

/* Checked whole first: a damaged block adds nothing. */
int parse_offspans(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct cur check;
	uint64_t t = 0;
	uint32_t n;
	struct rec_offspan s;

	if (!cur_count(c, MIN_OFFSPAN, &n))
		return -EBADMSG;
	check = *c;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_span(&check, L, &t, &s))
			return -EBADMSG;
	}
	if (check.left)
		return -EBADMSG;
	if (vec_grow(&r->offspans, &L->cap_offspans, r->noffspans + n, sizeof(*r->offspans), 64))
		return -ENOMEM;
	t = 0;
	for (uint32_t i = 0; i < n; i++) {
		read_span(c, L, &t, &s);
		r->offspans[r->noffspans++] = s;
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct rec_offspan *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	return (x->sample > y->sample) - (x->sample < y->sample);
}

/* In time order: each drain's spans come in the order the sampler read them. */
void offspans_finish(struct loaded *L)
{
	if (L->r.noffspans)
		qsort(L->r.offspans, L->r.noffspans, sizeof(*L->r.offspans), by_start);
}
