// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GPU section of the text report (`perch record --gpu`): why GPU data is missing when it is,
 * the top kernels, copies by direction, busy and idle time per device and stream, syncs and the
 * threads that waited in them, GPU time by launching call path (flat, and as the bounded call
 * tree), and the counts of what did not join or was dropped, never hidden.
 */
#include <inttypes.h>
#include <string.h>
#include "model/gpupaths.h"
#include "model/gpusyncs.h"
#include "model/gputab.h"
#include "model/gputree.h"
#include "common.h"

#define PATH_FRAMES 12 /* frames of a launching call path shown, from the launch outwards */

/* The launching call path, innermost first, without perch's own frames. */
static void print_path(const struct recording *r, const struct rec_sample *s, FILE *out)
{
	uint32_t i = gpu_paths__program_frames(r, s), shown = 0;

	for (; i > 0 && shown < PATH_FRAMES; i--, shown++) {
		uint32_t f = s->frames[i - 1];
		const char *name = f < r->nframes ? recording__string(r, r->frames[f].name) : "";

		fprintf(out, "%s%s", shown ? " <- " : "", name[0] ? name : "?");
	}
	fputs(i ? " <- ...\n" : "\n", out);
}

/* The launch stacks as the bounded call tree, weighted by the GPU time they launched. */
static void print_tree(const struct recording *r, const struct profile *p,
		       const struct report_opts *o, FILE *out)
{
	struct tree *t = gpu_tree__new(r, p);
	char a[24];

	if (!t) {
		fprintf(out, "  (out of memory)\n");
		return;
	}
	fprintf(out,
		"\n  GPU call tree (the launch stacks as the bounded path tree, weighted by the GPU "
		"time they launched: %s; %zu nodes)\n",
		report_fmt_time(a, tree__total_weight(t)), tree__node_count(t));
	fprintf(out,
		"  %7s %7s  (%% of the GPU time with a launch stack%s%s; nodes below %.2f%% "
		"hidden: --min-percent)\n",
		"total", "self", o->region ? " launched inside region " : "",
		o->region ? o->region : "", o->min_percent);
	report_print_tree_nodes(p, t, o->min_percent, out);
	tree__free(t);
}

/* GPU time by launching call path (the uprobe's stacks), flat and as a tree, and the launches
 * without one. */
static void print_paths(const struct recording *r, const struct profile *p,
			const struct report_opts *o, FILE *out)
{
	struct gpu_paths *g = gpu_paths__new(r);
	char a[24], b[24];

	if (!g || (!g->nrows && !report_stat(r, REC_STAT_gpu_launch_stacks))) {
		gpu_paths__free(g);
		return;
	}
	fprintf(out, "\n  GPU time by launching call path (kernels, copies and memsets; the launch "
		     "innermost)\n");
	fprintf(out, "  %10s %8s  %s\n", "gpu", "count", "call path");
	for (size_t i = 0; i < g->nrows && (!o->top || i < o->top); i++) {
		fprintf(out, "  %s %8" PRIu64 "  ", report_fmt_time(a, g->rows[i].gpu_ns),
			g->rows[i].activities);
		print_path(r, &r->samples[g->rows[i].sample], out);
	}
	if (o->top && g->nrows > o->top)
		fprintf(out, "  (%zu more call paths)\n", g->nrows - o->top);
	fprintf(out,
		"  stacks     %" PRIu64 " of %" PRIu64 " launches have no CPU stack (%" PRIu64
		" activities unattributed; %" PRIu64 " probe hits lost in the kernel)\n",
		g->launches_no_stack, g->launches, g->activities_no_stack,
		report_stat(r, REC_STAT_gpu_launch_stacks_lost));
	fprintf(out, "  attributed %s of GPU time to a launch stack, %s not\n",
		report_fmt_time(a, g->gpu_ns), report_fmt_time(b, g->gpu_ns_no_stack));
	gpu_paths__free(g);
	print_tree(r, p, o, out);
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

static void print_lane(const char *what, uint32_t id, const struct gpu_lane_row *l, FILE *out)
{
	char a[24], b[24], c[24], name[32];

	snprintf(name, sizeof(name), "%s %" PRIu32, what, id);
	fprintf(out, "  %-15s %10" PRIu64 " %s %s %5.1f%% %s\n", name, l->activities,
		report_fmt_time(a, l->busy_ns), report_fmt_time(b, l->idle_ns),
		report_pct(l->busy_ns, l->last_ns - l->first_ns),
		report_fmt_time(c, l->last_ns - l->first_ns));
}

/* Busy and idle per device and its streams, each over its own span. */
static void print_lanes(const struct gputab *t, FILE *out)
{
	size_t k = 0;

	if (!t->ndevices)
		return;
	fprintf(out,
		"  %-15s %10s %10s %10s %6s %10s  (span: from the first activity's start to the "
		"last one's end; idle = span - busy)\n",
		"lane", "activities", "busy", "idle", "busy%", "span");
	for (size_t i = 0; i < t->ndevices; i++) {
		print_lane("device", t->devices[i].device, &t->devices[i], out);
		for (; k < t->nlanes && t->lanes[k].device == t->devices[i].device; k++)
			print_lane("  stream", t->lanes[k].stream, &t->lanes[k], out);
	}
}

/* The types of a thread's syncs, "stream 2, context 1". */
static void print_sync_types(const struct gpu_sync_row *w, FILE *out)
{
	const char *sep = "";

	for (uint32_t k = 0; k < GPU_SYNC_NR; k++) {
		if (!w->by_type[k])
			continue;
		fprintf(out, "%s%s %" PRIu64, sep, gpu_syncs__type_name(k), w->by_type[k]);
		sep = ", ";
	}
	fputc('\n', out);
}

/* Who waited: each thread's syncs by type, the time waited and the longest wait. */
static void print_syncs(const struct recording *r, FILE *out)
{
	struct gpu_syncs *s = gpu_syncs__new(r);
	char a[24], b[24], who[32];

	if (!s || !s->nrows) {
		gpu_syncs__free(s);
		return;
	}
	fprintf(out, "  syncs      %" PRIu64 ", the CPU waited %s; by thread:\n", s->count,
		report_fmt_time(a, s->total_ns));
	fprintf(out, "  %-15s %-16s %6s %10s %10s  %s\n", "pid/tid", "thread", "syncs", "waited",
		"max", "by type");
	for (size_t i = 0; i < s->nrows; i++) {
		const struct gpu_sync_row *w = &s->rows[i];
		const char *comm = w->comm ? recording__string(r, w->comm) : "?";

		snprintf(who, sizeof(who), "%" PRIu32 "/%" PRIu32, w->pid, w->tid);
		fprintf(out, "  %-15s %-16s %6" PRIu64 " %s %s  ", w->tid ? who : "-",
			w->tid ? comm : "(no API call)", w->count, report_fmt_time(a, w->total_ns),
			report_fmt_time(b, w->max_ns));
		print_sync_types(w, out);
	}
	gpu_syncs__free(s);
}

static void print_counts(const struct recording *r, const struct gputab *t, FILE *out)
{
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
	print_syncs(r, out);
	if (report_stat(r, REC_STAT_gpu_channel_damaged))
		fprintf(out, "  damaged    the channel from the injection library was damaged: "
			     "what followed the damage is missing\n");
}

void report_print_gpu(const struct recording *r, const struct profile *p,
		      const struct report_opts *o, FILE *out)
{
	struct gputab *t;
	uint64_t copies = 0;
	char a[24];

	if (report_print_gpu_attach(r, o->top, out)) /* --gpu -p: no CUPTI */
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
	print_kernels(r, t, o->top, out);
	print_copies(t, out);
	print_lanes(t, out);
	print_counts(r, t, out);
	gputab__free(t);
	print_paths(r, p, o, out);
}
