/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The GPU tables of an attach-mode recording (`perch record --gpu -p PID`: recording.gpu_calls,
 * libcuda's entry points hit, no GPU durations): launches per kernel, copies per direction and
 * memsets with their bytes, calls per entry point, and launches, copies and memsets per
 * launching call path (grouped by the functions on the stack, as model/gpupaths.c groups them;
 * an unnamed frame by its address) and per region (each region on a call's region stack counted
 * once).
 */
#ifndef PERCH_MODEL_GPUCALLS_H
#define PERCH_MODEL_GPUCALLS_H

#include <stddef.h>
#include <stdint.h>
#include "format/gpu_entries.h"
#include "format/recording.h"

struct gpu_call_kernel {
	uint32_t name;	 /* string id; 0: a handle no lookup named since attach */
	uint32_t pid;	 /* name 0: the process and handle */
	uint64_t handle; /* the first launch's CUfunction */
	uint64_t launches;
};

/* Calls of one call path or one region. */
struct gpu_call_row {
	uint32_t id; /* paths: a sample with this call path; regions: the region's string id */
	uint64_t launches, copies, memsets;
	uint64_t bytes; /* copied and set */
};

struct gpu_call_copy {
	uint64_t count, bytes;
};

struct gpu_calls {
	struct gpu_call_kernel *kernels; /* launches descending, then first seen */
	size_t nkernels;
	struct gpu_call_copy copies[REC_GPU_COPY_NR]; /* by enum rec_gpu_copy */
	struct gpu_call_copy memsets;
	uint64_t entries[REC_GPU_NENTRIES]; /* calls per entry point */
	struct gpu_call_row *paths;	    /* launches, then calls descending, then first seen */
	size_t npaths;
	struct gpu_call_row *regions; /* the same order */
	size_t nregions;
	uint64_t calls, launches, unnamed; /* unnamed: launches of kernels with name 0 */
};

/* NULL + errno (ENOMEM). Empty tables for a recording without attach-mode calls. */
struct gpu_calls *gpu_calls__new(const struct recording *r);
void gpu_calls__free(struct gpu_calls *t);

#endif /* PERCH_MODEL_GPUCALLS_H */
