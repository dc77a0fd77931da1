// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of perch record -e, -C and report --event: the events table (format/events.h) against
 * linux/perf_event.h, the META event list read back, the CPU list syntax (record/cpulist.c)
 * against the kernel's own list of possible CPUs, and --event on a recording of two events written
 * through the real writer and read back through the real loader: each event's sample set
 * (model/sampleset.h) keeps its samples and its window counts, the header says what one sample
 * is, and one load serves every event and view while the loaded recording stays byte for byte as
 * it was loaded.
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
#include "model/profile.h"
#include "model/sampleset.h"
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

/* The samples of event ev (0: all) of r: a set the caller frees; *e_r its recording. */
static struct sampleset *of_event(const struct recording *r, uint32_t ev, enum sample_view v,
				  const struct recording **e_r)
{
	struct sampleset_opts o = {.event = ev, .view = v};
	struct sampleset *set = sampleset__new(r, &o);

	assert_non_null(set);
	*e_r = sampleset__recording(set);
	return set;
}

static void select_event_keeps_one_events_samples(void **state)
{
	const struct recording *e;
	struct recording *r = NULL;
	struct sampleset *set;
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
	set = of_event(r, 2, SAMPLE_VIEW_CPU, &e);
	assert_int_equal(total(e), 7);
	assert_int_equal(window_total(e), 7);
	sampleset__free(set);
	set = of_event(r, 1, SAMPLE_VIEW_CPU, &e);
	assert_int_equal(total(e), 35);
	assert_int_equal(window_total(e), 35);
	sampleset__free(set);
	recording__free(r);
	unlink(path);
	unlink_old();
}

/* What a loaded recording holds that options could rewrite: samples, windows and their counts,
 * timeline ticks, each array copied byte for byte. */
struct snapshot {
	struct recording r;
	void *samples, *windows, *events, *counts[8];
};

static void *dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);

	assert_non_null(d);
	if (n)
		memcpy(d, p, n);
	return d;
}

static void take(const struct recording *r, struct snapshot *s)
{
	s->r = *r;
	s->samples = dup_bytes(r->samples, r->nsamples * sizeof(*r->samples));
	s->windows = dup_bytes(r->windows, r->nwindows * sizeof(*r->windows));
	s->events = dup_bytes(r->events, r->nevents * sizeof(*r->events));
	assert_true(r->nwindows <= 8);
	for (size_t w = 0; w < r->nwindows; w++)
		s->counts[w] = dup_bytes(r->windows[w].counts,
					 r->windows[w].ncounts * sizeof(*r->windows[w].counts));
}

/* r is byte for byte what s took. */
static void same_as(const struct recording *r, const struct snapshot *s)
{
	assert_memory_equal(&s->r, r, sizeof(*r));
	assert_memory_equal(s->samples, r->samples, r->nsamples * sizeof(*r->samples));
	assert_memory_equal(s->windows, r->windows, r->nwindows * sizeof(*r->windows));
	assert_memory_equal(s->events, r->events, r->nevents * sizeof(*r->events));
	for (size_t w = 0; w < r->nwindows; w++)
		assert_memory_equal(s->counts[w], r->windows[w].counts,
				    r->windows[w].ncounts * sizeof(*r->windows[w].counts));
}

static void drop(struct snapshot *s)
{
	for (size_t w = 0; w < s->r.nwindows; w++)
		free(s->counts[w]);
	free(s->samples);
	free(s->windows);
	free(s->events);
}

/* Event ev's (1 + its index) profile of r under view v, checked against its total weight;
 * r stays as s took it. */
static void profile_of(const struct recording *r, uint32_t ev, enum sample_view v, uint64_t want,
		       const struct snapshot *s)
{
	const struct recording *e;
	struct sampleset *set = of_event(r, ev, v, &e);
	struct profile *p = profile__build(e, NULL);

	same_as(r, s);
	assert_non_null(p);
	assert_int_equal(tree__total_weight(profile__tree(p)), want);
	profile__free(p);
	sampleset__free(set);
}

/* The text report of event ev (1 + its index) of r, as report__print() writes it. */
static char *report_of(const struct recording *r, uint32_t ev, enum report_view v)
{
	struct report_opts o = {.min_percent = 0.5, .top = 5, .event = ev, .view = v};
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_int_equal(report__print(r, path, &o, out), 0);
	fclose(out);
	return text;
}

/* One load serves a report per event and a profile per event and view (perch report of a file of
 * two events, no reload): each shows its own event's samples, and the loaded recording's samples,
 * windows and timeline stay byte for byte as loaded. */
static void events_and_views_leave_the_recording_as_loaded(void **state)
{
	struct recording *r = NULL;
	struct snapshot snap;
	char *text;

	(void)state;
	write_two_events();
	assert_int_equal(recording__load(path, &r), 0);
	take(r, &snap);
	profile_of(r, 2, SAMPLE_VIEW_WALL, 7 * (1000000000ull / 997), &snap); /* ticks x period */
	profile_of(r, 1, SAMPLE_VIEW_CPU, 35, &snap);
	text = report_of(r, 2, REPORT_VIEW_CPU);
	same_as(r, &snap);
	assert_non_null(strstr(text, "cs, 1 sample every 4 events; 7 samples"));
	free(text);
	text = report_of(r, 1, REPORT_VIEW_CPU);
	same_as(r, &snap);
	assert_non_null(strstr(text, "page-faults, 1 sample every 1 event; 35 samples"));
	free(text);
	assert_int_equal(total(r), 42);
	drop(&snap);
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
	struct recording *r = NULL;
	char *text;

	(void)state;
	write_two_events();
	assert_int_equal(recording__load(path, &r), 0);
	text = report_of(r, 2, REPORT_VIEW_CPU);
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
		cmocka_unit_test(events_and_views_leave_the_recording_as_loaded),
		cmocka_unit_test(same_events_compares_names_aliases_and_periods),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
