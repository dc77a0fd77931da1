/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch report`: a table of outputs, one row and one file each (report/text.c, folded.c,
 * csv.c, stats.c, pprof.c,
 * speedscope.c, chrome.c, html.c; html_diff.c writes perch diff's page), and the short summary `perch record` prints when the command exits. A new
 * exporter (pprof, chrome, ...) is a file report/NAME.c defining report_NAME() and a row in
 * REPORT_OUTPUTS below; the CLI finds it by name and lists it in its usage.
 */
#ifndef PERCH_REPORT_H
#define PERCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "format/recording.h"
#include "model/profile.h"
#include "model/sampleset.h"

/* The outputs, in the order usage lists them: X(enum, name, help). Printed by report_<name>(). */
#define REPORT_OUTPUTS(X)                                                                     \
	X(REPORT_TEXT, text, "(default)")                                                     \
	X(REPORT_FOLDED, folded,                                                              \
	  "(flamegraph.pl, speedscope; regions lead the stacks as region:NAME)")              \
	X(REPORT_CSV, csv,                                                                    \
	  "(per region and thread: calls, total, self, mean, min, max in seconds, samples, "  \
	  "size)")                                                                            \
	X(REPORT_STATS, stats, "(\"key value\" lines: every count the recording holds)")      \
	X(REPORT_PPROF, pprof, "(gzipped profile.proto for go tool pprof; binary: use -o)")   \
	X(REPORT_OTLP, otlp,                                                                  \
	  "(an OpenTelemetry ExportProfilesServiceRequest, protobuf, profiles v1development " \
	  "of opentelemetry-proto v1.11.0; binary: use -o)")                                  \
	X(REPORT_SPEEDSCOPE, speedscope,                                                      \
	  "(speedscope.app JSON: a sampled profile per thread; regions lead as region:NAME)") \
	X(REPORT_CHROME, chrome,                                                              \
	  "(Trace Event JSON for ui.perfetto.dev and chrome://tracing: samples per thread "   \
	  "over time, region spans; a recording of format version 1 to 3 has no time axis: "  \
	  "one span per thread with its samples and regions)")                                \
	X(REPORT_HTML, html,                                                                  \
	  "(one self-contained page: tables, flame graph, callers/callees, select/exclude/"   \
	  "fold, regions, GPU, timeline; for a browser: -o FILE.html)")

#define REPORT_ENUM(id, name, help) id,
enum report_format { REPORT_OUTPUTS(REPORT_ENUM) REPORT_NR };
#undef REPORT_ENUM

struct query;

/* --view (report/view.c): on-CPU ticks (default), off-CPU ns, or both in ns; report__print()
 * weighs the samples by it (model/sampleset.h). */
enum report_view {
	REPORT_VIEW_CPU = SAMPLE_VIEW_CPU,
	REPORT_VIEW_OFF = SAMPLE_VIEW_OFF,
	REPORT_VIEW_WALL = SAMPLE_VIEW_WALL
};
/* "cpu", "off", "wall" into *v; -EINVAL for another. */
int report__parse_view(const char *s, enum report_view *v);
/* Whether r holds off-CPU time (perch record --off-cpu). */
bool report__has_offcpu(const struct recording *r);
/* Why a key's thread was off the CPU, from its stack ("lock", "sleep", "io", ...; view.c). */
const char *report__offcpu_reason(const struct recording *r, const struct rec_sample *s);
/* The text header's lines for view v (none for cpu): off-CPU time by reason. */
void report__view_header(const struct recording *r, enum report_view v, FILE *out);

/* --sort: the text's top-functions tables (both by default, self first). */
enum report_sort { REPORT_SORT_BOTH, REPORT_SORT_SELF, REPORT_SORT_TOTAL };

/* --metrics: the text's Metrics section as a summary (default), every series, or none. */
enum report_metrics { REPORT_METRICS_SUMMARY, REPORT_METRICS_ALL, REPORT_METRICS_NONE };

struct report_opts {
	enum report_format format;
	double min_percent; /* call tree: hide nodes below this share of all samples */
	unsigned int top;   /* rows in each top-functions table */
	bool lines;	    /* functions by source line (file:line) */
	bool no_demangle;   /* keep C++ names mangled */
	bool no_inline;	    /* --no-inline: a frame is its out-of-line function (profile.h) */
	const char *
		region; /* text, folded, pprof, speedscope: samples inside this region (NULL: all) */
	/* --select/--exclude/--fold (every output's samples and call trees; not the region times
	 * or the GPU tables) and --callers/--callees (their table instead of the report): NULL
	 * for none. */
	struct query *query;
	double merge_chains;	     /* text call tree: merge chains at this % (0: off) */
	enum report_sort sort;	     /* text: which top-functions tables, in which order */
	enum report_view view;	     /* --view: what the samples weigh (report/view.c) */
	enum report_metrics metrics; /* --metrics: the text's Metrics section */
	/* --sort=comm,pid,tid,function / --per-thread (report/threads.c): the thread keys that go
	 * on top of the call tree and the top tables, and of folded's stacks; by_function: the
	 * tables' rows are (keys, function), else the keys alone. */
	enum profile_key keys[PROFILE_KEYS_MAX];
	uint32_t nkeys;
	bool by_function;
	/* --sort=dso (text): the top tables' rows are (keys, module): self, the samples whose leaf
	 * is in the module; total, those with a frame in it (report/threads.c) */
	bool by_module;
	uint32_t event; /* --event: 1 + the index of the one event shown (report__print() keeps its
			 * samples: model/sampleset.h); 0: all */
	const char
		*service; /* otlp: service.name (perch push --otlp --name); NULL: the command's */
};

/* An output: path is the recording's, as the text header names it; r holds the samples o's
 * event and view keep and weigh (report__print() chose them). 0 or -errno. */
typedef int (*report_fn)(const struct recording *r, const char *path, const struct report_opts *o,
			 FILE *out);

struct report_output {
	const char *name;
	const char *help;
	report_fn print;
};

/* The table, indexed by enum report_format. */
extern const struct report_output report_outputs[REPORT_NR];

/* The output called name, or NULL. */
const struct report_output *report__output(const char *name);

/* Print r as o asks: the output's samples are those o->event and o->view choose (a sample set
 * of r, model/sampleset.h; r is never written). 0 or -errno (-ENODATA: --view=wall and r does
 * not say its sampling frequency). */
int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out);
/* 0 when the recording has a region called name, -ENOENT when not, -ENOMEM. */
int report__find_region(const struct recording *r, const char *name);
/* The recording's region names in name order, ", " between them ("" for none); the caller frees
 * it. NULL on ENOMEM. */
char *report__region_names(const struct recording *r);
/* 0 when o's query names only functions the recording has; -ENOENT (query__error() says
 * which), -ENOMEM. Cheap: no tree is built. */
int report__check_query(const struct recording *r, const struct report_opts *o);
void report__summary(const struct recording *r, const char *path, FILE *out);
/* The same, of event's samples alone (1 + its index; 0: every event's). */
void report__summary_of(const struct recording *r, const char *path, uint32_t event, FILE *out);

/* report/events.c: the events a recording sampled on (perch record -e; 1 for older ones), and
 * the index of the one called name (or its alias; -ENOENT: none). */
uint32_t report__nevents(const struct recording *r);
/* The recording's META event list ("cpu-clock" for one that names none), its META period list
 * ("none": sampled at a frequency), and whether a and b sampled the same events (names or
 * aliases, in order; periods: with the same periods, so that their counts add up). */
const char *report__events(const struct recording *r);
const char *report__periods(const struct recording *r);
bool report__same_events(const struct recording *a, const struct recording *b, bool periods);
int report__find_event(const struct recording *r, const char *name, uint32_t *ev);

struct diff;
/* `perch diff --format=html`: the diff (model/diff.h) as one self-contained page, the viewer's
 * diff mode (report/html_diff.c); path: base and new as given. 0 or -errno. */
int report__html_diff(const struct diff *d, const char *const path[2], FILE *out);

/* `perch script` (report/script.c): every tick of r's timeline (--timeline) as perf script
 * prints a sample, in time order. -ENODATA when r has no timeline. */
int report__script(const struct recording *r, FILE *out);
/* `perch annotate` (report/annotate.c): the self samples of function name per source line, with
 * the source text where the file is readable; where the recording has no lines for them, per
 * instruction of the function's disassembly (capstone), read from the module file the frames
 * name. -ENOENT when no sample's leaf is name; -ENODATA when neither lines nor the module's code
 * can be had (a line says why). */
int report__annotate(const struct recording *r, const char *name, FILE *out);

#endif /* PERCH_REPORT_H */
