// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --callers=F / --callees=F: fble's "going in" and "going out" tables of one function (or of
 * every function a /REGEX/ names), printed instead of the report, on the samples the query's
 * modifiers kept. A row counts the samples holding its edge once each, however often the edge
 * repeats in the sample (model/query.c); with --format=csv the same rows as CSV.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include "common.h"

static const char *row_name(const struct profile *p, uint32_t func)
{
	return func == QUERY_ROOT   ? "[root]"
	       : func == QUERY_SELF ? "[self]"
				    : profile__func_name(p, func);
}

/* Every kept sample's stack (the query applied) into the table. */
static int fill(struct query_table *t, const struct recording *r, const struct profile *p)
{
	uint32_t *buf = NULL;
	size_t cap = 0;
	int n = 0;

	for (size_t i = 0; i < r->nsamples && n >= 0; i++) {
		if (!profile__sample_kept(p, i))
			continue;
		n = profile__sample_stack(p, r, i, &buf, &cap);
		if (n >= 0)
			n = query_table__add(t, buf, (size_t)n, r->samples[i].count);
	}
	free(buf);
	return n < 0 ? n : 0;
}

static void print_csv(const struct profile *p, bool callers, const struct query_row *rows, size_t n,
		      uint64_t total, uint64_t all, FILE *out)
{
	fprintf(out, "%s,samples,pct_of_focus_total,pct_of_all\n", callers ? "caller" : "callee");
	for (size_t i = 0; i < n; i++) {
		report_csv_field(row_name(p, rows[i].func), out);
		fprintf(out, ",%" PRIu64 ",%.4f,%.4f\n", rows[i].count,
			report_pct(rows[i].count, total), report_pct(rows[i].count, all));
	}
}

static void print_text(const struct report_opts *o, const struct profile *p, bool callers,
		       const struct query_row *rows, size_t n, uint64_t total, uint64_t self,
		       uint64_t all, FILE *out)
{
	uint64_t sum = 0;
	const char *f = query__focus_text(o->query);

	if (callers)
		fprintf(out,
			"\nCallers of %s (\"going in\": the samples holding the edge caller -> %s, "
			"each once; [root]: %s is the outermost frame)\n",
			f, f, f);
	else
		fprintf(out,
			"\nCallees of %s (\"going out\": the samples holding the edge %s -> callee, "
			"each once; [self]: %s is the leaf)\n",
			f, f, f);
	fprintf(out,
		"  F total %" PRIu64 " samples (%.2f%% of %" PRIu64 "%s%s), self %" PRIu64 "\n",
		total, report_pct(total, all), all, o->region ? " inside region " : "",
		o->region ?: "", self);
	fprintf(out, "  %8s %8s %7s  %s\n", "samples", "%F", "%all",
		callers ? "caller (what removing the call saves)" : "callee");
	for (size_t i = 0; i < n && i < o->top; i++) {
		fprintf(out, "  %8" PRIu64 " %7.2f%% %6.2f%%  %s\n", rows[i].count,
			report_pct(rows[i].count, total), report_pct(rows[i].count, all),
			row_name(p, rows[i].func));
	}
	for (size_t i = 0; i < n; i++)
		sum += rows[i].count;
	if (n > o->top)
		fprintf(out, "  (%zu more rows: --top)\n", n - o->top);
	if (sum > total)
		fprintf(out,
			"  rows sum to %" PRIu64 ", more than F's total: under recursion a sample "
			"holds F by several %s\n",
			sum, callers ? "callers" : "callees");
}

int report_callers(const struct recording *r, const char *path, const struct report_opts *o,
		   FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct query_table *t = p ? query_table__new(o->query) : NULL;
	const struct query_row *rows;
	uint64_t total, self, all;
	enum query_kind kind = QUERY_CALLERS;
	size_t n;
	int err = p && t ? fill(t, r, p) : -errno;

	if (err)
		goto cleanup;
	query__has_focus(o->query, &kind);
	n = query_table__rows(t, &rows, &total, &self, &all);
	if (o->format == REPORT_CSV) {
		print_csv(p, kind == QUERY_CALLERS, rows, n, total, all, out);
		goto cleanup;
	}
	fprintf(out, "# perch report of %s\n", path);
	report_print_query(o, p, report_sample_total(r), out);
	print_text(o, p, kind == QUERY_CALLERS, rows, n, total, self, all, out);
cleanup:
	query_table__free(t);
	profile__free(p);
	return err;
}
