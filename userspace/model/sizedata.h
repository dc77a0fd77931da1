/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The cost-model data of sized regions (SIZES blocks) pooled by region name over every thread
 * of one or more recordings (perch model a.data b.data ...): the log2(n) buckets summed, the
 * reservoirs' raw (n, t) points put together.
 */
#ifndef PERCH_MODEL_SIZEDATA_H
#define PERCH_MODEL_SIZEDATA_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"
#include "costmodel.h"

#define SIZE_BUCKETS 65

struct size_region {
	char *name;
	uint64_t seen;	  /* sized calls */
	size_t nthreads;  /* thread entries that had it */
	size_t nfiles;	  /* recordings that had it */
	size_t last_file; /* the index of the last recording counted in nfiles, plus one */
	struct rec_size_bucket buckets[SIZE_BUCKETS]; /* by log2; count 0: none */
	struct cm_point *points;		      /* the reservoirs, put together */
	size_t npoints, cap;
};

struct size_set {
	struct size_region *regions; /* in the order first seen */
	size_t n, cap;
	uint64_t over; /* sized calls the runtimes had no model slot for */
	size_t nfiles;
};

#define SIZE_MAX_MODELS 8

/* One region's fit: every candidate model, the choice, and the points the choice culled. */
struct size_fit {
	const struct size_region *g; /* borrowed from its size_set */
	double nsigma;
	size_t nmodels;
	struct cm_model models[SIZE_MAX_MODELS];
	struct cm_fit fits[SIZE_MAX_MODELS];
	size_t best, runner; /* SIZE_MAX: none */
	uint8_t *culled;     /* per point of g, by the chosen model */
	int err;	     /* 0, -EDOM: fewer points than coefficients (nothing chosen) */
};

/* Fit g with the built-in candidates and, if not NULL, user; 0, -EDOM (f->err, the region has
 * fewer points than any candidate's coefficients), -ENOMEM. */
int size_fit__run(struct size_fit *f, const struct size_region *g, const struct cm_model *user,
		  double nsigma);
void size_fit__free(struct size_fit *f);

/* Pool r's SIZES into s (the next file). 0 or -ENOMEM. */
int size_set__add(struct size_set *s, const struct recording *r);
/* The region named name, or NULL. */
struct size_region *size_set__find(const struct size_set *s, const char *name);
/* Whether r has a region named name in its REGIONS tables (sized or not). */
int size_set__has_region(const struct recording *r, const char *name);
void size_set__free(struct size_set *s);

#endif /* PERCH_MODEL_SIZEDATA_H */
