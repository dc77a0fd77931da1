// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of perch record -e, -C and report --event: the events table (format/events.h) against
 * linux/perf_event.h, the META event list read back, the CPU list syntax (record/cpulist.c)
 * against the kernel's own list of possible CPUs, and report__select_event on a recording of two
 * events written through the real writer and read back through the real loader: each event keeps
 * its samples, its window counts and its timeline ticks, and the header says what one sample is.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "format/events.h"
#include "format/recording.h"
#include "record/cpulist.h"
#include "report/report.h"

static void events_table_matches_perf_event_h(void **state)
{
	const struct rec_event_def *d;

	(void)state;
	d = rec_event_find("page-faults");
	assert_non_null(d);
	assert_int_equal(d->type, PERF_TYPE_SOFTWARE);
	assert_int_equal(d->config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_false(d->clock);
	assert_ptr_equal(rec_event_find("faults"), d); /* perf's alias */
	assert_ptr_equal(rec_event_find("cs"), rec_event_find("context-switches"));
	d = rec_event_find("cycles");
	assert_int_equal(d->type, PERF_TYPE_HARDWARE);
	assert_true(d->hardware);
	assert_true(rec_event_find("cpu-clock")->clock);
	assert_null(rec_event_find("bogus"));
	assert_null(strstr(rec_event_names(), ", ,"));
	assert_int_not_equal(rec_event_names()[strlen(rec_event_names()) - 1], ' ');
}

static void event_list_reads_back(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(rec_event_count("page-faults,context-switches"), 2);
	assert_int_equal(rec_event_count(NULL), 1);
	assert_true(rec_event_nth("page-faults,context-switches", 1, buf, sizeof(buf)));
	assert_string_equal(buf, "context-switches");
	assert_false(rec_event_nth("page-faults", 1, buf, sizeof(buf)));
}

static void cpulist_parses_ranges_and_refuses_bad_ones(void **state)
{
	bool set[8];

	(void)state;
	assert_int_equal(cpulist_parse("0,2-3", 8, set), 0);
	assert_true(set[0] && !set[1] && set[2] && set[3] && !set[4]);
	assert_int_equal(cpulist_parse("8", 8, set), -ERANGE);
	assert_int_equal(cpulist_parse("3-1", 8, set), -EINVAL);
	assert_int_equal(cpulist_parse("", 8, set), -EINVAL);
	assert_int_equal(cpulist_parse("1,", 8, set), -EINVAL);
	assert_int_equal(cpulist_parse("a", 8, set), -EINVAL);
}

/* The kernel writes /sys/devices/system/cpu/possible in the same syntax: every CPU in it. */
static void cpulist_reads_the_kernels_possible_list(void **state)
{
	char line[256] = "";
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int n = cpulist_ncpus();
	bool *set;

	(void)state;
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		skip();
	}
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	assert_true(n > 0);
	set = calloc(n, sizeof(*set));
	assert_int_equal(cpulist_parse(line, n, set), 0);
	for (int c = 0; c < n; c++)
		assert_true(set[c]);
	free(set);
}

static char path[] = "/tmp/perch-test-events.XXXXXX";

/* pid 10: event 0 (page-faults) 30 + 5 samples, event 1 (context-switches) 7; one timed window;
 * three timeline ticks, one of event 1. */
static void write_two_events(void)
{
	struct rec_kv meta[] = {
		{.key = "command", .str = "./app"}, {.key = "pids", .str = "10"},
		{.key = "mode", .str = "launch"},   {.key = "event", .str = "page-faults,cs"},
		{.key = "frequency", .str = "997"}, {.key = "period", .str = "1,4"},
		{.key = "max_stack", .str = "127"},
	};
	uint32_t mod, fmain, ftouch, fnap, key = 0;
	struct rec_writer *w;
	int fd;
	const uint32_t ev1 = 1u << REC_SAMPLE_EVENT_SHIFT;

	(void)key;
	strcpy(path, "/tmp/perch-test-events.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	assert_int_equal(rec_writer__meta(w, meta, 7), 0);
	mod = rec_writer__string(w, "/usr/bin/app");
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x100);
	ftouch = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "touch"), 0x200);
	fnap = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "nap"), 0x300);
	{
		uint32_t s1[] = {fmain, ftouch}, s2[] = {fmain}, s3[] = {fmain, fnap};

		assert_int_equal(rec_writer__sample(w, 10, 10, 30, 0, s1, 2), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 5, 0, s2, 1), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 7, ev1, s3, 2), 0);
	}
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

/* The writer keeps the mkstemp file as path.old. */
static void unlink_old(void)
{
	char old[sizeof(path) + 4];

	snprintf(old, sizeof(old), "%s.old", path);
	unlink(old);
}

static uint64_t total(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].count;
	return n;
}

static uint64_t window_total(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t w = 0; w < r->nwindows; w++)
		for (uint32_t k = 0; k < r->windows[w].ncounts; k++)
			n += r->windows[w].counts[k].count;
	return n;
}

static void select_event_keeps_one_events_samples(void **state)
{
	struct recording *r = NULL;
	uint32_t ev = 99;

	(void)state;
	write_two_events();
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(report__nevents(r), 2);
	assert_int_equal(report__find_event(r, "context-switches", &ev), 0); /* by its alias */
	assert_int_equal(ev, 1);
	assert_int_equal(report__find_event(r, "cpu-clock", &ev), -ENOENT);
	assert_int_equal(total(r), 42);
	assert_int_equal(window_total(r), 42);
	assert_int_equal(report__select_event(r, 1), 0);
	assert_int_equal(total(r), 7);
	assert_int_equal(window_total(r), 7);
	recording__free(r);
	r = NULL;
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(report__select_event(r, 0), 0);
	assert_int_equal(total(r), 35);
	assert_int_equal(window_total(r), 35);
	recording__free(r);
	unlink(path);
	unlink_old();
}

/* diff and merge compare what two recordings sampled: names or aliases, and (merge) periods; a
 * recording that names no event sampled cpu-clock. */
static void same_events_compares_names_aliases_and_periods(void **state)
{
	struct rec_kv pf1[] = {{.key = "event", .str = "page-faults"},
			       {.key = "period", .str = "1"}};
	struct rec_kv pf2[] = {{.key = "event", .str = "faults"}, {.key = "period", .str = "2"}};
	struct rec_kv old[] = {{.key = "frequency", .str = "997"}};
	struct rec_kv cpu[] = {{.key = "event", .str = "cpu-clock"},
			       {.key = "frequency", .str = "99"}};
	struct rec_kv two[] = {{.key = "event", .str = "page-faults,context-switches"},
			       {.key = "period", .str = "1,1"}};
	struct recording a = {.meta = pf1, .nmeta = 2}, b = {.meta = pf2, .nmeta = 2},
			 c = {.meta = old, .nmeta = 1}, d = {.meta = cpu, .nmeta = 2},
			 e = {.meta = two, .nmeta = 2};

	(void)state;
	assert_true(report__same_events(&a, &b, false)); /* the alias, another -c: diff compares */
	assert_false(report__same_events(&a, &b, true)); /* merge: the counts would not add up */
	assert_true(report__same_events(&a, &a, true));
	assert_true(report__same_events(&c, &d, true)); /* no META event: cpu-clock */
	assert_string_equal(report__events(&c), "cpu-clock");
	assert_string_equal(report__periods(&c), "none");
	assert_false(report__same_events(&a, &d, false));
	assert_false(report__same_events(&a, &e, false));
	assert_true(report__same_events(&e, &e, true));
}

/* The text header says what one sample of the event shown is. */
static void header_says_what_a_sample_is(void **state)
{
	struct report_opts o = {.min_percent = 0.5, .top = 5, .event = 2};
	struct recording *r = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	write_two_events();
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(report__select_event(r, 1), 0);
	assert_int_equal(report__print(r, path, &o, out), 0);
	fclose(out);
	assert_non_null(strstr(text, "sampling   cs, 1 sample every 4 events; 7 samples"));
	free(text);
	recording__free(r);
	unlink(path);
	unlink_old();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_table_matches_perf_event_h),
		cmocka_unit_test(event_list_reads_back),
		cmocka_unit_test(cpulist_parses_ranges_and_refuses_bad_ones),
		cmocka_unit_test(cpulist_reads_the_kernels_possible_list),
		cmocka_unit_test(select_event_keeps_one_events_samples),
		cmocka_unit_test(header_says_what_a_sample_is),
		cmocka_unit_test(same_events_compares_names_aliases_and_periods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
