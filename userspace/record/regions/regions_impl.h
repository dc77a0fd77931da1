/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to record/regions*: the profiler's side of region markers as its parts see it.
 * regions.c owns the listener on the process table and the API of regions.h; regions_find.c
 * finds the runtime's registry in a module's ELF file; regions_mem.c reads and writes the
 * target's memory; regions_switch.c switches a runtime on and back off (one perch at a time);
 * regions_read.c reads the per-thread trees and writes them as REGIONS blocks;
 * regions_stacks.c turns the sampler's region stacks into the region names of samples;
 * regions_sizes.c reads the sized regions' cost-model slots (ABI 5) for the SIZES block.
 */
#ifndef PERCH_RECORD_REGIONS_IMPL_H
#define PERCH_RECORD_REGIONS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/perch_bpf.h"
#include "format/recording.h"
#include "lib/u64map.h"
#include "perch_abi.h"
#include "record/procs.h"
#include "regions.h"

#define REG_FIELD(f) offsetof(struct perch_abi_registry, f)
/* The registry of ABI version 3, which perch still reads (no timeline): everything before. */
#define REG_V3_SIZE REG_FIELD(timeline)
/* And of version 4 (no steps or pauses). */
#define REG_V4_SIZE REG_FIELD(ctl)

/* What one process may cost perch per drain, whatever its memory says: thread blocks walked,
 * bytes of heads, trees and cost models read and kept (past it the blocks are refused, counted),
 * ring entries read (past it the rest wait in their rings for the next drain). */
#define REGIONS_MAX_BLOCKS  16384
#define REGIONS_PROC_BUDGET (32u << 20)
#define REGIONS_SPAN_BUDGET (1u << 20)
/* A time read from a runtime (its rings, its control log) is the run's when it falls between
 * perch's start and the reading's clock, give or take these (ns): else it is refused, counted. */
#define REGIONS_RUN_BEFORE_NS 10000000ull
#define REGIONS_RUN_AFTER_NS  1000000000ull

/* regions_parse.c: memory through peek (0, or -1 when unreadable); a name id's string id in the
 * recording through name (0: none could be made). */
typedef int (*regions_peek_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
typedef uint32_t (*regions_name_fn)(void *ctx, uint32_t id);

/* The thread blocks of a runtime's list, each once, in list order; kept between drains. */
struct regions_walk {
	struct u64map seen; /* block address -> the walk (gen) that saw it */
	uint64_t gen;
	uint64_t *blocks;
	size_t nblocks, cap;
};

enum { REGIONS_WALK_CYCLE = 1, REGIONS_WALK_LONG = 2 };

/* The list from first into wk->blocks: 0, REGIONS_WALK_CYCLE when it came back to a block it
 * had (the walk stops there), REGIONS_WALK_LONG past REGIONS_MAX_BLOCKS blocks. */
int regions_walk(struct regions_walk *wk, uint64_t first, regions_peek_fn peek, void *ctx);
void regions_walk_free(struct regions_walk *wk);
bool regions_parse_tree(const struct perch_abi_node *nodes, uint32_t n,
			const struct perch_abi_node *other, double scale, regions_name_fn name,
			void *ctx, struct rec_region_thread *t);

/* Region calls the runtime could not keep under their own name and place (its limits). */
struct limits {
	uint64_t names_over; /* under PERCH_NAME_TOO_MANY: the name table was full */
	uint64_t tree_full;  /* under PERCH_NODE_OTHER: the thread's tree was full */
	uint64_t too_deep;   /* deeper than PERCH_MAX_DEPTH: counted only */
};

enum proc_state {
	P_PENDING = 0, /* registry found, the runtime's constructor has not run yet */
	P_ON,	       /* switched on, tables read periodically */
	P_DONE,	       /* final figures written */
};

/* A process with a runtime, in its process slot (procs.h). */
/* Where perch is in one thread block's timeline ring (regions_timeline.c). */
struct ring_cursor {
	uint64_t addr; /* the block */
	uint64_t next; /* the next entry to read */
	uint64_t size; /* a PERCH_RING_SIZE entry's value, for the BEGIN after it */
	uint32_t tid;  /* the thread writing the entries, 0 until a PERCH_RING_THREAD says */
	bool has_size;
};

struct rproc {
	uint32_t pid;
	enum proc_state state;
	bool attached;	/* perch switched the runtime on (not the environment of a launch) */
	uint32_t owner; /* another live perch that owns the runtime (the process is left alone) */
	uint64_t addr;	/* the registry in the process */
	struct perch_abi_registry reg;
	char (*names)[PERCH_NAME_LEN]; /* names[0 .. nnames) read so far */
	uint32_t nnames;
	struct rec_region_thread *threads; /* the last read */
	size_t nthreads;
	struct rec_size_thread *sthreads; /* the last read's cost-model data (ABI 5 on) */
	size_t nsthreads;
	struct limits lim;   /* of the last read */
	uint32_t *name_strs; /* per name id: string id in the recording, 0 = not made yet */
	size_t capnames, capstrs;
	bool timeline;		   /* its runtime writes timeline rings (ABI 4 on, --timeline) */
	struct ring_cursor *rings; /* per thread block */
	size_t nrings, caprings;
	struct u64map ring_index; /* block address -> index in rings */
	bool forked;		  /* a fork of a process perch times: the log before is not its */
	uint64_t log_next;	  /* the next control log entry to read (ABI 5, regions_ctl.c) */
	struct regions_walk walk; /* the thread blocks of the last read (regions_parse.c) */
	bool listed;		  /* in regions.live */
};

struct regions {
	struct rec_writer *w;
	int procs_fd, stacks_fd;
	struct procs *ps; /* borrowed: processes and modules, our slots in them */
	int id;
	/* The processes pending or on, in the order they were found: what every poll and drain
	 * visits (the process table keeps every process the run saw: -a on a host that keeps
	 * starting processes makes it long). */
	struct rproc **live;
	size_t nlive, caplive;
	struct u64map stack_index;   /* region stack hash -> index in stacks */
	struct perch_rstack *stacks; /* the sampler's region stacks, as read */
	size_t nstacks, capstacks;
	uint64_t tsc0, ns0;   /* calibration start */
	bool timeline;	      /* --timeline: region spans from the runtimes' rings */
	uint64_t spans_until; /* spans at or after it wait for a later read (0: none) */
	uint64_t stats[REGIONS_STAT_MAX];
	uint32_t me; /* this perch's pid and start time: the owner it writes */
	uint64_t me_start;
	struct perch_abi_thread *head; /* scratch: a thread block (only its head is read) */
	struct perch_abi_node *nodes;  /* scratch: a block's nodes (PERCH_MAX_NODES) */
	struct perch_abi_event *ring;  /* scratch: a ring's entries (PERCH_RING_ENTRIES) */
	bool warned;
	/* Steps and pauses (regions_ctl.c): --steps and --only-region for every runtime, and
	 * where the programs' control logs go. */
	bool steps;
	uint64_t first, last;
	const char *only;
	regions_ctl_fn ctl_fn;
	void *ctl_ctx;
	bool warned_old;
};

/* regions.c: pid's process, when it has a runtime (else NULL). */
struct rproc *regions_find_proc(const struct regions *rg, uint32_t pid);

/* regions_find.c: the registry's address in pid, from its executable mapping m of module pm
 * (whose slot caches what the file holds); false when the file holds no runtime. */
bool regions_find(struct regions *rg, uint32_t pid, const struct proc_map *m,
		  struct procs_module *pm, uint64_t *addr);

/* regions_mem.c: 0, or -1 with errno. read_registry also checks the ABI (EPROTO): version 3
 * reads with the fields after REG_V3_SIZE zero. */
int regions_peek(uint32_t pid, uint64_t addr, void *buf, size_t len);
int regions_poke_u32(struct rproc *p, size_t off, uint32_t v);
int regions_poke_u64(struct rproc *p, size_t off, uint64_t v);
int regions_poke(struct rproc *p, size_t off, const void *buf, size_t len);
int regions_read_registry(struct rproc *p);

/* regions_switch.c: switch p's runtime on (or leave it pending, busy or unreadable); release
 * gives it back at the end. */
void regions_switch_on(struct regions *rg, struct rproc *p);
void regions_release(struct regions *rg, struct rproc *p);

/* regions_stacks.c: name id's string in the recording (made once per process). */
uint32_t regions_name_string(struct regions *rg, struct rproc *p, uint32_t id);

/* regions_read.c */
void regions_clock_start(struct regions *rg);
/* A TSC reading and CLOCK_MONOTONIC at the same instant (the closest of a few tries), and the
 * ns per tick of p's runtime (1 when it counts nanoseconds). */
void regions_clock_now(uint64_t *tsc, uint64_t *ns);
double regions_ns_per_tick(const struct regions *rg, const struct rproc *p);
/* A runtime's tick count on CLOCK_MONOTONIC, from a reading of both clocks (tsc, ns) at scale ns
 * per tick; UINT64_MAX when it lands outside u64 (garbage). */
uint64_t regions_ticks_ns(uint64_t ticks, uint64_t tsc, uint64_t ns, double scale);
/* t (CLOCK_MONOTONIC, read from a runtime) falls in the run, as of the clock reading now. */
bool regions_time_in_run(const struct regions *rg, uint64_t t, uint64_t now);
void regions_free_threads(struct rec_region_thread *t, size_t n);
int regions_read_names(struct rproc *p);
const char *regions_name_of(const struct rproc *p, uint32_t id);
bool regions_collect_proc(struct regions *rg, struct rproc *p);
void regions_write_proc(struct regions *rg, struct rproc *p);

/* regions_sizes.c: the model slots of the thread block at addr (ABI 5 on) into t, its pid and
 * tid set by the caller; 0 (t empty when there are none) or -1. */
int regions_read_sizes(struct regions *rg, struct rproc *p, uint64_t addr, double scale,
		       struct rec_size_thread *t);
void regions_free_sizes(struct rec_size_thread *t, size_t n);

/* regions_ctl.c: at switch-on, hand the sampler p's ctl block and set --steps and
 * --only-region in its runtime (before `active`; false when its memory can't be written); the
 * program's control log since the last read, to the ctl function; p is gone (exited or exec'd). */
bool regions_ctl_on(struct regions *rg, struct rproc *p);
void regions_read_log(struct regions *rg, struct rproc *p);
void regions_ctl_gone(struct regions *rg, struct rproc *p);
/* regions_timeline.c: the spans in p's thread rings since the last read, written with
 * rec_writer__span; what was overwritten before perch came is counted. */
void regions_read_spans(struct regions *rg, struct rproc *p);
void regions_free_rings(struct rproc *p);
/* Of a ring of n entries that perch read from cursor while the writer's head went from h1 (all
 * of [.., h1) written) to h2: the first entry still intact (entries [cursor, it) were lost). */
uint64_t regions_ring_valid_from(uint64_t cursor, uint64_t h1, uint64_t h2, uint64_t n);

#endif /* PERCH_RECORD_REGIONS_IMPL_H */
