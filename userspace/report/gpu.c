// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GPU section of the text report (`perch record --gpu`): why GPU data is missing when it is,
 * the top kernels, copies by direction, busy time per device and stream, and the counts of what
 * did not join or was dropped, never hidden.
 */
#include <inttypes.h>
#include <string.h>
#include "model/gpupaths.h"
#include "model/gputab.h"
#include "common.h"

#define PATH_FRAMES 12 /* frames of a launching call path shown, from the launch outwards */

/* A frame of perch's injection library (its probe, its callback): not the program's path. */
static bool perch_frame(const struct recording *r, uint32_t frame)
{
	const char *mod = frame < r->nframes ? recording__string(r, r->frames[frame].module) : "";
	size_t n = strlen(mod), k = strlen("libperch_cuda.so");

	return n >= k && !strcmp(mod + n - k, "libperch_cuda.so") &&
	       (n == k || mod[n - k - 1] == '/');
}

/* The launching call path, innermost first, without perch's own frames. */
static void print_path(const struct recording *r, const struct rec_sample *s, FILE *out)
{
	uint32_t i = s->nframes, shown = 0;

	while (i > 0 && perch_frame(r, s->frames[i - 1]))
		i--;
	for (; i > 0 && shown < PATH_FRAMES; i--, shown++) {
		uint32_t f = s->frames[i - 1];
		const char *name = f < r->nframes ? recording__string(r, r->frames[f].name) : "";

		fprintf(out, "%s%s", shown ? " <- " : "", name[0] ? name : "?");
	}
	fputs(i ? " <- ...\n" : "\n", out);
}

/* GPU time by launching call path (the uprobe's stacks), and the launches without one. */
static void print_paths(const struct recording *r, unsigned int top, FILE *out)
{
	struct gpu_paths *p = gpu_paths__new(r);
	char a[24];

	if (!p || (!p->nrows && !report_stat(r, REC_STAT_gpu_launch_stacks))) {
		gpu_paths__free(p);
		return;
	}
	fprintf(out, "\n  GPU time by launching call path (kernels, copies and memsets; the launch "
		     "innermost)\n");
	fprintf(out, "  %10s %8s  %s\n", "gpu", "count", "call path");
	for (size_t i = 0; i < p->nrows && (!top || i < top); i++) {
		fprintf(out, "  %s %8" PRIu64 "  ", report_fmt_time(a, p->rows[i].gpu_ns),
			p->rows[i].activities);
		print_path(r, &r->samples[p->rows[i].sample], out);
	}
	if (top && p->nrows > top)
		fprintf(out, "  (%zu more call paths)\n", p->nrows - top);
	fprintf(out,
		"  stacks     %" PRIu64 " of %" PRIu64 " launches have no CPU stack (%" PRIu64
		" activities unattributed; %" PRIu64 " probe hits lost in the kernel)\n",
		p->launches_no_stack, p->launches, p->activities_no_stack,
		report_stat(r, REC_STAT_gpu_launch_stacks_lost));
	gpu_paths__free(p);
}

static void print_kernels(const struct recording *r, const struct gputab *t, unsigned int top,
			  FILE *out)
{
	char a[24], b[24], c[24], d[24];

	if (!t->nkernels)
		return;
	fprintf(out, "  %-32s %8s %10s %10s %10s %10s %6s\n", "kernel", "calls", "total", "mean",
		"min", "max", "busy%");
	for (size_t i = 0; i < t->nkernels && (!top || i < top); i++) {
		const struct gpu_kernel_row *k = &t->kernels[i];
		const char *name = recording__string(r, k->name);

		fprintf(out, "  %-32s %8" PRIu64 " %s %s %s %s %5.1f%%\n", name[0] ? name : "?",
			k->calls, report_fmt_time(a, k->total_ns),
			report_fmt_time(b, k->total_ns / k->calls), report_fmt_time(c, k->min_ns),
			report_fmt_time(d, k->max_ns), report_pct(k->total_ns, t->busy_ns));
	}
	if (top && t->nkernels > top)
		fprintf(out, "  (%zu more kernels)\n", t->nkernels - top);
}

static void print_copies(const struct gputab *t, FILE *out)
{
	bool header = false;
	char a[24];

	for (uint32_t k = 0; k < REC_GPU_COPY_NR; k++) {
		const struct gpu_copy_row *c = &t->copies[k];

		if (!c->count)
			continue;
		if (!header)
			fprintf(out, "  %-8s %8s %14s %10s %12s\n", "copy", "count", "bytes",
				"time", "GB/s");
		header = true;
		fprintf(out, "  %-8s %8" PRIu64 " %14" PRIu64 " %s %12.3f\n", gputab__copy_name(k),
			c->count, c->bytes, report_fmt_time(a, c->total_ns),
			c->total_ns ? (double)c->bytes / (double)c->total_ns : 0.0);
	}
	if (t->memsets)
		fprintf(out, "  memsets  %8" PRIu64 " %14" PRIu64 "\n", t->memsets,
			t->memset_bytes);
}

static void print_lanes(const struct gputab *t, FILE *out)
{
	uint64_t span = t->last_ns - t->first_ns;
	char a[24];

	for (size_t i = 0; i < t->ndevices; i++)
		fprintf(out,
			"  device %-4" PRIu32 " busy %s (%5.1f%% of the %.3f ms from the first GPU "
			"activity to the last)\n",
			t->devices[i].device, report_fmt_time(a, t->devices[i].busy_ns),
			report_pct(t->devices[i].busy_ns, span), span / 1e6);
	for (size_t i = 0; i < t->nlanes; i++)
		fprintf(out, "    stream %-6" PRIu32 " %8" PRIu64 " activities, busy %s\n",
			t->lanes[i].stream, t->lanes[i].activities,
			report_fmt_time(a, t->lanes[i].busy_ns));
}

static void print_counts(const struct recording *r, const struct gputab *t, FILE *out)
{
	char a[24];

	fprintf(out,
		"  joined     %" PRIu64 " of %" PRIu64 " activities to their launch; %" PRIu64
		" activities without a launch, %" PRIu64 " launches without activity, %" PRIu64
		" records dropped by CUPTI\n",
		report_stat(r, REC_STAT_gpu_activities_joined),
		report_stat(r, REC_STAT_gpu_activities),
		report_stat(r, REC_STAT_gpu_activities_without_launch),
		report_stat(r, REC_STAT_gpu_launches_without_activity),
		report_stat(r, REC_STAT_gpu_records_dropped));
	fprintf(out, "  api        %" PRIu64 " CUDA calls recorded, %" PRIu64 " launches\n",
		t->api_calls, t->launches);
	if (t->syncs)
		fprintf(out, "  syncs      %" PRIu64 ", the CPU waited %s\n", t->syncs,
			report_fmt_time(a, t->sync_ns));
	if (report_stat(r, REC_STAT_gpu_channel_damaged))
		fprintf(out, "  damaged    the channel from the injection library was damaged: "
			     "what followed the damage is missing\n");
}

void report_print_gpu(const struct recording *r, unsigned int top, FILE *out)
{
	struct gputab *t;
	uint64_t copies = 0;
	char a[24];

	if (report_print_gpu_attach(r, top, out)) /* --gpu -p: no CUPTI */
		return;
	if (!report_meta(r, REC_META_gpu) && !r->ngpu && !r->ngpu_notes)
		return;
	fprintf(out, "\nGPU (CUDA through CUPTI)\n");
	for (size_t i = 0; i < r->ngpu_notes; i++)
		fprintf(out, "  note: %s\n", recording__string(r, r->gpu_notes[i]));
	t = gputab__new(r);
	if (!t) {
		fprintf(out, "  (out of memory)\n");
		return;
	}
	for (uint32_t k = 0; k < REC_GPU_COPY_NR; k++)
		copies += t->copies[k].count;
	fprintf(out,
		"  %" PRIu64 " kernels, %" PRIu64 " copies, %" PRIu64
		" memsets; GPU busy %s on %zu devices\n",
		t->kernels_run, copies, t->memsets, report_fmt_time(a, t->busy_ns), t->ndevices);
	print_kernels(r, t, top, out);
	print_copies(t, out);
	print_lanes(t, out);
	print_counts(r, t, out);
	gputab__free(t);
	print_paths(r, top, out);
}
