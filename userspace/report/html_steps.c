// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=html's Steps section (report/html.h): per step of the programs' perch_step() its
 * process, number, start and end (ns from the run's start), samples, CPU time, top functions by
 * self samples and per-step region figures (model/steptab.h, with --timeline), and the text
 * report's Steps section (with the per-step metrics and the program's pauses).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "common.h"
#include "html.h"
#include "model/steptab.h"

static void put_top(const struct recording *r, const struct rec_step *s, FILE *out)
{
	uint32_t name[REPORT_STEP_TOP];
	uint64_t count[REPORT_STEP_TOP];
	size_t k = report_step_top(r, s, name, count);

	fputc('[', out);
	for (size_t i = 0; i < k; i++) {
		fputs(i ? ",[" : "[", out);
		report_json_str(out, name[i] ? recording__string(r, name[i]) : "[unknown]");
		fprintf(out, ",%" PRIu64 "]", count[i]);
	}
	fputc(']', out);
}

/* [name, calls, total_ns, mean_ns] per region of step i, by total time. */
static void put_regions(const struct recording *r, const struct steptab *t, uint32_t i, FILE *out)
{
	const struct step_region *rows;
	size_t n = t ? steptab__rows(t, i, &rows) : 0;

	fputc('[', out);
	for (size_t k = 0; k < n; k++) {
		fputs(k ? ",[" : "[", out);
		report_json_str(out, recording__string(r, rows[k].name));
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", rows[k].calls,
			rows[k].total_ns, rows[k].sum_ns / rows[k].calls);
	}
	fputc(']', out);
}

/* [pid, n, start_ns, end_ns (-1: open), samples, [[function, self], ...], [regions...]] */
static void put_rows(const struct recording *r, const struct steptab *t, FILE *out)
{
	uint64_t t0 = report_steps_origin(r);
	size_t n = 0;

	for (uint32_t i = 0; i < r->nsteps; i++) {
		const struct rec_step *s = &r->steps[i];

		if (s->kind != REC_STEP_STEP)
			continue;
		fprintf(out, "%s[%" PRIu32 ",%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRIu64 ",",
			n++ ? ",\n" : "\n", s->pid, s->n,
			s->start_ns > t0 ? (int64_t)(s->start_ns - t0) : 0,
			s->end_ns ? (int64_t)(s->end_ns - t0) : -1, report_step_samples(s));
		put_top(r, s, out);
		fputc(',', out);
		put_regions(r, t, i, out);
		fputc(']', out);
	}
}

int html_put_steps(const struct recording *r, FILE *out)
{
	struct steptab *t = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!r->nsteps && !report_meta(r, REC_META_steps))
		return 0;
	if (r->nspans && !(t = steptab__new(r)))
		return -errno;
	f = open_memstream(&text, &len);
	if (!f) {
		steptab__free(t);
		return -ENOMEM;
	}
	report_print_steps(r, f);
	if (fclose(f)) {
		steptab__free(t);
		return -ENOMEM;
	}
	fprintf(out, ",\n\"steps\":{\"timeline\":%s,\"rows\":[", r->nspans ? "true" : "false");
	put_rows(r, t, out);
	fputs("],\"text\":", out);
	report_json_str(out, text);
	fputs("}", out);
	free(text);
	steptab__free(t);
	return 0;
}
