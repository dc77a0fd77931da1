/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The memory layout the region runtime (include/perch.c, inside the user's process) shares with
 * the profiler, which reads it from outside: the registry (found by the symbol `perch_registry`)
 * and, per thread, the region stack the sampler reads at every tick and the exact per-region
 * statistics. Fixed-width fields only, no pointers (addresses are u64), so the BPF sampler, the
 * loader and the runtime all use this one header. Bump PERCH_ABI_VERSION on any change.
 */
#ifndef PERCH_ABI_H
#define PERCH_ABI_H

#include <stdint.h>

#define PERCH_ABI_MAGIC	  0x3147524843524550ull /* "PERCHRG1" little endian */
#define PERCH_ABI_VERSION 3

#define PERCH_MAX_DEPTH	 64   /* region stack entries kept per thread (deeper: counted only) */
#define PERCH_MAX_NAMES	 4096 /* distinct region names per process */
#define PERCH_NAME_LEN	 64   /* bytes per name, NUL included (longer names are cut) */
#define PERCH_MAX_NODES	 1024 /* bounded-path-tree nodes per thread; node 0 is the root */
#define PERCH_NODE_OTHER (PERCH_MAX_NODES - 1) /* where regions go when a thread's tree is full */
/* Name ids no name in the table has: every region whose name did not fit the table, and the
 * label of the node PERCH_NODE_OTHER (so neither is ever taken for a real name). */
#define PERCH_NAME_TOO_MANY (PERCH_MAX_NAMES + 1)
#define PERCH_NAME_OTHER    (PERCH_MAX_NAMES + 2)

/* Per thread, in initial-exec TLS: what the sampler reads at each tick (fsbase + tls_offset). */
struct perch_abi_tls {
	uint32_t depth; /* current nesting depth; may exceed PERCH_MAX_DEPTH */
	uint32_t pad;
	uint32_t ids[PERCH_MAX_DEPTH]; /* region name ids (1-based), outermost first */
	uint64_t thread;	       /* address of this thread's perch_abi_thread, 0 until used */
};

/* One node of a thread's bounded path tree of regions (recursion folded as in DESIGN.md). */
struct perch_abi_node {
	uint32_t name;			    /* name id; 0 for the root */
	uint32_t parent;		    /* node index */
	uint32_t first_child, next_sibling; /* node indexes, 0 = none */
	uint32_t open; /* activations of this node currently open (folded recursion) */
	uint32_t pad;
	uint64_t calls;
	uint64_t total_ticks;	       /* wall time in TSC ticks, outermost activations only */
	uint64_t self_ticks;	       /* wall time minus time in child regions */
	uint64_t min_ticks, max_ticks; /* per call */
	uint64_t size_sum;	       /* sum of perch_region_begin_n sizes */
	uint64_t unmatched; /* ends of activations whose begin was not timed (opened before the
			       * profiler attached) */
	uint64_t sum_ticks; /* wall time of every timed activation, nested ones included (the
			     * mean per call) */
};

struct perch_abi_thread {
	uint64_t next; /* address of the next thread's block, 0 at the end */
	uint32_t tid;  /* 0: the block of threads that exited, their trees merged into it */
	uint32_t nnodes;
	uint32_t epoch;	      /* the registry's epoch these statistics belong to */
	uint32_t exited;      /* the thread has exited: the block is free (its figures were merged
			       * into the tid 0 block) until a new thread takes it */
	uint64_t mismatches;  /* ends that did not match the innermost begin */
	uint64_t too_deep;    /* begins and marks deeper than PERCH_MAX_DEPTH: counted only */
	uint64_t next_free;   /* the runtime's own: the next free block */
	uint32_t valid_depth; /* node_at[0 .. valid_depth) describe the open regions */
	uint32_t pad;
	/* Open activations, by depth: node, start TSC (0: not timed), time in child regions. */
	uint32_t node_at[PERCH_MAX_DEPTH];
	uint64_t start_at[PERCH_MAX_DEPTH];
	uint64_t child_at[PERCH_MAX_DEPTH];
	struct perch_abi_node nodes[PERCH_MAX_NODES];
};

struct perch_abi_registry {
	uint64_t magic;
	uint32_t version;
	uint32_t size;	    /* sizeof(struct perch_abi_registry) */
	int64_t tls_offset; /* thread pointer (%fs base) + tls_offset = the thread's perch_abi_tls */
	volatile uint32_t active; /* set by the profiler: take timestamps and aggregate */
	volatile uint32_t nnames; /* names[0 .. nnames) are valid; id = index + 1 */
	uint64_t threads;	  /* address of the newest perch_abi_thread */
	uint64_t mismatches;	  /* process-wide count of mismatched ends */
	uint64_t names;		  /* address of char[PERCH_MAX_NAMES][PERCH_NAME_LEN] (in .bss, so
				   * programs that link the runtime do not grow by it) */
	/* Set by the profiler before `active`: statistics of another epoch are stale, and each
	 * thread starts its own over (regions open then become untimed) when it sees the change. */
	volatile uint32_t epoch;
	uint32_t tick_unit; /* PERCH_TICKS_*: what start/total/min/max ticks count */
	/* The exit handshake. The profiler sets PERCH_COLLECT_AT_EXIT; the runtime's destructor
	 * then sets `exiting` and waits (at most PERCH_EXIT_WAIT_MS) until the profiler has read
	 * the final statistics and set PERCH_COLLECTED. */
	volatile uint32_t collector;
	volatile uint32_t exiting;
	/* The owner: the one profiler timing this process (0: none). The destructor stops waiting
	 * once it is gone; another profiler leaves the runtime alone while it lives. */
	uint32_t profiler_pid;
	uint32_t pad;
	uint64_t profiler_start; /* the owner's start time (/proc/PID/stat field 22; 0: unknown):
				  * a reused pid is not the owner */
};

#define PERCH_TICKS_TSC	      0 /* x86 time-stamp counter (invariant TSC); the profiler calibrates */
#define PERCH_TICKS_NS	      1 /* CLOCK_MONOTONIC nanoseconds */
#define PERCH_COLLECT_AT_EXIT 1
#define PERCH_COLLECTED	      2
#define PERCH_EXIT_WAIT_MS    2000
/* In the environment of a command perch launches: start timing at once (set active and
 * collector from the runtime's constructor), so not a single region goes untimed. */
#define PERCH_ENV_ACTIVE "PERCH_REGIONS_ACTIVE" /* value: the profiler's pid */

#endif /* PERCH_ABI_H */
