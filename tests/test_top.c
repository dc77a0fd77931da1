// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perch top's table (report/top.c) on a live writer (format/writer_peek.c): self from the leaf,
 * total once per stack under recursion, region frames left out, unnamed frames as
 * module+offset, the interval's counts joining the totals when a screen is printed, and the
 * pending counts gone once the writer's window takes them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/recording.h"
#include "format/writer_peek.h"
#include "report/top.h"

struct fixture {
	struct rec_writer *w;
	uint32_t main_f, work_f, anon_f, region;
};

static void open_writer(struct fixture *x)
{
	uint32_t mod;

	x->w = rec_writer__open("/dev/null"); /* a device: written to, never compacted */
	assert_non_null(x->w);
	mod = rec_writer__string(x->w, "/usr/bin/app");
	x->main_f =
		rec_writer__frame(x->w, REC_FRAME_USER, mod, rec_writer__string(x->w, "main"), 16);
	x->work_f =
		rec_writer__frame(x->w, REC_FRAME_USER, mod, rec_writer__string(x->w, "work"), 32);
	x->anon_f = rec_writer__frame(x->w, REC_FRAME_USER, mod, 0, 0x1234);
	x->region = rec_writer__string(x->w, "solve");
}

static void add(struct fixture *x, const uint32_t *frames, uint32_t n, uint64_t count,
		bool in_region)
{
	struct rec_sample s = {.pid = 1, .tid = 1, .count = count, .nframes = n, .frames = frames};

	if (in_region) {
		s.nregions = 1;
		s.regions = &x->region;
	}
	assert_int_equal(rec_writer__add_sample(x->w, &s), 0);
}

/* The printed table's row for name: self% and total% of the interval, self samples overall. */
static bool row(const char *text, const char *name, double *self, double *total, unsigned *n)
{
	const char *line = text;

	while ((line = strstr(line, name))) {
		const char *start = line;

		while (start > text && start[-1] != '\n')
			start--;
		if (line[strlen(name)] == '\n' &&
		    sscanf(start, "%lf%% %lf%% %*f%% %*f%% %u", self, total, n) == 3)
			return true;
		line++;
	}
	return false;
}

static char *print(struct top_table *t)
{
	struct top_view v = {.interval_s = 2, .rows = 10};
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	top_table__print(t, &v, m);
	fclose(m);
	return buf;
}

static void top_counts_self_and_total_once_per_stack(void **state)
{
	struct fixture x;
	struct top_table *t = top_table__new();
	uint32_t rec[] = {0, 0, 0, 0}, leaf[] = {0, 0, 0};
	uint64_t last, all;
	double self, total;
	unsigned n;
	char *out;

	(void)state;
	open_writer(&x);
	rec[0] = x.main_f, rec[1] = x.work_f, rec[2] = x.main_f, rec[3] = x.work_f;
	leaf[0] = x.main_f, leaf[1] = x.work_f, leaf[2] = x.anon_f;
	add(&x, rec, 4, 3, true); /* main work main work: recursion, inside a region */
	add(&x, leaf, 3, 1, false);
	assert_int_equal(top_table__add(t, x.w), 0);
	top_table__samples(t, &last, &all);
	assert_int_equal(last, 4);
	out = print(t);
	assert_true(row(out, "work", &self, &total, &n));
	assert_float_equal(self, 75.0, 0.05); /* 3 of 4 with work as the leaf */
	assert_float_equal(total, 100.0, 0.05);
	assert_int_equal(n, 3);
	assert_true(row(out, "main", &self, &total, &n));
	assert_float_equal(self, 0.0, 0.05);
	assert_float_equal(total, 100.0, 0.05); /* twice in a stack, counted once */
	assert_true(row(out, "app+0x1234", &self, &total, &n));
	assert_float_equal(self, 25.0, 0.05);
	assert_null(strstr(out, "solve"));
	free(out);

	/* the window takes the pending counts: nothing new; the totals stay */
	assert_int_equal(rec_writer__window(x.w, 100, 200), 0);
	assert_int_equal(top_table__add(t, x.w), 0);
	add(&x, leaf, 3, 4, false);
	assert_int_equal(top_table__add(t, x.w), 0);
	top_table__samples(t, &last, &all);
	assert_int_equal(last, 4);
	assert_int_equal(all, 8);
	out = print(t);
	assert_true(row(out, "app+0x1234", &self, &total, &n));
	assert_float_equal(self, 100.0, 0.05);
	assert_int_equal(n, 5);
	free(out);
	top_table__free(t);
	assert_int_equal(rec_writer__close(x.w), 0);
}

static void peek_key_walks_leaf_first(void **state)
{
	struct fixture x;
	uint32_t stack[3], got[8], pid = 0, tid = 0;
	char buf[8];

	(void)state;
	open_writer(&x);
	stack[0] = x.main_f, stack[1] = x.work_f, stack[2] = x.anon_f;
	add(&x, stack, 3, 1, true);
	assert_int_equal(rec_writer__peek_key(x.w, 0, &pid, &tid, got, 8), 3);
	assert_int_equal(got[0], x.anon_f);
	assert_int_equal(got[2], x.main_f);
	assert_int_equal(rec_writer__peek_key(x.w, 0, &pid, &tid, got, 2), 2);
	assert_int_equal(got[0], x.anon_f); /* the leaf end is kept */
	assert_int_equal(rec_writer__peek_key(x.w, 9, &pid, &tid, got, 8), 0);
	assert_string_equal(rec_writer__peek_string(x.w, x.region, buf, sizeof(buf)), "solve");
	assert_string_equal(rec_writer__peek_string(x.w, x.region, buf, 4), "sol");
	assert_string_equal(rec_writer__peek_string(x.w, 9999, buf, sizeof(buf)), "");
	assert_null(rec_writer__peek_frame(x.w, 9999));
	assert_int_equal(rec_writer__close(x.w), 0);
}

/* A function name the target chose (a JIT's perf map, its own symbols) reaches the terminal under
 * the terminal rule: no ESC, no C1 control, no byte that is no UTF-8 printed raw. */
static void top_escapes_control_bytes_in_names(void **state)
{
	struct fixture x;
	struct top_table *t = top_table__new();
	uint32_t f;
	char *out;

	(void)state;
	open_writer(&x);
	f = rec_writer__frame(x.w, REC_FRAME_USER, 0,
			      rec_writer__string(x.w, "\x1b]0;pwn\x07\x1b[2Jev\xc2\x9bil\xff"), 48);
	add(&x, &f, 1, 2, false);
	assert_int_equal(top_table__add(t, x.w), 0);
	out = print(t);
	assert_null(strchr(out, '\x1b'));
	assert_null(strchr(out, '\x07'));
	assert_null(strstr(out, "\xc2\x9b"));
	assert_null(strchr(out, '\xff'));
	assert_non_null(strstr(out, "\\x1b]0;pwn\\x07\\x1b[2Jev\\xc2\\x9bil\\xff\n"));
	free(out);
	top_table__free(t);
	rec_writer__close(x.w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(top_counts_self_and_total_once_per_stack),
		cmocka_unit_test(peek_key_walks_leaf_first),
		cmocka_unit_test(top_escapes_control_bytes_in_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
