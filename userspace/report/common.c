// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helpers every output of report/ uses (common.h): the recording's keys, counts of samples and
 * processes, how durations print, and JSON strings (speedscope, chrome).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/escape.h"
#include "lib/u64map.h"
#include "model/gpupaths.h"

double report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

uint64_t report_stat(const struct recording *r, enum rec_stat key)
{
	uint64_t v = 0;

	recording__stat(r, rec_stat_keys[key], &v);
	return v;
}

const char *report_meta(const struct recording *r, enum rec_meta key)
{
	return recording__meta(r, rec_meta_keys[key]);
}

bool report_end(const struct recording *r, enum rec_end key, uint64_t *value)
{
	return recording__end(r, rec_end_keys[key], value);
}

size_t report_count_processes(const struct recording *r, size_t *nthreads)
{
	struct u64map pids = {0};
	uint64_t one;
	size_t n = 0;

	for (size_t i = 0; i < r->nthreads; i++) {
		if (!u64map__get(&pids, r->threads[i].pid, &one)) {
			u64map__put(&pids, r->threads[i].pid, 1);
			n++;
		}
	}
	u64map__clear(&pids);
	*nthreads = r->nthreads;
	return n;
}

uint64_t report_sample_total(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].count;
	return n;
}

uint64_t report_samples_without_stack(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].nframes ? 0 : r->samples[i].count;
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

bool report_time_axis(const struct recording *r, struct report_time_axis *t)
{
	uint64_t *d;
	size_t n = 0;

	*t = (struct report_time_axis){0};
	if (!r->nwindows)
		return false;
	t->start_ns = r->windows[0].start_ns;
	t->end_ns = r->windows[r->nwindows - 1].end_ns;
	t->nwindows = r->nwindows;
	d = malloc(r->nwindows * sizeof(*d));
	for (size_t i = 0; d && i < r->nwindows; i++) {
		if (r->windows[i].end_ns > r->windows[i].start_ns)
			d[n++] = r->windows[i].end_ns - r->windows[i].start_ns;
	}
	if (n) {
		qsort(d, n, sizeof(*d), cmp_u64);
		t->resolution_ns = d[n / 2];
	}
	free(d);
	return t->resolution_ns > 0; /* only untimed windows: a writer that kept no time */
}

/* The sample's thread's name when it was taken; from the thread table for recordings made before
 * samples carried it (its name when perch first saw it). */
const char *report_sample_comm(const struct recording *r, const struct rec_sample *s)
{
	return profile__sample_comm(r, s);
}

void report_put_oneline(FILE *out, const char *s)
{
	size_t len = strlen(s);

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
		       s[len - 1] == '\r'))
		len--;
	esc_term_n(out, s, len);
}

/* A duration in ten columns with three decimals, in ns, µs, ms or s (as perf and Tracy print). */
const char *report_fmt_time(char buf[24], uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, 24, "%7" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, 24, "%7.3f µs", ns / 1e3);
	else if (ns < 999999500) /* above, %.3f ms would print 1000.000 */
		snprintf(buf, 24, "%7.3f ms", ns / 1e6);
	else
		snprintf(buf, 24, "%8.3f s", ns / 1e9);
	return buf;
}

/* The mean time per timed call: every call's own time (a recursive region's nested calls
 * included), or, from a recording without those sums, the total over the calls. */
uint64_t report_mean_ns(const struct region_stat *s)
{
	uint64_t timed = region_stat__timed(s), sum = s->sum_ns ? s->sum_ns : s->total_ns;

	return timed ? (sum + timed / 2) / timed : 0;
}

struct profile *report_profile(const struct recording *r, const struct report_opts *o)
{
	struct profile_opts po = {.lines = o->lines,
				  .no_demangle = o->no_demangle,
				  .no_inline = o->no_inline,
				  .region = o->region,
				  .query = o->query,
				  .nkeys = o->nkeys};

	memcpy(po.keys, o->keys, sizeof(po.keys));
	return profile__build(r, &po);
}

void report_json_chars(FILE *f, const char *s)
{
	esc_json(f, s);
}

void report_json_str(FILE *f, const char *s)
{
	esc_json_str(f, s);
}

/* Whether window w has a time: counts flushed with no rec_writer__window() have none. */
static bool timed(const struct rec_window *w)
{
	return w->end_ns > w->start_ns;
}

bool report_has_time_axis(const struct recording *r)
{
	for (size_t i = 0; i < r->nwindows; i++) {
		if (timed(&r->windows[i]))
			return true;
	}
	return r->nevents || r->nspans;
}

/* Widened to the GPU activity and the launches' flows (1 ns before the launch returned). */
static void gpu_span(const struct recording *r, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < r->ngpu; i++) {
		const struct rec_gpu *g = &r->gpu[i];
		uint64_t from = g->launch_ns && g->launch_ns - 1 < g->start_ns ? g->launch_ns - 1
									       : g->start_ns;

		*lo = from < *lo ? from : *lo;
		*hi = g->end_ns > *hi ? g->end_ns : *hi;
	}
}

void report_time_span(const struct recording *r, uint64_t *start, uint64_t *end)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < r->nwindows; i++) {
		if (!timed(&r->windows[i]))
			continue;
		lo = r->windows[i].start_ns < lo ? r->windows[i].start_ns : lo;
		hi = r->windows[i].end_ns;
	}
	if (r->nevents) {
		lo = r->events[0].time_ns < lo ? r->events[0].time_ns : lo;
		hi = r->events[r->nevents - 1].time_ns > hi ? r->events[r->nevents - 1].time_ns
							    : hi;
	}
	for (size_t i = 0; i < r->nspans; i++) {
		lo = r->spans[i].time_ns < lo ? r->spans[i].time_ns : lo;
		hi = r->spans[i].time_ns > hi ? r->spans[i].time_ns : hi;
	}
	gpu_span(r, &lo, &hi);
	if (lo == UINT64_MAX) { /* no time axis: the recording's duration from 0 */
		lo = 0;
		report_end(r, REC_END_duration_ns, &hi);
	}
	*start = lo;
	*end = hi > lo ? hi : lo;
}

void report_sample_weight(const struct recording *r, const struct report_opts *o,
			  struct report_event *e, uint64_t *frequency, uint64_t *period,
			  const char **counted)
{
	const char *freq = report_meta(r, REC_META_frequency);

	*frequency = freq ? strtoull(freq, NULL, 10) : 0;
	*period = 0;
	*counted = NULL;
	if (o->view == REPORT_VIEW_CPU && report_event(r, o->event ? o->event - 1 : 0, e) &&
	    e->period) {
		*period = e->period;
		*counted = e->clock ? NULL : e->name;
	}
}

const char *report_build_id(const struct recording *r, uint32_t module)
{
	for (size_t i = 0; i < r->nmodules; i++) {
		if (r->modules[i].path == module)
			return recording__string(r, r->modules[i].build_id);
	}
	return "";
}

int report_gpu_sample_ns(const struct recording *r, uint64_t **out)
{
	bool stacks = false;

	*out = NULL;
	for (size_t i = 0; i < r->ngpu && !stacks; i++)
		stacks = r->gpu[i].launch_key != 0;
	if (!stacks)
		return 0;
	*out = gpu_paths__sample_ns(r);
	return *out ? 0 : -ENOMEM;
}
