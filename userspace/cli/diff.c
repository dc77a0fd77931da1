// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch diff BASE NEW`: what changed between two recordings (model/diff.h), as text (functions
 * and call-tree nodes, significant changes first), csv (every row) or folded (flamegraph.pl's
 * differential form: "stack base_count new_count") or html (report/html_diff.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "lib/escape.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "model/diff.h"
#include "model/sampleset.h"
#include "report/report.h"

enum diff_format { DIFF_TEXT, DIFF_CSV, DIFF_FOLDED, DIFF_HTML };

struct diff_cli {
	struct diff_opts o;
	enum diff_format format;
	unsigned long top;
	const char *event; /* --event=NAME: that event's samples of each recording */
};

/* "pct" of a share, "+pct" of a change, in points. */
static void put_row(const struct diff_row *r, FILE *out)
{
	fprintf(out, "%7.2f%% %7.2f%% %+8.2f %7.1f  %7.2f%% %7.2f%% %+8.2f %7.1f %c ",
		100 * r->self_share[0], 100 * r->self_share[1], 100 * r->d_self, r->z_self,
		100 * r->total_share[0], 100 * r->total_share[1], 100 * r->d_total, r->z_total,
		r->significant ? '*' : ' ');
}

static void put_header(const char *what, const char *name, FILE *out)
{
	fprintf(out, "\n%s\n%8s %8s %8s %7s  %8s %8s %8s %7s   %s\n", what, "self", "self",
		"d self", "z self", "total", "total", "d total", "z total", name);
	fputs("    base      new                       base      new\n", out);
}

/* The path of node i from the root, "a;b;c". */
static void put_path(const struct diff *d, size_t i, char sep, FILE *out)
{
	const struct diff_row *r = diff__node(d, i);

	if (r->parent) {
		put_path(d, r->parent, sep, out);
		fputc(sep, out);
	}
	for (const char *c = r->name; *c; c++)
		fputc(*c == ';' ? ':' : *c == '\n' ? ' ' : *c, out);
	if (r->kernel)
		fputs("_[k]", out);
}

static bool has_samples(const struct diff_row *r)
{
	return r->total[0] || r->total[1] || r->self[0] || r->self[1];
}

static void print_text(const struct diff *d, const struct diff_cli *c, const char *const path[2],
		       FILE *out)
{
	size_t n = diff__nfuncs(d), shown = 0;

	fprintf(out, "base: %s (%llu samples)\nnew:  %s (%llu samples)\n", path[0],
		(unsigned long long)diff__samples(d, DIFF_BASE), path[1],
		(unsigned long long)diff__samples(d, DIFF_NEW));
	fprintf(out,
		"Shares of each recording's samples; d: new - base in points; z: two-proportion "
		"z score of the\nsample counts; * |z| >= %.0f (significant, ranked first), then "
		"by the larger |d|\n",
		DIFF_Z_SIGNIFICANT);
	put_header("Functions by change", "function  module", out);
	for (size_t i = 0; i < n && shown < c->top; i++) {
		const struct diff_row *r = diff__func(d, i);

		if (!has_samples(r))
			continue;
		put_row(r, out);
		fprintf(out, "%s%s  %s\n", r->name, r->kernel ? "_[k]" : "", r->module);
		shown++;
	}
	put_header("Call-tree nodes by change (total: the node and all below it)", "path", out);
	n = diff__nnodes(d) ? diff__nnodes(d) - 1 : 0;
	for (size_t i = 0; i < n && i < c->top; i++) {
		size_t node = diff__node_ranked(d, i);

		put_row(diff__node(d, node), out);
		put_path(d, node, ';', out);
		fputc('\n', out);
	}
}

/* A csv field: quoted (lib/escape.h's CSV rule). */
static void put_csv_name(const char *s, FILE *out)
{
	esc_csv(out, s, true);
}

static void put_csv_row(const char *kind, const struct diff_row *r, FILE *out)
{
	fprintf(out, "%s,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.3f,%.3f,%d,", kind,
		(unsigned long long)r->self[0], (unsigned long long)r->self[1],
		(unsigned long long)r->total[0], (unsigned long long)r->total[1], r->self_share[0],
		r->self_share[1], r->total_share[0], r->total_share[1], r->d_self, r->d_total,
		r->z_self, r->z_total, r->significant);
}

static void print_csv(const struct diff *d, FILE *out)
{
	fputs("kind,self_base,self_new,total_base,total_new,self_share_base,self_share_new,"
	      "total_share_base,total_share_new,d_self,d_total,z_self,z_total,significant,name,kernel,module\n",
	      out);
	for (size_t i = 0; i < diff__nfuncs(d); i++) {
		const struct diff_row *r = diff__func(d, i);

		if (!has_samples(r))
			continue;
		put_csv_row("function", r, out);
		put_csv_name(r->name, out);
		fprintf(out, ",%s,", r->kernel ? "kernel" : "");
		put_csv_name(r->module, out);
		fputc('\n', out);
	}
	for (size_t i = 0; i + 1 < diff__nnodes(d); i++) {
		size_t node = diff__node_ranked(d, i);
		char *p = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&p, &len);

		if (!m)
			continue;
		put_path(d, node, ';', m);
		fclose(m);
		put_csv_row("node", diff__node(d, node), out);
		put_csv_name(p ? p : "", out);
		fputs(",,\n", out);
		free(p);
	}
}

/* flamegraph.pl's differential input: each path with self samples, "path base new". */
static void print_folded(const struct diff *d, FILE *out)
{
	for (size_t i = 1; i < diff__nnodes(d); i++) {
		const struct diff_row *r = diff__node(d, i);

		if (!r->self[0] && !r->self[1])
			continue;
		put_path(d, i, ';', out);
		fprintf(out, " %llu %llu\n", (unsigned long long)r->self[0],
			(unsigned long long)r->self[1]);
	}
}

/* The page of report/html_diff.c on standard output; 0 or the exit status. */
static int print_html(const struct diff *d, const char *const path[2])
{
	int err = report__html_diff(d, path, stdout);

	if (err)
		log_err("diff: html: %s", strerror(-err));
	return err ? PERCH_EXIT_INTERNAL : 0;
}

static int set_format(void *ctx, const struct cli_opt *opt, const char *arg)
{
	static const char *const names[] = {"text", "csv", "folded", "html"};
	struct diff_cli *c = ctx;

	(void)opt;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			c->format = (enum diff_format)i;
			return 0;
		}
	}
	return log_usage(NULL, "unknown diff format '%s' (text, csv, folded, html)", arg);
}

static int set_top(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (cli_parse_uint(arg, 1000000, &((struct diff_cli *)ctx)->top))
		return log_usage(NULL, "bad --top '%s'", arg);
	return 0;
}

/* Both recordings loaded into r (the exit status of the first that cannot be), *damage the
 * status of one loaded only up to damage (0 when none). */
static int load_both(const char *const path[2], struct recording *r[2], int *damage)
{
	for (int s = 0; s < 2; s++) {
		int err = recording__load(path[s], &r[s]);

		if (!r[s])
			return load_error(path[s], err);
		if (err && !*damage)
			*damage = report_damage(path[s], r[s], err);
	}
	return 0;
}

/* Like with like: --event=NAME keeps that event's samples of each recording (a sample set of
 * each, set[s]); without it both must hold one event, the same. 0 or the exit status after its
 * line. */
static int pick_event(const struct recording *const r[2], const char *const path[2],
		      const char *event, struct sampleset *set[2])
{
	uint32_t ev[2] = {0, 0};

	for (int s = 0; event && s < 2; s++)
		if (report__find_event(r[s], event, &ev[s]))
			return log_usage(NULL, "--event=%s: %s has no such event (%s)", event,
					 path[s], report__events(r[s]));
	for (int s = 0; !event && s < 2; s++)
		if (report__nevents(r[s]) > 1)
			return log_usage(NULL,
					 "%s holds %u events (%s): choose one with --event=NAME",
					 path[s], report__nevents(r[s]), report__events(r[s]));
	if (!event && !report__same_events(r[0], r[1], false))
		return log_usage(NULL, "%s sampled %s, %s sampled %s: diff compares one event",
				 path[0], report__events(r[0]), path[1], report__events(r[1]));
	for (int s = 0; s < 2; s++) {
		struct sampleset_opts o = {.event = event ? ev[s] + 1 : 0};

		if (!(set[s] = sampleset__new(r[s], &o))) {
			log_err("diff: out of memory");
			return PERCH_EXIT_INTERNAL;
		}
	}
	return 0;
}

/* The text and folded diffs, under lib/escape.h's terminal rule (names come from the targets). */
static int print_lines(const struct diff *d, const struct diff_cli *c, const char *const path[2])
{
	FILE *term = esc_term_stream(stdout);

	if (!term) {
		log_err("diff: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	if (c->format == DIFF_TEXT)
		print_text(d, c, path, term);
	else
		print_folded(d, term);
	return fclose(term) ? PERCH_EXIT_OUTPUT : 0;
}

static int diff_files(const char *const path[2], const struct diff_cli *c)
{
	struct recording *loaded[2] = {NULL, NULL};
	struct sampleset *set[2] = {NULL, NULL};
	const struct recording *r[2];
	struct diff *d = NULL;
	int damage = 0, ret = load_both(path, loaded, &damage);

	r[0] = loaded[0];
	r[1] = loaded[1];
	if (!ret)
		ret = pick_event(r, path, c->event, set);
	for (int s = 0; !ret && s < 2; s++)
		r[s] = sampleset__recording(set[s]); /* the loaded ones stay as loaded */
	if (!ret && c->o.region && report__find_region(r[0], c->o.region) == -ENOENT &&
	    report__find_region(r[1], c->o.region) == -ENOENT)
		ret = log_usage(NULL, "no region '%s' in %s or %s", c->o.region, path[0], path[1]);
	if (!ret && !(d = diff__build(r[0], r[1], &c->o))) {
		log_err("diff: %s", strerror(errno));
		ret = PERCH_EXIT_INTERNAL;
	}
	if (d && c->format == DIFF_CSV)
		print_csv(d, stdout);
	else if (d && c->format == DIFF_HTML)
		ret = print_html(d, path);
	else if (d)
		ret = print_lines(d, c, path);
	if (d && (ferror(stdout) | fflush(stdout))) {
		log_err("cannot write standard output: %s", strerror(errno));
		ret = PERCH_EXIT_OUTPUT;
	}
	diff__free(d);
	for (int s = 0; s < 2; s++) {
		sampleset__free(set[s]);
		recording__free(loaded[s]);
	}
	return ret ? ret : damage;
}

extern const struct cli_command cli_diff;

static int run_diff(int argc, char **argv)
{
	struct diff_cli c = {.top = 20};
	const char *path[2];
	int ret = cli_opts__parse(&cli_diff, argc, argv, &c);

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	if (argc - optind != 2)
		return log_usage(NULL, "diff takes two recordings: BASE NEW");
	path[0] = argv[optind];
	path[1] = argv[optind + 1];
	return diff_files(path, &c);
}

#define CLI_CTX struct diff_cli

static const struct cli_opt diff_rows[] = {
	{0, "format", "text|csv|folded|html",
	 "text (default: functions and call-tree nodes by change, significant first), csv (every "
	 "row), folded (stack base new: flamegraph.pl draws it colored by difference) or html (one "
	 "self-contained page: the table and an icicle colored by change; > FILE.html)",
	 OPT_FN(set_format), .in = 1},
	{0, "top", "N", "rows in each text table (default 20)", OPT_FN(set_top), .in = 1},
	{0, "region", "NAME", "only the samples taken inside region NAME, in both (as report's)",
	 OPT_STR(o.region), .in = 1},
	{0, "lines", NULL, "one entry per source line, not per function (as report's)",
	 OPT_TRUE(o.lines), .in = 1},
	{0, "no-demangle", NULL, "show C++ names as the binary spells them",
	 OPT_TRUE(o.no_demangle), .in = 1},
	{0, "event", "NAME",
	 "compare event NAME's samples of each recording (both must hold it; needed when either "
	 "holds several events, perch record -e A,B); without it both must have sampled the same "
	 "event",
	 OPT_STR(event), .in = 1},
};

const struct cli_command cli_diff = {
	.name = "diff",
	.run = run_diff,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(diff_rows),
			.flags = "",
			.lines = (const char *const[]){"BASE NEW", NULL},
			.summary =
				"what changed between two recordings, function by function and node by node",
			.about =
				"Shares of each recording's samples, their difference in points and a "
				"two-proportion z score; significant changes first.",
		},
};
