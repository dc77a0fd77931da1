// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch model [FILE...] [--region=NAME] [--model=TERMS] [--cull=NSIGMA] [--format=...] [-o
 * OUT]`: cost models of sized regions (perch_region_begin_n), pooled over every recording
 * given: per region the chosen time(n), its fit and the runner-up (model/sizedata.h), printed
 * by report/model.h. A region without sizes, one with fewer points than a model's
 * coefficients, an unparsable --model: one line each and an exit status of its own, and every
 * other region still fitted.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/safeout.h"
#include "model/sizedata.h"
#include "report/model.h"

#define MAX_INPUTS  4096
#define MAX_REGIONS 256

enum model_format { MF_TEXT, MF_CSV, MF_FITS, MF_SVG };
static const char *const format_names[] = {"text", "csv", "fits", "svg"};

struct model_args {
	const char *regions[MAX_REGIONS];
	size_t nregions;
	const char *expr; /* --model */
	double nsigma;
	enum model_format format;
	const char *output;
	struct cm_model user;
	bool has_user;
	int status; /* the first bad input's exit status (the rest still fitted) */
};

static void bad(struct model_args *a, int status)
{
	if (!a->status)
		a->status = status;
}

static int set_format(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++) {
		if (!strcmp(arg, format_names[i])) {
			((struct model_args *)ctx)->format = (enum model_format)i;
			return 0;
		}
	}
	return log_usage(NULL, "unknown --format '%s' (text, csv, fits, svg)", arg);
}

/* --region=NAME[,NAME]: the list is split in place (argv's own string). */
static int add_regions(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct model_args *a = ctx;
	char *save, *list = (char *)arg;

	(void)opt;
	if (!arg[0])
		return log_usage(NULL, "bad --region '%s'", arg);
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->nregions == MAX_REGIONS)
			return log_usage(NULL, "bad --region '%s'", arg);
		a->regions[a->nregions++] = tok;
	}
	return 0;
}

static int set_cull(void *ctx, const struct cli_opt *opt, const char *arg)
{
	double *nsigma = &((struct model_args *)ctx)->nsigma;
	char *end;

	(void)opt;
	if ((*nsigma = strtod(arg, &end)) < 0 || end == arg || *end || *nsigma > 1000)
		return log_usage(NULL, "bad --cull '%s' (a number of sigmas, 0: none)", arg);
	return 0;
}

static void parse_user_model(struct model_args *a)
{
	size_t at = 0;

	if (!a->expr)
		return;
	if (!cm_parse(a->expr, &a->user, &at)) {
		a->has_user = true;
		return;
	}
	log_err("model: cannot parse --model '%s' at '%s' (terms: 1, n, log2(n), sqrt(n), n^K, "
		"products with *, comma-separated; at most %d): fitting the built-in candidates",
		a->expr, a->expr + at, CM_MAX_TERMS);
	bad(a, PERCH_EXIT_BADMODEL);
}

/* Every input pooled into s; regions named by --region checked. The exit status, 0 if fine. */
static int load_all(char **paths, size_t n, struct size_set *s, struct model_args *a)
{
	bool *named = calloc(a->nregions + 1, sizeof(*named));

	for (size_t i = 0; i < n; i++) {
		struct recording *r = NULL;
		int err = recording__load(paths[i], &r);

		if (!r) {
			free(named);
			return load_error(paths[i], err);
		}
		if (err)
			bad(a, report_damage(paths[i], r, err));
		for (size_t k = 0; named && k < a->nregions; k++)
			named[k] |= size_set__has_region(r, a->regions[k]);
		err = size_set__add(s, r);
		recording__free(r);
		if (err || !named) {
			free(named);
			log_err("model: out of memory");
			return PERCH_EXIT_INTERNAL;
		}
	}
	for (size_t k = 0; k < a->nregions; k++) {
		if (size_set__find(s, a->regions[k]))
			continue;
		log_err("model: region '%s' %s", a->regions[k],
			named[k] ? "has no sizes (mark it with perch_region_begin_n(name, n), "
				   "a runtime of ABI 5)"
				 : "is not in the recording");
		bad(a, PERCH_EXIT_NOSIZES);
	}
	free(named);
	return 0;
}

static bool wanted(const struct model_args *a, const char *name)
{
	for (size_t k = 0; k < a->nregions; k++) {
		if (!strcmp(a->regions[k], name))
			return true;
	}
	return !a->nregions;
}

/* One region fitted into f; false when it was left out (said why). */
static bool fit_region(struct model_args *a, const struct size_region *g, struct size_fit *f)
{
	const struct cm_model *user = a->has_user ? &a->user : NULL;
	int err = size_fit__run(f, g, user, a->nsigma);

	if (err == -ENOMEM)
		return false;
	if (user && g->npoints < user->nterms) {
		log_err("model: region '%s': %zu point%s, fewer than the %u coefficients of --model "
			"'%s'",
			g->name, g->npoints, g->npoints == 1 ? "" : "s", user->nterms, user->name);
		bad(a, PERCH_EXIT_FEWPOINTS);
	}
	if (!err && g->npoints >= 2)
		return true;
	if (!user || g->npoints >= user->nterms)
		log_err("model: region '%s': %zu point%s, fewer than the 2 coefficients of a + b*n: "
			"no model chosen",
			g->name, g->npoints, g->npoints == 1 ? "" : "s");
	bad(a, PERCH_EXIT_FEWPOINTS);
	f->err = -EDOM;
	return false;
}

static void write_out(const struct model_args *a, const struct size_set *s,
		      const struct size_fit *f, size_t n, FILE *out)
{
	if (a->format == MF_TEXT)
		model_report_text(s, f, n, out);
	else if (a->format == MF_CSV)
		model_report_csv(f, n, out);
	else if (a->format == MF_FITS)
		model_report_fits(f, n, out);
	else
		model_report_svg(f, n, out);
}

/* The fits, written to -o (never one of the inputs paths[0..npaths)) or standard output. */
static int fit_and_write(struct model_args *a, const struct size_set *s, char **paths,
			 size_t npaths)
{
	struct size_fit *f = calloc(s->n ? s->n : 1, sizeof(*f));
	struct safeout so;
	FILE *out = NULL;
	size_t n = 0, ok = 0;
	int ret = 0;

	if (!f)
		return log_err("model: out of memory"), PERCH_EXIT_INTERNAL;
	for (size_t i = 0; i < s->n; i++) {
		if (!wanted(a, s->regions[i].name))
			continue;
		ok += fit_region(a, &s->regions[i], &f[n]);
		n++;
	}
	if (!s->n && !a->nregions) {
		log_err("model: no sized regions in the recording%s (perch_region_begin_n, a runtime "
			"of ABI 5)",
			s->nfiles == 1 ? "" : "s");
		bad(a, PERCH_EXIT_NOSIZES);
	}
	out = cli_output_open(a->output, paths, npaths, &so, &ret);
	if (out && (ok || a->format != MF_TEXT))
		write_out(a, s, f, n, out);
	if (out)
		ret = cli_output_close(out, &so, ret);
	for (size_t i = 0; i < n; i++)
		size_fit__free(&f[i]);
	free(f);
	return ret;
}

extern const struct cli_command cli_model;

static int run_model(int argc, char **argv)
{
	struct model_args a = {.nsigma = 3};
	struct size_set s = {0};
	char *def[] = {"perch.data"};
	char **paths = def;
	size_t n = 1;
	int ret = cli_opts__parse(&cli_model, argc, argv, &a);

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	if (optind < argc) {
		paths = argv + optind;
		n = (size_t)(argc - optind);
	}
	if (n > MAX_INPUTS)
		return log_usage(NULL, "model takes at most %d recordings", MAX_INPUTS);
	parse_user_model(&a);
	ret = cli_output_check(a.output, paths, n);
	if (!ret)
		ret = load_all(paths, n, &s, &a);
	if (!ret)
		ret = fit_and_write(&a, &s, paths, n);
	size_set__free(&s);
	return ret ? ret : a.status;
}

#define CLI_CTX struct model_args

static const struct cli_opt model_rows[] = {
	{0, "region", "NAME[,NAME]", "only these regions (repeatable; default: every sized one)",
	 OPT_FN(add_regions), .in = 1},
	{0, "model", "TERMS",
	 "one more candidate, its basis terms comma-separated: 1, n, log2(n), sqrt(n), n^K (or "
	 "n**K), products with * (e.g. '1,n,n*log2(n)')",
	 OPT_STR(expr), .in = 1},
	{0, "cull", "NSIGMA",
	 "drop calls whose relative residual passes NSIGMA robust sigmas (from the median absolute "
	 "residual, at least 1 %), and fit again until none does (default 3; 0: no culling)",
	 OPT_FN(set_cull), .in = 1},
	{0, "format", "text|csv|fits|svg",
	 "text (default), csv (points and fitted values), fits (every candidate's coefficients), "
	 "svg (a plot per region)",
	 OPT_FN(set_format), .in = 1},
	{'o', "output", "FILE", "write there instead of standard output", OPT_STR(output), .in = 1},
};

const struct cli_command cli_model = {
	.name = "model",
	.run = run_model,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(model_rows),
			.flags = "",
			.lines = (const char *const[]){"[FILE...]", NULL},
			.summary = "cost models time(n) of sized regions (perch_region_begin_n)",
			.about =
				"Per region: the chosen model, its fit and the runner-up among constant, n, "
				"n log n, n^2, log n and --model's, fitted by non-negative least squares with "
				"outliers culled, chosen by held-out error.",
		},
};
