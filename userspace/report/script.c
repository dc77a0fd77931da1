// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch script`: the exact timeline of a recording made with --timeline, one entry per sample in
 * perf script's shape: "comm pid/tid seconds: count event:" and the stack below it, leaf first,
 * one frame a line (address: a user frame's file offset in its module, a kernel frame's
 * address), inline frames before the function they were inlined into.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "common.h"
#include "report.h"

/* The last path component of a module (the whole of "[kernel]" and the like). */
static const char *module_base(const struct recording *r, uint32_t id)
{
	const char *m = recording__string(r, id), *slash = strrchr(m, '/');

	return slash && slash[1] ? slash + 1 : *m ? m : "[unknown]";
}

static void print_frame(const struct recording *r, uint32_t id, FILE *out)
{
	const struct rec_frame *f = &r->frames[id];
	const char *mod = recording__string(r, f->module);
	const char *name = recording__string(r, f->name);

	/* The inline chain, innermost first; its last level is the function itself. */
	for (uint32_t i = 0; i + 1 < f->nlines; i++) {
		const char *in = recording__string(r, f->lines[i].function);

		fprintf(out, "\t%16" PRIx64 " %s (inlined) (%s)\n", f->offset,
			*in ? in : "[unknown]", *mod ? mod : "[unknown]");
	}
	if (*name)
		fprintf(out, "\t%16" PRIx64 " %s (%s)\n", f->offset, name,
			*mod ? mod : "[unknown]");
	else
		fprintf(out, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", f->offset,
			module_base(r, f->module), f->offset, *mod ? mod : "[unknown]");
}

static void print_event(const struct recording *r, const struct rec_event *e, const char *event,
			FILE *out)
{
	const struct rec_sample *s = &r->samples[e->sample];

	fprintf(out, "%-16s %u/%u %" PRIu64 ".%06" PRIu64 ": %10u %s:\n", report_sample_comm(r, s),
		s->pid, s->tid, e->time_ns / 1000000000u, e->time_ns % 1000000000u / 1000u, 1u,
		event);
	for (uint32_t i = s->nframes; i-- > 0;) {
		if (s->frames[i] < r->nframes)
			print_frame(r, s->frames[i], out);
	}
	fputc('\n', out);
}

int report__script(const struct recording *r, FILE *out)
{
	const char *event = report_meta(r, REC_META_event);

	if (!r->nevents)
		return -ENODATA;
	for (size_t i = 0; i < r->nevents; i++) {
		if (r->events[i].sample < r->nsamples)
			print_event(r, &r->events[i], event && *event ? event : "cpu-clock", out);
	}
	return 0;
}
