// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=html's sections beside the stacks (report/html.h): regions (the table in report
 * order, the merged tree, the CSV export as `--format=csv` writes it), GPU (kernels, lanes and
 * the text report's GPU section), the time axis (counts per window, GPU time per window) and the
 * system metrics (a row per series, the text section).
 * Times are nanoseconds, counts exact: the viewer formats them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/search.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "format/metrics.h"
#include "model/gputab.h"
#include "common.h"
#include "html.h"

char *html_capture(const struct recording *r, const char *path, const struct report_opts *o,
		   report_fn fn)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return NULL;
	err = fn(r, path, o, f);
	if (fclose(f) || err) {
		free(buf);
		errno = err ? -err : ENOMEM;
		return NULL;
	}
	return buf;
}

static void put_region_rows(const struct regiontab *t, FILE *out)
{
	fputs("\"rows\":[", out);
	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		const struct region_stat *s = regiontab__all(t, i);

		fputs(i ? ",\n[" : "\n[", out);
		report_json_str(out, regiontab__name(t, i));
		fprintf(out,
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
			s->calls, region_stat__timed(s), s->total_ns, s->self_ns, report_mean_ns(s),
			s->min_ns, s->max_ns, s->samples, s->gpu_ns, s->open);
	}
	fputs("],\n\"tree\":[", out);
	for (uint32_t i = 0; i < regiontab__node_count(t); i++) {
		const struct region_node *n = regiontab__node(t, i);

		fprintf(out, "%s[%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",[",
			i ? ",\n" : "\n", i ? n->region : 0, n->calls, n->total_ns, n->self_ns);
		for (uint32_t k = 0; k < n->nkids; k++)
			fprintf(out, "%s%" PRIu32, k ? "," : "", n->kids[k]);
		fputs("]]", out);
	}
	fprintf(out, "],\n\"mismatches\":%" PRIu64 ",\"gpu\":%s", regiontab__mismatches(t),
		regiontab__has_gpu(t) ? "true" : "false");
}

int html_put_regions(const struct recording *r, const struct report_opts *o, FILE *out)
{
	struct regiontab *t = regiontab__new(r);
	char *csv;

	if (!t)
		return -errno;
	if (!regiontab__count(t)) {
		regiontab__free(t);
		return 0;
	}
	csv = html_capture(r, "", o, report_outputs[REPORT_CSV].print);
	if (!csv) {
		regiontab__free(t);
		return -errno;
	}
	fputs(",\n\"regions\":{", out);
	put_region_rows(t, out);
	fputs(",\n\"csv\":", out);
	report_json_str(out, csv);
	fputs("}", out);
	free(csv);
	regiontab__free(t);
	return 0;
}

static void put_gpu_tables(const struct recording *r, const struct gputab *t, FILE *out)
{
	fputs("\"kernels\":[", out);
	for (size_t i = 0; i < t->nkernels; i++) {
		const struct gpu_kernel_row *k = &t->kernels[i];

		fputs(i ? ",\n[" : "\n[", out);
		report_json_str(out, k->name ? recording__string(r, k->name) : "?");
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", k->calls,
			k->total_ns, k->min_ns, k->max_ns);
	}
	fputs("],\n\"lanes\":[", out);
	for (size_t i = 0; i < t->nlanes; i++)
		fprintf(out, "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "",
			t->lanes[i].device, t->lanes[i].stream, t->lanes[i].activities,
			t->lanes[i].busy_ns);
	fprintf(out, "],\n\"busy\":%" PRIu64, t->busy_ns);
}

int html_put_gpu(const struct recording *r, const struct profile *p, const struct report_opts *o,
		 FILE *out)
{
	struct gputab *t;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!r->ngpu && !r->ngpu_notes)
		return 0;
	t = gputab__new(r);
	f = t ? open_memstream(&text, &len) : NULL;
	if (!f) {
		gputab__free(t);
		return -ENOMEM;
	}
	report_print_gpu(r, p, o, f);
	if (fclose(f)) {
		gputab__free(t);
		return -ENOMEM;
	}
	fputs(",\n\"gpu\":{", out);
	put_gpu_tables(r, t, out);
	fputs(",\n\"text\":", out);
	report_json_str(out, text);
	fputs("}", out);
	free(text);
	gputab__free(t);
	return 0;
}

/* ,"metrics":{...} when the recording has system metrics: per series its subject, name and
 * unit, min, mean and max as the text report computes them, the note, and the text section. */
int html_put_metrics(const struct recording *r, FILE *out)
{
	char *text = NULL, label[64];
	size_t len = 0, n = 0;
	FILE *f;

	if (!r->nmetrics && !r->metrics_note)
		return 0;
	f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	report_print_metrics(r, REPORT_METRICS_ALL, f);
	if (fclose(f))
		return -ENOMEM;
	fprintf(out,
		",\n\"metrics\":{\"interval_ns\":%" PRIu64 ",\"note\":", r->metrics_interval_ns);
	report_json_str(out, recording__string(r, r->metrics_note));
	fputs(",\"rows\":[", out);
	for (size_t i = 0; i < r->nmetrics; i++) {
		const struct rec_metric_info *info = rec_metric_info(r->metrics[i].metric);
		struct report_metric_sum s;

		if (!info || !report_metric_summary(&r->metrics[i], &s))
			continue;
		report_metric_subject(r, &r->metrics[i], label, sizeof(label));
		fputs(n++ ? ",[" : "[", out);
		report_json_str(out, label);
		fputc(',', out);
		report_json_str(out, info->name);
		fputc(',', out);
		report_json_str(out, report_metric_unit(r->metrics[i].metric));
		fprintf(out, ",%.3f,%.3f,%.3f]", s.min, s.mean, s.max);
	}
	fputs("],\"text\":", out);
	report_json_str(out, text);
	fputs("}", out);
	free(text);
	return 0;
}

/* Device time of kernels, copies and memsets per window (overlapping work summed); gpu[w]. */
static void gpu_per_window(const struct recording *r, uint64_t *gpu)
{
	const struct rec_window *w = r->windows;

	for (size_t i = 0; i < r->ngpu; i++) {
		const struct rec_gpu *g = &r->gpu[i];
		size_t k;

		if (g->kind != REC_GPU_KERNEL && g->kind != REC_GPU_MEMCPY &&
		    g->kind != REC_GPU_MEMSET)
			continue;
		k = search_prefix(0, r->nwindows, j, w[j].end_ns <= g->start_ns);
		for (; k < r->nwindows && w[k].start_ns < g->end_ns; k++) {
			uint64_t from = g->start_ns > w[k].start_ns ? g->start_ns : w[k].start_ns;
			uint64_t to = g->end_ns < w[k].end_ns ? g->end_ns : w[k].end_ns;

			gpu[k] += to > from ? to - from : 0;
		}
	}
}

int html_put_timeline(const struct recording *r, const uint32_t *sample_of, FILE *out)
{
	uint64_t *gpu, start;

	if (!r->nwindows)
		return 0;
	gpu = calloc(r->nwindows, sizeof(*gpu));
	if (!gpu)
		return -ENOMEM;
	gpu_per_window(r, gpu);
	start = r->windows[0].start_ns;
	fputs(",\n\"timeline\":{\"windows\":[", out);
	for (size_t i = 0; i < r->nwindows; i++) {
		const struct rec_window *w = &r->windows[i];
		bool first = true;

		fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",[", i ? ",\n" : "\n",
			w->start_ns - start, w->end_ns - start, gpu[i]);
		for (uint32_t k = 0; k < w->ncounts; k++) {
			uint32_t s = w->counts[k].sample;

			if (s >= r->nsamples || !sample_of[s])
				continue;
			fprintf(out, "%s%" PRIu32 ",%" PRIu64, first ? "" : ",", sample_of[s] - 1,
				w->counts[k].count);
			first = false;
		}
		fputs("]]", out);
	}
	fputs("]}", out);
	free(gpu);
	return 0;
}

/* Thread (pid, tid, comm) of each sample, for the viewer's Threads table. */
struct hthread {
	uint32_t pid, tid;
	const char *comm;
	uint32_t next; /* the next entry of the same pid and tid, + 1 */
};

/* The index of s's thread in *t (added when new; map: pid << 32 | tid -> first entry + 1). */
static int64_t thread_of(const struct recording *r, const struct rec_sample *s, struct u64map *map,
			 struct hthread **t, size_t *n, size_t *cap)
{
	uint64_t key = (uint64_t)s->pid << 32 | s->tid, first = 0;
	const char *comm = report_sample_comm(r, s);

	u64map__get(map, key, &first);
	for (uint64_t i = first; i; i = (*t)[i - 1].next)
		if (!strcmp((*t)[i - 1].comm, comm))
			return (int64_t)i - 1;
	if (vec_grow(t, cap, *n + 1, sizeof(**t), 16) || u64map__put(map, key, *n + 1))
		return -ENOMEM;
	(*t)[*n] = (struct hthread){s->pid, s->tid, comm, (uint32_t)first};
	return (int64_t)(*n)++;
}

static void put_thread_list(const struct hthread *t, size_t n, const uint32_t *of, size_t nout,
			    FILE *out)
{
	fputs(",\n\"threads\":[", out);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n[" : "\n[", out);
		report_json_str(out, t[i].comm);
		fprintf(out, ",%" PRIu32 ",%" PRIu32 "]", t[i].pid, t[i].tid);
	}
	fputs("],\n\"sthreads\":[", out);
	for (size_t i = 0; i < nout; i++)
		fprintf(out, "%s%" PRIu32, i ? "," : "", of[i]);
	fputs("]", out);
}

int html_put_threads(const struct recording *r, const uint32_t *sample_of, FILE *out)
{
	uint32_t *of = calloc(r->nsamples + 1, sizeof(*of));
	struct hthread *t = NULL;
	struct u64map map = {0};
	size_t n = 0, cap = 0, nout = 0;
	int64_t k = 0;

	for (size_t i = 0; of && k >= 0 && i < r->nsamples; i++) {
		if (!sample_of[i])
			continue;
		k = thread_of(r, &r->samples[i], &map, &t, &n, &cap);
		of[sample_of[i] - 1] = (uint32_t)k;
		nout = sample_of[i] > nout ? sample_of[i] : nout;
	}
	if (of && k >= 0)
		put_thread_list(t, n, of, nout, out);
	free(of);
	free(t);
	u64map__clear(&map);
	return !of || k < 0 ? -ENOMEM : 0;
}
