// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Cost-model data pooled by region name (see sizedata.h). Buckets add exactly; the points of
 * several reservoirs are a sample of each thread's calls, so a thread with many calls is
 * represented by as many points as one with a few: fine for fitting one cost function that all
 * of them share, and said in the README.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "sizedata.h"

struct size_region *size_set__find(const struct size_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++) {
		if (!strcmp(s->regions[i].name, name))
			return &s->regions[i];
	}
	return NULL;
}

int size_set__has_region(const struct recording *r, const char *name)
{
	for (size_t i = 0; i < r->nrthreads; i++) {
		const struct rec_region_thread *t = &r->rthreads[i];

		for (uint32_t k = 1; k < t->nnodes; k++) {
			if (!strcmp(recording__string(r, t->nodes[k].name), name))
				return 1;
		}
	}
	return 0;
}

static struct size_region *region_of(struct size_set *s, const char *name)
{
	struct size_region *g = size_set__find(s, name);

	if (g)
		return g;
	if (vec_grow(&s->regions, &s->cap, s->n + 1, sizeof(*s->regions), 8))
		return NULL;
	g = &s->regions[s->n];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	if (!g->name)
		return NULL;
	s->n++;
	return g;
}

static void add_bucket(struct rec_size_bucket *to, const struct rec_size_bucket *from)
{
	if (!to->count || from->min_ns < to->min_ns)
		to->min_ns = from->min_ns;
	if (from->max_ns > to->max_ns)
		to->max_ns = from->max_ns;
	to->log2 = from->log2;
	to->count += from->count;
	to->sum_n += from->sum_n;
	to->sum_t += from->sum_t;
	to->sum_t2 += from->sum_t2;
	to->sum_nt += from->sum_nt;
}

static int add_model(struct size_set *s, const struct recording *r, const struct rec_size_model *m)
{
	struct size_region *g = region_of(s, recording__string(r, m->name));

	if (!g || vec_grow(&g->points, &g->cap, g->npoints + m->npoints, sizeof(*g->points), 64))
		return -ENOMEM;
	g->seen += m->seen;
	g->nthreads++;
	if (g->last_file != s->nfiles) {
		g->last_file = s->nfiles;
		g->nfiles++;
	}
	for (uint32_t k = 0; k < m->nbuckets; k++) {
		if (m->buckets[k].log2 < SIZE_BUCKETS && m->buckets[k].count)
			add_bucket(&g->buckets[m->buckets[k].log2], &m->buckets[k]);
	}
	for (uint32_t k = 0; k < m->npoints; k++)
		g->points[g->npoints++] =
			(struct cm_point){(double)m->points[k].n, (double)m->points[k].t_ns};
	return 0;
}

int size_set__add(struct size_set *s, const struct recording *r)
{
	int err = 0;

	s->nfiles++;
	for (size_t i = 0; !err && i < r->nsthreads; i++) {
		const struct rec_size_thread *t = &r->sthreads[i];

		s->over += t->over;
		for (uint32_t k = 0; !err && k < t->nmodels; k++)
			err = add_model(s, r, &t->models[k]);
	}
	return err;
}

void size_set__free(struct size_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->regions[i].name);
		free(s->regions[i].points);
	}
	free(s->regions);
	memset(s, 0, sizeof(*s));
}

int size_fit__run(struct size_fit *f, const struct size_region *g, const struct cm_model *user,
		  double nsigma)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->g = g;
	f->nsigma = nsigma;
	f->best = f->runner = SIZE_MAX;
	f->nmodels = cm_builtin(f->models, SIZE_MAX_MODELS - 1);
	if (user)
		f->models[f->nmodels++] = *user;
	f->culled = calloc(g->npoints ? g->npoints : 1, 1);
	if (!f->culled)
		return -ENOMEM;
	err = cm_choose(g->points, g->npoints, f->models, f->nmodels, nsigma, f->fits, &f->best,
			&f->runner);
	if (!err) {
		struct cm_fit again;

		err = cm_fit(g->points, g->npoints, &f->models[f->best], nsigma, &again, f->culled);
	}
	f->err = err == -ENOMEM ? 0 : err;
	return err;
}

void size_fit__free(struct size_fit *f)
{
	free(f->culled);
	f->culled = NULL;
}
