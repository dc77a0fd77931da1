// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model/diff: two recordings with known stacks (written through the real writer, loaded through
 * the real reader): the functions' and the merged tree's shares, changes and z scores equal what
 * the two-proportion formula gives by hand, significant rows are ranked first by change, and a
 * path only one side has is a node with nothing on the other.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/recording.h"
#include "model/diff.h"

struct stack {
	const char *names[3];
	uint64_t count;
};

/* The writer moved mkstemp's empty file to PATH.old: remove it. */
static void unlink_old(const char *path)
{
	char old[64];

	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
}

/* A recording of process 10 with these stacks (root first), loaded. */
static struct recording *make(const struct stack *st, size_t n)
{
	char path[] = "/tmp/perch-test-diff.XXXXXX";
	int fd = mkstemp(path);
	struct rec_writer *w;
	struct recording *r = NULL;
	uint32_t mod;

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	unlink_old(path);
	mod = rec_writer__string(w, "/usr/bin/app");
	for (size_t i = 0; i < n; i++) {
		uint32_t frames[3], k = 0;

		for (; k < 3 && st[i].names[k]; k++)
			frames[k] = rec_writer__frame(w, REC_FRAME_USER, mod,
						      rec_writer__string(w, st[i].names[k]),
						      0x1000 + 16 * (uint64_t)st[i].names[k][0]);
		assert_int_equal(rec_writer__sample(w, 10, 10, st[i].count, 0, frames, k), 0);
	}
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	return r;
}

static const struct stack base_stacks[] = {{{"main", "a"}, 30}, {{"main", "b"}, 70}};
static const struct stack new_stacks[] = {
	{{"main", "a"}, 60}, {{"main", "b"}, 30}, {{"main", "a", "c"}, 10}};

/* The two-proportion z score, written out again. */
static double z_by_hand(double x0, double n0, double x1, double n1)
{
	double p = (x0 + x1) / (n0 + n1);

	return (x1 / n1 - x0 / n0) / sqrt(p * (1 - p) * (1 / n0 + 1 / n1));
}

static const struct diff_row *func(const struct diff *d, const char *name)
{
	for (size_t i = 0; i < diff__nfuncs(d); i++) {
		if (!strcmp(diff__func(d, i)->name, name))
			return diff__func(d, i);
	}
	fail_msg("no function %s", name);
	return NULL;
}

static void diff_functions_have_shares_changes_and_z(void **state)
{
	struct recording *b = make(base_stacks, 2), *n = make(new_stacks, 3);
	struct diff *d = diff__build(b, n, NULL);
	const struct diff_row *a, *c, *m;

	(void)state;
	assert_non_null(d);
	assert_int_equal(diff__samples(d, DIFF_BASE), 100);
	assert_int_equal(diff__samples(d, DIFF_NEW), 100);
	a = func(d, "a");
	assert_int_equal(a->self[0], 30);
	assert_int_equal(a->self[1], 60);
	assert_int_equal(a->total[1], 70);
	assert_true(fabs(a->d_self - 0.3) < 1e-12);
	assert_true(fabs(a->d_total - 0.4) < 1e-12);
	assert_true(fabs(a->z_total - z_by_hand(30, 100, 70, 100)) < 1e-9);
	assert_true(fabs(a->z_self - z_by_hand(30, 100, 60, 100)) < 1e-9);
	assert_true(a->significant);
	c = func(d, "c");
	assert_int_equal(c->total[0], 0);
	assert_true(fabs(c->z_self - z_by_hand(0, 100, 10, 100)) < 1e-9);
	m = func(d, "main");
	assert_true(m->z_total == 0 && !m->significant); /* 100% in both: no change to test */
	diff__free(d);
	recording__free(b);
	recording__free(n);
}

static void diff_ranks_significant_rows_first_by_change(void **state)
{
	struct recording *b = make(base_stacks, 2), *n = make(new_stacks, 3);
	struct diff *d = diff__build(b, n, NULL);
	const char *want[] = {"a", "b", "c", "main"}; /* |d| .4, .4 (then by name), .1; main 0 */

	(void)state;
	assert_non_null(d);
	assert_int_equal(diff__nfuncs(d), 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(diff__func(d, i)->name, want[i]);
	diff__free(d);
	recording__free(b);
	recording__free(n);
}

static void diff_merges_trees_by_path(void **state)
{
	struct recording *b = make(base_stacks, 2), *n = make(new_stacks, 3);
	struct diff *d = diff__build(b, n, NULL);
	size_t found = 0;

	(void)state;
	assert_non_null(d);
	assert_int_equal(diff__nnodes(d), 5); /* root, main, a, b, a's c */
	for (size_t i = 1; i < diff__nnodes(d); i++) {
		const struct diff_row *r = diff__node(d, i);

		assert_true(r->parent < i);
		if (strcmp(r->name, "c"))
			continue;
		found++;
		assert_string_equal(diff__node(d, r->parent)->name, "a");
		assert_int_equal(r->depth, 3);
		assert_int_equal(r->self[0], 0);
		assert_int_equal(r->self[1], 10);
	}
	assert_int_equal(found, 1);
	assert_int_equal(diff__node(d, 0)->total[1], 100);
	/* the node of a: inclusive 30 -> 70 */
	assert_int_equal(diff__node(d, diff__node_ranked(d, 0))->total[1], 70);
	diff__free(d);
	recording__free(b);
	recording__free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(diff_functions_have_shares_changes_and_z),
		cmocka_unit_test(diff_ranks_significant_rows_first_by_change),
		cmocka_unit_test(diff_merges_trees_by_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
