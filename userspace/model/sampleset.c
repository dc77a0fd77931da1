// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A loaded recording's samples as --view and --event choose and weigh them (sampleset.h): a
 * shallow copy of the recording whose samples, windows and timeline are the set's own arrays
 * when an option changes them, the source's otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "format/keys.h"
#include "lib/search.h"
#include "lib/vec.h"
#include "sampleset.h"

struct sampleset {
	const struct recording *src;
	struct recording
		r; /* src's fields, the arrays below in place of those the options change */
	bool changed;
	struct rec_sample *samples;
	struct rec_window *windows;
	struct rec_count *counts;
	struct rec_event *events;
};

uint64_t sampleset__tick_ns(const struct recording *r)
{
	const char *freq = recording__meta(r, rec_meta_keys[REC_META_frequency]);
	unsigned long hz = freq ? strtoul(freq, NULL, 10) : 0;

	return hz ? 1000000000ull / hz : 0;
}

/* The set's own copy of its samples, to weigh or filter in place. 0 or -ENOMEM. */
static int own_samples(struct sampleset *s)
{
	struct rec_sample *copy;

	if (s->samples)
		return 0;
	copy = malloc((s->r.nsamples ? s->r.nsamples : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	if (s->r.nsamples)
		memcpy(copy, s->r.samples, s->r.nsamples * sizeof(*copy));
	s->samples = copy;
	s->r.samples = copy;
	return 0;
}

/* The set's windows become win, each pointing into counts (both the set's from now on). */
static void set_windows(struct sampleset *s, struct rec_window *win, struct rec_count *counts)
{
	free(s->windows);
	free(s->counts);
	s->windows = win;
	s->counts = counts;
	s->r.windows = win;
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

/* Every off-CPU span cut at the windows' bounds, sorted by window then key; parts outside every
 * window are left out. */
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

static size_t window_counts(const struct recording *r)
{
	size_t n = 0;

	for (size_t w = 0; w < r->nwindows; w++)
		n += r->windows[w].ncounts;
	return n;
}

/* off and wall with OFFSPANS: each window's counts become the time its keys spent off the CPU
 * inside it (the spans cut at the window's bounds), plus tick_ns x its ticks (tick_ns 0:
 * off-CPU time only), so the windows weigh what the samples weigh. 0 or -ENOMEM. */
static int offcpu_windows(struct sampleset *s, uint64_t tick_ns)
{
	const struct recording *r = &s->r;
	size_t nparts, total, at = 0, p = 0;
	struct rec_window *win = NULL;
	struct rec_count *counts = NULL;
	struct part *parts;
	int err = cut_spans(r, &parts, &nparts);

	if (err)
		return err;
	total = nparts + (tick_ns ? window_counts(r) : 0);
	counts = calloc(total ? total : 1, sizeof(*counts));
	win = malloc((r->nwindows ? r->nwindows : 1) * sizeof(*win));
	if (!counts || !win) {
		free(parts);
		free(counts);
		free(win);
		return -ENOMEM;
	}
	for (size_t w = 0; w < r->nwindows; w++) {
		uint32_t n = merge_window(&r->windows[w], (uint32_t)w, tick_ns, parts, nparts, &p,
					  counts + at);

		win[w] = r->windows[w];
		win[w].ncounts = n;
		win[w].counts = n ? counts + at : NULL;
		at += n;
	}
	free(parts);
	set_windows(s, win, counts);
	return 0;
}

/* --view=off|wall: every sample's count becomes its view's ns (see sampleset.h). */
static int weigh(struct sampleset *s, enum sample_view v)
{
	uint64_t period = sampleset__tick_ns(s->src);
	int err;

	if (v == SAMPLE_VIEW_WALL && !period)
		return -ENODATA;
	err = own_samples(s);
	if (err)
		return err;
	for (size_t i = 0; i < s->r.nsamples; i++) {
		struct rec_sample *x = &s->samples[i];

		x->count = (v == SAMPLE_VIEW_WALL ? x->count * period : 0) + x->offcpu_ns;
	}
	s->r.nevents = 0;   /* the timeline's instants are ticks */
	if (s->r.noffspans) /* the windows weigh the view's time too */
		return offcpu_windows(s, v == SAMPLE_VIEW_WALL ? period : 0);
	s->r.nwindows = 0; /* the windows count ticks */
	return 0;
}

/* The timeline's ticks of kept samples, renumbered (map: old sample -> new + 1, 0: dropped;
 * nold: the samples before). 0 or -ENOMEM. */
static int keep_events(struct sampleset *s, const size_t *map, size_t nold)
{
	struct rec_event *e = malloc((s->r.nevents ? s->r.nevents : 1) * sizeof(*e));
	size_t n = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < s->r.nevents; i++) {
		const struct rec_event *from = &s->r.events[i];

		if (from->sample >= nold || !map[from->sample])
			continue;
		e[n] = *from;
		e[n++].sample = (uint32_t)(map[from->sample] - 1);
	}
	free(s->events);
	s->events = e;
	s->r.events = e;
	s->r.nevents = n;
	return 0;
}

/* Window from's counts of kept samples, renumbered, into c; their number. */
static uint32_t keep_counts(const struct rec_window *from, const size_t *map, size_t nold,
			    struct rec_count *c)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < from->ncounts; k++) {
		if (from->counts[k].sample >= nold || !map[from->counts[k].sample])
			continue;
		c[n].sample = (uint32_t)(map[from->counts[k].sample] - 1);
		c[n++].count = from->counts[k].count;
	}
	return n;
}

/* The windows' counts of kept samples, renumbered. 0 or -ENOMEM. */
static int keep_windows(struct sampleset *s, const size_t *map, size_t nold)
{
	const struct recording *r = &s->r;
	struct rec_window *win = malloc((r->nwindows ? r->nwindows : 1) * sizeof(*win));
	size_t total = window_counts(r), at = 0;
	struct rec_count *c = malloc((total ? total : 1) * sizeof(*c));

	if (!win || !c) {
		free(win);
		free(c);
		return -ENOMEM;
	}
	for (size_t w = 0; w < r->nwindows; w++) {
		win[w] = r->windows[w];
		win[w].counts = c + at;
		win[w].ncounts = keep_counts(&r->windows[w], map, nold, c + at);
		at += win[w].ncounts;
	}
	set_windows(s, win, c);
	return 0;
}

/* --event: the samples of event ev alone, with their ticks and window counts. */
static int keep_event(struct sampleset *s, uint32_t ev)
{
	size_t nold = s->r.nsamples, n = 0, *map = calloc(nold + 1, sizeof(*map));
	int err = map ? own_samples(s) : -ENOMEM;

	for (size_t i = 0; !err && i < nold; i++) {
		if (REC_SAMPLE_EVENT(s->samples[i].flags) != ev)
			continue;
		s->samples[n] = s->samples[i];
		map[i] = ++n;
	}
	if (!err)
		err = keep_events(s, map, nold);
	if (!err)
		err = keep_windows(s, map, nold);
	s->r.nsamples = n;
	free(map);
	return err;
}

struct sampleset *sampleset__new(const struct recording *r, const struct sampleset_opts *o)
{
	struct sampleset *s = calloc(1, sizeof(*s));
	int err = 0;

	if (!s)
		return NULL;
	s->src = r;
	s->r = *r;
	s->changed = o->view != SAMPLE_VIEW_CPU || o->event;
	if (o->view != SAMPLE_VIEW_CPU)
		err = weigh(s, o->view);
	if (!err && o->event)
		err = keep_event(s, o->event - 1);
	if (err) {
		sampleset__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void sampleset__free(struct sampleset *s)
{
	if (!s)
		return;
	free(s->samples);
	free(s->windows);
	free(s->counts);
	free(s->events);
	free(s);
}

const struct recording *sampleset__recording(const struct sampleset *s)
{
	return s->changed ? &s->r : s->src;
}
