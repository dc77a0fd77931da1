// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: the cost-model data of sized regions (see regions_impl.h). A runtime of ABI
 * version 5 keeps, per thread and per node that saw perch_region_begin_n sizes, buckets by
 * log2(n) and a reservoir of raw (n, t) calls (struct perch_abi_models, after the ring); this
 * reads the slots in use out of a thread block, converts ticks to nanoseconds and hands them to
 * the recording's SIZES block. Untrusted as everything read from the target: counts bounded,
 * names checked. A slot read while its thread writes may hold a point or sum a call apart: the
 * data is a sample, and the next read (every 100 ms, and the last at exit) replaces it.
 */
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "regions_impl.h"

#define MODELS	   offsetof(struct perch_abi_thread, models)
#define SLOT_HEAD  offsetof(struct perch_abi_model, points)
#define SLOTS_AT   (MODELS + offsetof(struct perch_abi_models, slots))
#define NSLOTS_AT  (MODELS + offsetof(struct perch_abi_models, nslots))
#define OVER_AT	   (MODELS + offsetof(struct perch_abi_models, over))
#define BUCKET_MAX (PERCH_MODEL_BUCKETS - 1)

void regions_free_sizes(struct rec_size_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (uint32_t k = 0; k < t[i].nmodels; k++) {
			free(t[i].models[k].buckets);
			free(t[i].models[k].points);
		}
		free(t[i].models);
	}
	free(t);
}

/* Garbage ticks (the slots are the target's) stay in u64's range: the cast would be undefined. */
static uint64_t ns(double ticks, double scale)
{
	double t = ticks * scale + 0.5;

	return t < 18446744073709549568.0 ? (uint64_t)t : UINT64_MAX;
}

static int convert_buckets(struct rec_size_model *m, const struct perch_abi_model *s, double scale)
{
	m->buckets = calloc(PERCH_MODEL_BUCKETS, sizeof(*m->buckets));
	if (!m->buckets)
		return -1;
	for (uint32_t b = 0; b <= BUCKET_MAX; b++) {
		const struct perch_abi_bucket *in = &s->buckets[b];
		struct rec_size_bucket *out = &m->buckets[m->nbuckets];

		if (!in->count)
			continue;
		out->log2 = b;
		out->count = in->count;
		out->min_ns = ns((double)in->min_t, scale);
		out->max_ns = ns((double)in->max_t, scale);
		out->sum_n = (double)in->sum_n;
		out->sum_t = (double)in->sum_t * scale;
		out->sum_t2 = in->sum_t2 * scale * scale;
		out->sum_nt = in->sum_nt * scale;
		m->nbuckets++;
	}
	return 0;
}

/* Slot k of the block at addr into m; -1 when unreadable or not a slot of a real node. */
static int read_slot(struct regions *rg, struct rproc *p, uint64_t addr, uint32_t k,
		     struct rec_size_model *m, double scale)
{
	static struct perch_abi_model s; /* 11 KB: perch reads one process at a time */
	uint64_t at = addr + SLOTS_AT + (uint64_t)k * sizeof(s);
	uint32_t np;

	if (regions_peek(p->pid, at, &s, SLOT_HEAD) || !s.seen)
		return -1;
	np = s.seen < PERCH_MODEL_POINTS ? (uint32_t)s.seen : PERCH_MODEL_POINTS;
	if (regions_peek(p->pid, at + SLOT_HEAD, s.points, np * sizeof(s.points[0])))
		return -1;
	m->name = rec_writer__string(rg->w, regions_name_of(p, s.name));
	m->node = s.node < PERCH_MAX_NODES ? s.node : 0;
	m->seen = s.seen;
	m->points = calloc(np ? np : 1, sizeof(*m->points));
	if (!m->name || !m->points || convert_buckets(m, &s, scale))
		return -1;
	for (uint32_t i = 0; i < np; i++) {
		m->points[m->npoints].n = s.points[i].n;
		m->points[m->npoints].t_ns = ns((double)s.points[i].t, scale);
		m->npoints += s.points[i].n > 0; /* a slot not yet written holds zeros */
	}
	return 0;
}

/* The model slots of the thread block at addr (ABI 5 on) into t, its pid and tid set by the
 * caller; 0 (t empty when the runtime has none), or -1 when they could not be read. */
int regions_read_sizes(struct regions *rg, struct rproc *p, uint64_t addr, double scale,
		       struct rec_size_thread *t)
{
	uint32_t nslots;

	t->nmodels = 0;
	t->models = NULL;
	if (p->reg.version < 5)
		return 0;
	if (regions_peek(p->pid, addr + NSLOTS_AT, &nslots, sizeof(nslots)) ||
	    regions_peek(p->pid, addr + OVER_AT, &t->over, sizeof(t->over)))
		return -1;
	if (nslots > PERCH_MODEL_SLOTS)
		nslots = PERCH_MODEL_SLOTS;
	if (!nslots)
		return 0;
	t->models = calloc(nslots, sizeof(*t->models));
	if (!t->models)
		return -1;
	for (uint32_t k = 0; k < nslots; k++) {
		struct rec_size_model *m = &t->models[t->nmodels];

		if (!read_slot(rg, p, addr, k, m, scale)) {
			t->nmodels++;
			continue;
		}
		free(m->buckets);
		free(m->points);
		memset(m, 0, sizeof(*m));
	}
	return 0;
}
