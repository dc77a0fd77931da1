// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=chrome: the recording as Trace Event JSON, the object form
 * {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}, which ui.perfetto.dev and
 * chrome://tracing open. Every pid and tid is the recorded one; ts and dur are microseconds (ns
 * precision, three decimals) from the recording's start: the first window's start (or the
 * earliest event or span before it), on CLOCK_MONOTONIC.
 *
 *   process_name, thread_name   "M" metadata, one per process and thread of the recording.
 *   CPU samples, windows        "C" counter "samples/s" per process and window, one series per
 *                               sampled thread ("tid N": its samples in the window per second of
 *                               it, so windows of unequal length show no false spike; 0 from the
 *                               end of a window not followed at once by the next). Perfetto makes
 *                               a track "samples/s tid N" of each series; each value times the
 *                               time to the next gives the thread's samples. Counters, not "X" slices per window: a
 *                               window's slice would cut through the region slices on the thread
 *                               track, which must nest.
 *   CPU samples, --timeline     one instant "i" (scope "t") per tick on the thread's track, cat
 *                               "cpu", named by the leaf function, args.stack the folded stack
 *                               (root first, ';' between, kernel functions "_[k]") and
 *                               args.regions the open regions. Instants, not "P" sample events
 *                               with stackFrames: Perfetto's JSON importer drops "P" events and
 *                               stackFrames (google/perfetto#387) and shows thread-scoped
 *                               instants on the thread's track beside the region slices, which
 *                               a zero-length event cannot misnest; chrome://tracing shows both.
 *   region spans (--timeline)   "B"/"E" per begin/end on the thread, cat "region", nested as the
 *                               runtime nests them: an end that matches a region open further out
 *                               ends the ones inside it too, an end that matches none is dropped
 *                               (counted in otherData.region_ends_unmatched); spans still open at
 *                               the end end there with args.open_at_end. Marks are instants "i",
 *                               cat "mark". args.size: perch_region_begin_n's n.
 *   off-CPU (--timeline         one "X" slice per block of a thread (OFFSPANS) on its track, cat
 *   --off-cpu)                  "offcpu", named "off-CPU REASON" (report/view.c's reasons: lock,
 *                               sleep, io, gpu_sync, ...), args.reason and args.stack (the stack it
 *                               blocked with, as a tick's): the thread was off the CPU from ts for
 *                               dur, inside the recorded windows. A block happens between two
 *                               moments the thread runs, so it nests inside its region slices and
 *                               CUDA call slices like any call would.
 *   no time axis (version 1-3)  one "X" per thread with samples or regions from 0 to the recording's duration,
 *                               args.samples its samples and args.regions its region table
 *                               (calls, total_ns, self_ns per region name): a valid trace, no
 *                               timeline.
 *   another event (perch record -e page-faults; one of several with --event): the counters and
 *                               the no-time-axis slices are named by the event, the ticks' cat is
 *                               the event, and otherData says "event" and "sampling" ("page-faults,
 *                               1 sample every 1 event"); cpu-clock at a frequency keeps "samples"
 *                               and "cpu".
 * --region=NAME keeps the samples inside NAME (counters, ticks, spans per thread); region spans
 * are all kept.
 *
 *   GPU (--gpu)                 kernels, copies and memsets are "X" slices, cat "gpu", on one
 *                               track per device and stream: a pid per device (GPU_PID + the
 *                               device, process_name "GPU N"), a tid per stream (thread_name
 *                               "stream N"); args: correlation, bytes, graph. The CUDA API calls
 *                               are "X" slices, cat "cuda", on the calling thread. A flow of the
 *                               v1 kind, cat "launch", goes from each joined activity's launch to
 *                               it: "s" on the launching thread 1 ns before the launch call
 *                               returned (inside its slice; at the activity's start if that is
 *                               earlier, as a synchronous copy's), "f" with "bp":"e" at the activity's
 *                               start, one id per activity (a graph launch fans out to each of
 *                               its kernels). A sync joined to its API call is an "X" slice,
 *                               cat "sync", named "sync TYPE" (model/gpusyncs.h), on the thread
 *                               that waited (args: correlation, type); one whose API call never
 *                               came has no thread and is left out (the text report counts it).
 *   system metrics              "C" counters, cat "metrics", one per metric and subject, named
 *                               "NAME UNIT" (report/metrics.c: "cpu_user %", "rss MiB",
 *                               "minor_faults /s"), args.value: a target's under its pid, each
 *                               CPU's "cpuN busy %" and each GPU's under the "system" process
 *                               (SYSTEM_PID); one event at each point's start, 0 at the last
 *                               point's end. A merged recording's inputs (perch merge) each
 *                               have their own system process, "system LABEL", below it.
 *   steps (perch_step)          "X" slices, cat "step", named "step N", on a track "steps" of
 *                               the step's process (tid STEPS_TID, above any Linux tid, so they
 *                               never cut through region slices); args.samples, the step's. A
 *                               program's own pauses (perch_profile_pause) are "X" slices, cat
 *                               "paused", on its track "paused (program)" (tid STEPS_TID + 1);
 *                               the recording's pauses (--delay, SIGUSR1, --control, a cap: the
 *                               gaps between its sampled intervals) on the "system" process's
 *                               track "paused (perch)". A step or pause still open at the end
 *                               lasts to the trace's end.
 *
 * Streamed: each event is printed as the recording's arrays are walked, in their order (the
 * format does not need time order). What is held is one entry per thread (its open regions) and
 * one per sample key (its thread), never the output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "format/metrics.h"
#include "model/gpusyncs.h"
#include "model/gputab.h"
#include "lib/u64map.h"
#include "lib/vec.h"

struct ct_thread {
	uint32_t pid, tid;
	const char *name; /* THREADS' comm, else its first sample's; borrowed from the recording */
	bool sampled;	  /* has kept samples: a counter series */
	bool regions;	  /* has a region table (REGIONS) */
	uint64_t count;	  /* samples in the current window (no time axis: in all) */
	uint32_t *open;	  /* name string ids of its open region spans, outermost first */
	size_t depth, cap;
};

struct chrome {
	const struct recording *r;
	const struct profile *p;
	FILE *out;
	uint64_t origin, end;	 /* ns: the trace's start and end */
	struct u64map thread_of; /* pid << 32 | tid -> index in threads */
	struct ct_thread *threads;
	size_t nthreads, cap_threads;
	uint32_t *sample_thread; /* sample index -> thread index */
	size_t nevents;		 /* written so far: a ',' before each but the first */
	uint64_t unmatched;	 /* region ends that match no open region */
	/* What a sample is (report_event_shown): "cpu" and "samples" for cpu-clock at a
	 * frequency, else the event's name for both, and otherData says its sampling. */
	const char *cat, *counter;
	char sampling[160];
};

static const char default_cat[] = "cpu";

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* The thread's index, added on first sight with name (may be NULL); -ENOMEM. */
static int64_t thread_index(struct chrome *x, uint32_t pid, uint32_t tid, const char *name)
{
	uint64_t idx;
	struct ct_thread *t;

	if (u64map__get(&x->thread_of, thread_key(pid, tid), &idx)) {
		t = &x->threads[idx];
		if ((!t->name || !*t->name) && name)
			t->name = name;
		return (int64_t)idx;
	}
	if (vec_grow(&x->threads, &x->cap_threads, x->nthreads + 1, sizeof(*x->threads), 16) ||
	    u64map__put(&x->thread_of, thread_key(pid, tid), x->nthreads))
		return -ENOMEM;
	x->threads[x->nthreads] = (struct ct_thread){.pid = pid, .tid = tid, .name = name};
	return (int64_t)x->nthreads++;
}

static struct ct_thread *thread_of(struct chrome *x, uint32_t pid, uint32_t tid)
{
	uint64_t idx = 0;

	u64map__get(&x->thread_of, thread_key(pid, tid), &idx);
	return &x->threads[idx];
}

static int by_pid_tid(const void *a, const void *b)
{
	const struct ct_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Every thread the recording names (THREADS, samples, spans), sorted by pid then tid so a
 * process's threads are neighbours; sample_thread filled. */
static int collect_threads(struct chrome *x)
{
	const struct recording *r = x->r;
	int64_t idx = 0;

	for (size_t i = 0; idx >= 0 && i < r->nthreads; i++)
		idx = thread_index(x, r->threads[i].pid, r->threads[i].tid,
				   recording__string(r, r->threads[i].comm));
	for (size_t i = 0; idx >= 0 && i < r->nsamples; i++)
		idx = thread_index(x, r->samples[i].pid, r->samples[i].tid,
				   r->samples[i].comm ? recording__string(r, r->samples[i].comm)
						      : NULL);
	for (size_t i = 0; idx >= 0 && i < r->nspans; i++)
		idx = thread_index(x, r->spans[i].pid, r->spans[i].tid, NULL);
	for (size_t i = 0; idx >= 0 && i < r->nrthreads; i++)
		idx = thread_index(x, r->rthreads[i].pid, r->rthreads[i].tid, NULL);
	x->sample_thread = calloc(r->nsamples + 1, sizeof(*x->sample_thread));
	if (idx < 0 || !x->sample_thread)
		return -ENOMEM;
	if (x->nthreads) /* qsort takes no NULL, even for nothing */
		qsort(x->threads, x->nthreads, sizeof(*x->threads), by_pid_tid);
	u64map__clear(&x->thread_of);
	for (size_t i = 0; i < x->nthreads; i++) {
		if (u64map__put(&x->thread_of, thread_key(x->threads[i].pid, x->threads[i].tid), i))
			return -ENOMEM;
	}
	for (size_t i = 0; i < r->nrthreads; i++)
		thread_of(x, r->rthreads[i].pid, r->rthreads[i].tid)->regions = true;
	for (size_t i = 0; i < r->nsamples; i++) {
		uint64_t t = 0;

		u64map__get(&x->thread_of, thread_key(r->samples[i].pid, r->samples[i].tid), &t);
		x->sample_thread[i] = (uint32_t)t;
		if (profile__sample_kept(x->p, i) && r->samples[i].count)
			x->threads[t].sampled = true;
	}
	return 0;
}

/* Microseconds, three decimals, from the trace's start. */
static void put_us(struct chrome *x, const char *key, uint64_t ns)
{
	fprintf(x->out, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned int)(ns % 1000));
}

/* The start of an event, up to its ts: the caller adds the rest and the closing brace. */
static void event_start(struct chrome *x, char ph, uint32_t pid, uint32_t tid, uint64_t ns)
{
	fprintf(x->out, "%s{\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32,
		x->nevents++ ? ",\n" : "\n", ph, pid, tid);
	put_us(x, "ts", ns > x->origin ? ns - x->origin : 0);
}

static void put_name_meta(struct chrome *x, const char *what, uint32_t pid, uint32_t tid,
			  const char *name)
{
	event_start(x, 'M', pid, tid, x->origin);
	fprintf(x->out, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	report_json_str(x->out, name);
	fputs("}}", x->out);
}

/* process_name (its main thread's name, else its first thread's) and thread_name. */
static void put_metadata(struct chrome *x)
{
	char buf[32];

	for (size_t i = 0, j; i < x->nthreads; i = j) {
		const struct ct_thread *name = &x->threads[i];

		for (j = i; j < x->nthreads && x->threads[j].pid == x->threads[i].pid; j++) {
			if (x->threads[j].tid == x->threads[j].pid && x->threads[j].name &&
			    *x->threads[j].name)
				name = &x->threads[j];
		}
		snprintf(buf, sizeof(buf), "pid %" PRIu32, name->pid);
		put_name_meta(x, "process_name", name->pid, name->pid,
			      name->name && *name->name ? name->name : buf);
		for (size_t k = i; k < j; k++) {
			const struct ct_thread *t = &x->threads[k];

			snprintf(buf, sizeof(buf), "tid %" PRIu32, t->tid);
			put_name_meta(x, "thread_name", t->pid, t->tid,
				      t->name && *t->name ? t->name : buf);
		}
	}
}

/* One "samples/s" counter event per process at ns: each sampled thread's count in the window
 * of dur_ns as a rate (per second; 0 with dur_ns 0, at a window's end). */
static void put_counters(struct chrome *x, uint64_t ns, uint64_t dur_ns)
{
	for (size_t i = 0, j; i < x->nthreads; i = j) {
		size_t n = 0;

		for (j = i; j < x->nthreads && x->threads[j].pid == x->threads[i].pid; j++) {
			const struct ct_thread *t = &x->threads[j];

			if (!t->sampled)
				continue;
			if (!n++) {
				event_start(x, 'C', t->pid, t->pid, ns);
				fputs(",\"name\":\"", x->out);
				report_json_chars(x->out, x->counter);
				fputs("/s\",\"args\":{", x->out);
			}
			fprintf(x->out, "%s\"tid %" PRIu32 "\":%.15g", n > 1 ? "," : "", t->tid,
				dur_ns ? t->count * 1e9 / (double)dur_ns : 0.0);
		}
		if (n)
			fputs("}}", x->out);
	}
}

/* Each window's samples per thread as counters; back to 0 where a gap or the end follows. */
static void put_windows(struct chrome *x)
{
	const struct recording *r = x->r;

	for (size_t w = 0; w < r->nwindows; w++) {
		const struct rec_window *win = &r->windows[w];

		for (size_t i = 0; i < x->nthreads; i++)
			x->threads[i].count = 0;
		for (uint32_t k = 0; k < win->ncounts; k++) {
			uint32_t s = win->counts[k].sample;

			if (s < r->nsamples && profile__sample_kept(x->p, s))
				x->threads[x->sample_thread[s]].count += win->counts[k].count;
		}
		put_counters(x, win->start_ns,
			     win->end_ns > win->start_ns ? win->end_ns - win->start_ns : 0);
		if (w + 1 == r->nwindows || r->windows[w + 1].start_ns != win->end_ns)
			put_counters(x, win->end_ns, 0);
	}
}

/* The functions of a sample's stack, root first, ';' between them; *leaf set to the last. */
static void put_stack(struct chrome *x, const struct rec_sample *s, uint32_t *leaf, bool *any)
{
	for (uint32_t j = 0; j < s->nframes; j++) {
		const uint32_t *fns;
		uint32_t n = profile__frame_funcs(x->p, s->frames[j], &fns);

		for (uint32_t k = 0; k < n; k++) {
			fputs(*any ? ";" : "", x->out);
			report_json_chars(x->out, profile__func_name(x->p, fns[k]));
			fputs(profile__func_kernel(x->p, fns[k]) ? "_[k]" : "", x->out);
			*leaf = fns[k];
			*any = true;
		}
	}
}

/* One instant per exact tick, on its thread, named by its leaf function. */
static void put_ticks(struct chrome *x)
{
	const struct recording *r = x->r;

	for (size_t i = 0; i < r->nevents; i++) {
		const struct rec_sample *s;
		uint32_t leaf = 0;
		bool any = false;
		const char *none;

		if (r->events[i].sample >= r->nsamples ||
		    !profile__sample_kept(x->p, r->events[i].sample))
			continue;
		s = &r->samples[r->events[i].sample];
		event_start(x, 'i', s->pid, s->tid, r->events[i].time_ns);
		fputs(",\"s\":\"t\",\"cat\":", x->out);
		report_json_str(x->out, x->cat);
		fputs(",\"args\":{\"stack\":\"", x->out);
		put_stack(x, s, &leaf, &any);
		none = profile__sample_folded(x->p, r->events[i].sample) ? "[folded]"
									 : "[no stack]";
		fprintf(x->out, "%s\"", any ? "" : none);
		for (uint32_t j = 0; j < s->nregions; j++) {
			fputs(j ? ";" : ",\"regions\":\"", x->out);
			report_json_chars(x->out, recording__string(r, s->regions[j]));
		}
		fputs(s->nregions ? "\"},\"name\":\"" : "},\"name\":\"", x->out);
		if (any)
			report_json_chars(x->out, profile__func_name(x->p, leaf));
		fprintf(x->out, "%s\"}",
			!any				   ? none
			: profile__func_kernel(x->p, leaf) ? "_[k]"
							   : "");
	}
}

static void put_span_event(struct chrome *x, char ph, const struct ct_thread *t, uint64_t ns,
			   const char *cat, uint32_t name)
{
	event_start(x, ph, t->pid, t->tid, ns);
	fprintf(x->out, ",\"cat\":\"%s\",\"name\":", cat);
	report_json_str(x->out, recording__string(x->r, name));
}

/* A region end: the spans from the innermost open one called name out to it end. */
static void end_span(struct chrome *x, struct ct_thread *t, const struct rec_span *sp)
{
	size_t k = t->depth;

	while (k > 0 && t->open[k - 1] != sp->name)
		k--;
	if (!k) {
		x->unmatched++;
		return;
	}
	while (t->depth >= k) {
		put_span_event(x, 'E', t, sp->time_ns, "region", t->open[--t->depth]);
		fputc('}', x->out);
	}
}

static int put_span(struct chrome *x, const struct rec_span *sp)
{
	struct ct_thread *t = thread_of(x, sp->pid, sp->tid);

	switch (sp->kind) {
	case REC_SPAN_BEGIN:
		if (vec_grow(&t->open, &t->cap, t->depth + 1, sizeof(*t->open), 8))
			return -ENOMEM;
		t->open[t->depth++] = sp->name;
		put_span_event(x, 'B', t, sp->time_ns, "region", sp->name);
		break;
	case REC_SPAN_END:
		end_span(x, t, sp);
		return 0;
	case REC_SPAN_MARK:
		put_span_event(x, 'i', t, sp->time_ns, "mark", sp->name);
		fputs(",\"s\":\"t\"", x->out);
		break;
	default:
		return 0;
	}
	if (sp->size)
		fprintf(x->out, ",\"args\":{\"size\":%" PRIu64 "}", sp->size);
	fputc('}', x->out);
	return 0;
}

/* Every region span, then the ones still open ended at the trace's end. */
static int put_spans(struct chrome *x)
{
	for (size_t i = 0; i < x->r->nspans; i++) {
		if (put_span(x, &x->r->spans[i]))
			return -ENOMEM;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		struct ct_thread *t = &x->threads[i];

		while (t->depth) {
			put_span_event(x, 'E', t, x->end, "region", t->open[--t->depth]);
			fputs(",\"args\":{\"open_at_end\":true}}", x->out);
		}
	}
	return 0;
}

/* Each off-CPU block (OFFSPANS) as a slice on its thread, named by why it waited. */
static void put_offspans(struct chrome *x)
{
	const struct recording *r = x->r;

	for (size_t i = 0; i < r->noffspans; i++) {
		const struct rec_offspan *o = &r->offspans[i];
		const struct rec_sample *s;
		const char *reason;
		uint32_t leaf = 0;
		bool any = false;

		if (o->sample >= r->nsamples || !profile__sample_kept(x->p, o->sample))
			continue;
		s = &r->samples[o->sample];
		reason = report__offcpu_reason(r, s);
		event_start(x, 'X', s->pid, s->tid, o->start_ns);
		put_us(x, "dur", o->end_ns - o->start_ns);
		fprintf(x->out, ",\"cat\":\"offcpu\",\"name\":\"off-CPU %s\"", reason);
		fprintf(x->out, ",\"args\":{\"reason\":\"%s\",\"stack\":\"", reason);
		put_stack(x, s, &leaf, &any);
		fputs(any ? "\"}}" : "[no stack]\"}}", x->out);
	}
}

/* A thread's region table (no time axis): per region name its calls and times. */
static void put_thread_regions(struct chrome *x, const struct regiontab *t,
			       const struct ct_thread *th)
{
	uint32_t n = t ? regiontab__count(t) : 0, nrows, written = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct region_thread_stat *rows;

		nrows = regiontab__threads(t, i, &rows);
		for (uint32_t k = 0; k < nrows; k++) {
			const struct region_stat *s = &rows[k].s;

			if (rows[k].pid != th->pid || rows[k].tid != th->tid)
				continue;
			fputs(written++ ? "," : ",\"regions\":{", x->out);
			report_json_str(x->out, regiontab__name(t, i));
			fprintf(x->out,
				":{\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64
				",\"self_ns\":%" PRIu64 ",\"samples\":%" PRIu64 "}",
				s->calls, s->total_ns, s->self_ns, s->samples);
		}
	}
	fputs(written ? "}" : "", x->out);
}

#define GPU_PID 0x40000000u /* above any Linux pid (at most 2^22) */

static const char *gpu_name(const struct recording *r, const struct rec_gpu *g, char buf[48])
{
	const char *name;

	switch (g->kind) {
	case REC_GPU_KERNEL:
		name = recording__string(r, g->name);
		return *name ? name : "kernel";
	case REC_GPU_MEMCPY:
		snprintf(buf, 48, "memcpy %s", gputab__copy_name(g->detail));
		return buf;
	case REC_GPU_MEMSET:
		return "memset";
	default:
		snprintf(buf, 48, "%s (cbid %" PRIu32 ")",
			 g->flags & REC_GPU_F_LAUNCH ? "CUDA launch" : "CUDA call", g->detail);
		return buf;
	}
}

/* process_name and thread_name of the GPU tracks: each device and stream once. */
static int put_gpu_tracks(struct chrome *x)
{
	struct u64map seen = {0};
	char buf[32];
	uint64_t v;

	for (size_t i = 0; i < x->r->ngpu; i++) {
		const struct rec_gpu *g = &x->r->gpu[i];
		uint64_t dev = (uint64_t)1 << 63 | g->device,
			 lane = (uint64_t)g->device << 32 | g->stream;

		if (g->kind == REC_GPU_API || g->kind == REC_GPU_SYNC)
			continue;
		if (!u64map__get(&seen, dev, &v)) {
			snprintf(buf, sizeof(buf), "GPU %" PRIu32, g->device);
			put_name_meta(x, "process_name", GPU_PID + g->device, 0, buf);
			if (u64map__put(&seen, dev, 1))
				break;
		}
		if (u64map__get(&seen, lane, &v))
			continue;
		snprintf(buf, sizeof(buf), "stream %" PRIu32, g->stream);
		put_name_meta(x, "thread_name", GPU_PID + g->device, g->stream, buf);
		if (u64map__put(&seen, lane, 1))
			break;
	}
	u64map__clear(&seen);
	return 0;
}

/* The flow from g's launch to g: on the launching thread just before the call returned, or when
 * g started if that was earlier (a synchronous copy runs inside its call), so it points forward. */
static void put_gpu_flow(struct chrome *x, const struct rec_gpu *g, size_t id)
{
	uint64_t from = g->launch_ns > 0 ? g->launch_ns - 1 : 0;

	event_start(x, 's', g->pid, g->tid, from < g->start_ns ? from : g->start_ns);
	fprintf(x->out, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu}", id);
	event_start(x, 'f', GPU_PID + g->device, g->stream, g->start_ns);
	fprintf(x->out, ",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu,\"bp\":\"e\"}", id);
}

/* A sync on the thread that waited in it. */
static void put_gpu_sync(struct chrome *x, const struct rec_gpu *g)
{
	const char *type = gpu_syncs__type_name(g->detail);

	event_start(x, 'X', g->pid, g->tid, g->start_ns);
	put_us(x, "dur", g->end_ns - g->start_ns);
	fprintf(x->out, ",\"cat\":\"sync\",\"name\":\"sync %s\"", type);
	fprintf(x->out, ",\"args\":{\"correlation\":%" PRIu32 ",\"type\":\"%s\"}}", g->correlation,
		type);
}

static void put_gpu(struct chrome *x)
{
	char buf[48];

	put_gpu_tracks(x);
	for (size_t i = 0; i < x->r->ngpu; i++) {
		const struct rec_gpu *g = &x->r->gpu[i];
		bool api = g->kind == REC_GPU_API;

		if (g->kind == REC_GPU_SYNC && g->tid)
			put_gpu_sync(x, g);
		if (g->kind == REC_GPU_SYNC || (api && !g->tid))
			continue;
		event_start(x, 'X', api ? g->pid : GPU_PID + g->device, api ? g->tid : g->stream,
			    g->start_ns);
		put_us(x, "dur", g->end_ns - g->start_ns);
		fprintf(x->out, ",\"cat\":\"%s\",\"name\":", api ? "cuda" : "gpu");
		report_json_str(x->out, gpu_name(x->r, g, buf));
		fprintf(x->out,
			",\"args\":{\"correlation\":%" PRIu32 ",\"bytes\":%" PRIu64
			",\"graph\":%" PRIu32 "}}",
			g->correlation, g->bytes, g->graph);
		if (!api && g->tid)
			put_gpu_flow(x, g, i + 1);
	}
}

/* Recordings before version 4: one slice per thread with samples or regions over the whole
 * recording. */
static int put_no_time_axis(struct chrome *x)
{
	const struct recording *r = x->r;
	struct regiontab *t = r->nrthreads ? regiontab__new(r) : NULL;

	if (r->nrthreads && !t)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsamples; i++) {
		if (profile__sample_kept(x->p, i))
			x->threads[x->sample_thread[i]].count += r->samples[i].count;
	}
	for (size_t i = 0; i < x->nthreads; i++) {
		const struct ct_thread *th = &x->threads[i];

		if (!th->sampled && !th->regions)
			continue;
		event_start(x, 'X', th->pid, th->tid, x->origin);
		put_us(x, "dur", x->end - x->origin);
		fputs(",\"cat\":", x->out);
		report_json_str(x->out, x->cat);
		fputs(",\"name\":", x->out);
		report_json_str(x->out, x->counter);
		fprintf(x->out, ",\"args\":{\"samples\":%" PRIu64, th->count);
		put_thread_regions(x, t, th);
		fputs("}}", x->out);
	}
	regiontab__free(t);
	return 0;
}

static void put_other_data(struct chrome *x, const char *path)
{
	const struct recording *r = x->r;
	const char *command = report_meta(r, REC_META_command);

	fputs("\n],\n\"otherData\":{\"exporter\":\"perch report --format=chrome\",\"command\":",
	      x->out);
	report_json_str(x->out, command && *command ? command : path);
	if (x->cat != default_cat) {
		fputs(",\"event\":", x->out);
		report_json_str(x->out, x->cat);
		fputs(",\"sampling\":", x->out);
		report_json_str(x->out, x->sampling);
	}
	fprintf(x->out,
		",\"recording_version\":\"%" PRIu32
		"\",\"time_axis\":\"%s\",\"origin_ns\":\"%" PRIu64
		"\",\"region_ends_unmatched\":\"%" PRIu64 "\"}}\n",
		r->version,
		r->nevents		  ? "ticks"
		: report_has_time_axis(r) ? "windows"
					  : "none",
		x->origin, x->unmatched);
}

#define SYSTEM_PID 0x3fffffffu /* below the GPU pids, above any Linux pid */

/* m's counter; system series (CPUs, GPUs) under pid sys. */
static void put_metric(struct chrome *x, const struct rec_metric *m, const char *info_name,
		       uint32_t sys)
{
	uint32_t pid = rec_metric_info(m->metric)->subject == REC_MS_PROC ? m->subject : sys;
	char name[64];
	double v;

	if (rec_metric_info(m->metric)->subject == REC_MS_PROC)
		snprintf(name, sizeof(name), "%s %s", info_name, report_metric_unit(m->metric));
	else
		snprintf(name, sizeof(name), "%s%" PRIu32 " %s %s",
			 m->metric == REC_METRIC_CPU_BUSY ? "cpu" : "gpu", m->subject, info_name,
			 report_metric_unit(m->metric));
	for (uint32_t i = 0; i < m->npoints; i++) {
		if (!report_metric_value(m, i, &v))
			continue;
		event_start(x, 'C', pid, pid, i ? m->points[i - 1].end_ns : m->start_ns);
		fputs(",\"cat\":\"metrics\",\"name\":", x->out);
		report_json_str(x->out, name);
		fprintf(x->out, ",\"args\":{\"value\":%.3f}}", v);
	}
	if (m->npoints) {
		event_start(x, 'C', pid, pid, m->points[m->npoints - 1].end_ns);
		fputs(",\"cat\":\"metrics\",\"name\":", x->out);
		report_json_str(x->out, name);
		fputs(",\"args\":{\"value\":0}}", x->out);
	}
}

/* The system process of a merged recording's input (after its origin marker): a pid of its own
 * below SYSTEM_PID, named "system LABEL", so two hosts' cpu0 stay two tracks. */
static uint32_t next_system(struct chrome *x, const struct rec_metric *marker, uint32_t *origins,
			    const char **label)
{
	*label = recording__string(x->r, marker->subject);
	return SYSTEM_PID - ++*origins;
}

static void put_metrics(struct chrome *x)
{
	uint32_t sys = SYSTEM_PID, origins = 0;
	const char *label = NULL;
	bool named = false;
	char buf[96];

	for (size_t i = 0; i < x->r->nmetrics; i++) {
		const struct rec_metric *m = &x->r->metrics[i];
		const struct rec_metric_info *info = rec_metric_info(m->metric);

		if (m->metric == REC_METRIC_ORIGIN) {
			sys = next_system(x, m, &origins, &label);
			named = false;
		}
		if (!info)
			continue;
		if (info->subject != REC_MS_PROC && !named) {
			snprintf(buf, sizeof(buf), "system%s%s", label ? " " : "",
				 label ? label : "");
			put_name_meta(x, "process_name", sys, sys, buf);
			named = true;
		}
		put_metric(x, m, m->metric == REC_METRIC_CPU_BUSY ? "busy" : info->name, sys);
	}
}

#define STEPS_TID 0x40000000u /* above any Linux tid (at most 2^22) */

static void put_slice(struct chrome *x, uint32_t pid, uint32_t tid, uint64_t a, uint64_t b,
		      const char *cat, const char *name)
{
	event_start(x, 'X', pid, tid, a);
	put_us(x, "dur", b > a ? b - a : 0);
	fprintf(x->out, ",\"cat\":\"%s\",\"name\":\"%s\"", cat, name);
}

/* The steps and the programs' pauses (STEPS), each process's tracks named once. */
static void put_steps(struct chrome *x)
{
	struct u64map named = {0};
	char name[48];
	uint64_t v;

	for (size_t i = 0; i < x->r->nsteps; i++) {
		const struct rec_step *s = &x->r->steps[i];
		bool step = s->kind == REC_STEP_STEP;
		uint32_t tid = step ? STEPS_TID : STEPS_TID + 1;
		uint64_t n = 0, key = (uint64_t)s->pid << 1 | !step;

		if (!s->start_ns)
			continue; /* no start known: samples only (the text report has them) */
		if (!u64map__get(&named, key, &v) && !u64map__put(&named, key, 1))
			put_name_meta(x, "thread_name", s->pid, tid,
				      step ? "steps" : "paused (program)");
		for (uint32_t j = 0; j < s->ncounts; j++)
			n += s->counts[j].count;
		snprintf(name, sizeof(name), step ? "step %" PRIu64 : "paused", s->n);
		put_slice(x, s->pid, tid, s->start_ns, s->end_ns ? s->end_ns : x->end,
			  step ? "step" : "paused", name);
		fprintf(x->out, ",\"args\":{\"samples\":%" PRIu64 "}}", n);
	}
	u64map__clear(&named);
}

/* The gaps between the recording's sampled intervals (END keys), where perch itself paused. */
static void put_perch_pauses(struct chrome *x)
{
	uint64_t n = 0, prev = 0, a, b, start = 0;
	char key[2][32];

	if (!report_end(x->r, REC_END_enabled_intervals, &n))
		return;
	report_end(x->r, REC_END_start_ns, &start);
	prev = start;
	put_name_meta(x, "thread_name", SYSTEM_PID, STEPS_TID, "paused (perch)");
	for (unsigned int i = 0; i <= n && i < REC_END_ENABLED_MAX; i++) {
		snprintf(key[0], sizeof(key[0]), REC_END_ENABLED_START, i);
		snprintf(key[1], sizeof(key[1]), REC_END_ENABLED_END, i);
		if (!recording__end(x->r, key[0], &a) || !recording__end(x->r, key[1], &b))
			a = b = x->end; /* after the last interval: paused to the end */
		if (a > prev) {
			put_slice(x, SYSTEM_PID, STEPS_TID, prev, a, "paused", "paused (perch)");
			fputs("}", x->out);
		}
		prev = b;
	}
}

static int export(struct chrome *x, const char *path)
{
	int err = collect_threads(x);

	if (err)
		return err;
	report_time_span(x->r, &x->origin, &x->end);
	fputs("{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[", x->out);
	put_metadata(x);
	if (report_has_time_axis(x->r)) {
		put_windows(x);
		put_ticks(x);
		err = put_spans(x);
		put_offspans(x);
	} else {
		err = put_no_time_axis(x);
	}
	if (!err)
		put_gpu(x);
	if (!err)
		put_metrics(x);
	if (!err) {
		put_steps(x);
		put_perch_pauses(x);
		put_other_data(x, path);
	}
	return err;
}

int report_chrome(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct chrome x = {.r = r, .p = p, .out = out, .cat = default_cat, .counter = "samples"};
	struct report_event e;
	int err;

	if (!p)
		return -errno;
	if (report_event_shown(r, o, &e)) {
		report_sampling(r, o->event, false, x.sampling, sizeof(x.sampling));
		x.cat = x.counter = e.name; /* e outlives the export */
	}
	err = export(&x, path);
	for (size_t i = 0; i < x.nthreads; i++)
		free(x.threads[i].open);
	free(x.threads);
	free(x.sample_thread);
	u64map__clear(&x.thread_of);
	profile__free(p);
	return err;
}
