// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=speedscope: the recording as speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json). One sampled profile per thread, named
 * "comm (pid/tid)" (a thread that exec'd gets one per name, as folded names its stacks), its
 * samples' stacks outermost first; frames shared by every profile, one per function as the text
 * report names it (kernel functions marked "_[k]", with file and line under --lines), inline
 * chains expanded, and the sample's regions leading its stack as "region:NAME" frames, exactly as
 * --format=folded shows them: summing a profile's weights by stack gives folded's lines.
 *
 * speedscope opens on the heaviest sampled profile (activeProfileIndex).
 *
 * Weights are in unit "none": sample counts, exact and the same numbers the other outputs
 * print, and defined when the recording has no frequency; nanoseconds would be count * 1e9 /
 * frequency, rounded. Under --view=off|wall (report/view.c) they are nanoseconds, and say so.
 * A recording of another event (perch record -e page-faults, -c P; one event of several with
 * --event) names it after each profile's "comm (pid/tid)", and its weights are the events the
 * samples stand for (count x P, unit "none"; nanoseconds for a clock event with -c). Regions
 * lead the sampled stacks; a recording with region spans
 * (--timeline) also gets one evented profile per thread, "regions of comm (pid/tid)", of its
 * spans in nanoseconds from the recording's start (report_time_span): an open event per begin, a
 * close per end, nested as the region runtime nests them (an end that matches a region open
 * further out closes the ones inside it, an end that matches none is dropped, spans still open
 * close at the end). Marks have no duration, so no event: speedscope has no instants. A
 * recording with off-CPU spans (--timeline --off-cpu, OFFSPANS) gets one evented profile per
 * thread more, "off-CPU of comm (pid/tid)": each block opens its blocking stack's frames at its
 * start and closes them at its end (a thread blocks once at a time, so they nest), which
 * speedscope's time order view shows as the thread's waits on its time line.
 *
 * Streamed: profiles first, written while the samples are walked, then the frames they used
 * ("shared" after "profiles": JSON objects are unordered). What is held is one entry per kept
 * sample and one per region span (to group them by thread), one per frame and the open regions
 * of one thread, never the output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/vec.h"
#include "model/steptab.h"

enum ss_kind { SS_FUNC, SS_REGION, SS_NO_STACK };

struct ss_frame {
	enum ss_kind kind;
	uint32_t id;	     /* profile function or region name's string id */
	uint32_t file, line; /* --lines: where the function is (string id, 0: unknown) */
};

struct ss_sample {
	uint32_t pid, tid;
	const char *comm;
	size_t idx; /* in the recording */
};

struct ss {
	const char *unit; /* "none" (sample counts), "nanoseconds" under --view=off|wall */
	/* An event other than cpu-clock at a frequency (report_event_shown): its name ends each
	 * profile's, and the weights are what the samples stand for (report_event_weight). */
	bool labelled;
	struct report_event event;
	const struct recording *r;
	const struct profile *p;
	bool lines;
	FILE *out;
	uint32_t *func_frame;	/* profile function -> frame index + 1 (0: not used yet) */
	uint32_t *region_frame; /* string id -> frame index + 1 */
	uint32_t no_stack;	/* the "[no stack]" frame's index + 1 */
	struct ss_frame *frames;
	size_t nframes, cap_frames;
	struct ss_sample *samples; /* the kept ones, by thread */
	size_t nsamples;
	uint32_t *spans;     /* the recording's region spans (indices), by thread */
	uint64_t start, end; /* the recording's span (ns) */
	uint32_t *open;	     /* the open regions of the thread being written */
	size_t depth, cap_open;
	uint32_t *stack; /* one stack's frame indices, outermost first; reused */
	size_t nstack, cap_stack;
	uint32_t *offspans; /* the recording's off-CPU spans (indices), by thread */
};

/* The index of a frame, added on first use (*slot: its index + 1); -ENOMEM. */
static int64_t frame_index(struct ss *x, uint32_t *slot, struct ss_frame fr)
{
	if (*slot)
		return *slot - 1;
	if (vec_grow(&x->frames, &x->cap_frames, x->nframes + 1, sizeof(*x->frames), 256))
		return -ENOMEM;
	x->frames[x->nframes] = fr;
	*slot = (uint32_t)++x->nframes;
	return *slot - 1;
}

/* One more frame index of a stack being collected (x->stack). */
static int push_index(struct ss *x, int64_t idx)
{
	if (idx < 0 || vec_grow(&x->stack, &x->cap_stack, x->nstack + 1, sizeof(*x->stack), 64))
		return -ENOMEM;
	x->stack[x->nstack++] = (uint32_t)idx;
	return 0;
}

/* One sample's stack into x->stack: its regions, then its functions, outermost first. */
static int collect_stack(struct ss *x, const struct rec_sample *s)
{
	const struct recording *r = x->r;
	bool funcs = false;
	int err = 0;

	x->nstack = 0;
	for (uint32_t j = 0; !err && j < s->nregions; j++) {
		uint32_t id = s->regions[j] < r->nstrings ? s->regions[j] : 0;

		err = push_index(x, frame_index(x, &x->region_frame[id],
						(struct ss_frame){SS_REGION, id, 0, 0}));
	}
	for (uint32_t j = 0; !err && j < s->nframes; j++) {
		const struct rec_frame *fr = &r->frames[s->frames[j]];
		const uint32_t *fns;
		uint32_t n = profile__frame_funcs(x->p, s->frames[j], &fns);
		const uint32_t *li = profile__frame_lines(x->p, s->frames[j]);

		for (uint32_t k = 0; !err && k < n; k++) {
			/* the recording's LINES are innermost first */
			const struct rec_line *rl = li[k] < fr->nlines ? &fr->lines[li[k]] : NULL;
			struct ss_frame f = {SS_FUNC, fns[k], rl && x->lines ? rl->file : 0,
					     rl && x->lines ? rl->line : 0};

			err = push_index(x, frame_index(x, &x->func_frame[fns[k]], f));
		}
		funcs |= n > 0;
	}
	if (!err && !funcs && profile__sample_folded(x->p, (size_t)(s - r->samples))) {
		uint32_t ff = profile__folded_func(x->p); /* the query folded every frame */

		err = push_index(x, frame_index(x, &x->func_frame[ff],
						(struct ss_frame){SS_FUNC, ff, 0, 0}));
	} else if (!err && !funcs) /* neither stack could be read, as folded shows it */
		err = push_index(
			x, frame_index(x, &x->no_stack, (struct ss_frame){SS_NO_STACK, 0, 0, 0}));
	return err;
}

/* One sample's stack as a JSON array of frame indices. */
static int put_stack(struct ss *x, const struct rec_sample *s)
{
	int err = collect_stack(x, s);

	fputc('[', x->out);
	for (size_t i = 0; !err && i < x->nstack; i++)
		fprintf(x->out, "%s%" PRIu32, i ? "," : "", x->stack[i]);
	fputc(']', x->out);
	return err;
}

static int by_thread(const void *a, const void *b)
{
	const struct ss_sample *x = a, *y = b;
	int c;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if ((c = strcmp(x->comm, y->comm)))
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static bool same_thread(const struct ss_sample *a, const struct ss_sample *b)
{
	return a->pid == b->pid && a->tid == b->tid && !strcmp(a->comm, b->comm);
}

/* Recording sample i's weight: its count, or the events it stands for. */
static uint64_t weight(const struct ss *x, size_t i)
{
	uint64_t n = x->r->samples[i].count;

	return x->labelled ? report_event_weight(&x->event, n) : n;
}

/* The samples [from, to) of x->samples, one thread's, as a sampled profile. */
static int put_profile(struct ss *x, size_t from, size_t to)
{
	const struct ss_sample *t = &x->samples[from];
	uint64_t total = 0;
	int err = 0;

	for (size_t i = from; i < to; i++)
		total += weight(x, x->samples[i].idx);
	fputs("{\"type\":\"sampled\",\"name\":\"", x->out);
	report_json_chars(x->out, t->comm);
	fprintf(x->out, " (%" PRIu32 "/%" PRIu32 ")", t->pid, t->tid);
	if (x->labelled) {
		fputc(' ', x->out);
		report_json_chars(x->out, x->event.name);
	}
	fprintf(x->out,
		"\",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		x->unit, total);
	for (size_t i = from; !err && i < to; i++) {
		fputs(i > from ? ",\n" : "\n", x->out);
		err = put_stack(x, &x->r->samples[x->samples[i].idx]);
	}
	fputs("],\n\"weights\":[", x->out);
	for (size_t i = from; i < to; i++)
		fprintf(x->out, "%s%" PRIu64, i > from ? "," : "", weight(x, x->samples[i].idx));
	fputs("]}", x->out);
	return err;
}

/* An open ("O") or close ("C") event of region name at ns from the start. */
static int put_region_event(struct ss *x, char type, uint32_t name, uint64_t at, bool *first)
{
	uint32_t id = name < x->r->nstrings ? name : 0;
	int64_t idx = frame_index(x, &x->region_frame[id], (struct ss_frame){SS_REGION, id, 0, 0});

	if (idx < 0)
		return -ENOMEM;
	fprintf(x->out, "%s{\"type\":\"%c\",\"frame\":%" PRId64 ",\"at\":%" PRIu64 "}",
		*first ? "\n" : ",\n", type, idx, at);
	*first = false;
	return 0;
}

/* A region end: the regions from the innermost open one called name out to it close (the
 * runtime's rule); an end that matches none is dropped. */
static int close_region(struct ss *x, const struct rec_span *sp, uint64_t at, bool *first)
{
	size_t k = x->depth;
	int err = 0;

	while (k > 0 && x->open[k - 1] != sp->name)
		k--;
	while (!err && k && x->depth >= k)
		err = put_region_event(x, 'C', x->open[--x->depth], at, first);
	return err;
}

/* The events of one thread's spans [from, to) of x->spans; marks have no duration and are left
 * out, spans open at the end close there. */
static int put_region_events(struct ss *x, size_t from, size_t to)
{
	bool first = true;
	int err = 0;

	x->depth = 0;
	for (size_t i = from; !err && i < to; i++) {
		const struct rec_span *sp = &x->r->spans[x->spans[i]];
		uint64_t at = sp->time_ns - x->start;

		if (sp->kind == REC_SPAN_END) {
			err = close_region(x, sp, at, &first);
		} else if (sp->kind == REC_SPAN_BEGIN) {
			if (vec_grow(&x->open, &x->cap_open, x->depth + 1, sizeof(*x->open), 16))
				return -ENOMEM;
			x->open[x->depth++] = sp->name;
			err = put_region_event(x, 'O', sp->name, at, &first);
		}
	}
	while (!err && x->depth)
		err = put_region_event(x, 'C', x->open[--x->depth], x->end - x->start, &first);
	return err;
}

/* The name of thread (pid, tid) in the thread table, "?" when it has none. */
static const char *thread_name(const struct recording *r, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].pid == pid && r->threads[i].tid == tid && r->threads[i].comm)
			return recording__string(r, r->threads[i].comm);
	}
	return "?";
}

/* One evented profile per thread with region spans (--timeline), in nanoseconds from the
 * recording's start, after the sampled ones; *nprofiles counts both. */
static int put_region_profiles(struct ss *x, size_t *nprofiles)
{
	const struct recording *r = x->r;
	int err = 0;

	x->spans = r->nspans < UINT32_MAX ? calloc(r->nspans + 1, sizeof(*x->spans)) : NULL;
	if (!x->spans)
		return -ENOMEM;
	for (size_t i = 0; i < r->nspans; i++)
		x->spans[i] = (uint32_t)i;
	qsort_r(x->spans, r->nspans, sizeof(*x->spans), steptab__span_by_thread, r->spans);
	report_time_span(r, &x->start, &x->end);
	for (size_t i = 0, j; !err && i < r->nspans; i = j) {
		const struct rec_span *t = &r->spans[x->spans[i]];

		for (j = i + 1; j < r->nspans && r->spans[x->spans[j]].pid == t->pid &&
				r->spans[x->spans[j]].tid == t->tid;
		     j++)
			;
		fputs((*nprofiles)++ ? ",\n{\"type\":\"evented\",\"name\":\"regions of "
				     : "\n{\"type\":\"evented\",\"name\":\"regions of ",
		      x->out);
		report_json_chars(x->out, thread_name(r, t->pid, t->tid));
		fprintf(x->out,
			" (%" PRIu32 "/%" PRIu32 ")\",\"unit\":\"nanoseconds\",\"startValue\":0,"
			"\"endValue\":%" PRIu64 ",\n\"events\":[",
			t->pid, t->tid, x->end - x->start);
		err = put_region_events(x, i, j);
		fputs("]}", x->out);
	}
	return err;
}

/* Off-CPU spans (indices into the recording's, ctx) by thread, each thread's by start. */
static int by_offspan_thread(const void *a, const void *b, void *ctx)
{
	const struct recording *r = ctx;
	const struct rec_offspan *x = &r->offspans[*(const uint32_t *)a];
	const struct rec_offspan *y = &r->offspans[*(const uint32_t *)b];
	const struct rec_sample *s = &r->samples[x->sample], *t = &r->samples[y->sample];

	if (s->pid != t->pid)
		return s->pid < t->pid ? -1 : 1;
	if (s->tid != t->tid)
		return s->tid < t->tid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* A block as events: its stack's frames open at its start, outermost first, and close at its
 * end, innermost first. */
static int put_offspan_events(struct ss *x, const struct rec_offspan *o, bool *first)
{
	int err = collect_stack(x, &x->r->samples[o->sample]);

	for (size_t k = 0; !err && k < x->nstack; k++) {
		fprintf(x->out, "%s{\"type\":\"O\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
			*first ? "\n" : ",\n", x->stack[k], o->start_ns - x->start);
		*first = false;
	}
	for (size_t k = x->nstack; !err && k > 0; k--)
		fprintf(x->out, ",\n{\"type\":\"C\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
			x->stack[k - 1], o->end_ns - x->start);
	return err;
}

/* One thread's spans [from, to) of x->offspans as an evented profile; a span that would
 * overlap the one before (none should: a thread blocks once at a time) is left out. */
static int put_offspan_profile(struct ss *x, size_t from, size_t to, size_t *nprofiles)
{
	const struct recording *r = x->r;
	const struct rec_sample *t = &r->samples[r->offspans[x->offspans[from]].sample];
	uint64_t last_end = 0;
	bool first = true;
	int err = 0;

	fputs((*nprofiles)++ ? ",\n" : "\n", x->out);
	fputs("{\"type\":\"evented\",\"name\":\"off-CPU of ", x->out);
	report_json_chars(x->out, report_sample_comm(r, t));
	fprintf(x->out,
		" (%" PRIu32 "/%" PRIu32 ")\",\"unit\":\"nanoseconds\",\"startValue\":0,"
		"\"endValue\":%" PRIu64 ",\n\"events\":[",
		t->pid, t->tid, x->end - x->start);
	for (size_t i = from; !err && i < to; i++) {
		const struct rec_offspan *o = &r->offspans[x->offspans[i]];

		if (o->start_ns < last_end || o->start_ns < x->start || o->end_ns > x->end)
			continue;
		last_end = o->end_ns;
		err = put_offspan_events(x, o, &first);
	}
	fputs("]}", x->out);
	return err;
}

/* --timeline --off-cpu (OFFSPANS): one evented profile per thread, "off-CPU of comm
 * (pid/tid)", each block its blocking stack from its start to its end, in nanoseconds from the
 * recording's start; after the region profiles. */
static int put_offspan_profiles(struct ss *x, size_t *nprofiles)
{
	const struct recording *r = x->r;
	size_t n = 0, i, j;
	int err = 0;

	x->offspans = calloc(r->noffspans + 1, sizeof(*x->offspans));
	if (!x->offspans || r->noffspans >= UINT32_MAX)
		return -ENOMEM;
	for (i = 0; i < r->noffspans; i++) {
		if (r->offspans[i].sample < r->nsamples &&
		    profile__sample_kept(x->p, r->offspans[i].sample))
			x->offspans[n++] = (uint32_t)i;
	}
	if (n)
		qsort_r(x->offspans, n, sizeof(*x->offspans), by_offspan_thread, (void *)r);
	report_time_span(r, &x->start, &x->end);
	for (i = 0; !err && i < n; i = j) {
		const struct rec_sample *t = &r->samples[r->offspans[x->offspans[i]].sample];

		for (j = i + 1; j < n; j++) {
			const struct rec_sample *u =
				&r->samples[r->offspans[x->offspans[j]].sample];

			if (u->pid != t->pid || u->tid != t->tid)
				break;
		}
		err = put_offspan_profile(x, i, j, nprofiles);
	}
	return err;
}

static void put_frames(struct ss *x)
{
	fputs("\"shared\":{\"frames\":[", x->out);
	for (size_t i = 0; i < x->nframes; i++) {
		const struct ss_frame *f = &x->frames[i];

		fputs(i ? ",\n{\"name\":\"" : "\n{\"name\":\"", x->out);
		if (f->kind == SS_REGION) {
			fputs("region:", x->out);
			report_json_chars(x->out, recording__string(x->r, f->id));
		} else if (f->kind == SS_NO_STACK) {
			fputs("[no stack]", x->out);
		} else {
			report_json_chars(x->out, profile__func_name(x->p, f->id));
			fputs(profile__func_kernel(x->p, f->id) ? "_[k]" : "", x->out);
		}
		fputc('"', x->out);
		if (f->file) {
			fputs(",\"file\":", x->out);
			report_json_str(x->out, recording__string(x->r, f->file));
		}
		if (f->line)
			fprintf(x->out, ",\"line\":%" PRIu32, f->line);
		fputc('}', x->out);
	}
	fputs("]}}\n", x->out);
}

/* The index of the sampled profile with the most weight (the first of equals), which speedscope
 * opens on: a launcher's few samples would otherwise hide the work. 0 when there is none. */
static size_t heaviest_profile(const struct ss *x)
{
	uint64_t best = 0;
	size_t at = 0, n = 0;

	for (size_t i = 0, j; i < x->nsamples; i = j, n++) {
		uint64_t total = weight(x, x->samples[i].idx);

		for (j = i + 1; j < x->nsamples && same_thread(&x->samples[i], &x->samples[j]); j++)
			total += weight(x, x->samples[j].idx);
		if (total > best) {
			best = total;
			at = n;
		}
	}
	return at;
}

static int export(struct ss *x, const char *path)
{
	const struct recording *r = x->r;
	const char *command = report_meta(r, REC_META_command);
	size_t nprofiles = 0;
	int err = 0;

	x->func_frame = calloc(profile__nfuncs(x->p) + 1, sizeof(*x->func_frame));
	x->region_frame = calloc(r->nstrings + 1, sizeof(*x->region_frame));
	x->samples = calloc(r->nsamples + 1, sizeof(*x->samples));
	if (!x->func_frame || !x->region_frame || !x->samples)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		/* a count of 0: a stack only a GPU launch or an attach-mode call names */
		if (s->count && profile__sample_kept(x->p, i))
			x->samples[x->nsamples++] =
				(struct ss_sample){s->pid, s->tid, report_sample_comm(r, s), i};
	}
	qsort(x->samples, x->nsamples, sizeof(*x->samples), by_thread);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"perch report --format=speedscope\",\n\"name\":",
	      x->out);
	report_json_str(x->out, command && *command ? command : path);
	if (x->nsamples || r->nspans || r->noffspans)
		fprintf(x->out, ",\n\"activeProfileIndex\":%zu", heaviest_profile(x));
	fputs(",\n\"profiles\":[", x->out);
	for (size_t i = 0, j; !err && i < x->nsamples; i = j) {
		for (j = i + 1; j < x->nsamples && same_thread(&x->samples[i], &x->samples[j]); j++)
			;
		fputs(nprofiles++ ? ",\n" : "\n", x->out);
		err = put_profile(x, i, j);
	}
	if (!err && r->nspans)
		err = put_region_profiles(x, &nprofiles);
	if (!err && r->noffspans)
		err = put_offspan_profiles(x, &nprofiles);
	fputs("],\n", x->out);
	if (!err)
		put_frames(x);
	return err;
}

int report_speedscope(const struct recording *r, const char *path, const struct report_opts *o,
		      FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct ss x = {.r = r,
		       .p = p,
		       .lines = o->lines,
		       .out = out,
		       .unit = o->view == REPORT_VIEW_CPU ? "none" : "nanoseconds"};
	int err;

	if (!p)
		return -errno;
	x.labelled = report_event_shown(r, o, &x.event);
	if (x.labelled && x.event.clock && x.event.period)
		x.unit = "nanoseconds"; /* -e task-clock -c NS: each sample stands for NS */
	err = export(&x, path);
	free(x.func_frame);
	free(x.region_frame);
	free(x.frames);
	free(x.samples);
	free(x.spans);
	free(x.open);
	free(x.stack);
	free(x.offspans);
	profile__free(p);
	return err;
}
