// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The programs' steps and pauses (STEPS, format/recording.h) as the outputs show them: the text
 * report's "Steps" section (what was asked, each step's wall time, samples and CPU time, its top
 * functions by self samples, and the metrics of its process over the step), the windows the
 * programs paused in, and --format=stats's step lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "format/metrics.h"
#include "lib/u64map.h"
#include "model/steptab.h"

#define STEP_REGIONS   5  /* regions shown per step (csv has every one) */
#define STEP_INTERVALS 64 /* the header's recorded intervals, as perch's own */

uint64_t report_step_samples(const struct rec_step *s)
{
	uint64_t n = 0;

	for (uint32_t j = 0; j < s->ncounts; j++)
		n += s->counts[j].count;
	return n;
}

/* The function a sample's leaf frame is in ("[unknown]" when unnamed). */
static uint32_t leaf_name(const struct recording *r, const struct rec_sample *s)
{
	return s->nframes ? r->frames[s->frames[s->nframes - 1]].name : 0;
}

size_t report_step_top(const struct recording *r, const struct rec_step *s,
		       uint32_t name[REPORT_STEP_TOP], uint64_t count[REPORT_STEP_TOP])
{
	struct u64map by = {0};
	size_t n = 0;

	for (uint32_t j = 0; j < s->ncounts; j++) {
		uint32_t f = leaf_name(r, &r->samples[s->counts[j].sample]);
		uint64_t v = 0;

		u64map__get(&by, f, &v);
		u64map__put(&by, f, v + s->counts[j].count);
	}
	for (size_t i = 0; i < by.cap; i++) {
		size_t k;

		if (!by.used[i])
			continue;
		for (k = n; k > 0 && count[k - 1] < by.vals[i]; k--) {
			if (k < REPORT_STEP_TOP) {
				count[k] = count[k - 1];
				name[k] = name[k - 1];
			}
		}
		if (k < REPORT_STEP_TOP) {
			count[k] = by.vals[i];
			name[k] = (uint32_t)by.keys[i];
			n += n < REPORT_STEP_TOP;
		}
	}
	u64map__clear(&by);
	return n;
}

/* min/mean/max of the display values of m's points that end inside [a, b]. */
static bool metric_in(const struct rec_metric *m, uint64_t a, uint64_t b,
		      struct report_metric_sum *sum)
{
	double tot = 0;

	memset(sum, 0, sizeof(*sum));
	for (uint32_t i = 0; i < m->npoints; i++) {
		double v;

		if (m->points[i].end_ns < a || m->points[i].end_ns > b ||
		    !report_metric_value(m, i, &v))
			continue;
		sum->min = sum->npoints && sum->min < v ? sum->min : v;
		sum->max = sum->npoints && sum->max > v ? sum->max : v;
		tot += v;
		sum->npoints++;
	}
	sum->mean = sum->npoints ? tot / (double)sum->npoints : 0;
	return sum->npoints > 0;
}

/* The metrics of the step's process (series whose subject is its pid) over the step, on one
 * line: min/mean/max of each that moved. */
static void print_step_metrics(const struct recording *r, const struct rec_step *s, FILE *out)
{
	const char *sep = "             metrics ";

	for (size_t i = 0; s->end_ns && i < r->nmetrics; i++) {
		const struct rec_metric *m = &r->metrics[i];
		const struct rec_metric_info *info = rec_metric_info(m->metric);
		struct report_metric_sum sum;

		if (!info || info->subject != REC_MS_PROC || m->subject != s->pid ||
		    !metric_in(m, s->start_ns, s->end_ns, &sum) || sum.max <= 0)
			continue;
		fprintf(out, "%s%s %.1f/%.1f/%.1f %s", sep, info->name, sum.min, sum.mean, sum.max,
			report_metric_unit(m->metric));
		sep = ", ";
	}
	if (*sep == ',')
		fputs(" (min/mean/max)\n", out);
}

/* The step's regions (from the timeline's spans, model/steptab.h) by total time: calls, total
 * and mean per call. */
static void print_step_regions(const struct recording *r, const struct steptab *t, uint32_t step,
			       FILE *out)
{
	const struct step_region *rows;
	size_t n = t ? steptab__rows(t, step, &rows) : 0;

	for (size_t i = 0; i < n && i < STEP_REGIONS; i++)
		fprintf(out,
			"             region %s: %" PRIu64 " calls, %.3f ms total, %.3f ms mean\n",
			recording__string(r, rows[i].name), rows[i].calls, rows[i].total_ns / 1e6,
			rows[i].calls ? rows[i].sum_ns / 1e6 / (double)rows[i].calls : 0);
	if (n > STEP_REGIONS)
		fprintf(out, "             ... %zu regions more (--format=csv has every one)\n",
			n - STEP_REGIONS);
}

static void print_step(const struct recording *r, const struct steptab *t, uint32_t step,
		       uint64_t t0, double period, FILE *out)
{
	const struct rec_step *s = &r->steps[step];
	uint32_t name[REPORT_STEP_TOP];
	uint64_t count[REPORT_STEP_TOP], n = report_step_samples(s);
	size_t k = report_step_top(r, s, name, count);

	fprintf(out, "  %-8" PRIu32 " %-8" PRIu64, s->pid, s->n);
	if (s->start_ns && s->end_ns)
		fprintf(out, " %9.3f %9.3f %10.3f", (s->start_ns - t0) / 1e9,
			(s->end_ns - t0) / 1e9, (s->end_ns - s->start_ns) / 1e6);
	else
		fprintf(out, " %9s %9s %10s", s->start_ns ? "" : "?", s->end_ns ? "" : "open", "");
	fprintf(out, " %8" PRIu64 " %9.3f ", n, (double)n * period * 1e3);
	for (size_t i = 0; i < k; i++)
		fprintf(out, "%s%s %.0f%%", i ? ", " : "",
			name[i] ? recording__string(r, name[i]) : "[unknown]",
			report_pct(count[i], n));
	fputc('\n', out);
	print_step_metrics(r, s, out);
	print_step_regions(r, t, step, out);
}

uint64_t report_steps_origin(const struct recording *r)
{
	uint64_t t0 = 0, end;

	if (!report_end(r, REC_END_start_ns, &t0))
		report_time_span(r, &t0, &end);
	return t0;
}

static void print_pauses(const struct recording *r, uint64_t t0, FILE *out)
{
	const char *sep = "program paused ";

	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rec_step *s = &r->steps[i];

		if (s->kind != REC_STEP_PAUSE)
			continue;
		fprintf(out, "%spid %" PRIu32 " %.3f-", sep, s->pid, (s->start_ns - t0) / 1e9);
		if (s->end_ns)
			fprintf(out, "%.3f s", (s->end_ns - t0) / 1e9);
		else
			fputs("end", out);
		sep = ", ";
	}
	if (*sep == ',')
		fputs(" (not recorded: no samples, region timing or off-CPU blocks)\n", out);
}

void report_print_steps(const struct recording *r, FILE *out)
{
	const char *freq = report_meta(r, REC_META_frequency),
		   *asked = report_meta(r, REC_META_steps);
	double period = freq && atof(freq) > 0 ? 1.0 / atof(freq) : 0;
	uint64_t t0 = report_steps_origin(r);
	struct steptab *t;
	size_t nsteps = 0;

	for (size_t i = 0; i < r->nsteps; i++)
		nsteps += r->steps[i].kind == REC_STEP_STEP;
	if (!nsteps && !asked && r->nsteps == 0)
		return;
	fprintf(out, "\n## Steps (perch_step)%s%s%s\n", asked ? ": only steps " : "",
		asked ? asked : "", asked ? " recorded (--steps)" : "");
	print_pauses(r, t0, out);
	if (!nsteps)
		return;
	/* Region figures per step come from the timeline's spans; without them (no --timeline)
	 * the runtime's statistics are per thread over the whole recording. */
	t = r->nspans ? steptab__new(r) : NULL;
	if (r->nrthreads && !r->nspans)
		fputs("  per-step region figures need perch record --timeline (the Regions section "
		      "has the whole recording's)\n",
		      out);
	fprintf(out, "  %-8s %-8s %9s %9s %10s %8s %9s top functions (self)\n", "pid", "step",
		"start s", "end s", "wall ms", "samples", "cpu ms");
	for (size_t i = 0; i < r->nsteps; i++) {
		if (r->steps[i].kind == REC_STEP_STEP)
			print_step(r, t, (uint32_t)i, t0, period, out);
	}
	steptab__free(t);
}

struct interval {
	uint64_t a, b; /* b 0: still open at the end */
};

static int by_start(const void *x, const void *y)
{
	const struct interval *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

/* The steps' intervals in time order, the ones that touch merged into one; returns the count. */
static size_t step_intervals(const struct recording *r, struct interval *v)
{
	size_t n = 0, m = 0;

	for (size_t i = 0; i < r->nsteps; i++) {
		if (r->steps[i].kind == REC_STEP_STEP && r->steps[i].start_ns)
			v[n++] = (struct interval){r->steps[i].start_ns, r->steps[i].end_ns};
	}
	if (n)
		qsort(v, n, sizeof(*v), by_start);
	for (size_t i = 0; i < n; i++) {
		if (m && v[m - 1].b && v[i].a <= v[m - 1].b) {
			v[m - 1].b = v[i].b && v[i].b < v[m - 1].b ? v[m - 1].b : v[i].b;
			continue;
		}
		v[m++] = v[i];
	}
	return m;
}

bool report_print_steps_recorded(const struct recording *r, uint64_t start, FILE *out)
{
	struct interval *v;
	size_t n;

	if (!report_meta(r, REC_META_steps) || !r->nsteps)
		return false;
	v = calloc(r->nsteps, sizeof(*v));
	n = v ? step_intervals(r, v) : 0;
	for (size_t i = 0; i < n && i < STEP_INTERVALS; i++) {
		fprintf(out, "%s%.3f-", i ? ", " : "recorded   ", (v[i].a - start) / 1e9);
		if (v[i].b)
			fprintf(out, "%.3f s", (v[i].b - start) / 1e9);
		else
			fputs("end", out);
	}
	if (n > STEP_INTERVALS)
		fprintf(out, ", ... (%zu intervals)", n);
	if (n)
		fputs(" (the steps of --steps)", out);
	free(v);
	return n > 0;
}

void report_print_steps_header(const struct recording *r, FILE *out)
{
	const char *steps = report_meta(r, REC_META_steps),
		   *only = report_meta(r, REC_META_only_region);

	if (steps)
		fprintf(out,
			"steps      only steps %s recorded (--steps): nothing before the first "
			"began, nothing after the last ended\n",
			steps);
	if (only)
		fprintf(out, "only       samples of threads inside region %s (--only-region)\n",
			only);
}

void report_stats_steps(const struct recording *r, FILE *out)
{
	for (size_t i = 0; i < r->nsteps; i++) {
		const struct rec_step *s = &r->steps[i];

		fprintf(out, "%s %" PRIu32 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			s->kind == REC_STEP_STEP ? "step" : "program_pause", s->pid, s->n,
			s->start_ns, s->end_ns, report_step_samples(s));
	}
}
