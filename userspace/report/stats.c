// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=stats: every count the recording holds as "key value" lines, for scripts and tests
 * (tests/lib.sh: stat FILE KEY).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include "common.h"
#include "model/gpupaths.h"
#include "model/gpusyncs.h"
#include "model/gputab.h"

/* The counts of the text report's GPU section, for a recording with GPU activity: busy and idle
 * summed over devices (each over its own span), syncs and their wait, GPU time with and without
 * a launch stack. */
/* The sampled intervals perch record wrote (format/keys.h), as their END keys. */
static void print_enabled(const struct recording *r, FILE *out)
{
	char key[2][32];
	uint64_t a, b;

	for (unsigned int i = 0; i < REC_END_ENABLED_MAX; i++) {
		snprintf(key[0], sizeof(key[0]), REC_END_ENABLED_START, i);
		snprintf(key[1], sizeof(key[1]), REC_END_ENABLED_END, i);
		if (!recording__end(r, key[0], &a) || !recording__end(r, key[1], &b))
			return;
		fprintf(out, "%s %" PRIu64 "\n%s %" PRIu64 "\n", key[0], a, key[1], b);
	}
}

static int gpu_stats(const struct recording *r, FILE *out)
{
	struct gputab *t = gputab__new(r);
	struct gpu_paths *p = gpu_paths__new(r);
	struct gpu_syncs *s = gpu_syncs__new(r);
	uint64_t idle = 0;

	if (!t || !p || !s) {
		gputab__free(t);
		gpu_paths__free(p);
		gpu_syncs__free(s);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->ndevices; i++)
		idle += t->devices[i].idle_ns;
	fprintf(out,
		"gpu_kernels %" PRIu64 "\ngpu_busy_ns %" PRIu64 "\ngpu_idle_ns %" PRIu64
		"\ngpu_syncs %" PRIu64 "\ngpu_sync_wait_ns %" PRIu64 "\ngpu_sync_threads %zu\n",
		t->kernels_run, t->busy_ns, idle, s->count, s->total_ns, s->nrows);
	fprintf(out,
		"gpu_launches_without_stack %" PRIu64 "\ngpu_activities_without_stack %" PRIu64
		"\ngpu_time_with_stack_ns %" PRIu64 "\ngpu_time_without_stack_ns %" PRIu64 "\n",
		p->launches_no_stack, p->activities_no_stack, p->gpu_ns, p->gpu_ns_no_stack);
	gputab__free(t);
	gpu_paths__free(p);
	gpu_syncs__free(s);
	return 0;
}

/* One "key value" line per key of format/keys.h the recording holds (every STATS key, 0 when
 * absent), then the counts the text header derives, and those of the GPU section. */
int report_stats(const struct recording *r, const char *path, const struct report_opts *o,
		 FILE *out)
{
	size_t nthreads, nproc = report_count_processes(r, &nthreads);
	struct report_time_axis t;
	uint64_t v;

	(void)path;
	(void)o;
	for (int k = 0; k < REC_META_NR; k++) {
		if (report_meta(r, k))
			fprintf(out, "%s %s\n", rec_meta_keys[k], report_meta(r, k));
	}
	for (int k = 0; k < REC_STAT_NR; k++) {
		/* The writer's counters, only where a writer of version 4 wrote them; the tick
		 * program's cost, only where a perch of 2026-11-28 on wrote it. */
		bool since = k >= REC_STAT_timeline_events_dropped ||
			     k == REC_STAT_bpf_tick_run_time_ns || k == REC_STAT_bpf_tick_run_count;

		if (since && !recording__stat(r, rec_stat_keys[k], &v))
			continue;
		fprintf(out, "%s %" PRIu64 "\n", rec_stat_keys[k], report_stat(r, k));
	}
	for (int k = 0; k < REC_END_NR; k++) {
		if (report_end(r, k, &v))
			fprintf(out, "%s %" PRIu64 "\n", rec_end_keys[k], v);
	}
	print_enabled(r, out);
	fprintf(out, "sampled %" PRIu64 "\nprocesses %zu\nthreads %zu\n", report_sample_total(r),
		nproc, nthreads);
	if ((v = report_samples_without_stack(r))) /* "[no stack]"; only where there are some */
		fprintf(out, "samples_without_stack %" PRIu64 "\n", v);
	if (report_time_axis(r, &t))
		fprintf(out,
			"time_start_ns %" PRIu64 "\ntime_end_ns %" PRIu64 "\nwindows %zu\n"
			"window_ns %" PRIu64 "\nevents %zu\nspans %zu\n",
			t.start_ns, t.end_ns, t.nwindows, t.resolution_ns, r->nevents, r->nspans);
	if (r->nmetrics) {
		size_t points = 0;

		for (size_t i = 0; i < r->nmetrics; i++)
			points += r->metrics[i].npoints;
		fprintf(out, "metrics_series %zu\nmetrics_points %zu\n", r->nmetrics, points);
	}
	report_stats_steps(r, out);
	return r->ngpu ? gpu_stats(r, out) : 0;
}
