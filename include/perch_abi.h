/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The memory layout the region runtime (runtime/perch.c, inside the user's process) shares with
 * the profiler, which reads it from outside: the registry (found by the symbol `perch_registry`)
 * and, per thread, the region stack the sampler reads at every tick and the exact per-region
 * statistics. Fixed-width fields only, no pointers (addresses are u64), so the BPF sampler, the
 * loader and the runtime all use this one header. Bump PERCH_ABI_VERSION on any change.
 */
#ifndef PERCH_ABI_H
#define PERCH_ABI_H

#include <stdint.h>

#define PERCH_ABI_MAGIC 0x3147524843524550ull /* "PERCHRG1" little endian */
/* 5: steps and pauses (registry.ctl, only_name and the control log at the registry's end), and
 * the per-thread cost-model slots (after the ring of each thread block: struct perch_abi_models);
 * 4: the per-thread timeline ring (registry.timeline, the ring after each thread's nodes);
 * 3: the same registry and thread block without them (perch still reads 3 and 4: no spans, no
 * steps or pauses, no sizes) */
#define PERCH_ABI_VERSION 5

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

/* The timeline ring (version 4): entries per thread (a power of two), and what one holds. */
#define PERCH_RING_ENTRIES 16384
enum perch_ring_kind {
	PERCH_RING_BEGIN = 0,  /* value: time (tick_unit); aux: size, UINT32_MAX when it did not fit
				* (a PERCH_RING_SIZE entry just before holds it) */
	PERCH_RING_END = 1,    /* value: time; the id is the region it ends */
	PERCH_RING_MARK = 2,   /* value: time */
	PERCH_RING_SIZE = 3,   /* value: the size of the next BEGIN */
	PERCH_RING_THREAD = 4, /* value: the tid of the thread that writes the entries after it */
};
#define PERCH_RING_KIND_SHIFT 28
#define PERCH_RING_ID_MASK    ((1u << PERCH_RING_KIND_SHIFT) - 1)

struct perch_abi_event {
	uint64_t value;
	uint32_t word; /* kind << PERCH_RING_KIND_SHIFT | region name id */
	uint32_t aux;
};

/* One node of a thread's bounded path tree of regions (recursion folded as in docs/DESIGN.md). */
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

/* Cost models (version 5): what a sized region (perch_region_begin_n with n > 0) keeps per node
 * so the profiler can fit time(n) without unbounded memory. Per log2(n) bucket (bucket b holds
 * 2^(b-1) <= n < 2^b, bucket 0 n = 0 never: sizes 0 are not sizes) the count, sums of n, t, t^2,
 * n*t (t in ticks; the squares as doubles, which cannot overflow) and min/max t; and a reservoir
 * of PERCH_MODEL_POINTS raw (n, t) calls, a uniform sample of all (Algorithm R's sample, drawn
 * as Algorithm L does: the gap to the next replaced call, per-thread xorshift). A thread takes a slot for a node at its first sized call; past PERCH_MODEL_SLOTS
 * nodes the calls are only counted (models_over). */
#define PERCH_MODEL_SLOTS   32
#define PERCH_MODEL_BUCKETS 65
#define PERCH_MODEL_POINTS  512

struct perch_abi_bucket {
	uint64_t count, sum_n, sum_t;
	uint64_t min_t, max_t; /* min_t UINT64_MAX while count is 0 */
	double sum_t2, sum_nt;
	uint64_t pad; /* 64 bytes: a bucket is one cache line */
};

struct perch_abi_point {
	uint64_t n, t;
};

struct perch_abi_model {
	uint32_t node; /* the node of the thread's tree it belongs to */
	uint32_t name; /* that node's name id */
	uint64_t
		seen; /* sized calls so far: points[0 .. min(seen, PERCH_MODEL_POINTS)) hold data */
	/* The reservoir's next replacement (Algorithm L: the call index, and its W), so a call
	 * that is not sampled costs one compare. */
	uint64_t next;
	double w;
	uint64_t pad[4];
	struct perch_abi_bucket buckets[PERCH_MODEL_BUCKETS];
	struct perch_abi_point points[PERCH_MODEL_POINTS];
};

struct perch_abi_models {
	uint64_t size_at[PERCH_MAX_DEPTH]; /* the open activations' sizes, by depth */
	uint32_t nslots;		   /* slots[0 .. nslots) are in use */
	uint32_t pad;
	uint64_t over;			   /* sized calls of nodes that found no free slot */
	uint64_t rng;			   /* xorshift64 state of the reservoir */
	uint16_t slot_of[PERCH_MAX_NODES]; /* per node: its slot + 1, 0 none */
	struct perch_abi_model slots[PERCH_MODEL_SLOTS];
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
	/* Version 4 on, past everything version 3 has: the thread's timeline ring, written only
	 * while registry.timeline is set. The thread writes entry i at ring[i % PERCH_RING_ENTRIES]
	 * and then sets ring_head to i + 1; it never waits: the profiler reads with its own cursor
	 * and counts what was overwritten before it came. ring_start is ring_head when the epoch
	 * (or a forked child) began: the profiler starts there with a block it did not know. Every
	 * thread that takes the block first writes a PERCH_RING_THREAD entry naming itself. */
	uint64_t ring_pad0; /* ring_head starts a cache line (64 bytes) */
	volatile uint64_t ring_head;
	uint64_t ring_start;
	uint64_t ring_pad1[6]; /* and the ring the next: no entry straddles two */
	struct perch_abi_event ring[PERCH_RING_ENTRIES];
	/* Version 5 on, past everything version 4 has: the sized regions' cost-model data. */
	struct perch_abi_models models;
};

/*
 * Version 5: what the sampler reads at every tick of a process with a runtime (one read of this
 * block) and the runtime checks before it times a region. A tick counts, and a region begun is
 * timed, only when the program has not paused (paused == 0) and, with a step gate, a step in
 * [first, last] is open. The program writes paused, in_step and step; the profiler writes the rest.
 */
struct perch_abi_ctl {
	volatile uint32_t paused;  /* perch_profile_pause() depth: pauses nest */
	volatile uint32_t in_step; /* 1 from perch_step(n) to the step's end */
	volatile uint64_t step;	   /* n of the open (or the last) step */
	uint64_t first, last;	   /* profiler: --steps=first:last */
	volatile uint32_t gate;	   /* profiler: 1 with --steps (only steps first..last count) */
	volatile uint32_t only;	   /* --only-region's name id (0: none yet); set by the profiler,
				    * or by the runtime when it registers only_name */
};

/* Version 5: the process-wide control log: what the program did, in order, with its time. */
#define PERCH_LOG_ENTRIES 256 /* a power of two */
enum perch_log_kind {
	PERCH_LOG_PAUSE = 1,	/* perch_profile_pause() from not paused; value: 0 */
	PERCH_LOG_RESUME = 2,	/* the last perch_profile_resume(); value: 0 */
	PERCH_LOG_STEP = 3,	/* perch_step(n): step n starts (the open one ends); value: n */
	PERCH_LOG_STEP_END = 4, /* perch_step_end() or the program's exit; value: n */
};

struct perch_abi_log {
	uint64_t time;	/* tick_unit */
	uint64_t value; /* the step number */
	uint32_t kind;	/* enum perch_log_kind */
	uint32_t tid;
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
	/* Version 4 on. Set by the profiler (or the environment, PERCH_ENV_TIMELINE) before
	 * `active`: while active, every timed begin, end and mark also goes into the thread's
	 * ring. ring_entries: PERCH_RING_ENTRIES of the runtime that wrote it. */
	volatile uint32_t timeline;
	uint32_t ring_entries;
	/* Version 5 on: steps and pauses. ctl as above; only_name: --only-region's name, written
	 * by the profiler before ctl.only (the runtime sets ctl.only when it registers the name
	 * later). The program appends log entry i at log[i % PERCH_LOG_ENTRIES], then sets
	 * log_head to i + 1, only while `active`; the profiler reads with its own cursor and
	 * counts what was overwritten before it came. */
	struct perch_abi_ctl ctl;
	char only_name[PERCH_NAME_LEN];
	volatile uint64_t log_head;
	struct perch_abi_log log[PERCH_LOG_ENTRIES];
};

#define PERCH_TICKS_TSC	      0 /* x86 time-stamp counter (invariant TSC); the profiler calibrates */
#define PERCH_TICKS_NS	      1 /* CLOCK_MONOTONIC nanoseconds */
#define PERCH_COLLECT_AT_EXIT 1
#define PERCH_COLLECTED	      2
#define PERCH_EXIT_WAIT_MS    2000
/* In the environment of a command perch launches: start timing at once (set active and
 * collector from the runtime's constructor), so not a single region goes untimed. */
#define PERCH_ENV_ACTIVE "PERCH_REGIONS_ACTIVE" /* value: the profiler's pid */
/* And with it, the timeline from the start (value "1"; version 4 on). */
#define PERCH_ENV_TIMELINE "PERCH_REGIONS_TIMELINE"
/* And (version 5 on) --steps=FIRST:LAST and --only-region=NAME from the start. */
#define PERCH_ENV_STEPS "PERCH_REGIONS_STEPS"
#define PERCH_ENV_ONLY	"PERCH_REGIONS_ONLY"

#endif /* PERCH_ABI_H */
