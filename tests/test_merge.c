// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * format/merge and the ORIGINS block: two recordings of the same pid (written through the real
 * writer) merged and loaded back: the counts, windows and STATS add up, the second input's
 * process moved above pid_max, and each process names its origin and its pid there. Metrics
 * (METRICS) and off-CPU spans (OFFSPANS) survive a merge: each input's series after a marker of
 * its label, process series on the process's pid in the output, points as they were; a merge of
 * a merge composes the labels. Each process's control group (CGROUPS) comes through under its
 * output pid, and the container id a control group path names is read right.
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
#include "format/metrics.h"
#include "format/recording.h"

#define CONTAINER   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CGROUP_PATH "/system.slice/docker-" CONTAINER ".scope"

/* The writer moved mkstemp's empty file to PATH.old: remove it. */
static void unlink_old(const char *path)
{
	char old[64];

	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
}

/* Pid 10's RSS (v, 2v at start + 50, + 100) and cpu0's busy share (v), and one off-CPU span of
 * main;work [start + 10, start + 60). */
static void add_metrics(struct rec_writer *w, uint64_t start, uint64_t v, const uint32_t *f)
{
	struct rec_metric_point rss[2] = {{start + 50, v}, {start + 100, 2 * v}};
	struct rec_metric_point busy[1] = {{start + 100, v}};
	struct rec_metric m[2] = {{REC_METRIC_RSS, 10, start, 2, rss},
				  {REC_METRIC_CPU_BUSY, 0, start, 1, busy}};
	struct rec_sample s = {.pid = 10, .tid = 10, .nframes = 2, .frames = f};
	uint32_t key;

	assert_int_equal(rec_writer__metrics(w, 100000000, 0, m, 2), 0);
	assert_int_equal(rec_writer__key(w, &s, &key), 0);
	assert_int_equal(rec_writer__offspan(w, key, start + 10, start + 60), 0);
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
	assert_int_equal(rec_writer__cgroup(w, 10, rec_writer__string(w, CGROUP_PATH)), 0);
	assert_int_equal(rec_writer__cgroup(w, 10, mod), -EEXIST);
	assert_int_equal(rec_writer__cgroup_of(w, 10), rec_writer__string(w, CGROUP_PATH));
	assert_int_equal(rec_writer__cgroup_of(w, 11), 0);
	assert_int_equal(rec_writer__sample(w, 10, 10, count, 0, f, 2), 0);
	assert_int_equal(rec_writer__window(w, start, start + 100), 0);
	add_metrics(w, start, count, f);
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
	/* CGROUPS: each input's process keeps its control group under its pid in the output */
	assert_string_equal(recording__cgroup(in[0].r, 10), CGROUP_PATH);
	assert_string_equal(recording__cgroup(m, 10), CGROUP_PATH);
	assert_string_equal(recording__cgroup(m, 4194304), CGROUP_PATH);
	assert_null(recording__cgroup(m, 11));
	recording__free(m);
	recording__free((struct recording *)in[0].r);
	recording__free((struct recording *)in[1].r);
	unlink(path);
}

/* The input's series (RSS of pid, busy of cpu0: v, 2v and v) after a marker named label. */
static void assert_input_series(const struct recording *m, size_t at, const char *label,
				uint32_t pid, uint64_t v, uint64_t start)
{
	const struct rec_metric *s = &m->metrics[at];

	assert_int_equal(s[0].metric, REC_METRIC_ORIGIN);
	assert_int_equal(s[0].npoints, 0);
	assert_string_equal(recording__string(m, s[0].subject), label);
	assert_int_equal(s[1].metric, REC_METRIC_RSS);
	assert_int_equal(s[1].subject, pid);
	assert_int_equal(s[1].start_ns, start);
	assert_int_equal(s[1].npoints, 2);
	assert_int_equal(s[1].points[0].value, v);
	assert_int_equal(s[1].points[1].value, 2 * v);
	assert_int_equal(s[1].points[1].end_ns, start + 100);
	assert_int_equal(s[2].metric, REC_METRIC_CPU_BUSY);
	assert_int_equal(s[2].subject, 0);
	assert_int_equal(s[2].points[0].value, v);
}

static struct recording *merge_load(struct rec_merge_input *in, size_t n)
{
	char path[] = "/tmp/perch-test-merge.XXXXXX";
	int fd = mkstemp(path);
	struct recording *m = NULL;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(rec_merge(in, n, path), 0);
	unlink_old(path);
	assert_int_equal(recording__load(path, &m), 0);
	unlink(path);
	return m;
}

static void merge_keeps_metrics_and_offspans_by_origin(void **state)
{
	struct rec_merge_input in[2] = {{make(7, 1000, 7), "host-a"}, {make(5, 1050, 5), "host-b"}};
	struct rec_merge_input nest[2] = {{NULL, "outer"}, {in[0].r, "c"}};
	struct recording *m = merge_load(in, 2), *mm;

	(void)state;
	assert_int_equal(m->nmetrics, 6);
	assert_int_equal(m->metrics_interval_ns, 100000000);
	assert_input_series(m, 0, "host-a", 10, 7, 1000);
	assert_input_series(m, 3, "host-b", 4194304, 5, 1050);
	assert_int_equal(m->noffspans, 2);
	assert_int_equal(m->offspans[0].start_ns, 1010);
	assert_int_equal(m->samples[m->offspans[0].sample].pid, 10);
	assert_int_equal(m->offspans[1].end_ns, 1110);
	assert_int_equal(m->samples[m->offspans[1].sample].pid, 4194304);
	nest[0].r = m; /* a merge of a merge: labels compose, as ORIGINS do */
	mm = merge_load(nest, 2);
	assert_int_equal(mm->nmetrics, 9);
	assert_input_series(mm, 0, "outer/host-a", 10, 7, 1000);
	assert_input_series(mm, 3, "outer/host-b", 4194304, 5, 1050);
	assert_input_series(mm, 6, "c", 4194305, 7, 1000);
	recording__free(mm);
	recording__free(m);
	recording__free((struct recording *)in[0].r);
	recording__free((struct recording *)in[1].r);
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

/* The container id a control group path names: the last run of exactly 64 lowercase hex digits. */
static void container_ids_from_cgroup_paths(void **state)
{
	char out[65];

	(void)state;
	assert_string_equal(rec_container_id(CGROUP_PATH, out), CONTAINER);
	assert_string_equal(rec_container_id("/kubepods/burstable/pod1234/" CONTAINER, out),
			    CONTAINER);
	assert_string_equal(
		rec_container_id("/system.slice/cri-containerd-" CONTAINER ".scope", out),
		CONTAINER);
	assert_string_equal(rec_container_id("/docker/" CONTAINER "/sub", out), CONTAINER);
	assert_null(rec_container_id("/user.slice/user-0.slice/session-1.scope", out));
	assert_null(rec_container_id("/docker/" CONTAINER "0", out)); /* 65 digits */
	assert_null(rec_container_id(
		"/docker/123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		out)); /* 63 */
	assert_null(rec_container_id(
		"/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		out)); /* not lowercase */
	assert_null(rec_container_id("", out));
	assert_null(rec_container_id(NULL, out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merge_adds_counts_and_keeps_origins),
		cmocka_unit_test(writer_refuses_a_second_origin_for_a_pid),
		cmocka_unit_test(merge_keeps_metrics_and_offspans_by_origin),
		cmocka_unit_test(container_ids_from_cgroup_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
