// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * format/merge and the ORIGINS block: two recordings of the same pid (written through the real
 * writer) merged and loaded back: the counts, windows and STATS add up, the second input's
 * process moved above pid_max, and each process names its origin and its pid there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/merge.h"
#include "format/recording.h"

/* The writer moved mkstemp's empty file to PATH.old: remove it. */
static void unlink_old(const char *path)
{
	char old[64];

	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
}

/* A recording of pid 10: count samples of main;work in window [start, start + 100). */
static struct recording *make(uint64_t count, uint64_t start, uint64_t stat)
{
	char path[] = "/tmp/perch-test-merge.XXXXXX";
	int fd = mkstemp(path);
	struct rec_kv kv = {.key = "samples", .value = stat};
	struct rec_writer *w;
	struct recording *r = NULL;
	uint32_t mod, f[2];

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	unlink_old(path);
	mod = rec_writer__string(w, "/usr/bin/app");
	f[0] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x10);
	f[1] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "work"), 0x20);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, rec_writer__string(w, "app")), 0);
	assert_int_equal(rec_writer__sample(w, 10, 10, count, 0, f, 2), 0);
	assert_int_equal(rec_writer__window(w, start, start + 100), 0);
	assert_int_equal(rec_writer__stats(w, &kv, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	return r;
}

static void merge_adds_counts_and_keeps_origins(void **state)
{
	struct rec_merge_input in[2] = {{make(7, 1000, 7), "host-a"}, {make(5, 1050, 5), "host-b"}};
	char path[] = "/tmp/perch-test-merge.XXXXXX";
	int fd = mkstemp(path);
	struct recording *m = NULL;
	const struct rec_origin *o;
	uint64_t total = 0, samples = 0;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rec_merge(in, 2, path), 0);
	unlink_old(path);
	assert_int_equal(recording__load(path, &m), 0);
	for (size_t i = 0; i < m->nsamples; i++)
		total += m->samples[i].count;
	assert_int_equal(total, 12);
	assert_int_equal(m->nsamples, 2); /* same stack, two processes */
	assert_int_equal(m->nwindows, 1); /* [1000, 1100) and [1050, 1150) overlap: one */
	assert_int_equal(m->windows[0].start_ns, 1000);
	assert_int_equal(m->windows[0].end_ns, 1150);
	assert_true(recording__stat(m, "samples", &samples));
	assert_int_equal(samples, 12);
	assert_int_equal(m->norigins, 2);
	o = recording__origin(m, 10);
	assert_non_null(o);
	assert_string_equal(recording__string(m, o->origin), "host-a");
	o = recording__origin(m, 4194304);
	assert_non_null(o);
	assert_string_equal(recording__string(m, o->origin), "host-b");
	assert_int_equal(o->source_pid, 10);
	assert_int_equal(m->nthreads, 2);
	assert_null(recording__origin(m, 11));
	recording__free(m);
	recording__free((struct recording *)in[0].r);
	recording__free((struct recording *)in[1].r);
	unlink(path);
}

static void writer_refuses_a_second_origin_for_a_pid(void **state)
{
	char path[] = "/tmp/perch-test-merge.XXXXXX";
	int fd = mkstemp(path);
	struct rec_writer *w;
	uint32_t s;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	unlink_old(path);
	s = rec_writer__string(w, "x");
	assert_int_equal(rec_writer__origin(w, 5, s, 5), 0);
	assert_int_equal(rec_writer__origin(w, 5, s, 6), -EEXIST);
	assert_int_equal(rec_writer__origin(w, 6, 0, 6), -EINVAL);
	assert_int_equal(rec_writer__origin(w, 6, 999, 6), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_adds_counts_and_keeps_origins),
		cmocka_unit_test(writer_refuses_a_second_origin_for_a_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
