/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The correlation join: each GPU activity (kernel, copy, memset, sync) to the API call that
 * caused it, by (pid, CUPTI correlation id). Either side may come first: an activity whose launch
 * is not known yet waits; a launch stays known after its first activity, because a CUDA graph
 * launch is one correlation id for many kernels. What never meets its other side is counted, and
 * unmatched activities are still handed on (with no launch), never hidden.
 *
 * Both sides come from the target (the channel), so the state is bounded: a joined launch is
 * forgotten once no activity joined it for the join window (perch's clock, gpu_join__tick()); a
 * full launch table sheds half of itself (the joined launches first, oldest first; then the
 * launches still waiting, counted in launches_dropped); a full waiting table hands its oldest
 * half on without a launch (counted in waits_cut). The defaults hold a launch-bound program (100k
 * launches a second) for over a second of CUPTI's buffering in about 30 MB.
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
	uint64_t launches_dropped;     /* launch calls shed from the full table before any activity
					* (also in launches_unmatched) */
	uint64_t waits_cut;	       /* activities handed on without a launch because the waiting
					* table was full (also in activities_unmatched) */
};

#define GPU_JOIN_MAX_LAUNCHES (1u << 18)
#define GPU_JOIN_MAX_PENDING  (1u << 16)
#define GPU_JOIN_WINDOW_NS    10000000000ull

struct gpu_join_limits {
	size_t max_launches, max_pending; /* entries (at least 2) */
	uint64_t window_ns; /* a joined launch is kept this long after its last join */
};

/* Called for each activity once, with its launch, or with launch NULL from gpu_join__finish(). */
typedef void gpu_join_fn(void *ctx, const struct gpu_launch *launch,
			 const struct perch_cuda_rec *activity);

struct gpu_join;
struct gpu_join *gpu_join__new(gpu_join_fn *fn, void *ctx);
void gpu_join__free(struct gpu_join *j);
/* Other bounds than the defaults (tests). 0 or -EINVAL. */
int gpu_join__set_limits(struct gpu_join *j, const struct gpu_join_limits *lim);
/* perch's CLOCK_MONOTONIC now: what joins from now on is stamped with it, and once a window the
 * joined launches past the window are forgotten. 0 or -ENOMEM. */
int gpu_join__tick(struct gpu_join *j, uint64_t now_ns);
/* 0 or -ENOMEM. */
int gpu_join__launch(struct gpu_join *j, const struct gpu_launch *l);
int gpu_join__activity(struct gpu_join *j, const struct perch_cuda_rec *a);
/* A channel record: activities and API calls to their sides, DROPPED counts; others ignored. */
int gpu_join__channel(struct gpu_join *j, const struct perch_cuda_rec *r);
void gpu_join__dropped(struct gpu_join *j, uint64_t n);
/* End of the run: counts the launches nothing ran for and hands on the unmatched activities;
 * the tables are emptied. */
void gpu_join__finish(struct gpu_join *j);
const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *j);
/* The launches held and the activities waiting now (tests). */
void gpu_join__size(const struct gpu_join *j, size_t *launches, size_t *waiting);

#endif /* PERCH_GPU_JOIN_H */
