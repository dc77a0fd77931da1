/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profiler's side of region markers (include/perch.h): finds the region runtime in each
 * target (the `perch_registry` section of the executable or libperch.so), switches it on, tells
 * the sampler where every thread's region stack is, reads the exact per-thread region trees out
 * of the target's memory (periodically, and at the runtime's exit handshake), and writes them as
 * REGIONS blocks. Also turns the sampler's region stacks into the region names of samples.
 */
#ifndef PERCH_REGIONS_H
#define PERCH_REGIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "format/recording.h"
#include "record/procs.h"

struct regions;

/* What a region named "" is recorded as: string id 0 is the root's, and a name that prints as
 * nothing could not be read in a report anyway. */
#define REGIONS_EMPTY_NAME "(empty name)"

enum regions_stat {
	REGIONS_PROCS = 0,	 /* processes whose region runtime was found and switched on */
	REGIONS_UNREADABLE,	 /* processes whose memory could not be read or written */
	REGIONS_NO_HANDSHAKE,	 /* processes that ended without the exit handshake (exec, _exit,
				* signal): their figures are from the last periodic read */
	REGIONS_STACKS_LOST,	 /* samples whose region stack is unknown */
	REGIONS_BUSY,		 /* processes left alone: another perch owns their region runtime */
	REGIONS_NAMES_OVER,	 /* region calls whose name did not fit the runtime's name table */
	REGIONS_TREE_FULL,	 /* region calls that did not fit their thread's tree */
	REGIONS_TOO_DEEP,	 /* region begins and marks nested deeper than the runtime keeps */
	REGIONS_SPANS_LOST,	 /* --timeline: region begins, ends and marks overwritten in a
			       * thread's ring before perch read them */
	REGIONS_NO_TIMELINE,	 /* --timeline: processes whose runtime is too old for spans */
	REGIONS_LOG_LOST,	 /* program pauses and steps overwritten in its control log before
			       * perch read them (ABI 5) */
	REGIONS_STEPS_PROCS,	 /* processes whose runtime has steps and pauses (ABI 5) */
	REGIONS_SPANS_REFUSED,	 /* --timeline: region begins, ends and marks whose time is
				  * outside the run (garbage in a ring): dropped */
	REGIONS_THREAD_CYCLES,	 /* reads that found the runtime's thread list coming back on
				  * itself (each block read once) or running past its bound */
	REGIONS_THREADS_REFUSED, /* thread blocks left out of a read: past what one process may
				  * cost per read (trees, cost models, ring cursors) */
	REGIONS_LOG_REFUSED,	 /* control log entries whose time is outside the run: dropped */
	REGIONS_STAT_MAX,
};

/* w is borrowed. procs_fd/stacks_fd: the sampler's region_procs and region_stacks maps.
 * Listens to ps (borrowed, freed first): looks for the runtime in every executable file a target
 * maps (or shows when attached), follows forks, and writes and forgets a process's figures when
 * it execs or exits. An attached process whose runtime another live perch owns is refused
 * (procs__snapshot() returns -EBUSY: one perch at a time, its figures and its switching off are
 * its own); regions__owner() names that perch. NULL + errno. */
struct regions *regions__new(struct rec_writer *w, int procs_fd, int stacks_fd, struct procs *ps);
void regions__free(struct regions *rg);

/* --timeline: switch the runtimes' timeline rings on and write their spans (before any target
 * starts). regions__spans_until(): the spans reads write from now on stop at until_ns
 * (CLOCK_MONOTONIC), the end of the window the drain just wrote; later ones wait in their rings
 * for the next read, so every span falls in a window (those still waiting at the end are past
 * the recording). A process's last read at its exit handshake takes them all. */
void regions__set_timeline(struct regions *rg, bool on);
void regions__spans_until(struct regions *rg, uint64_t until_ns);

/* Steps and pauses (ABI 5 runtimes): --steps=first:last (steps false: none) and --only-region
 * (NULL: none; borrowed for the run), set in every runtime found from now on (before any
 * target starts). What the programs did goes to fn as it is read (every loop turn): kind an enum
 * perch_log_kind, or REGIONS_CTL_GONE when the process exited or exec'd; time_ns on
 * CLOCK_MONOTONIC; value the step number. A runtime of ABI 3 or 4 has none: one note. */
#define REGIONS_CTL_GONE 0
typedef void (*regions_ctl_fn)(void *ctx, uint32_t pid, uint32_t kind, uint64_t time_ns,
			       uint64_t value);
void regions__set_ctl(struct regions *rg, bool steps, uint64_t first, uint64_t last,
		      const char *only, regions_ctl_fn fn, void *ctx);
/* The pid of the other perch that owns pid's region runtime, 0 if none. */
uint32_t regions__owner(const struct regions *rg, uint32_t pid);

/* Often (every loop turn): finish switching on runtimes whose constructor had not run yet, and
 * answer exit handshakes. Cheap: one small read per process. */
void regions__poll(struct regions *rg);
/* Less often (every drain): read every process's region trees. */
void regions__collect(struct regions *rg);
/* The end: read and write everything; processes perch attached to are switched back off. */
void regions__finish(struct regions *rg);

/* The region stack of a sample of pid keyed by region_hash: the names' string ids in the
 * recording, outermost first (rec_sample.regions); returns how many were put in out (at most
 * max). 0 for hash 0. */
uint32_t regions__names(struct regions *rg, uint32_t pid, uint64_t hash, uint32_t *out,
			uint32_t max);

uint64_t regions__stat(const struct regions *rg, enum regions_stat which);
void regions__count_lost(struct regions *rg, uint64_t samples);

#endif /* PERCH_REGIONS_H */
