/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The walk of an early stack (struct perch_early, bpf/perch_bpf.h): a tick's registers and a copy
 * of its user stack, walked with the rows the kernel walk uses, step for step as unwind_frame()
 * in bpf/sample.bpf.c (CFA from RSP/RBP + offset, PLT and signal frames, a frameless leaf in code
 * without a row or else a frame-pointer step from it, a frame-pointer step for a caller without
 * one), or by frame pointers alone as
 * bpf_get_stackid() walks a process without tables. Memory is the copy only: a read outside it
 * ends the walk. The rows come through a callback, so the sampler reads them from its map and the
 * tests from an array.
 */
#ifndef PERCH_RECORD_EARLY_WALK_H
#define PERCH_RECORD_EARLY_WALK_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/perch_bpf.h"

/* Row i of the rows array (as the sampler's unwind_rows holds them); false when unreadable. */
typedef bool (*early_row_fn)(void *ctx, uint32_t i, struct unwind_row *out);

enum early_walk_end {
	EARLY_WALK_DONE = 1,  /* the outermost frame reached */
	EARLY_WALK_TRUNCATED, /* PERCH_MAX_STACK frames and more to go */
	EARLY_WALK_STOPPED,   /* no row or copy to go on with */
	EARLY_WALK_FP_LEAF,   /* the leaf is in code without rows and not frameless, and the rows
			       * could not go on from where its frame pointers led: the kernel
			       * walks such a stack by frame pointers (early_walk_fp) */
};

/* Walk e with proc's mappings (mode: enum perch_unwind_mode); the frames into pc (leaf first,
 * return addresses as the kernel stores them, zero-terminated: PERCH_MAX_STACK + 1 entries), their
 * number into *n. A leaf without rows whose return address is not on top of the stack is left by
 * its frame pointer, the walk going on with the rows where they are: then *fp_leaf (NULL: not
 * asked) is true. *nocfi (NULL: not asked): some frame was stepped from without a row (a module
 * whose table is not listed yet looks the same as code without one). Returns enum
 * early_walk_end. */
int early_walk(const struct perch_early *e, const struct perch_proc_unwind *proc, early_row_fn row,
	       void *ctx, uint32_t mode, uint64_t *pc, uint32_t *n, bool *fp_leaf, bool *nocfi);

/* Walk e by frame pointers: its pc, then the return addresses of the RBP chain, into pc as above.
 * Returns the number of frames. */
uint32_t early_walk_fp(const struct perch_early *e, uint64_t *pc);

/* The word at addr in e's copy; false outside it. */
bool early_read_word(const struct perch_early *e, uint64_t addr, uint64_t *out);

#endif /* PERCH_RECORD_EARLY_WALK_H */
