// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=csv: the regions table for spreadsheets, one row per region over all threads and one
 * per region and thread (lib/escape.h's CSV rule; times in seconds). gpu_s, the GPU time launched inside
 * the region, is appended when the recording has launch stacks (perch record --gpu).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "common.h"
#include "lib/escape.h"
#include "model/steptab.h"

void report_csv_field(const char *s, FILE *out)
{
	esc_csv(out, s, false);
}

static void csv_seconds(uint64_t ns, FILE *out)
{
	fprintf(out, ",%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

static void csv_row(const char *name, const struct region_thread_stat *th,
		    const struct region_stat *s, bool gpu, FILE *out)
{
	uint64_t timed = region_stat__timed(s);

	report_csv_field(name, out);
	if (th)
		fprintf(out, ",%" PRIu32, th->tid);
	else
		fputc(',', out);
	fprintf(out, ",%" PRIu64, s->calls);
	csv_seconds(s->total_ns, out);
	csv_seconds(s->self_ns, out);
	if (timed) {
		fprintf(out, ",%.9f",
			(double)(s->sum_ns ? s->sum_ns : s->total_ns) / (double)timed / 1e9);
		csv_seconds(s->min_ns, out);
		csv_seconds(s->max_ns, out);
	} else {
		fputs(",,,", out);
	}
	fprintf(out, ",%" PRIu64 ",%" PRIu64, s->samples, s->size_sum);
	if (gpu)
		csv_seconds(s->gpu_ns, out);
}

/* With per-step figures (model/steptab.h), every row has the step columns: empty on the whole
 * recording's rows; a step's row has its calls and times (self, samples and size are not
 * split by step). */
static void csv_step_rows(const struct recording *r, const char *name, const struct steptab *st,
			  bool gpu, FILE *out)
{
	const struct step_region *rows;
	size_t n = steptab__all(st, &rows);

	for (size_t i = 0; i < n; i++) {
		const struct rec_step *s = &r->steps[rows[i].step];

		if (strcmp(recording__string(r, rows[i].name), name))
			continue;
		report_csv_field(name, out);
		fprintf(out, ",,%" PRIu64, rows[i].calls);
		csv_seconds(rows[i].total_ns, out);
		fprintf(out, ",,%.9f", (double)rows[i].sum_ns / (double)rows[i].calls / 1e9);
		csv_seconds(rows[i].min_ns, out);
		csv_seconds(rows[i].max_ns, out);
		fprintf(out, ",,%s,%" PRIu32 ",%" PRIu64 "\n", gpu ? "," : "", s->pid, s->n);
	}
}

static void csv_end(const struct steptab *st, FILE *out)
{
	const struct step_region *rows;

	fputs(st && steptab__all(st, &rows) ? ",,\n" : "\n", out);
}

static bool kept(const void *p, size_t sample)
{
	return profile__sample_kept(p, sample);
}

int report_csv(const struct recording *r, const char *path, const struct report_opts *o, FILE *out)
{
	struct profile *p = NULL;
	const struct step_region *srows;
	struct steptab *st;
	struct regiontab *t;
	bool gpu;
	int err;

	(void)path;
	/* a query (--select, ...): the samples column counts the samples it keeps */
	if (query__active(o->query) && !(p = report_profile(r, o)))
		return -errno;
	t = p ? regiontab__new_kept(r, kept, p) : regiontab__new(r);
	if (!t) {
		err = -errno;
		profile__free(p);
		return err;
	}
	/* gpu_s: GPU time launched inside, when a launch's stack is known (appended: a recording
	 * without one keeps its columns). */
	gpu = regiontab__has_gpu(t);
	/* step_pid, step: per-step rows (appended, with the timeline's spans and steps) */
	st = r->nspans && r->nsteps ? steptab__new(r) : NULL;
	fputs(gpu ? "name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size,gpu_s"
		  : "name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size",
	      out);
	fputs(st && steptab__all(st, &srows) ? ",step_pid,step\n" : "\n", out);
	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		const struct region_thread_stat *rows;
		uint32_t n = regiontab__threads(t, i, &rows);

		csv_row(regiontab__name(t, i), NULL, regiontab__all(t, i), gpu, out);
		csv_end(st, out);
		for (uint32_t k = 0; k < n; k++) {
			csv_row(regiontab__name(t, i), &rows[k], &rows[k].s, gpu, out);
			csv_end(st, out);
		}
		if (st)
			csv_step_rows(r, regiontab__name(t, i), st, gpu, out);
	}
	steptab__free(st);
	regiontab__free(t);
	profile__free(p);
	return 0;
}
