// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-step region figures (steptab.h): each thread's timeline spans walked in its order with the
 * runtime's nesting rule (an end closes the innermost open region of its name and every region
 * opened inside it), each closed activation added to the row of (its begin's step, its name).
 */
#include <errno.h>
#include <stdlib.h>
#include "steptab.h"
#include "lib/search.h"
#include "lib/u64map.h"
#include "lib/vec.h"

#define NO_STEP UINT32_MAX

struct steptab {
	struct step_region *rows;
	size_t n, cap;
	struct u64map at; /* step << 32 | name -> row index + 1 */
};

/* A step of the recording as the search wants it: by pid, then start. */
struct step_at {
	uint32_t pid, idx;
	uint64_t start_ns, end_ns;
};

struct open_region {
	uint32_t name, step;
	uint64_t begin_ns;
};

struct walk {
	const struct recording *r;
	struct step_at *steps;
	size_t nsteps;
	struct open_region *open;
	size_t depth, cap_open;
};

static int by_pid_start(const void *a, const void *b)
{
	const struct step_at *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

int steptab__span_by_thread(const void *a, const void *b, void *ctx)
{
	const struct rec_span *spans = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct rec_span *x = &spans[i], *y = &spans[j];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int by_step_total(const void *a, const void *b)
{
	const struct step_region *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* The step (index into recording.steps) pid had open at t, NO_STEP when none. */
static uint32_t step_at(const struct walk *w, uint32_t pid, uint64_t t)
{
	size_t lo = search_prefix(0, w->nsteps, i, w->steps[i].pid < pid),
	       hi = search_prefix(lo, w->nsteps, i, w->steps[i].pid <= pid),
	       k = search_prefix(lo, hi, i, w->steps[i].start_ns <= t);
	const struct step_at *s = k > lo ? &w->steps[k - 1] : NULL;

	return s && (!s->end_ns || t < s->end_ns) ? s->idx : NO_STEP;
}

static int add_call(struct steptab *t, const struct open_region *o, uint64_t end_ns, bool outer)
{
	uint64_t key = (uint64_t)o->step << 32 | o->name, at = 0,
		 d = end_ns > o->begin_ns ? end_ns - o->begin_ns : 0;
	struct step_region *row;

	if (!u64map__get(&t->at, key, &at)) {
		if (vec_grow(&t->rows, &t->cap, t->n + 1, sizeof(*t->rows), 64) ||
		    u64map__put(&t->at, key, t->n + 1))
			return -ENOMEM;
		t->rows[t->n] = (struct step_region){.step = o->step, .name = o->name};
		at = ++t->n;
	}
	row = &t->rows[at - 1];
	row->min_ns = row->calls && row->min_ns < d ? row->min_ns : d;
	row->max_ns = row->max_ns > d ? row->max_ns : d;
	row->calls++;
	row->sum_ns += d;
	row->total_ns += outer ? d : 0;
	return 0;
}

/* An end: the regions from the innermost open one called name out to it close. */
static int close_region(struct steptab *t, struct walk *w, const struct rec_span *sp)
{
	size_t k = w->depth;
	int err = 0;

	while (k > 0 && w->open[k - 1].name != sp->name)
		k--;
	while (!err && k && w->depth >= k) {
		const struct open_region *o = &w->open[--w->depth];
		bool outer = true;

		for (size_t i = 0; i < w->depth; i++)
			outer = outer && w->open[i].name != o->name;
		if (o->step != NO_STEP)
			err = add_call(t, o, sp->time_ns, outer);
	}
	return err;
}

static int walk_spans(struct steptab *t, struct walk *w, const uint32_t *order)
{
	const struct recording *r = w->r;
	int err = 0;

	for (size_t i = 0; !err && i < r->nspans; i++) {
		const struct rec_span *sp = &r->spans[order[i]];

		if (i && (r->spans[order[i - 1]].pid != sp->pid ||
			  r->spans[order[i - 1]].tid != sp->tid))
			w->depth = 0; /* another thread: what the last left open stays uncounted */
		if (sp->kind == REC_SPAN_END) {
			err = close_region(t, w, sp);
		} else if (sp->kind == REC_SPAN_BEGIN) {
			if (vec_grow(&w->open, &w->cap_open, w->depth + 1, sizeof(*w->open), 16))
				return -ENOMEM;
			w->open[w->depth++] = (struct open_region){
				.name = sp->name,
				.step = step_at(w, sp->pid, sp->time_ns),
				.begin_ns = sp->time_ns,
			};
		}
	}
	return err;
}

static int index_steps(struct walk *w)
{
	const struct recording *r = w->r;

	w->steps = calloc(r->nsteps + 1, sizeof(*w->steps));
	if (!w->steps)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rec_step *s = &r->steps[i];

		if (s->kind == REC_STEP_STEP)
			w->steps[w->nsteps++] =
				(struct step_at){s->pid, (uint32_t)i, s->start_ns, s->end_ns};
	}
	if (w->nsteps)
		qsort(w->steps, w->nsteps, sizeof(*w->steps), by_pid_start);
	return 0;
}

static int fill(struct steptab *t, const struct recording *r)
{
	struct walk w = {.r = r};
	uint32_t *order = NULL;
	int err = index_steps(&w);

	if (!err && w.nsteps && r->nspans && r->nspans < UINT32_MAX) {
		order = calloc(r->nspans, sizeof(*order));
		err = order ? 0 : -ENOMEM;
	}
	if (order) {
		for (size_t i = 0; i < r->nspans; i++)
			order[i] = (uint32_t)i;
		qsort_r(order, r->nspans, sizeof(*order), steptab__span_by_thread, r->spans);
		err = walk_spans(t, &w, order);
	}
	if (!err && t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), by_step_total);
	free(order);
	free(w.open);
	free(w.steps);
	return err;
}

struct steptab *steptab__new(const struct recording *r)
{
	struct steptab *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return NULL;
	err = fill(t, r);
	u64map__clear(&t->at); /* only the walk looks rows up by key */
	if (err) {
		steptab__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void steptab__free(struct steptab *t)
{
	if (!t)
		return;
	u64map__clear(&t->at);
	free(t->rows);
	free(t);
}

size_t steptab__rows(const struct steptab *t, uint32_t step, const struct step_region **rows)
{
	size_t lo = search_prefix(0, t->n, i, t->rows[i].step < step),
	       hi = search_prefix(lo, t->n, i, t->rows[i].step <= step);

	*rows = t->rows + lo;
	return hi - lo;
}

size_t steptab__all(const struct steptab *t, const struct step_region **rows)
{
	*rows = t->rows;
	return t->n;
}
