// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GPU section of the text report for `perch record --gpu -p PID` (attach mode: libcuda's
 * entry points, no CUPTI): launches per kernel, copies per direction and memsets with their
 * bytes, launches, copies and memsets per launching call path and per region, calls per entry
 * point, and the calls whose stack was lost. Says that durations are unavailable.
 */
#include <inttypes.h>
#include <string.h>
#include "model/gpucalls.h"
#include "common.h"

#define PATH_FRAMES 12 /* frames of a call path shown, from the entry point outwards */
#define ROW_HEAD    "  %10s %8s %8s %14s  %s\n"

/* A frame as the report names it: its function, else module+0xoffset (never a blank). */
static void print_frame(const struct recording *r, uint32_t f, FILE *out)
{
	const struct rec_frame *fr = f < r->nframes ? &r->frames[f] : NULL;
	const char *mod = fr ? recording__string(r, fr->module) : "", *base = strrchr(mod, '/');

	if (fr && fr->name)
		fputs(recording__string(r, fr->name), out);
	else if (fr)
		fprintf(out, "%s+0x%" PRIx64, base ? base + 1 : mod, fr->offset);
	else
		fputs("?", out);
}

/* The call path, innermost first. */
static void print_path(const struct recording *r, const struct rec_sample *s, FILE *out)
{
	uint32_t i = s->nframes, shown = 0;

	for (; i > 0 && shown < PATH_FRAMES; i--, shown++) {
		fputs(shown ? " <- " : "", out);
		print_frame(r, s->frames[i - 1], out);
	}
	fputs(i ? " <- ...\n" : "\n", out);
}

static void print_kernels(const struct recording *r, const struct gpu_calls *t, unsigned int top,
			  FILE *out)
{
	if (!t->nkernels)
		return;
	fprintf(out, "  %-40s %10s\n", "kernel", "launches");
	for (size_t i = 0; i < t->nkernels && (!top || i < top); i++) {
		const struct gpu_call_kernel *k = &t->kernels[i];
		char handle[40];

		snprintf(handle, sizeof(handle), "kernel@0x%" PRIx64, k->handle);
		fprintf(out, "  %-40s %10" PRIu64 "\n",
			k->name ? recording__string(r, k->name) : handle, k->launches);
	}
	if (top && t->nkernels > top)
		fprintf(out, "  (%zu more kernels)\n", t->nkernels - top);
	if (t->unnamed)
		fprintf(out,
			"  (kernel@0xHANDLE: %" PRIu64 " launches of functions resolved before "
			"perch attached, whose names perch did not see)\n",
			t->unnamed);
}

static void print_copies(const struct gpu_calls *t, FILE *out)
{
	static const char *const dirs[REC_GPU_COPY_NR] = {"other", "HtoD", "DtoH",
							  "DtoD",  "HtoH", "PtoP"};
	bool header = false;

	for (uint32_t k = 0; k < REC_GPU_COPY_NR; k++) {
		if (!t->copies[k].count)
			continue;
		if (!header)
			fprintf(out, "  %-8s %10s %16s\n", "copy", "count", "bytes");
		header = true;
		fprintf(out, "  %-8s %10" PRIu64 " %16" PRIu64 "\n", dirs[k], t->copies[k].count,
			t->copies[k].bytes);
	}
	if (t->memsets.count)
		fprintf(out, "  %-8s %10" PRIu64 " %16" PRIu64 "\n", "memsets", t->memsets.count,
			t->memsets.bytes);
}

static void print_row(const struct gpu_call_row *row, FILE *out)
{
	fprintf(out, "  %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %14" PRIu64 "  ", row->launches,
		row->copies, row->memsets, row->bytes);
}

static void print_rows(const struct recording *r, const struct gpu_calls *t, unsigned int top,
		       FILE *out)
{
	if (t->npaths) {
		fprintf(out, "\n  GPU calls by launching call path (the entry point innermost)\n");
		fprintf(out, ROW_HEAD, "launches", "copies", "memsets", "bytes", "call path");
	}
	for (size_t i = 0; i < t->npaths && (!top || i < top); i++) {
		print_row(&t->paths[i], out);
		print_path(r, &r->samples[t->paths[i].id], out);
	}
	if (top && t->npaths > top)
		fprintf(out, "  (%zu more call paths)\n", t->npaths - top);
	if (t->nregions) {
		fprintf(out,
			"\n  GPU calls by region (each region on a call's region stack once)\n");
		fprintf(out, ROW_HEAD, "launches", "copies", "memsets", "bytes", "region");
	}
	for (size_t i = 0; i < t->nregions; i++) {
		print_row(&t->regions[i], out);
		fprintf(out, "%s\n", recording__string(r, t->regions[i].id));
	}
}

static void print_entries(const struct gpu_calls *t, FILE *out)
{
	bool first = true;

	for (size_t i = 0; i < REC_GPU_NENTRIES; i++) {
		if (!t->entries[i])
			continue;
		fprintf(out, "%s%s %" PRIu64, first ? "  entry points: " : ", ",
			rec_gpu_entries[i].symbol, t->entries[i]);
		first = false;
	}
	if (!first)
		fputc('\n', out);
}

bool report_print_gpu_attach(const struct recording *r, unsigned int top, FILE *out)
{
	const char *mode = report_meta(r, REC_META_gpu);
	struct gpu_calls *t;

	if (!r->ngpu_calls && (!mode || strcmp(mode, "attach")))
		return false;
	fprintf(out, "\nGPU (CUDA, attach mode: uprobes on libcuda.so)\n");
	for (size_t i = 0; i < r->ngpu_notes; i++)
		fprintf(out, "  note: %s\n", recording__string(r, r->gpu_notes[i]));
	fprintf(out, "  durations unavailable in attach mode (CUPTI was not injected)\n");
	t = gpu_calls__new(r);
	if (!t) {
		fprintf(out, "  (out of memory)\n");
		return true;
	}
	fprintf(out,
		"  %" PRIu64 " calls: %" PRIu64 " launches, %" PRIu64 " copies, %" PRIu64
		" memsets\n",
		t->calls, t->launches, t->calls - t->launches - t->memsets.count, t->memsets.count);
	print_kernels(r, t, top, out);
	print_copies(t, out);
	print_entries(t, out);
	print_rows(r, t, top, out);
	fprintf(out,
		"  stacks     %" PRIu64 " calls recorded, %" PRIu64
		" lost (no CPU stack kept), %" PRIu64 " kernel name lookups lost\n",
		t->calls, report_stat(r, REC_STAT_gpu_attach_calls_lost),
		report_stat(r, REC_STAT_gpu_attach_names_lost));
	gpu_calls__free(t);
	return true;
}
