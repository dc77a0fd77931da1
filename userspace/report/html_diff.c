// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch diff --format=html`: the page of report/html.c in its diff mode. The data is the diff's
 * (model/diff.h) as the CLI's csv has it: its functions in rank order (those with samples on
 * either side) and every node of the merged call tree in build order (parents first), each with
 * self and total counts on both sides, the changes of their shares and their z scores. The
 * viewer draws them as a table and as an icicle colored by change.
 */
#include <inttypes.h>
#include "model/diff.h"
#include "common.h"
#include "html.h"

struct diff_page {
	const struct diff *d;
	const char *const *path;
};

static void put_row(const struct diff_row *r, FILE *out)
{
	report_json_str(out, r->name);
	fputc(',', out);
	report_json_str(out, r->module ? r->module : "");
	fprintf(out, ",%d,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6f,%.6f,%.3f,%.3f,%d]",
		r->kernel, r->self[0], r->self[1], r->total[0], r->total[1], r->d_self, r->d_total,
		r->z_self, r->z_total, r->significant);
}

static int put_diff(void *ctx, FILE *out)
{
	const struct diff_page *pg = ctx;
	const struct diff *d = pg->d;
	size_t n = 0;

	fputs("{\"version\":1,\"diff\":{\"files\":[", out);
	report_json_str(out, pg->path[0]);
	fputc(',', out);
	report_json_str(out, pg->path[1]);
	fprintf(out, "],\n\"samples\":[%" PRIu64 ",%" PRIu64 "],\"z\":%.1f,\n\"funcs\":[",
		diff__samples(d, DIFF_BASE), diff__samples(d, DIFF_NEW), DIFF_Z_SIGNIFICANT);
	for (size_t i = 0; i < diff__nfuncs(d); i++) {
		const struct diff_row *r = diff__func(d, i);

		if (!r->total[0] && !r->total[1] && !r->self[0] && !r->self[1])
			continue;
		fputs(n++ ? ",\n[" : "\n[", out);
		put_row(r, out);
	}
	fputs("],\n\"nodes\":[", out);
	for (size_t i = 0; i < diff__nnodes(d); i++) {
		fprintf(out, "%s[%" PRIu32 ",", i ? ",\n" : "\n", diff__node(d, i)->parent);
		put_row(diff__node(d, i), out);
	}
	fputs("]}}\n", out);
	return 0;
}

int report__html_diff(const struct diff *d, const char *const path[2], FILE *out)
{
	struct diff_page pg = {d, path};

	return html_page(out, put_diff, &pg);
}
