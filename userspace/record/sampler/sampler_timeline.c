// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's exact timeline (--timeline, see sampler_impl.h and struct perch_tick): every
 * counted tick comes through a ring buffer with its time and its key. At the drain of a buffer
 * its ticks get the key ids the drain just gave its buckets; ticks of the other buffer wait for
 * its drain. An early stack (sampler_early.c) is counted at the drain that hands it on, its tick
 * with its own time then. Ticks go out in time order: those no later drain can precede (earlier
 * than every tick still waiting, in the other buffer or as an early stack) at once, the rest held
 * until then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "sampler_impl.h"

#define RING_MIN (256u * 1024)	     /* bytes */
#define RING_MAX (64u * 1024 * 1024) /* bytes */

struct ready_tick {
	uint64_t time_ns;
	uint32_t key;
};

struct timeline {
	struct ring_buffer *rb;
	struct perch_tick *waiting; /* read, not yet drained: of the other buffer */
	size_t nwaiting, capwaiting;
	struct ready_tick *ready; /* with their key ids, held back for time order */
	size_t nready, capready;
	sampler_tick_fn fn;
	void *ctx;
	uint64_t unkeyed;
};

extern const struct sampler_part sampler_timeline_part;

/* Its state (sampler_part_state()), or NULL: not asked for. */
static struct timeline *timeline_of(const struct sampler *sp)
{
	return sampler_part_state(sp, &sampler_timeline_part);
}

/* Room for eight drain periods of every CPU's ticks (a drain may come late; -a: 32), 16 MiB
 * with -c; a page without --timeline (the map must exist). */
static void timeline_setup(struct sampler *sp)
{
	bool on = sp->timeline;
	uint64_t need = (uint64_t)sp->ncpus * sp->freq * SAMPLER_DRAIN_MS / 1000 * 8 *
			(sizeof(struct perch_tick) + 8);
	__u32 size = RING_MIN;

	if (sp->all_cpus) /* -a: a drain that names new processes' frames comes later */
		need *= 4;
	for (size_t i = 0; i < sp->nevents; i++)
		if (sp->periods[i]) /* -c: no rate to size for */
			need = RING_MAX / 4;
	while (size < need && size < RING_MAX)
		size *= 2;
	sp->skel->rodata->timeline = on;
	bpf_map__set_max_entries(sp->skel->maps.ticks, on ? size : 4096);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct timeline *tl = ctx;

	if (len < sizeof(struct perch_tick) ||
	    vec_grow(&tl->waiting, &tl->capwaiting, tl->nwaiting + 1, sizeof(*tl->waiting), 256))
		return 0;
	memcpy(&tl->waiting[tl->nwaiting++], data, sizeof(struct perch_tick));
	return 0;
}

static int timeline_open(struct sampler *sp)
{
	struct timeline *tl;

	if (!sp->timeline)
		return 0;
	tl = calloc(1, sizeof(*tl));
	if (!tl)
		return PERCH_EXIT_INTERNAL;
	sampler_part_set_state(sp, &sampler_timeline_part, tl);
	tl->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.ticks), on_record, tl, NULL);
	if (!tl->rb) {
		log_err("timeline ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

static void timeline_free(struct sampler *sp)
{
	struct timeline *tl = timeline_of(sp);

	if (!tl)
		return;
	ring_buffer__free(tl->rb);
	free(tl->waiting);
	free(tl->ready);
	free(tl);
	sampler_part_set_state(sp, &sampler_timeline_part, NULL);
}

void sampler__on_tick(struct sampler *sp, sampler_tick_fn fn, void *ctx)
{
	struct timeline *tl = timeline_of(sp);

	if (tl) {
		tl->fn = fn;
		tl->ctx = ctx;
	}
}

uint64_t sampler__ticks_unkeyed(const struct sampler *sp)
{
	const struct timeline *tl = timeline_of(sp);

	return tl ? tl->unkeyed : 0;
}

static int by_time(const void *a, const void *b)
{
	const struct ready_tick *x = a, *y = b;

	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* The ready ticks before cutoff to the tick function, in time order; the rest stay. */
static void emit_before(struct timeline *tl, uint64_t cutoff)
{
	size_t k = 0;

	if (tl->nready) /* ready is NULL before the first tick */
		qsort(tl->ready, tl->nready, sizeof(*tl->ready), by_time);
	for (; k < tl->nready && tl->ready[k].time_ns < cutoff; k++) {
		if (tl->fn)
			tl->fn(tl->ctx, tl->ready[k].time_ns, tl->ready[k].key);
	}
	if (k) /* ready is NULL before the first tick: memmove(NULL, ...) is UB even for 0 */
		memmove(tl->ready, tl->ready + k, (tl->nready - k) * sizeof(*tl->ready));
	tl->nready -= k;
}

/* A tick with its key id, held for time order (none: counted). */
static void add_ready(struct timeline *tl, uint64_t time_ns, uint32_t key)
{
	if (key == SAMPLER_NO_KEY ||
	    vec_grow(&tl->ready, &tl->capready, tl->nready + 1, sizeof(*tl->ready), 256)) {
		tl->unkeyed++;
		return;
	}
	tl->ready[tl->nready++] = (struct ready_tick){time_ns, key};
}

void sampler_timeline_late(struct sampler *sp, uint64_t time_ns, uint32_t key)
{
	struct timeline *tl = timeline_of(sp);

	if (tl)
		add_ready(tl, time_ns, key);
}

/* The drain's ticks to their key ids, in time order up to the oldest still to come. */
static void timeline_drained(struct sampler *sp, const struct sampler_drain *d)
{
	struct timeline *tl = timeline_of(sp);
	uint64_t cutoff = sampler_early_oldest(sp);
	size_t kept = 0;

	if (!tl)
		return;
	ring_buffer__consume(tl->rb);
	for (size_t i = 0; i < tl->nwaiting; i++) {
		const struct perch_tick *t = &tl->waiting[i];

		if (t->buf != d->which) {
			cutoff = t->time_ns < cutoff ? t->time_ns : cutoff;
			tl->waiting[kept++] = *t;
			continue;
		}
		add_ready(tl, t->time_ns, sampler_key_id(sp, &t->key, d->n, d->key_ids));
	}
	tl->nwaiting = kept;
	emit_before(tl, cutoff);
}

const struct sampler_part sampler_timeline_part = {
	.name = "timeline",
	.setup = timeline_setup,
	.open = timeline_open,
	.drained = timeline_drained,
	.free = timeline_free,
};

void sampler__flush_ticks(struct sampler *sp)
{
	struct timeline *tl = timeline_of(sp);

	if (tl)
		emit_before(tl, UINT64_MAX);
}
