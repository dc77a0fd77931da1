// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The system metrics of a recording (METRICS, format/metrics.h) as the outputs show them: each
 * point as a display value (a share in percent, a rate per second, or a level), min/mean/max
 * over a series, and the text report's "Metrics" section. The chrome export's counters
 * (chrome.c) and --format=stats read the same values from here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "format/metrics.h"

/* The unit the outputs show a metric in. */
const char *report_metric_unit(uint32_t metric)
{
	const struct rec_metric_info *info = rec_metric_info(metric);

	if (!info)
		return "";
	if (info->merge == REC_MM_MEAN || !strcmp(info->unit, "ns"))
		return "%";
	if (info->merge == REC_MM_MAX)
		return "MiB";
	return !strcmp(info->unit, "bytes") ? "KiB/s" : "/s";
}

bool report_metric_value(const struct rec_metric *m, uint32_t i, double *v)
{
	const struct rec_metric_info *info = rec_metric_info(m->metric);
	uint64_t start = i ? m->points[i - 1].end_ns : m->start_ns;
	uint64_t dt = m->points[i].end_ns - start;
	double x = (double)m->points[i].value;

	if (!info)
		return false;
	if (info->merge == REC_MM_MEAN) {
		*v = x * 100.0 / REC_METRIC_SHARE_ONE;
		return true;
	}
	if (info->merge == REC_MM_MAX) {
		*v = x / (1024.0 * 1024.0);
		return true;
	}
	if (!dt)
		return false; /* an amount over no time: no rate */
	*v = x * 1e9 / (double)dt;
	if (!strcmp(info->unit, "ns"))
		*v /= 1e7; /* ns of CPU per second, as a percentage of one CPU */
	else if (!strcmp(info->unit, "bytes"))
		*v /= 1024.0;
	return true;
}

/* min/mean/max of the display values, the mean weighted by each point's duration. */
bool report_metric_summary(const struct rec_metric *m, struct report_metric_sum *s)
{
	double wsum = 0, tsum = 0;
	size_t n = 0;

	*s = (struct report_metric_sum){0};
	for (uint32_t i = 0; i < m->npoints; i++) {
		uint64_t start = i ? m->points[i - 1].end_ns : m->start_ns;
		double v, dt = (double)(m->points[i].end_ns - start);

		if (!report_metric_value(m, i, &v))
			continue;
		if (!n++ || v < s->min)
			s->min = v;
		if (n == 1 || v > s->max)
			s->max = v;
		wsum += v * dt;
		tsum += dt;
		s->total += m->points[i].value;
	}
	s->mean = tsum > 0 ? wsum / tsum : s->min;
	s->npoints = n;
	return n > 0;
}

void report_metric_row(const struct rec_metric *m, const char *label, FILE *out)
{
	const struct rec_metric_info *info = rec_metric_info(m->metric);
	const char *unit = report_metric_unit(m->metric);
	struct report_metric_sum s;

	if (!report_metric_summary(m, &s))
		return;
	fprintf(out, "  %-22s %10.1f %10.1f %10.1f  %s", label, s.min, s.mean, s.max, unit);
	if (info->merge == REC_MM_SUM && !strcmp(info->unit, "ns"))
		fprintf(out, "  (%.3f s in all)", (double)s.total / 1e9);
	else if (info->merge == REC_MM_SUM && !strcmp(info->unit, "bytes"))
		fprintf(out, "  (%.1f KiB in all)", (double)s.total / 1024.0);
	else if (info->merge == REC_MM_SUM)
		fprintf(out, "  (%" PRIu64 " in all)", s.total);
	fputc('\n', out);
}

const char *report_metric_proc_name(const struct recording *r, uint32_t pid)
{
	const char *name = "";

	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].pid != pid)
			continue;
		name = recording__string(r, r->threads[i].comm);
		if (r->threads[i].tid == pid)
			break;
	}
	return name;
}

/* The label of the input m came from in a merged recording (the origin marker before it), or
 * "" (m points into r->metrics). */
static const char *origin_of(const struct recording *r, const struct rec_metric *m)
{
	for (const struct rec_metric *k = m; k-- > r->metrics;) {
		if (k->metric == REC_METRIC_ORIGIN)
			return recording__string(r, k->subject);
	}
	return "";
}

void report_metric_subject(const struct recording *r, const struct rec_metric *m, char *buf,
			   size_t len)
{
	const struct rec_metric_info *info = rec_metric_info(m->metric);
	const char *name, *from = origin_of(r, m), *sep = *from ? ": " : "";

	if (!info || info->subject == REC_MS_CPU) {
		snprintf(buf, len, "%s%scpu%" PRIu32, from, sep, m->subject);
		return;
	}
	if (info->subject == REC_MS_GPU) {
		snprintf(buf, len, "%s%sGPU %" PRIu32, from, sep, m->subject);
		return;
	}
	name = report_metric_proc_name(r, m->subject);
	snprintf(buf, len, "%s%s%" PRIu32 "%s%s%s", from, sep, m->subject, *name ? " (" : "", name,
		 *name ? ")" : "");
}

static void print_subject(const struct recording *r, uint8_t subject, uint32_t id, FILE *out)
{
	const char *name = subject == REC_MS_PROC ? report_metric_proc_name(r, id) : "";

	if (subject == REC_MS_PROC && *name)
		fprintf(out, " process %" PRIu32 " (%s):\n", id, name);
	else if (subject == REC_MS_PROC)
		fprintf(out, " process %" PRIu32 " (not sampled):\n", id);
	else if (subject == REC_MS_GPU)
		fprintf(out, " GPU %" PRIu32 " (NVML):\n", id);
	else
		fputs(" CPUs (busy share of each, /proc/stat):\n", out);
}

#define MAX_CPU_ROWS 16 /* more CPUs: the all-CPUs row and the busiest BUSIEST_ROWS */
#define BUSIEST_ROWS 8

void report_metric_all_cpus(const struct rec_metric *cpus, size_t n, FILE *out)
{
	struct rec_metric all = cpus[0];
	struct rec_metric_point *pts;
	char label[48];

	for (size_t k = 1; k < n; k++) {
		if (cpus[k].npoints != all.npoints || cpus[k].start_ns != all.start_ns)
			return;
	}
	pts = calloc(all.npoints ? all.npoints : 1, sizeof(*pts));
	if (!pts)
		return;
	for (uint32_t i = 0; i < all.npoints; i++) {
		uint64_t sum = 0;

		for (size_t k = 0; k < n; k++)
			sum += cpus[k].points[i].value;
		pts[i] = (struct rec_metric_point){cpus[0].points[i].end_ns, (sum + n / 2) / n};
	}
	all.points = pts;
	snprintf(label, sizeof(label), "all %zu CPUs", n);
	report_metric_row(&all, label, out);
	free(pts);
}

struct cpu_row {
	double mean;
	size_t k; /* which series */
};

static int by_mean_desc(const void *a, const void *b)
{
	const struct cpu_row *x = a, *y = b;

	if (x->mean != y->mean)
		return x->mean < y->mean ? 1 : -1;
	return (x->k > y->k) - (x->k < y->k); /* ties: by CPU, so the output is stable */
}

/* A run of n CPU series: the all-CPUs row, then each CPU (the busiest when there are many). */
static void print_cpus(const struct rec_metric *cpus, size_t n, FILE *out)
{
	struct cpu_row *rows = calloc(n, sizeof(*rows));
	size_t shown = n <= MAX_CPU_ROWS ? n : BUSIEST_ROWS;
	struct report_metric_sum s;
	char label[48];

	report_metric_all_cpus(cpus, n, out);
	if (!rows)
		return;
	for (size_t k = 0; k < n; k++) {
		report_metric_summary(&cpus[k], &s);
		rows[k] = (struct cpu_row){s.mean, k};
	}
	if (n > MAX_CPU_ROWS)
		qsort(rows, n, sizeof(*rows), by_mean_desc);
	for (size_t k = 0; k < shown; k++) {
		snprintf(label, sizeof(label), "cpu%" PRIu32, cpus[rows[k].k].subject);
		report_metric_row(&cpus[rows[k].k], label, out);
	}
	if (shown < n)
		fprintf(out, "  ... %zu more CPUs, less busy (--format=chrome has each)\n",
			n - shown);
	free(rows);
}

/* Whether the recording involves a GPU: recorded with --gpu, or GPU spans, calls or series. */
static bool gpu_involved(const struct recording *r)
{
	if (report_meta(r, REC_META_gpu) || r->ngpu || r->ngpu_notes || r->ngpu_calls)
		return true;
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct rec_metric_info *info = rec_metric_info(r->metrics[i].metric);

		if (info && info->subject == REC_MS_GPU)
			return true;
	}
	return false;
}

const char *report_metrics_note(const struct recording *r)
{
	return r->metrics_note && gpu_involved(r) ? recording__string(r, r->metrics_note) : NULL;
}

/* Every subject's series in the order recorded (the sampler keeps a subject's series together);
 * in a merged recording each input's after a line "from LABEL:". */
static void print_all(const struct recording *r, FILE *out)
{
	int64_t subject = -1;
	uint8_t kind = 0xff;

	for (size_t i = 0, j; i < r->nmetrics; i = j) {
		const struct rec_metric *m = &r->metrics[i];
		const struct rec_metric_info *info = rec_metric_info(m->metric);

		j = i + 1;
		if (m->metric == REC_METRIC_ORIGIN) { /* perch merge: the next input's series */
			fprintf(out, " from %s:\n", recording__string(r, m->subject));
			kind = 0xff;
			continue;
		}
		if (!info)
			continue; /* a metric from a later perch */
		if (info->subject != kind || (info->subject != REC_MS_CPU && m->subject != subject))
			print_subject(r, info->subject, m->subject, out);
		kind = info->subject;
		subject = m->subject;
		if (info->subject == REC_MS_CPU) {
			while (j < r->nmetrics && r->metrics[j].metric == REC_METRIC_CPU_BUSY)
				j++;
			print_cpus(m, j - i, out);
			continue;
		}
		report_metric_row(m, info->name, out);
	}
}

void report_print_metrics(const struct recording *r, enum report_metrics mode, FILE *out)
{
	/* all: every series, and why one is missing (no NVML) even where no GPU is involved */
	const char *note = mode == REPORT_METRICS_ALL && r->metrics_note
				   ? recording__string(r, r->metrics_note)
				   : report_metrics_note(r);

	if (mode == REPORT_METRICS_NONE || (!r->nmetrics && !note))
		return;
	if (mode == REPORT_METRICS_SUMMARY) {
		report_print_metrics_summary(r, out);
		return;
	}
	fprintf(out, "\nMetrics (every %" PRIu64 " ms; min, mean, max over the samples):\n",
		r->metrics_interval_ns / 1000000);
	if (note)
		fprintf(out, " note: %s\n", note);
	print_all(r, out);
}
