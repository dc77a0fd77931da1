// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Steps and program pauses of a recording (see steps.h): one table of steps and pauses, each
 * step with its samples per key, written whole as the STEPS block when it changed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "format/recording.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "perch_abi.h"
#include "record/regions/regions.h"
#include "steps.h"

/* One step or pause, with its counts by key (a map key id -> index in counts). */
struct entry {
	struct rec_step s;
	struct rec_count *counts;
	size_t cap;
	struct u64map index;
};

struct steps {
	struct rec_writer *w;
	bool gate, done;
	uint64_t first, last;
	struct entry *v;
	size_t n, cap;
	struct u64map open;   /* pid << 32 ^ step -> index + 1 of its entry (the newest) */
	struct u64map paused; /* pid -> index + 1 of its open pause */
	uint64_t dropped;
	uint64_t refused; /* ends before their start (the program's log is not to be trusted) */
	bool dirty;
};

/* One step number: digits only, no sign, no overflow; *end after it. */
static int parse_step(const char *s, uint64_t *v, const char **end)
{
	char *e;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (errno)
		return -EINVAL;
	*end = e;
	return 0;
}

int steps_parse(const char *arg, uint64_t *first, uint64_t *last)
{
	const char *end;
	uint64_t a, b;

	if (!arg || parse_step(arg, &a, &end))
		return -EINVAL;
	b = a;
	if (*end == ':' && parse_step(end + 1, &b, &end))
		return -EINVAL;
	if (*end || b < a)
		return -EINVAL;
	*first = a;
	*last = b;
	return 0;
}

struct steps *steps__new(struct rec_writer *w, bool gate, uint64_t first, uint64_t last)
{
	struct steps *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->w = w;
	st->gate = gate;
	st->first = first;
	st->last = last;
	return st;
}

void steps__free(struct steps *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++) {
		free(st->v[i].counts);
		u64map__clear(&st->v[i].index);
	}
	free(st->v);
	u64map__clear(&st->open);
	u64map__clear(&st->paused);
	free(st);
}

static uint64_t step_key(uint32_t pid, uint64_t n)
{
	return (uint64_t)pid << 32 ^ n;
}

/* A new entry; NULL past REC_STEPS_MAX (counted) or out of memory. */
static struct entry *add_entry(struct steps *st, uint32_t kind, uint32_t pid, uint64_t n)
{
	struct entry *e;

	if (st->n >= REC_STEPS_MAX || vec_grow(&st->v, &st->cap, st->n + 1, sizeof(*st->v), 16)) {
		st->dropped++;
		return NULL;
	}
	e = &st->v[st->n++];
	memset(e, 0, sizeof(*e));
	e->s.kind = kind;
	e->s.pid = pid;
	e->s.n = n;
	st->dirty = true;
	return e;
}

/* The entry of step n of pid: the newest one, else a new one. */
static struct entry *step_of(struct steps *st, uint32_t pid, uint64_t n)
{
	uint64_t i;
	struct entry *e;

	if (u64map__get(&st->open, step_key(pid, n), &i))
		return &st->v[i - 1];
	e = add_entry(st, REC_STEP_STEP, pid, n);
	if (e && u64map__put(&st->open, step_key(pid, n), st->n)) {
		st->n--;
		return NULL;
	}
	return e;
}

/* Step n of pid starts: a new entry, unless its samples made it already (drained before the
 * log was read). A step number that comes again is a step of its own. */
static struct entry *start_step(struct steps *st, uint32_t pid, uint64_t n)
{
	uint64_t i;
	struct entry *e;

	if (u64map__get(&st->open, step_key(pid, n), &i) && !st->v[i - 1].s.start_ns &&
	    !st->v[i - 1].s.end_ns)
		return &st->v[i - 1];
	e = add_entry(st, REC_STEP_STEP, pid, n);
	if (e && u64map__put(&st->open, step_key(pid, n), st->n)) {
		st->n--;
		return NULL;
	}
	return e;
}

void steps__sample(struct steps *st, uint32_t pid, uint64_t step1, uint32_t key, uint64_t count)
{
	struct entry *e;
	uint64_t i;

	if (!st || !step1 || key == UINT32_MAX || !count)
		return;
	e = step_of(st, pid, step1 - 1);
	if (!e)
		return;
	if (u64map__get(&e->index, key, &i)) {
		e->counts[i].count += count;
	} else {
		if (vec_grow(&e->counts, &e->cap, e->s.ncounts + 1, sizeof(*e->counts), 16) ||
		    u64map__put(&e->index, key, e->s.ncounts))
			return;
		e->counts[e->s.ncounts++] = (struct rec_count){.sample = key, .count = count};
	}
	st->dirty = true;
}

/* The open step of pid ends at t (its number: the last entry of pid still open); an end before
 * its start is refused (counted): the step stays open. */
static void end_open_step(struct steps *st, uint32_t pid, uint64_t t)
{
	for (size_t i = st->n; i-- > 0;) {
		struct rec_step *s = &st->v[i].s;

		if (s->pid != pid || s->kind != REC_STEP_STEP || s->end_ns)
			continue;
		if (!t || t < s->start_ns) {
			st->refused++;
			break;
		}
		s->end_ns = t;
		st->dirty = true;
		if (st->gate && s->n >= st->last)
			st->done = true;
		break;
	}
}

static void pause_event(struct steps *st, uint32_t pid, bool pause, uint64_t t)
{
	uint64_t i;
	struct entry *e;

	if (!pause) {
		if (u64map__get(&st->paused, pid, &i) && i) {
			if (!t || t < st->v[i - 1].s.start_ns) {
				st->refused++; /* resumed before it paused: the pause stays open */
				return;
			}
			st->v[i - 1].s.end_ns = t;
			u64map__put(&st->paused, pid, 0);
			st->dirty = true;
		}
		return;
	}
	if (u64map__get(&st->paused, pid, &i) && i)
		return; /* open already */
	e = add_entry(st, REC_STEP_PAUSE, pid, 0);
	if (!e)
		return;
	e->s.start_ns = t;
	u64map__put(&st->paused, pid, st->n);
}

void steps__event(void *ctx, uint32_t pid, uint32_t kind, uint64_t t, uint64_t value)
{
	struct steps *st = ctx;
	struct entry *e;

	switch (kind) {
	case PERCH_LOG_PAUSE:
	case PERCH_LOG_RESUME:
		pause_event(st, pid, kind == PERCH_LOG_PAUSE, t);
		break;
	case PERCH_LOG_STEP:
		end_open_step(st, pid, t);
		if (st->gate && value > st->last)
			st->done = true; /* the step after the last one asked for */
		if (st->gate && (value < st->first || value > st->last))
			break; /* not recorded */
		e = start_step(st, pid, value);
		if (e)
			e->s.start_ns = t;
		break;
	case PERCH_LOG_STEP_END:
	case REGIONS_CTL_GONE:
		end_open_step(st, pid, t);
		if (kind == REGIONS_CTL_GONE)
			pause_event(st, pid, false, t);
		break;
	default:
		log_debug("steps: process %u: control log entry of kind %u", pid, kind);
	}
}

bool steps__done(const struct steps *st)
{
	return st && st->done;
}

uint64_t steps__dropped(const struct steps *st)
{
	return st ? st->dropped : 0;
}

uint64_t steps__refused(const struct steps *st)
{
	return st ? st->refused : 0;
}

void steps__flush(struct steps *st)
{
	struct rec_step *v;
	int err;

	if (!st || !st->dirty)
		return;
	v = calloc(st->n ? st->n : 1, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < st->n; i++) {
		v[i] = st->v[i].s;
		v[i].counts = st->v[i].counts;
	}
	err = rec_writer__steps(st->w, v, st->n);
	if (err)
		log_debug("steps: %s", strerror(-err));
	else
		st->dirty = false;
	free(v);
}
