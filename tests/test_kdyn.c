// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the table of kernel symbols that come and go (kdyn.c), fed what PERF_RECORD_KSYMBOL
 * records carry: a program's range is named after it is unloaded, the window of a drain picks the
 * program that held a reused address then, an unload of a program loaded before the recording
 * began still names it, and the table stays bounded against a flood of records.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "symbolize/kdyn.h"

#define A 0xffffffffc0004000ull

static void reg(struct kdyn *k, uint64_t addr, uint64_t len, const char *name, uint64_t t)
{
	assert_int_equal(kdyn__register(k, addr, len, true, name, strlen(name), t), 0);
}

static void unreg(struct kdyn *k, uint64_t addr, uint64_t len, const char *name, uint64_t t)
{
	assert_int_equal(kdyn__unregister(k, addr, len, true, name, strlen(name), t), 0);
}

static const char *name_at(const struct kdyn *k, uint64_t addr)
{
	const struct kdyn_sym *s = kdyn__find(k, addr);

	return s ? s->name : NULL;
}

static void kdyn_null_and_empty_find_nothing(void **state)
{
	struct kdyn *k = kdyn__new();

	(void)state;
	assert_null(kdyn__find(NULL, A));
	assert_null(kdyn__find(k, A));
	assert_int_equal(kdyn__count(NULL), 0);
	kdyn__free(NULL);
	kdyn__free(k);
}

/* [addr, addr + len): the first and last byte, not one past or one before; kept after unload. */
static void kdyn_names_range_after_unload(void **state)
{
	struct kdyn *k = kdyn__new();
	const struct kdyn_sym *s;

	(void)state;
	reg(k, A, 0x100, "bpf_prog_7c372a940c50dd7e_perch_burn", 10);
	unreg(k, A, 0x100, "bpf_prog_7c372a940c50dd7e_perch_burn", 20);
	kdyn__window(k, 0, 30);
	s = kdyn__find(k, A + 0xff);
	assert_non_null(s);
	assert_string_equal(s->name, "bpf_prog_7c372a940c50dd7e_perch_burn");
	assert_true(s->bpf);
	assert_int_equal(s->addr, A);
	assert_int_equal(s->reg_ns, 10);
	assert_int_equal(s->unreg_ns, 20);
	assert_non_null(kdyn__find(k, A));
	assert_null(kdyn__find(k, A + 0x100));
	assert_null(kdyn__find(k, A - 1));
	assert_null(kdyn__find(k, 0xffffffff81000000ull)); /* the kernel's text */
	kdyn__free(k);
}

/* One address, two programs in turn: each drain's window names the one that held it then. */
static void kdyn_window_picks_the_program_of_its_time(void **state)
{
	struct kdyn *k = kdyn__new();

	(void)state;
	reg(k, A, 0x100, "first", 10);
	unreg(k, A, 0x100, "first", 20);
	reg(k, A, 0x80, "second", 30);
	kdyn__window(k, 0, 25);
	assert_string_equal(name_at(k, A + 0x10), "first");
	kdyn__window(k, 25, 50);
	assert_string_equal(name_at(k, A + 0x10), "second");
	/* Outside the second's shorter range only the first ever held it: its name, not none. */
	assert_string_equal(name_at(k, A + 0x90), "first");
	/* A window before both: the newest that ever held it. */
	kdyn__window(k, 0, 5);
	assert_string_equal(name_at(k, A + 0x10), "second");
	kdyn__free(k);
}

/* Loaded before the recording began, unloaded during it: the unregister record names it. */
static void kdyn_unregister_alone_names_it(void **state)
{
	struct kdyn *k = kdyn__new();
	const struct kdyn_sym *s;

	(void)state;
	unreg(k, A, 0x40, "bpf_trampoline_6442", 20);
	kdyn__window(k, 15, 30);
	s = kdyn__find(k, A + 1);
	assert_non_null(s);
	assert_string_equal(s->name, "bpf_trampoline_6442");
	assert_int_equal(s->reg_ns, 0);
	assert_int_equal(s->unreg_ns, 20);
	kdyn__free(k);
}

/* What the kernel could send wrong: empty or wrapping ranges refused; names cut and bounded. */
static void kdyn_refuses_bad_ranges_and_cuts_names(void **state)
{
	struct kdyn *k = kdyn__new();
	char name[600];

	(void)state;
	assert_int_equal(kdyn__register(k, A, 0, true, "x", 1, 1), -EINVAL);
	assert_int_equal(kdyn__register(k, UINT64_MAX - 4, 16, true, "x", 1, 1), -EINVAL);
	assert_int_equal(kdyn__count(k), 0);
	memset(name, 'n', sizeof(name));
	assert_int_equal(kdyn__register(k, A, 16, false, name, sizeof(name), 1), 0);
	assert_int_equal(strlen(name_at(k, A)), KDYN_NAME_MAX);
	assert_false(kdyn__find(k, A)->bpf);
	/* No NUL within name_len: only name_len bytes are read. */
	assert_int_equal(kdyn__register(k, A + 16, 16, true, "abcdef", 3, 2), 0);
	assert_string_equal(name_at(k, A + 16), "abc");
	kdyn__free(k);
}

/* A flood: the table forgets unloaded programs first, then drops new ones, counted. */
static void kdyn_stays_bounded(void **state)
{
	struct kdyn *k = kdyn__new();
	char name[32];

	(void)state;
	for (int i = 0; i < KDYN_MAX; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		reg(k, A + 0x100ull * i, 0x100, name, 10 + i);
	}
	unreg(k, A + 0x100, 0x100, "p1", 100000);
	assert_int_equal(kdyn__count(k), KDYN_MAX);
	reg(k, A + 0x100ull * KDYN_MAX, 0x100, "new", 100001); /* p1 forgotten */
	assert_int_equal(kdyn__count(k), KDYN_MAX);
	assert_null(kdyn__find(k, A + 0x100));
	assert_string_equal(name_at(k, A + 0x100ull * KDYN_MAX), "new");
	assert_string_equal(name_at(k, A), "p0");
	assert_int_equal(kdyn__register(k, A - 0x100, 0x100, true, "late", 4, 100002), -ENOSPC);
	assert_int_equal(kdyn__dropped(k), 1);
	assert_int_equal(kdyn__count(k), KDYN_MAX);
	kdyn__free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kdyn_null_and_empty_find_nothing),
		cmocka_unit_test(kdyn_names_range_after_unload),
		cmocka_unit_test(kdyn_window_picks_the_program_of_its_time),
		cmocka_unit_test(kdyn_unregister_alone_names_it),
		cmocka_unit_test(kdyn_refuses_bad_ranges_and_cuts_names),
		cmocka_unit_test(kdyn_stays_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
