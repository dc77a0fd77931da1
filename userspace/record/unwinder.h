/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The unwind tables in the kernel: builds each module's table (unwind/unwind_table.h) once, the
 * first time a target maps it, copies its rows into the sampler's rows array, and keeps every
 * target's list of mappings with tables (the sampler's proc_unwind map) in step with its mmaps,
 * execs, forks and exits, which it hears as a listener on the process table (procs.h). The sampler then unwinds those processes' user stacks itself.
 */
#ifndef PERCH_UNWINDER_H
#define PERCH_UNWINDER_H

#include <stdint.h>
#include "procs.h"

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

/* rows_fd: the sampler's unwind_rows array; procs_fd: its proc_unwind hash; early_fd: its
 * early_until hash (struct perch_early: a process's early window stays open while its new
 * module's table is built, and PERCH_EARLY_NS after it is listed). All borrowed: they must outlive
 * the unwinder. Listens to ps (borrowed, freed first) from now on: an attached
 * process's mappings, a launched command's executable (built before its first tick), every
 * mmap, exec, fork and exit keep the sampler's lists in step. NULL + errno. */
struct unwinder *unwinder__new(int rows_fd, int procs_fd, int early_fd, struct procs *ps);
void unwinder__free(struct unwinder *u);

uint64_t unwinder__stat(const struct unwinder *u, enum unwinder_stat which);

#endif /* PERCH_UNWINDER_H */
