/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Turns what the sampler counted (raw user and kernel addresses per thread) into recording
 * samples: captures each process's mappings while it lives, symbolizes every new address once,
 * repairs the frame a frameless leaf hides from a frame-pointer walk, and counts what it could
 * not resolve.
 */
#ifndef PERCH_COLLECT_H
#define PERCH_COLLECT_H

#include <stdint.h>
#include <linux/types.h>
#include "format/recording.h"
#include "record/procs.h"
#include "record/raw_sample.h"

struct collector;

enum collect_stat {
	COLLECT_TRUNCATED = 0,	/* stacks that reached the depth limit */
	COLLECT_LEAF_FIXED,	/* samples whose frameless leaf's caller was restored */
	COLLECT_NO_MAPS,	/* samples of processes whose mappings could not be read */
	COLLECT_UNNAMED,	/* distinct user frames that no symbol covers */
	COLLECT_UNWIND_STOPPED, /* samples whose in-kernel unwinding stopped before the outermost
				 * frame (flagged truncated too) */
	COLLECT_DAMAGED,	/* samples whose user stack went on past an address no executable
				 * mapping holds: cut there (flagged truncated too) */
	COLLECT_JIT_CAPPED,	/* JIT maps over PERFMAP_MAX_BYTES, or past what all maps may hold
				 * together (PERFMAP_TOTAL_BYTES), read only that far */
	COLLECT_JIT_LATE,	/* JIT frames named after they were written (a map written late) */
	COLLECT_STAT_MAX,
};

/* w is borrowed and must outlive the collector. max_stack: the kernel's callchain limit.
 * Listens to ps (borrowed, freed first): a started process's mappings are copied at once (so one
 * that dies before the first drain still resolves), an exec starts a new exec generation whose
 * mappings the mmaps bring (each file pinned, opened and indexed, at once, so it resolves after
 * the process is gone), an exit names the JIT frames its perf map covers by then. NULL + errno. */
struct collector *collector__new(struct rec_writer *w, unsigned int max_stack, struct procs *ps);
void collector__free(struct collector *c);

/* Add one counted bucket, as any sampler hands it on (record/raw_sample.h). regions: the string
 * ids of the thread's open regions' names, outermost first (the sample's regions, recording.h),
 * which the run resolved from s->region_stack. A user stack unwound from the module's tables
 * (RAW_UNWOUND) is taken as complete: no frameless-leaf repair. */
int collector__add(struct collector *c, const struct raw_sample *s, const uint32_t *regions,
		   uint32_t nregions);

/* CPython frames (record/python/python.h, borrowed; NULL: none): a sample's Python frames are
 * named through py and spliced in where the interpreter's loop ran them. */
struct python;
void collector__set_python(struct collector *c, struct python *py);

/* --timeline: collector__add() also gives each bucket its key id (rec_writer__key), which
 * collector__last_key() returns (UINT32_MAX when the last bucket has none). */
void collector__set_keys(struct collector *c, bool on);
uint32_t collector__last_key(const struct collector *c);

/* A drain is done: images of generations no sample still waiting can be from are freed (the
 * newest of each process at the drain before this one, and newer, are kept). */
void collector__drained(struct collector *c);

/* Kernel symbols that come and go (symbolize/kdyn.h, borrowed; NULL: none): a kernel address one
 * of them holds is named by it first, ahead of /proc/kallsyms. */
struct kdyn;
void collector__set_kernel_syms(struct collector *c, const struct kdyn *k);

/* Record source lines and inline chains from DWARF (costs one index build per module). */
void collector__set_lines(struct collector *c, bool on);

/* Before the recording ends: name the JIT frames whose processes' maps now cover them. */
void collector__finish(struct collector *c);

uint64_t collector__stat(const struct collector *c, enum collect_stat which);

#endif /* PERCH_COLLECT_H */
