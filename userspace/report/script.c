// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch script`: the exact timeline of a recording made with --timeline, one entry per sample in
 * perf script's shape: "comm pid/tid seconds: count event:" and the stack below it, leaf first,
 * one frame a line (address: a user frame's file offset in its module, a kernel frame's
 * address), inline frames before the function they were inlined into; under lib/escape.h's
 * terminal rule.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/escape.h"
#include "report.h"
#include "symbolize/demangle.h"

/* The last path component of a module (the whole of "[kernel]" and the like). */
static const char *module_base(const struct recording *r, uint32_t id)
{
	const char *m = recording__string(r, id), *slash = strrchr(m, '/');

	return slash && slash[1] ? slash + 1 : *m ? m : "[unknown]";
}

/* A level of a frame's inline chain as the report names it: its function (demangled), the
 * frame's symbol when the level has none, else module+0xoffset. */
static void print_level(const struct recording *r, const struct rec_frame *f, uint32_t function,
			bool inlined, FILE *out)
{
	const char *mod = recording__string(r, f->module);
	const char *raw = recording__string(r, function ? function : f->name);
	char *name = *raw ? demangle__name(raw) : NULL;

	fprintf(out, "\t%16" PRIx64 " ", f->offset);
	if (*raw)
		fputs(name ? name : raw, out);
	else
		fprintf(out, "%s+0x%" PRIx64, module_base(r, f->module), f->offset);
	fprintf(out, "%s (%s)\n", inlined ? " (inlined)" : "", *mod ? mod : "[unknown]");
	free(name);
}

/* The inline chain innermost first, the out-of-line function last (addr2line -i's order). */
static void print_frame(const struct recording *r, uint32_t id, FILE *out)
{
	const struct rec_frame *f = &r->frames[id];

	for (uint32_t i = 0; i + 1 < f->nlines; i++)
		print_level(r, f, f->lines[i].function, true, out);
	print_level(r, f, f->nlines ? f->lines[f->nlines - 1].function : 0, false, out);
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

static void script(const struct recording *r, const char *event, FILE *out)
{
	for (size_t i = 0; i < r->nevents; i++) {
		struct report_event e; /* perch record -e A,B: the sample's own event */

		if (r->events[i].sample >= r->nsamples)
			continue;
		if (report__nevents(r) > 1 &&
		    report_event(r, REC_SAMPLE_EVENT(r->samples[r->events[i].sample].flags), &e))
			print_event(r, &r->events[i], e.name, out);
		else
			print_event(r, &r->events[i], event && *event ? event : "cpu-clock", out);
	}
}

int report__script(const struct recording *r, FILE *out)
{
	const char *event = report_meta(r, REC_META_event);
	FILE *term;

	if (!r->nevents)
		return -ENODATA;
	term = esc_term_stream(out);
	if (!term)
		return -errno;
	script(r, event, term);
	return fclose(term) ? -EIO : 0;
}
