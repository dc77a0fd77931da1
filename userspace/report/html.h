/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --format=html's parts (report/ only): html.c writes the file (the shell, the viewer's CSS and
 * JS built into perch from report/html/, the stacks), html_sections.c the data of its other
 * sections. All data goes out as one JSON object inside a <script> element, through a stream
 * that writes every '<' as \u003c so no name can end the element.
 */
#ifndef PERCH_REPORT_HTML_H
#define PERCH_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>
#include "format/recording.h"
#include "model/profile.h"
#include "report.h"

/* The page: the shell, CSS and JS built into perch around the JSON object put writes (to a
 * stream that escapes '<'). 0 or put's -errno. */
int html_page(FILE *out, int (*put)(void *ctx, FILE *json), void *ctx);
/* ,"regions":{...}: the region table (report order), the merged tree and the CSV export. */
int html_put_regions(const struct recording *r, const struct report_opts *o, FILE *out);
/* ,"gpu":{...} when the recording has GPU data or notes: kernels, lanes and the text section. */
int html_put_gpu(const struct recording *r, const struct profile *p, const struct report_opts *o,
		 FILE *out);
/* ,"timeline":{...} when the recording has timed windows: per window its start and end (ns from
 * the first), GPU busy time and counts by sample, as indices of the JSON's samples (sample_of:
 * the recording's index -> JSON index + 1, 0 when the sample is not in the JSON). */
int html_put_timeline(const struct recording *r, const uint32_t *sample_of, FILE *out);
/* ,"threads":[[comm, pid, tid], ...],"sthreads":[...]: each JSON sample's thread (sample_of as
 * for the timeline), for the viewer's Threads table (--per-thread's rows, by samples). */
int html_put_threads(const struct recording *r, const uint32_t *sample_of, FILE *out);
/* ,"metrics":{...} when the recording has system metrics: rows [subject, name, unit, min, mean,
 * max] and the text report's section. */
int html_put_metrics(const struct recording *r, FILE *out);
/* ,"steps":{...} when the recording has steps or program pauses (html_steps.c): rows [pid, n,
 * start_ns, end_ns (-1: open), samples, top functions, regions], the text report's section. */
int html_put_steps(const struct recording *r, FILE *out);
/* html_models.c: ,"models":{"svg":...,"text":...} when the recording has sized regions: the
 * cost models perch model fits by default (culling at 3 sigma), its plot and its text. */
int html_put_models(const struct recording *r, FILE *out);
/* The output of report function fn on r as a string the caller frees; NULL + errno. */
char *html_capture(const struct recording *r, const char *path, const struct report_opts *o,
		   report_fn fn);

#endif /* PERCH_REPORT_HTML_H */
