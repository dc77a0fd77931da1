// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the system metrics below the sampler: the METRICS block round-trips exactly (the last
 * block wins, compaction keeps it, a damaged one is refused keeping what came before), a series
 * stays within its budget keeping its sum, maximum and time-weighted mean, and the /proc parsers
 * read the kernel's own text, checked against getrusage() of the same process. perch merge's
 * origin markers are checked when written and label each input's rows in the report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "format/metrics.h"
#include "format/recording.h"
#include "report/report.h"
#include "record/sysread.h"

static char tmpdir[] = "/tmp/perch-test-metrics.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void fill(struct rec_series *s, uint32_t n, uint64_t t0, uint64_t step)
{
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(rec_series__add(s, t0 + i * step, t0 + (i + 1) * step,
						 (i * 7919u) % 1000, REC_METRIC_BUDGET),
				 0);
}

static void assert_same(const struct rec_metric *a, const struct rec_metric *b)
{
	assert_int_equal(a->metric, b->metric);
	assert_int_equal(a->subject, b->subject);
	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->npoints, b->npoints);
	for (uint32_t i = 0; i < a->npoints; i++) {
		assert_int_equal(a->points[i].end_ns, b->points[i].end_ns);
		assert_int_equal(a->points[i].value, b->points[i].value);
	}
}

static void metrics_round_trip_last_block_wins(void **state)
{
	const char *path = tmp_path("rt.data");
	struct rec_writer *w = rec_writer__open(path);
	struct rec_series s[2];
	struct rec_metric m[2];
	struct recording *r;
	uint32_t note;

	(void)state;
	assert_non_null(w);
	note = rec_writer__string(w, "no NVML: test");
	rec_series__init(&s[0], REC_METRIC_RSS, 42);
	rec_series__init(&s[1], REC_METRIC_CPU_BUSY, 3);
	fill(&s[0], 5, 1000, 100);
	m[0] = s[0].m;
	assert_int_equal(rec_writer__metrics(w, 100, note, m, 1), 0);
	fill(&s[0], 7, 1500, 100);
	fill(&s[1], 9, 5000000000ull, 100000000);
	m[0] = s[0].m;
	m[1] = s[1].m;
	assert_int_equal(rec_writer__metrics(w, 100000000, note, m, 2), 0);
	assert_int_equal(rec_writer__close(w), 0); /* compacts: the block is rewritten */
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nmetrics, 2);
	assert_int_equal(r->metrics_interval_ns, 100000000);
	assert_string_equal(recording__string(r, r->metrics_note), "no NVML: test");
	assert_same(&r->metrics[0], &m[0]);
	assert_same(&r->metrics[1], &m[1]);
	recording__free(r);
	rec_series__free(&s[0]);
	rec_series__free(&s[1]);
}

static void writer_rejects_bad_series(void **state)
{
	struct rec_writer *w = rec_writer__open(tmp_path("bad.data"));
	struct rec_metric_point back[] = {{2000, 1}, {1500, 2}};
	struct rec_metric unknown = {.metric = 999};
	struct rec_metric backwards = {REC_METRIC_RSS, 1, 1000, 2, back};

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__metrics(w, 1, 0, &unknown, 1), -EINVAL);
	assert_int_equal(rec_writer__metrics(w, 1, 0, &backwards, 1), -EINVAL);
	assert_int_equal(rec_writer__metrics(w, 1, 12345, NULL, 0), -EINVAL); /* no such note */
	/* merge's origin markers: a defined label, and no points */
	assert_int_equal(
		rec_writer__metrics(w, 1, 0, &(struct rec_metric){.metric = REC_METRIC_ORIGIN}, 1),
		-EINVAL);
	assert_int_equal(rec_writer__metrics(w, 1, 0,
					     &(struct rec_metric){.metric = REC_METRIC_ORIGIN,
								  .subject = 12345},
					     1),
			 -EINVAL);
	assert_int_equal(
		rec_writer__metrics(w, 1, 0,
				    &(struct rec_metric){.metric = REC_METRIC_ORIGIN,
							 .subject = rec_writer__string(w, "a"),
							 .npoints = 2,
							 .points = back},
				    1),
		-EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
}

/* perch merge's markers: each input's rows after "from LABEL:", the same rows as alone. */
static void origin_markers_label_each_inputs_rows(void **state)
{
	const char *path = tmp_path("origins.data");
	struct report_opts o = {.format = REPORT_TEXT, .top = 1, .metrics = REPORT_METRICS_ALL};
	struct rec_writer *w = rec_writer__open(path);
	struct rec_metric_point a[] = {{1100, 3000}, {1200, 5000}}, b[] = {{1100, 7000}};
	struct rec_metric m[4] = {{REC_METRIC_ORIGIN, 0, 0, 0, NULL},
				  {REC_METRIC_CPU_BUSY, 0, 1000, 2, a},
				  {REC_METRIC_ORIGIN, 0, 0, 0, NULL},
				  {REC_METRIC_CPU_BUSY, 0, 1000, 1, b}};
	struct recording *r;
	char *text = NULL, *ha, *hb;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(w);
	m[0].subject = rec_writer__string(w, "host-a");
	m[2].subject = rec_writer__string(w, "host-b");
	assert_int_equal(rec_writer__metrics(w, 100, 0, m, 4), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nmetrics, 4);
	f = open_memstream(&text, &len);
	assert_int_equal(report__print(r, path, &o, f), 0);
	fclose(f);
	ha = strstr(text, " from host-a:\n CPUs");
	hb = strstr(text, " from host-b:\n CPUs");
	assert_non_null(ha);
	assert_non_null(hb);
	assert_non_null(strstr(ha, "cpu0                         30.0       40.0       50.0  %"));
	assert_true(strstr(ha, "40.0       50.0") < hb);
	assert_non_null(strstr(hb, "cpu0                         70.0       70.0       70.0  %"));
	free(text);
	/* the summary: each input's block after its label too */
	text = NULL;
	o.metrics = REPORT_METRICS_SUMMARY;
	f = open_memstream(&text, &len);
	assert_int_equal(report__print(r, path, &o, f), 0);
	fclose(f);
	ha = strstr(text, " from host-a:\n CPUs");
	hb = strstr(text, " from host-b:\n CPUs");
	assert_non_null(ha);
	assert_non_null(hb);
	assert_true(strstr(ha, "all 1 CPUs                   30.0       40.0       50.0  %") < hb);
	assert_non_null(strstr(hb, "all 1 CPUs                   70.0       70.0       70.0  %"));
	free(text);
	recording__free(r);
}

static void recording_without_metrics_has_none(void **state)
{
	const char *path = tmp_path("none.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nmetrics, 0);
	assert_int_equal(r->metrics_note, 0);
	recording__free(r);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A METRICS block claiming two series with one series' bytes (its CRC right) is refused, and
 * the series of the block before it stay. */
static void damaged_metrics_block_keeps_the_earlier_one(void **state)
{
	static const uint8_t payload[] = {2,
					  0,
					  0,
					  0, /* u32 n */
					  10,
					  0, /* interval, note */
					  REC_METRIC_MINFLT,
					  7,
					  0,
					  1,
					  5,
					  2}; /* 1 point; no 2nd */
	const char *path = tmp_path("dmg.data");
	struct rec_writer *w = rec_writer__open(path);
	uint8_t block[16 + sizeof(payload)] = {0};
	struct rec_series s;
	struct recording *r;
	struct rec_metric m;
	int fd;

	(void)state;
	assert_non_null(w);
	rec_series__init(&s, REC_METRIC_MINFLT, 7);
	fill(&s, 3, 0, 10);
	m = s.m;
	assert_int_equal(rec_writer__metrics(w, 10, 0, &m, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	put_le32(block, REC_METRICS); /* the block header: type, length, CRC-32, 0 */
	put_le32(block + 4, sizeof(payload));
	put_le32(block + 8, (uint32_t)crc32(0, payload, sizeof(payload)));
	memcpy(block + 16, payload, sizeof(payload));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
	close(fd);
	assert_int_equal(recording__load(path, &r), -EBADMSG);
	assert_non_null(r);
	assert_int_equal(r->nmetrics, 1);
	assert_same(&r->metrics[0], &m);
	recording__free(r);
	rec_series__free(&s);
}

/* 4096 samples into a budget of 1024: at most 1024 points, the span, the sum (SUM), the maximum
 * (MAX) and the time-weighted mean (MEAN) of the samples kept exactly. */
static void series_stay_within_budget_keeping_totals(void **state)
{
	static const uint32_t kinds[] = {REC_METRIC_MINFLT, REC_METRIC_RSS, REC_METRIC_CPU_BUSY};

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct rec_series s;
		uint64_t sum = 0, max = 0, wsum = 0, got_sum = 0, got_max = 0, got_w = 0;
		uint64_t prev;

		rec_series__init(&s, kinds[k], 0);
		for (uint32_t i = 0; i < 4096; i++) {
			uint64_t v = (i * 7919u) % 10000, d = 100 + i % 3 * 400; /* uneven */
			uint64_t start = i ? s.pts[s.m.npoints - 1].end_ns : 1000;

			assert_int_equal(rec_series__add(&s, start, start + d, v, 1024), 0);
			sum += v;
			max = v > max ? v : max;
			wsum += v * d;
		}
		assert_true(s.m.npoints <= 1024 && s.m.npoints >= 512);
		assert_int_equal(s.m.start_ns, 1000);
		prev = s.m.start_ns;
		for (uint32_t i = 0; i < s.m.npoints; i++) {
			uint64_t d = s.pts[i].end_ns - prev;

			got_sum += s.pts[i].value;
			got_max = s.pts[i].value > got_max ? s.pts[i].value : got_max;
			got_w += s.pts[i].value * d;
			prev = s.pts[i].end_ns;
		}
		if (kinds[k] == REC_METRIC_MINFLT)
			assert_int_equal(got_sum, sum);
		else if (kinds[k] == REC_METRIC_RSS)
			assert_int_equal(got_max, max);
		else /* each merge rounds to the nearest unit: within half a unit a merge level */
			assert_true(llabs((long long)got_w - (long long)wsum) <=
				    (long long)(prev - 1000) * 2);
		rec_series__free(&s);
	}
}

/* 20 CPUs, CPU k busy k % all along: the text report shows the machine's mean (9.5 %), the 8
 * busiest CPUs (19 down to 12) and says how many it left out. */
static void many_cpus_show_the_machine_and_the_busiest(void **state)
{
	const char *path = tmp_path("cpus.data");
	struct report_opts o = {.format = REPORT_TEXT, .top = 1, .metrics = REPORT_METRICS_ALL};
	struct rec_writer *w = rec_writer__open(path);
	struct rec_series s[20];
	struct rec_metric m[20];
	struct recording *r;
	char *text = NULL, *at;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(w);
	for (uint32_t k = 0; k < 20; k++) {
		rec_series__init(&s[k], REC_METRIC_CPU_BUSY, k);
		for (uint32_t i = 0; i < 10; i++)
			assert_int_equal(rec_series__add(&s[k], 1000 + i * 100, 1100 + i * 100,
							 k * 100, REC_METRIC_BUDGET),
					 0);
		m[k] = s[k].m;
	}
	assert_int_equal(rec_writer__metrics(w, 100, 0, m, 20), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(report__print(r, path, &o, f), 0);
	fclose(f);
	at = strstr(text, "all 20 CPUs");
	assert_non_null(at);
	assert_non_null(strstr(at, "9.5        9.5  %"));
	assert_true(strstr(text, "cpu19") < strstr(text, "cpu12"));
	assert_null(strstr(text, "cpu11 "));
	assert_null(strstr(text, "cpu0 "));
	assert_non_null(strstr(text, "... 12 more CPUs"));
	free(text);
	recording__free(r);
	for (uint32_t k = 0; k < 20; k++)
		rec_series__free(&s[k]);
}

/* The kernel's text for this process, read the way metrics.c reads it. */
static char *slurp(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = 0;
	return buf;
}

/* /proc/self/stat's faults and CPU against getrusage(): the same counters, read moments apart,
 * so never fewer after than before. */
static void pid_stat_agrees_with_getrusage(void **state)
{
	struct rusage before, after;
	struct sys_pstat ps;
	long hz = sysconf(_SC_CLK_TCK);
	volatile char *p = malloc(1 << 22);

	(void)state;
	for (size_t i = 0; i < (1 << 22); i += 4096)
		p[i] = 1; /* some faults */
	getrusage(RUSAGE_SELF, &before);
	assert_int_equal(sysread_pid_stat(slurp("/proc/self/stat"), &ps), 0);
	getrusage(RUSAGE_SELF, &after);
	assert_true(ps.minflt >= (uint64_t)before.ru_minflt &&
		    ps.minflt <= (uint64_t)after.ru_minflt);
	assert_true(ps.majflt >= (uint64_t)before.ru_majflt &&
		    ps.majflt <= (uint64_t)after.ru_majflt);
	/* ticks against microseconds: within a tick of each other */
	assert_true(ps.utime * 1000000 / hz <=
		    (uint64_t)(after.ru_utime.tv_sec * 1000000 + after.ru_utime.tv_usec) +
			    1000000 / hz);
	free((void *)p);
}

/* A name with spaces and parentheses, and tpgid -1 (no terminal), as fs/proc/array.c writes. */
static void pid_stat_takes_the_last_parenthesis(void **state)
{
	static const char text[] =
		"4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 123 0 4 0 56 78 0 0 20 0 1 0 9 0 0\n";
	struct sys_pstat ps;

	(void)state;
	assert_int_equal(sysread_pid_stat(text, &ps), 0);
	assert_int_equal(ps.minflt, 123);
	assert_int_equal(ps.majflt, 4);
	assert_int_equal(ps.utime, 56);
	assert_int_equal(ps.stime, 78);
	assert_int_equal(sysread_pid_stat("4242 (cut", &ps), -EINVAL);
	assert_int_equal(sysread_pid_stat("4242 (x) S 1 2", &ps), -EINVAL);
}

static void proc_stat_lists_every_cpu(void **state)
{
	struct sys_cpu cpus[4096];
	size_t n;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	(void)state;
	assert_int_equal(sysread_cpus(slurp("/proc/stat"), cpus, 4096, &n), 0);
	assert_int_equal(n, online);
	for (size_t i = 0; i < n; i++)
		assert_true(cpus[i].busy <= cpus[i].total);
	assert_int_equal(sysread_cpus("cpu  1 2 3 4 5 6 7 8 0 0\n", cpus, 4096, &n), -EINVAL);
}

/* statm's resident pages against status's VmRSS (the same counter, in kB). */
static void statm_io_and_switches_read_the_kernel_text(void **state)
{
	uint64_t resident, kb = 0, rchar, wchar, vol, inv;
	const char *st;

	(void)state;
	assert_int_equal(sysread_statm(slurp("/proc/self/statm"), &resident), 0);
	st = strstr(slurp("/proc/self/status"), "VmRSS:");
	assert_non_null(st);
	kb = strtoull(st + 6, NULL, 10);
	assert_true(resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024 <= kb * 2 &&
		    resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024 * 2 >= kb);
	assert_int_equal(sysread_ctxsw(slurp("/proc/self/status"), &vol, &inv), 0);
	assert_int_equal(sysread_io(slurp("/proc/self/io"), &rchar, &wchar), 0);
	assert_true(rchar > 0); /* it read its own files above */
	assert_int_equal(sysread_io("rchar: 1\n", &rchar, &wchar), -EINVAL);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(metrics_round_trip_last_block_wins),
		cmocka_unit_test(writer_rejects_bad_series),
		cmocka_unit_test(origin_markers_label_each_inputs_rows),
		cmocka_unit_test(recording_without_metrics_has_none),
		cmocka_unit_test(damaged_metrics_block_keeps_the_earlier_one),
		cmocka_unit_test(series_stay_within_budget_keeping_totals),
		cmocka_unit_test(many_cpus_show_the_machine_and_the_busiest),
		cmocka_unit_test(pid_stat_agrees_with_getrusage),
		cmocka_unit_test(pid_stat_takes_the_last_parenthesis),
		cmocka_unit_test(proc_stat_lists_every_cpu),
		cmocka_unit_test(statm_io_and_switches_read_the_kernel_text),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
