/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the outputs of report/ share (report/ only; report.h is the part's contract): the
 * recording's keys read through format/keys.h, sample and process counts, durations as the
 * text prints them, the top-functions table and the regions section (which the summary of
 * `perch record` prints too), and each output's function, one per row of REPORT_OUTPUTS.
 */
#ifndef PERCH_REPORT_COMMON_H
#define PERCH_REPORT_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "format/keys.h"
#include "format/recording.h"
#include "model/profile.h"
#include "model/query.h"
#include "model/regiontab.h"
#include "report.h"

#define REPORT_PROTO(id, name, help)                                   \
	int report_##name(const struct recording *r, const char *path, \
			  const struct report_opts *o, FILE *out);
REPORT_OUTPUTS(REPORT_PROTO)
#undef REPORT_PROTO

/* part of whole in percent; 0 when whole is. */
double report_pct(uint64_t part, uint64_t whole);
/* A STATS counter, 0 when the recording has none. */
uint64_t report_stat(const struct recording *r, enum rec_stat key);
const char *report_meta(const struct recording *r, enum rec_meta key); /* NULL when absent */
bool report_end(const struct recording *r, enum rec_end key, uint64_t *value);
/* The weight of every sample. */
/* The profile model as the options ask for it (--lines, --no-demangle, --region). NULL + errno. */
struct profile *report_profile(const struct recording *r, const struct report_opts *o);
uint64_t report_sample_total(const struct recording *r);
/* Samples with no frame at all, which the stacks show as "[no stack]": the user stack was lost
 * (stack map collision or full, unreadable) and the tick came in user mode (no kernel stack). */
uint64_t report_samples_without_stack(const struct recording *r);
/* The sample's thread's name when it was taken (its process's, or "?", for recordings made
 * before samples carried it). Valid while r lives. */
const char *report_sample_comm(const struct recording *r, const struct rec_sample *s);
/* The time axis of a version 4 recording: its first window's start, last window's end (both
 * CLOCK_MONOTONIC ns), the number of windows and their resolution (the median timed window's
 * duration). false for a recording without timed windows (versions 1 to 3). */
struct report_time_axis {
	uint64_t start_ns, end_ns, resolution_ns;
	size_t nwindows;
};
bool report_time_axis(const struct recording *r, struct report_time_axis *t);
/* Distinct processes of the thread table; *nthreads its threads. */
size_t report_count_processes(const struct recording *r, size_t *nthreads);

/* report/processes.c: a system-wide recording's processes by the samples p kept, top rows
 * (nothing for other recordings). */
struct profile;
void report_print_processes(const struct recording *r, const struct profile *p, unsigned int top,
			    FILE *out);

/* report/events.c. One event of the recording (META event, period): its name, its period
 * (0: sampled at META frequency Hz), whether it counts nanoseconds. false: no such event. */
struct report_event {
	char name[64];
	uint64_t period;
	bool clock;
};
bool report_event(const struct recording *r, uint32_t ev, struct report_event *e);
/* The event an output of o shows (--event's, or the recording's one) into e, when the outputs
 * label it: false for cpu-clock sampled at a frequency (and under --view=off|wall), whose
 * outputs say "samples" as they always have. */
bool report_event_shown(const struct recording *r, const struct report_opts *o,
			struct report_event *e);
/* What count samples of e stand for: count x its period (events; nanoseconds for a clock) where
 * it has one, else count. */
uint64_t report_event_weight(const struct report_event *e, uint64_t count);
/* What a sample of a protobuf export (pprof, otlp) weighs: the frequency (META, Hz; 0 when the
 * recording does not say), and with --view=cpu the shown event's period (perch record -c, or an
 * event that is not a clock: 0 when sampled at frequency Hz) and, for an event that is not a
 * clock (page-faults), its name as the sample types' (else NULL): e->name, e the caller's. */
void report_sample_weight(const struct recording *r, const struct report_opts *o,
			  struct report_event *e, uint64_t *frequency, uint64_t *period,
			  const char **counted);
/* The module's (a string id) GNU build-id, hex, as the recording keeps it (version 4 on); ""
 * when it has none. */
const char *report_build_id(const struct recording *r, uint32_t module);
/* The GPU time launched from each sample (model/gpupaths.h), when r has launch stacks (--gpu);
 * 0 with *out NULL without; -ENOMEM. */
int report_gpu_sample_ns(const struct recording *r, uint64_t **out);
/* What a sample is: event (1 + its index; 0: every event, "; " between them) as
 * "cpu-clock at 997 Hz per CPU" (per_cpu: with " per CPU") or "page-faults, 1 sample every 1
 * event". */
void report_sampling(const struct recording *r, uint32_t event, bool per_cpu, char *buf,
		     size_t len);

/* Whether the recording has a time axis (version 4 on: timed windows, ticks or region spans). */
bool report_has_time_axis(const struct recording *r);
/* The recording's span on CLOCK_MONOTONIC in ns: from the first timed window's start to the last
 * one's end, widened to every tick and region span; without a time axis, 0 to its duration. */
void report_time_span(const struct recording *r, uint64_t *start, uint64_t *end);

/* s inside a JSON string (the quotes are the caller's); and s quoted: lib/escape.h's JSON rule. */
void report_json_chars(FILE *f, const char *s);
void report_json_str(FILE *f, const char *s);

/* report/csv.c: s as one CSV field (lib/escape.h's CSV rule: RFC 4180 quoting, no formula). */
void report_csv_field(const char *s, FILE *out);

/* s on one line of a header: trailing white space dropped (an attached process's command line
 * padded with NULs), the rest under lib/escape.h's terminal rule (line breaks and tabs as \n and
 * \t, control bytes and bytes that are no UTF-8 as \xNN). */
void report_put_oneline(FILE *out, const char *s);
/* A duration in ten columns with three decimals, in ns, µs, ms or s. */
const char *report_fmt_time(char buf[24], uint64_t ns);
/* The mean time per timed call of a region (0 with none). */
uint64_t report_mean_ns(const struct region_stat *s);

/* report/text.c: the top functions by self or by total weight, top rows at most. */
void report_print_top(const struct profile *p, bool by_self, unsigned int top, FILE *out);
/* report/threads.c: --sort with thread keys or dso: the top tables per (keys, function), per
 * (keys, module) with dso, or per keys alone with neither in the sort; 0 or -ENOMEM. */
int report_print_keyed_top(const struct recording *r, const struct profile *p,
			   const struct report_opts *o, FILE *out);
/* report/text.c: the nodes of a bounded path tree labelled by p's functions, as the call tree
 * prints them (total% self% name, children by inclusive weight, those below min_percent of the
 * tree's weight summed in one line). */
void report_print_tree_nodes(const struct profile *p, const struct tree *t, double min_percent,
			     FILE *out);
/* report/metrics.c: the system metrics. A point's display value in report_metric_unit()'s
 * unit (false: none, an amount over no time); min/mean/max (the mean weighted by time) and the
 * sum of the raw values; the text report's "Metrics" section (nothing without metrics). */
struct report_metric_sum {
	double min, mean, max;
	uint64_t total;
	size_t npoints;
};
const char *report_metric_unit(uint32_t metric);
bool report_metric_value(const struct rec_metric *m, uint32_t i, double *v);
bool report_metric_summary(const struct rec_metric *m, struct report_metric_sum *s);
/* The text section (report_opts.metrics): every series and the metrics note (ALL), or
 * report/metrics_summary.c's block (SUMMARY), or nothing (NONE; nothing either for a recording
 * without metrics). */
void report_print_metrics(const struct recording *r, enum report_metrics mode, FILE *out);
void report_print_metrics_summary(const struct recording *r, FILE *out);
/* The recording's metrics note ("no NVML: ...") where a GPU is involved (recorded with --gpu,
 * GPU spans, calls or series), else NULL: without a GPU, no NVML is no news. */
const char *report_metrics_note(const struct recording *r);
/* One series' row "  LABEL min mean max unit (total)"; the "all N CPUs" row of a run of n CPU
 * series (nothing when their points do not line up); the name pid had in the thread table (""
 * when none: it was never sampled). */
void report_metric_row(const struct rec_metric *m, const char *label, FILE *out);
void report_metric_all_cpus(const struct rec_metric *cpus, size_t n, FILE *out);
const char *report_metric_proc_name(const struct recording *r, uint32_t pid);
/* report/steps.c: the text report's "Steps" section (nothing without steps, program pauses or
 * --steps); --format=stats's lines "step PID N START_NS END_NS SAMPLES" and "program_pause PID 0
 * START_NS END_NS 0" (END_NS 0: still open at the end). */
void report_print_steps(const struct recording *r, FILE *out);
/* The header's lines for --steps and --only-region (none without them). */
void report_print_steps_header(const struct recording *r, FILE *out);
/* A step's samples, and its REPORT_STEP_TOP functions by self samples (string ids, 0 unnamed, and
 * counts; returns how many): what the Steps section and the HTML page show. */
#define REPORT_STEP_TOP 3
uint64_t report_step_samples(const struct rec_step *s);
/* The time the Steps section counts from: the run's start (END start_ns), else the first window. */
uint64_t report_steps_origin(const struct recording *r);
size_t report_step_top(const struct recording *r, const struct rec_step *s,
		       uint32_t name[REPORT_STEP_TOP], uint64_t count[REPORT_STEP_TOP]);
/* With --steps: the header's "recorded" line's start, the steps' intervals (from start, the
 * touching ones merged), with no line end; false (nothing printed) without them. */
bool report_print_steps_recorded(const struct recording *r, uint64_t start, FILE *out);
void report_stats_steps(const struct recording *r, FILE *out);
/* Whose series m is, as a label: "cpu3", "GPU 0", "1234 (name)"; in a merged recording after
 * its input's label ("host-a: cpu3"). m points into r->metrics. */
void report_metric_subject(const struct recording *r, const struct rec_metric *m, char *buf,
			   size_t len);

/* report/gpu.c: the GPU section of the text report (with --gpu, or GPU data in the recording);
 * p labels its call tree, o gives --top and --min-percent. */
void report_print_gpu(const struct recording *r, const struct profile *p,
		      const struct report_opts *o, FILE *out);
/* report/gpu_attach.c: the GPU section of an attach-mode recording (--gpu -p); false, printing
 * nothing, for any other. */
bool report_print_gpu_attach(const struct recording *r, unsigned int top, FILE *out);
/* report/callers.c: --callers=F / --callees=F, the table instead of the report (text; with
 * --format=csv as CSV). */
int report_callers(const struct recording *r, const char *path, const struct report_opts *o,
		   FILE *out);
/* report/text.c: the line saying which query made the samples, "" without one. */
void report_print_query(const struct report_opts *o, const struct profile *p, uint64_t all,
			FILE *out);
/* report/regions.c: the regions section of the text report (table, tree, notes). */
void report_print_regions(const struct recording *r, const struct regiontab *t, FILE *out);

#endif /* PERCH_REPORT_COMMON_H */
