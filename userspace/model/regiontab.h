/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Region statistics of a recording, as the report shows them: the exact per-thread region trees
 * of the REGIONS blocks summed by region name, per thread and over all threads; the trees merged
 * by name path from the root; the CPU samples whose region stack holds each name, and the GPU
 * time of the launches made inside it (rec_gpu.launch_key). A name
 * that only samples carry (no REGIONS block for it: perch stopped early) has zero calls.
 */
#ifndef PERCH_REGIONTAB_H
#define PERCH_REGIONTAB_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

struct region_stat {
	uint64_t calls;		 /* completed activations, untimed ones included */
	uint64_t untimed;	 /* of calls: ends of activations open before perch attached */
	uint64_t total_ns;	 /* nested activations of the same name counted once */
	uint64_t self_ns;	 /* total minus the time in child regions */
	uint64_t min_ns, max_ns; /* per timed call; 0 when there is none */
	uint64_t size_sum;	 /* perch_region_begin_n sizes */
	uint64_t open;		 /* activations still open at the snapshot: not in calls or times */
	uint64_t samples;	 /* weight of the CPU samples whose region stack holds the name */
	uint64_t sum_ns;	 /* every timed call's time, nested ones too (0: not recorded) */
	uint64_t gpu_ns;	 /* GPU time (kernels, copies, memsets) of the launches made with
				  * the name on the launching thread's region stack */
};

struct region_thread_stat {
	uint32_t pid, tid;
	struct region_stat s;
};

/* A node of the merged tree: the nodes of every thread's tree with the same name path. */
struct region_node {
	uint32_t region; /* index in report order; unused for the root */
	uint64_t calls, total_ns, self_ns;
	uint32_t nkids;
	const uint32_t *kids; /* node ids, by total time descending */
};

struct regiontab;

/* NULL + errno (ENOMEM). The table borrows r's strings: free it before r. */
struct regiontab *regiontab__new(const struct recording *r);
/* The same with only the samples keep(ctx, sample index) says yes to in the samples counts (a
 * query's: the times stay exact, they are not samples); keep NULL: every sample. */
struct regiontab *regiontab__new_kept(const struct recording *r,
				      bool (*keep)(const void *ctx, size_t sample),
				      const void *ctx);
void regiontab__free(struct regiontab *t);

/* Regions in report order: total time, calls, samples (all descending), then name. */
uint32_t regiontab__count(const struct regiontab *t);
const char *regiontab__name(const struct regiontab *t, uint32_t region);
/* The region over all threads of all processes. */
const struct region_stat *regiontab__all(const struct regiontab *t, uint32_t region);
/* The region in each thread that ran it or was sampled in it, by tid then pid. Returns the
 * count; *rows stays valid while t lives. */
uint32_t regiontab__threads(const struct regiontab *t, uint32_t region,
			    const struct region_thread_stat **rows);
/* The region called name, or -1. */
int regiontab__find(const struct regiontab *t, const char *name);

/* The merged tree: node 0 is the root (no region); nodes 1 .. count - 1. */
uint32_t regiontab__node_count(const struct regiontab *t);
const struct region_node *regiontab__node(const struct regiontab *t, uint32_t node);

/* Region ends that did not match the innermost open region, over all threads. */
uint64_t regiontab__mismatches(const struct regiontab *t);

/* Whether any GPU activity has its launch's stack (launch_key): the GPU column is shown. */
bool regiontab__has_gpu(const struct regiontab *t);

/* Calls with a measured duration: mean, min and max are undefined without one. */
uint64_t region_stat__timed(const struct region_stat *s);

#endif /* PERCH_REGIONTAB_H */
