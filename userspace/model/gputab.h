/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The GPU tables of a recording (its GPU block, `perch record --gpu`): kernels by name, copies by
 * direction, busy time per device and stream, and the counts the report shows. Busy time is the
 * union of the intervals of kernels, copies and memsets (syncs are CPU waits), so overlapping
 * work on one device or stream counts once.
 */
#ifndef PERCH_MODEL_GPUTAB_H
#define PERCH_MODEL_GPUTAB_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

struct gpu_kernel_row {
	uint32_t name; /* string id (0: unnamed) */
	uint64_t calls, total_ns, min_ns, max_ns;
};

struct gpu_copy_row {
	uint64_t count, bytes, total_ns;
};

/* A device or stream: busy is the union of its activities' intervals, idle the rest of its own
 * span (its first activity's start to its last one's end) minus busy. */
struct gpu_lane_row {
	uint32_t device, stream;
	uint64_t activities, busy_ns;
	uint64_t first_ns, last_ns; /* its span */
	uint64_t idle_ns;
};

struct gputab {
	struct gpu_kernel_row *kernels; /* total_ns descending, then name */
	size_t nkernels;
	struct gpu_copy_row copies[REC_GPU_COPY_NR]; /* by enum rec_gpu_copy */
	struct gpu_lane_row *lanes;		     /* device, then stream ascending */
	size_t nlanes;
	struct gpu_lane_row *devices; /* stream 0: the device's busy time */
	size_t ndevices;
	uint64_t busy_ns; /* summed over devices */
	uint64_t kernels_run, memsets, memset_bytes, syncs, sync_ns, api_calls, launches;
	uint64_t first_ns, last_ns; /* the span of the activities (0, 0: none) */
};

/* NULL + errno (ENOMEM). A recording without GPU data gives empty tables. */
struct gputab *gputab__new(const struct recording *r);
void gputab__free(struct gputab *t);

/* The copy direction's name ("HtoD", ...). */
const char *gputab__copy_name(uint32_t kind);

#endif /* PERCH_MODEL_GPUTAB_H */
