/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The correlation join: each GPU activity (kernel, copy, memset, sync) to the API call that
 * caused it, by (pid, CUPTI correlation id). Either side may come first: an activity whose launch
 * is not known yet waits; a launch stays known after its first activity, because a CUDA graph
 * launch is one correlation id for many kernels. What never meets its other side is counted, and
 * unmatched activities are still handed on (with no launch) at the end, never hidden.
 */
#ifndef PERCH_GPU_JOIN_H
#define PERCH_GPU_JOIN_H

#include <stdint.h>
#include "perch_cuda.h"

/* The launch side: the probe's hit (CPU stack, region stack) or the API record. */
struct gpu_launch {
	uint32_t pid;
	uint32_t correlation_id;
	uint32_t tid;
	uint32_t flags;	   /* PERCH_CUDA_F_LAUNCH: a launch call, counted when nothing ran */
	uint64_t time_ns;  /* CLOCK_MONOTONIC, the call's exit */
	uint64_t stack_id; /* the sampler's stack of the call (0: none captured) */
	uint64_t region;   /* the thread's region stack id at the call */
};

struct gpu_join_stats {
	uint64_t launches;	       /* distinct (pid, correlation id) launch entries */
	uint64_t duplicate_launches;   /* a second entry for a known id (merged into the first) */
	uint64_t activities;	       /* activities given */
	uint64_t joined;	       /* activities handed on with their launch */
	uint64_t launches_unmatched;   /* launch calls (PERCH_CUDA_F_LAUNCH) that nothing ran for */
	uint64_t activities_unmatched; /* activities whose launch never came */
	uint64_t dropped;	       /* activity records CUPTI dropped (DROPPED records) */
};

/* Called for each activity once, with its launch, or with launch NULL from gpu_join__finish(). */
typedef void gpu_join_fn(void *ctx, const struct gpu_launch *launch,
			 const struct perch_cuda_rec *activity);

struct gpu_join;
struct gpu_join *gpu_join__new(gpu_join_fn *fn, void *ctx);
void gpu_join__free(struct gpu_join *j);
/* 0 or -ENOMEM. */
int gpu_join__launch(struct gpu_join *j, const struct gpu_launch *l);
int gpu_join__activity(struct gpu_join *j, const struct perch_cuda_rec *a);
/* A channel record: activities and API calls to their sides, DROPPED counts; others ignored. */
int gpu_join__channel(struct gpu_join *j, const struct perch_cuda_rec *r);
void gpu_join__dropped(struct gpu_join *j, uint64_t n);
/* End of the run: counts the launches nothing ran for and hands on the unmatched activities. */
void gpu_join__finish(struct gpu_join *j);
const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *j);

#endif /* PERCH_GPU_JOIN_H */
