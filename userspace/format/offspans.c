// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFSPANS block (recording.h): each off-CPU block of `perch record --timeline --off-cpu`
 * as a timed span of its key, the time axis of OFFCPU's totals. Both sides here, as OFFCPU's:
 * the writer appends spans to a pending block under the --max-size cap the timeline shares (its
 * blocks are copied as they are when the file is compacted), the reader loads them into
 * recording.offspans, sorted by start, and can turn a loaded recording's windows into off-CPU
 * (or wall) time per window (`perch report --view=off|wall`).
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "lib/search.h"
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

/* One span's part in one window. */
struct part {
	uint32_t win, sample;
	uint64_t ns;
};

static int by_win_sample(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->win != y->win)
		return x->win < y->win ? -1 : 1;
	return (x->sample > y->sample) - (x->sample < y->sample);
}

/* Every span cut at the windows' bounds, sorted by window then key; parts outside every window
 * are left out. */
static int cut_spans(const struct recording *r, struct part **out, size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < r->noffspans; i++) {
		const struct rec_offspan *o = &r->offspans[i];
		size_t w = search_prefix(0, r->nwindows, k, r->windows[k].end_ns <= o->start_ns);

		for (; w < r->nwindows && r->windows[w].start_ns < o->end_ns; w++) {
			const struct rec_window *win = &r->windows[w];
			uint64_t a = o->start_ns > win->start_ns ? o->start_ns : win->start_ns;
			uint64_t b = o->end_ns < win->end_ns ? o->end_ns : win->end_ns;

			if (b <= a)
				continue;
			if (vec_grow(out, &cap, *n + 1, sizeof(**out), 256))
				return -ENOMEM;
			(*out)[(*n)++] = (struct part){(uint32_t)w, o->sample, b - a};
		}
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), by_win_sample);
	return 0;
}

/* Window w's new counts into m (room for its ticks and parts): its ticks x tick_ns (none for 0)
 * and its parts, each key once, ascending; *p: the first part of the next window on return. */
static uint32_t merge_window(const struct rec_window *win, uint32_t w, uint64_t tick_ns,
			     const struct part *parts, size_t nparts, size_t *p,
			     struct rec_count *m)
{
	uint32_t i = 0, n = 0;

	while ((tick_ns && i < win->ncounts) || (*p < nparts && parts[*p].win == w)) {
		bool part = *p < nparts && parts[*p].win == w;
		bool tick = tick_ns && i < win->ncounts;
		uint32_t s = part && (!tick || parts[*p].sample < win->counts[i].sample)
				     ? parts[*p].sample
				     : win->counts[i].sample;

		m[n] = (struct rec_count){s, 0};
		if (tick && win->counts[i].sample == s)
			m[n].count += win->counts[i++].count * tick_ns;
		for (; *p < nparts && parts[*p].win == w && parts[*p].sample == s; (*p)++)
			m[n].count += parts[*p].ns;
		n++;
	}
	return n;
}

int recording__offcpu_windows(struct recording *r, uint64_t tick_ns)
{
	struct loaded *L = (struct loaded *)r;
	struct rec_count *counts;
	struct part *parts;
	size_t nparts, total, at = 0, p = 0;
	int err = cut_spans(r, &parts, &nparts);

	if (err)
		return err;
	total = nparts + (tick_ns ? L->ncounts : 0);
	counts = calloc(total ? total : 1, sizeof(*counts));
	if (!counts) {
		free(parts);
		return -ENOMEM;
	}
	for (size_t w = 0; w < r->nwindows; w++) {
		struct rec_window *win = &r->windows[w];
		uint32_t n =
			merge_window(win, (uint32_t)w, tick_ns, parts, nparts, &p, counts + at);

		win->ncounts = n;
		win->counts = n ? counts + at : NULL;
		at += n;
	}
	free(parts);
	free(L->counts);
	L->counts = counts;
	L->ncounts = at;
	L->cap_counts = total ? total : 1;
	return 0;
}
