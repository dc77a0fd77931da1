// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the early-stack walk (record/early_walk.h): a copied stack of a made-up module with
 * known frames walked with its rows as the kernel walks them (RSP rows, the outermost frame, a
 * frame-pointer step for a caller without rows, a frameless leaf without rows, or a
 * frame-pointer step from it where that guess fails, then the rows), and what ends it (the copy's end, --unwind=dwarf
 * without rows, PERCH_MAX_STACK frames); the frame-pointer walk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "record/early_walk.h"

/* The module: leaf() at 0x400000 pushes nothing, mid() at 0x400100 keeps 8 bytes more, start()
 * at 0x400200 is the outermost frame; nothing covers 0x400300 on. */
#define BASE  0x400000ull
#define SP    0x7ffd0000ull
#define OTHER 0x500000ull /* code without a table */

static const struct unwind_row rows[] = {
	{.pc = 0x000, .cfa_off = 8, .cfa = UNWIND_CFA_RSP},
	{.pc = 0x100, .cfa_off = 16, .cfa = UNWIND_CFA_RSP},
	{.pc = 0x200, .cfa = UNWIND_CFA_OUTERMOST},
	{.pc = 0x300, .cfa = UNWIND_CFA_NONE},
};

static bool array_row(void *ctx, uint32_t i, struct unwind_row *out)
{
	(void)ctx;
	if (i >= sizeof(rows) / sizeof(rows[0]))
		return false;
	*out = rows[i];
	return true;
}

static const struct perch_proc_unwind proc = {
	.n = 1,
	.map = {{.start = BASE, .end = BASE + 0x1000, .base = BASE, .first_row = 0, .nrows = 4}},
};

static struct perch_early *early_new(uint64_t ip, uint64_t bp, uint32_t len)
{
	struct perch_early *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->ip = ip;
	e->sp = SP;
	e->bp = bp;
	e->len = len;
	return e;
}

static void put(struct perch_early *e, uint64_t addr, uint64_t v)
{
	assert_true(addr >= e->sp && addr + 8 <= e->sp + PERCH_EARLY_STACK);
	memcpy(e->stack + (addr - e->sp), &v, sizeof(v));
}

/* leaf -> mid -> start: leaf's return address at SP, mid's 16 bytes above its CFA's start. */
static struct perch_early *three_frames(uint32_t len)
{
	struct perch_early *e = early_new(BASE + 0x50, 0, len);

	put(e, SP, BASE + 0x150);
	put(e, SP + 16, BASE + 0x250);
	return e;
}

static void walk_reaches_outermost_frame(void **state)
{
	struct perch_early *e = three_frames(64);
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;
	bool nocfi = true;

	(void)state;
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, NULL, &nocfi),
		EARLY_WALK_DONE);
	assert_false(nocfi); /* every frame by its row */
	assert_int_equal(n, 3);
	assert_true(pc[0] == BASE + 0x50 && pc[1] == BASE + 0x150 && pc[2] == BASE + 0x250);
	assert_true(pc[3] == 0);
	free(e);
}

static void walk_stops_at_end_of_copy(void **state)
{
	struct perch_early *e = three_frames(16); /* mid's return address at SP + 16: not copied */
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;

	(void)state;
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, NULL, NULL),
		EARLY_WALK_STOPPED);
	assert_int_equal(n, 2);
	assert_true(pc[1] == BASE + 0x150);
	free(e);
}

/* leaf returns into code without a table whose frame is on the RBP chain, which returns into
 * start: a frame-pointer step (--unwind=auto), not with --unwind=dwarf. */
static void walk_steps_frame_pointers_where_no_rows(void **state)
{
	struct perch_early *e = early_new(BASE + 0x50, SP + 32, 128);
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;
	bool nocfi = false;

	(void)state;
	put(e, SP, OTHER + 0x10);
	put(e, SP + 32, 0);	       /* the caller's saved RBP: the chain ends */
	put(e, SP + 40, BASE + 0x250); /* its return address */
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, NULL, &nocfi),
		EARLY_WALK_DONE);
	/* Complete, but by a frame without rows: a module not listed yet looks the same, and the
	 * sampler walks such an early stack again at the drain that settles it. */
	assert_true(nocfi);
	assert_int_equal(n, 3);
	assert_true(pc[1] == OTHER + 0x10 && pc[2] == BASE + 0x250);
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_DWARF, pc, &n, NULL, NULL),
		EARLY_WALK_STOPPED);
	assert_int_equal(n, 2);
	free(e);
}

/* A leaf in code without rows: its return address on top of the stack, confirmed by a caller
 * with rows. */
static void walk_takes_frameless_leaf_without_rows(void **state)
{
	struct perch_early *e = early_new(OTHER + 0x20, 0, 64);
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;

	(void)state;
	put(e, SP, BASE + 0x250);
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, NULL, NULL),
		EARLY_WALK_DONE);
	assert_int_equal(n, 2);
	assert_true(pc[0] == OTHER + 0x20 && pc[1] == BASE + 0x250);
	free(e);
}

/* A leaf in code without rows that has a frame (the word on top is not its return address): the
 * guess fails, and the walk starts over by the leaf's frame pointer, then goes on with the rows
 * (mid, then start: the outermost frame, as every stack through mid ends), not by frame pointers
 * to where the RBP chain ends (issue 23). */
static void walk_leaves_framed_leaf_by_frame_pointer(void **state)
{
	struct perch_early *e = early_new(OTHER + 0x20, SP + 16, 64);
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;
	bool fp_leaf = false;

	(void)state;
	put(e, SP, OTHER + 0x40);      /* a local of the leaf's, pointing at code without rows */
	put(e, SP + 16, 0);	       /* the leaf's frame: the caller's RBP (none: 0) */
	put(e, SP + 24, BASE + 0x150); /* its return address, into mid */
	put(e, SP + 40, BASE + 0x250); /* mid's, at its CFA (SP + 32 + 16) - 8 */
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, &fp_leaf, NULL),
		EARLY_WALK_DONE);
	assert_int_equal(n, 3);
	assert_true(pc[0] == OTHER + 0x20 && pc[1] == BASE + 0x150 && pc[2] == BASE + 0x250);
	assert_true(fp_leaf);
	/* The rows cannot go on (mid's return address not copied): the kernel walks such a stack
	 * by frame pointers alone, and so does the caller of early_walk. */
	e->len = 40;
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, &fp_leaf, NULL),
		EARLY_WALK_FP_LEAF);
	assert_false(fp_leaf);
	free(e);
}

/* mid calling itself for ever (each frame's return address into mid): PERCH_MAX_STACK frames. */
static void walk_truncates_at_max_stack(void **state)
{
	struct perch_early *e = early_new(BASE + 0x150, 0, PERCH_EARLY_STACK);
	uint64_t pc[PERCH_MAX_STACK + 1];
	uint32_t n = 0;

	(void)state;
	for (uint64_t a = SP + 8; a + 8 <= SP + PERCH_EARLY_STACK; a += 16)
		put(e, a, BASE + 0x160);
	assert_int_equal(
		early_walk(e, &proc, array_row, NULL, PERCH_UNWIND_AUTO, pc, &n, NULL, NULL),
		EARLY_WALK_TRUNCATED);
	assert_int_equal(n, PERCH_MAX_STACK);
	assert_true(pc[PERCH_MAX_STACK - 1] == BASE + 0x160 && pc[PERCH_MAX_STACK] == 0);
	free(e);
}

static void fp_walk_follows_rbp_chain(void **state)
{
	struct perch_early *e = early_new(OTHER, SP + 16, 256);
	uint64_t pc[PERCH_MAX_STACK + 1];

	(void)state;
	put(e, SP + 16, SP + 64); /* frame 1: saved RBP, return address */
	put(e, SP + 24, OTHER + 0x100);
	put(e, SP + 64, 0); /* frame 2: the chain's end */
	put(e, SP + 72, OTHER + 0x200);
	assert_int_equal(early_walk_fp(e, pc), 3);
	assert_true(pc[0] == OTHER && pc[1] == OTHER + 0x100 && pc[2] == OTHER + 0x200 && !pc[3]);
	e->len = 32; /* frame 2 not copied */
	assert_int_equal(early_walk_fp(e, pc), 2);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walk_reaches_outermost_frame),
		cmocka_unit_test(walk_stops_at_end_of_copy),
		cmocka_unit_test(walk_steps_frame_pointers_where_no_rows),
		cmocka_unit_test(walk_takes_frameless_leaf_without_rows),
		cmocka_unit_test(walk_leaves_framed_leaf_by_frame_pointer),
		cmocka_unit_test(walk_truncates_at_max_stack),
		cmocka_unit_test(fp_walk_follows_rbp_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
