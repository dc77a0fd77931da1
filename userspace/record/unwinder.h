/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The unwind tables in the kernel: builds each module's table (unwind/unwind_table.h) once, the
 * first time a target maps it, copies its rows into the sampler's rows array, and keeps every
 * target's list of mappings with tables (the sampler's proc_unwind map) in step with its mmaps,
 * execs, forks and exits. The sampler then unwinds those processes' user stacks itself.
 */
#ifndef PERCH_UNWINDER_H
#define PERCH_UNWINDER_H

#include <stdint.h>
#include "proc.h"

struct unwinder;

enum unwinder_stat {
	UNWINDER_TABLES = 0,  /* modules whose table is loaded */
	UNWINDER_ROWS,	      /* rows of those tables */
	UNWINDER_NO_TABLE,    /* modules without usable CFI (or not readable): frame pointers */
	UNWINDER_ROWS_FULL,   /* modules left out because the rows array was full */
	UNWINDER_MAPS_FULL,   /* mappings left out: a process had PERCH_UNWIND_MAPS already */
	UNWINDER_PROCS_FULL,  /* processes whose list the kernel map could not take */
	UNWINDER_CFI_DAMAGED, /* modules whose CFI sections hold no usable FDE: walked by frame
			       * pointers, which -fomit-frame-pointer code cannot follow */
	UNWINDER_STAT_MAX,
};

/* rows_fd: the sampler's unwind_rows array; procs_fd: its proc_unwind hash.
 * Both borrowed: they must outlive the unwinder. NULL + errno. */
struct unwinder *unwinder__new(int rows_fd, int procs_fd);
void unwinder__free(struct unwinder *u);

/* Build the table of the file at path now (a command about to be launched), so that the sampler
 * has it from the process's first tick. */
void unwinder__preload(struct unwinder *u, const char *path);

/* pid mapped m executable (from an mmap record or /proc/PID/maps): list its module's table, or
 * take the range out of the list when the module has none. */
void unwinder__mmap(struct unwinder *u, uint32_t pid, const struct proc_map *m);

/* List every executable mapping of /proc/PID/maps (after attaching). */
void unwinder__snapshot(struct unwinder *u, uint32_t pid);

/* pid exec'd: its list starts over (the sampler dropped its copy at the exec). */
void unwinder__exec(struct unwinder *u, uint32_t pid);

/* child was forked by parent: it starts with the parent's list (the sampler copied it). */
void unwinder__fork(struct unwinder *u, uint32_t parent, uint32_t child);

/* pid is gone: forget its list, here and in the kernel. */
void unwinder__exit(struct unwinder *u, uint32_t pid);

uint64_t unwinder__stat(const struct unwinder *u, enum unwinder_stat which);

#endif /* PERCH_UNWINDER_H */
