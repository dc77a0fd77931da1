/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-step region figures: the region activations of a recording's timeline spans (perch record
 * --timeline) assigned to the steps of their process (STEPS) by their begin time. An activation
 * belongs to the step its process had open when it began (one that runs past the step's end is
 * still that step's); one begun outside every step, or never ended, is in none. A recording
 * without spans (no --timeline) has no per-step figures: the runtime keeps its exact region
 * statistics per thread, not per step.
 */
#ifndef PERCH_STEPTAB_H
#define PERCH_STEPTAB_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

struct step_region {
	uint32_t step; /* index into recording.steps (a REC_STEP_STEP entry) */
	uint32_t name; /* string id of the region's name */
	uint64_t calls;
	uint64_t total_ns;	 /* nested activations of the same name counted once */
	uint64_t sum_ns;	 /* every activation's time, nested ones too (the mean per call) */
	uint64_t min_ns, max_ns; /* per call */
};

struct steptab;

/* NULL + errno (ENOMEM). Borrows nothing from r after it returns. */
struct steptab *steptab__new(const struct recording *r);
void steptab__free(struct steptab *t);
/* The rows of step s (index into recording.steps), by total time descending, then name id;
 * returns the count, *rows valid while t lives. */
size_t steptab__rows(const struct steptab *t, uint32_t step, const struct step_region **rows);
/* Every row, by step index, then as steptab__rows. */
size_t steptab__all(const struct steptab *t, const struct step_region **rows);
/* qsort_r order of span indices (ctx: the recording's spans): by pid, tid, then the recording's
 * order; for steptab and the speedscope export alike. */
int steptab__span_by_thread(const void *a, const void *b, void *ctx);

#endif /* PERCH_STEPTAB_H */
