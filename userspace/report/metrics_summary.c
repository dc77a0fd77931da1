// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The text report's Metrics section by default (report --metrics=summary): one compact block
 * instead of every series, which a system-wide recording has for each of a machine's processes
 * (most of them idle): the CPUs' busy share, the processes that used the most CPU with one row
 * each, the GPUs' series, and a line saying how many processes are left out and that
 * --metrics=all shows every series (report/metrics.c).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "format/metrics.h"
#include "lib/vec.h"

#define SUMMARY_PROCESSES 5 /* the busiest processes shown */

/* One process's series, summed up. */
struct proc_sum {
	uint32_t pid;
	double cpu_mean;   /* user + system, % of one CPU */
	uint64_t cpu_ns;   /* user + system */
	double rss_max;	   /* MiB */
	uint64_t faults;   /* minor + major */
	uint64_t io_bytes; /* read + written */
	bool zero;	   /* every series all zero */
};

struct summary {
	struct proc_sum *procs;
	size_t nprocs, cap;
	size_t cpus_at, ncpus; /* the run of CPU series (ncpus 0: none) */
};

static int by_cpu_desc(const void *a, const void *b)
{
	const struct proc_sum *x = a, *y = b;

	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Series m into process row p (m is one of p's). */
static void add_series(struct proc_sum *p, const struct rec_metric *m)
{
	struct report_metric_sum s;

	if (!report_metric_summary(m, &s))
		return;
	p->zero = p->zero && !s.total && s.max == 0;
	switch (m->metric) {
	case REC_METRIC_USER:
	case REC_METRIC_SYSTEM:
		p->cpu_mean += s.mean;
		p->cpu_ns += s.total;
		break;
	case REC_METRIC_RSS:
		p->rss_max = s.max;
		break;
	case REC_METRIC_MINFLT:
	case REC_METRIC_MAJFLT:
		p->faults += s.total;
		break;
	case REC_METRIC_READ:
	case REC_METRIC_WRITE:
		p->io_bytes += s.total;
		break;
	default:
		break;
	}
}

/* The series [i, end) (one input's, in a merged recording) into *s; 0 or -1 (out of memory). */
static int collect(const struct recording *r, size_t i, size_t end, struct summary *s)
{
	for (; i < end; i++) {
		const struct rec_metric *m = &r->metrics[i];
		const struct rec_metric_info *info = rec_metric_info(m->metric);

		if (info && info->subject == REC_MS_CPU && !s->ncpus++)
			s->cpus_at = i;
		if (!info || info->subject != REC_MS_PROC)
			continue;
		if (!s->nprocs || s->procs[s->nprocs - 1].pid != m->subject) {
			if (vec_grow(&s->procs, &s->cap, s->nprocs + 1, sizeof(*s->procs), 64))
				return -1;
			s->procs[s->nprocs++] = (struct proc_sum){.pid = m->subject, .zero = true};
		}
		add_series(&s->procs[s->nprocs - 1], m);
	}
	return 0;
}

static void print_gpus(const struct recording *r, size_t i, size_t end, FILE *out)
{
	int64_t subject = -1;

	for (; i < end; i++) {
		const struct rec_metric *m = &r->metrics[i];
		const struct rec_metric_info *info = rec_metric_info(m->metric);

		if (!info || info->subject != REC_MS_GPU)
			continue;
		if (m->subject != subject)
			fprintf(out, " GPU %" PRIu32 " (NVML):\n", m->subject);
		subject = m->subject;
		report_metric_row(m, info->name, out);
	}
}

static void print_process(const struct recording *r, const struct proc_sum *p, FILE *out)
{
	const char *name = report_metric_proc_name(r, p->pid);
	char label[64];

	snprintf(label, sizeof(label), "%" PRIu32 "%s%.40s%s", p->pid, *name ? " (" : "", name,
		 *name ? ")" : "");
	fprintf(out, "  %-30s %7.1f%% %9.3f %9.1f %10" PRIu64 " %10.1f\n", label, p->cpu_mean,
		p->cpu_ns / 1e9, p->rss_max, p->faults, p->io_bytes / 1024.0);
}

/* The busiest processes by CPU time, and a line for the others. */
static void print_processes(const struct recording *r, struct summary *s, FILE *out)
{
	size_t shown = 0, zero = 0;

	qsort(s->procs, s->nprocs, sizeof(*s->procs), by_cpu_desc);
	for (size_t k = 0; k < s->nprocs; k++)
		zero += s->procs[k].zero;
	fprintf(out, " processes by CPU time (user + system; %zu with metrics):\n", s->nprocs);
	fprintf(out, "  %-30s %8s %9s %9s %10s %10s\n", "pid (name)", "cpu mean", "cpu s",
		"rss MiB", "faults", "I/O KiB");
	for (; shown < s->nprocs && shown < SUMMARY_PROCESSES && s->procs[shown].cpu_ns; shown++)
		print_process(r, &s->procs[shown], out);
	if (shown < s->nprocs)
		fprintf(out,
			"  ... %zu more processes (%zu used less CPU, %zu all zero): perch report "
			"--metrics=all shows every series\n",
			s->nprocs - shown, s->nprocs - shown - zero, zero);
}

/* The block of the series [i, end). */
static void print_block(const struct recording *r, size_t i, size_t end, FILE *out)
{
	struct summary s = {0};

	if (collect(r, i, end, &s)) {
		fputs("  (out of memory)\n", out);
		free(s.procs);
		return;
	}
	if (s.ncpus) {
		fputs(" CPUs (busy share, /proc/stat; min, mean, max):\n", out);
		report_metric_all_cpus(&r->metrics[s.cpus_at], s.ncpus, out);
	}
	if (s.nprocs)
		print_processes(r, &s, out);
	print_gpus(r, i, end, out);
	free(s.procs);
}

void report_print_metrics_summary(const struct recording *r, FILE *out)
{
	const char *note = report_metrics_note(r);
	size_t i = 0, j;

	fprintf(out,
		"\nMetrics (every %" PRIu64
		" ms; a summary: perch report --metrics=all shows every series)\n",
		r->metrics_interval_ns / 1000000);
	if (note)
		fprintf(out, " note: %s\n", note);
	for (; i <= r->nmetrics; i = j + 1) {
		for (j = i; j < r->nmetrics && r->metrics[j].metric != REC_METRIC_ORIGIN; j++)
			;
		print_block(r, i, j, out);
		if (j < r->nmetrics) /* perch merge: the next input's series */
			fprintf(out, " from %s:\n", recording__string(r, r->metrics[j].subject));
	}
}
