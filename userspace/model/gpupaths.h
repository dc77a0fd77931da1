/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GPU time by launching call path: the GPU activities (kernels, copies, memsets) of a recording
 * whose launch's CPU stack is known (rec_gpu.launch_key, perch record --gpu's uprobe), summed by
 * that stack's functions (call sites in one function are one path), whatever thread or region
 * launched them; and the launches whose stack is
 * not known, counted.
 */
#ifndef PERCH_MODEL_GPUPATHS_H
#define PERCH_MODEL_GPUPATHS_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

struct gpu_path_row {
	uint32_t sample; /* a sample with this call path (the first launch's) */
	uint64_t gpu_ns; /* device time of the activities launched from here */
	uint64_t activities;
};

struct gpu_paths {
	struct gpu_path_row *rows; /* gpu_ns descending, then first seen */
	size_t nrows;
	uint64_t launches;	      /* API launch calls recorded */
	uint64_t launches_no_stack;   /* ...with no stack captured for them */
	uint64_t activities_no_stack; /* kernels, copies, memsets whose launch has no stack */
	uint64_t gpu_ns;	      /* device time of the activities with a launch stack */
	uint64_t gpu_ns_no_stack;     /* ...and of those without one */
};

/* NULL + errno (ENOMEM). Empty for a recording without launch stacks. */
struct gpu_paths *gpu_paths__new(const struct recording *r);
void gpu_paths__free(struct gpu_paths *p);

/* The device time (kernels, copies, memsets) launched from each launch stack: an array of
 * r->nsamples + 1 entries indexed as recording.samples (0 for a sample no activity names as its
 * launch_key); the caller frees it. NULL + errno (ENOMEM). */
uint64_t *gpu_paths__sample_ns(const struct recording *r);

/* How many of a launch stack's frames (root first) are the program's: the frames of perch's
 * injection library (its probe, its callback) at the launch end left out. */
uint32_t gpu_paths__program_frames(const struct recording *r, const struct rec_sample *s);

#endif /* PERCH_MODEL_GPUPATHS_H */
