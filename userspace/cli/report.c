// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch report [FILE]`: its options, the output picked by name from report/'s table, and the
 * exit status a missing, foreign, damaged or cut recording gets.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/safeout.h"
#include "format/keys.h"
#include "format/recording.h"
#include "model/query.h"
#include "model/sampleset.h"
#include "report/report.h"

/* What the options set. */
struct report_cli {
	struct report_opts o;
	const char *output; /* -o */
	const char *path;   /* the recording */
	const char *event;  /* --event=NAME, what only the loaded recording can resolve */
};

/* --format's help: every output of report/'s table with its help, "A (..), B (..) or C (..)";
 * written before the options are parsed. */
static char format_help[2048];

static void make_format_help(void)
{
	size_t len = 0;

	for (int i = 0; i < REPORT_NR && len < sizeof(format_help); i++) {
		const char *sep = !i ? "" : i + 1 < REPORT_NR ? ", " : " or ";

		len += snprintf(format_help + len, sizeof(format_help) - len, "%s%s %s", sep,
				report_outputs[i].name, report_outputs[i].help);
	}
}

/* The output called name into *format. */
static int parse_format(const char *name, enum report_format *format)
{
	const struct report_output *f = report__output(name);

	if (!f)
		return -EINVAL;
	*format = (enum report_format)(f - report_outputs);
	return 0;
}

/* A usage error listing the outputs there are. */
static int unknown_format(const char *name)
{
	char names[512];
	size_t len = 0;

	names[0] = '\0';
	for (int i = 0; i < REPORT_NR && len < sizeof(names); i++)
		len += snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
				report_outputs[i].name);
	return log_usage(NULL, "unknown format '%s' (%s)", name, names);
}

int load_error(const char *path, int err)
{
	switch (err) {
	case -ENOENT:
	case -EACCES:
	case -EISDIR:
		log_err("cannot open recording %s: %s", path, strerror(-err));
		return PERCH_EXIT_NOFILE;
	case -EINVAL:
		log_err("cannot open recording %s: not a regular file", path);
		return PERCH_EXIT_NOFILE;
	case -EPROTO:
		log_err("%s is not a perch recording (bad magic or short header)", path);
		return PERCH_EXIT_BADFILE;
	case -EPROTONOSUPPORT:
		log_err("%s was written by an incompatible perch (unknown format version)", path);
		return PERCH_EXIT_BADFILE;
	default:
		log_err("cannot read recording %s: %s", path, strerror(-err));
		return PERCH_EXIT_BADFILE;
	}
}

int report_damage(const char *path, const struct recording *r, int err)
{
	if (err == -ENODATA) {
		log_err("%s is truncated after %zu complete blocks (byte %llu); reported what they hold",
			path, r->nblocks, (unsigned long long)r->good_size);
		return PERCH_EXIT_TRUNCATED;
	}
	log_err("%s is damaged after %zu good blocks (byte %llu); reported what they hold", path,
		r->nblocks, (unsigned long long)r->good_size);
	return PERCH_EXIT_BADFILE;
}

/* A usage error naming the regions there are, when the recording has none called name. */
static int unknown_region(const struct recording *r, const char *path, const char *name)
{
	char *names;
	int ret;

	if (report__find_region(r, name) != -ENOENT)
		return 0; /* found, or out of memory: report__print will say */
	names = report__region_names(r);
	if (names && *names)
		ret = log_usage(NULL, "no region '%s' in %s (regions: %.300s)", name, path, names);
	else
		ret = log_usage(NULL, "no region '%s' in %s: it has no regions", name, path);
	free(names);
	return ret;
}

/* A query option: opt->val its enum query_kind. */
static int query_option(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	int err;

	if (!o->query && !(o->query = query__new()))
		return log_usage(NULL, "out of memory");
	err = query__add(o->query, (enum query_kind)opt->val, arg);
	if (err == -ENOMEM)
		return log_usage(NULL, "out of memory");
	if (err)
		return log_usage(NULL, "bad --%s '%s': %s", opt->long_name, arg,
				 query__error(o->query));
	return 0;
}

/* "dso" (perf's: rows per module; after the thread keys, before "function"), and "function"
 * (perf's "sym" too) into o. 0 or -EINVAL. */
static int sort_row_word(const char *w, size_t len, struct report_opts *o)
{
	if (len == 3 && !strncmp(w, "dso", len) && !o->by_module && !o->by_function)
		o->by_module = true;
	else if (((len == 8 && !strncmp(w, "function", len)) ||
		  (len == 3 && !strncmp(w, "sym", len))) &&
		 !o->by_function)
		o->by_function = true;
	else
		return -EINVAL;
	return 0;
}

/* One word of --sort into o: a thread key (each once, before dso and "function"), dso,
 * "function", or the table "self" or "total". 0 or -EINVAL. */
static int sort_word(const char *w, size_t len, struct report_opts *o)
{
	static const char *const keys[PROFILE_KEY_NR] = {"comm", "pid", "tid"};

	for (int k = 0; k < PROFILE_KEY_NR; k++) {
		if (strlen(keys[k]) != len || strncmp(w, keys[k], len))
			continue;
		for (uint32_t i = 0; i < o->nkeys; i++) {
			if (o->keys[i] == (enum profile_key)k)
				return -EINVAL;
		}
		if (o->by_function || o->by_module || o->nkeys >= PROFILE_KEYS_MAX)
			return -EINVAL;
		o->keys[o->nkeys++] = (enum profile_key)k;
		return 0;
	}
	if (!sort_row_word(w, len, o))
		return 0;
	if (len == 4 && !strncmp(w, "self", len) && o->sort == REPORT_SORT_BOTH)
		o->sort = REPORT_SORT_SELF;
	else if (len == 5 && !strncmp(w, "total", len) && o->sort == REPORT_SORT_BOTH)
		o->sort = REPORT_SORT_TOTAL;
	else
		return -EINVAL;
	return 0;
}

/* --sort=KEY[,KEY...] (perf's): thread keys, "function", and self or total. Keys or function
 * replace the keys of an earlier --sort or --per-thread; self or total its table choice. */
static int parse_sort(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	struct report_opts s = {.sort = REPORT_SORT_BOTH};

	(void)opt;
	for (const char *w = arg;; w++) {
		size_t len = strcspn(w, ",");

		if (sort_word(w, len, &s))
			return log_usage(NULL,
					 "bad --sort '%s' (comm, pid, tid, each once, then dso, "
					 "then function or sym; or self or total)",
					 arg);
		w += len;
		if (!*w)
			break;
	}
	if (s.nkeys || s.by_function || s.by_module) {
		memcpy(o->keys, s.keys, sizeof(o->keys));
		o->nkeys = s.nkeys;
		/* dso,sym: rows per function, which name their module */
		o->by_module = s.by_module && !s.by_function;
		o->by_function = s.by_function || (!s.nkeys && !s.by_module);
	}
	if (s.sort != REPORT_SORT_BOTH)
		o->sort = s.sort;
	return 0;
}

/* --metrics=summary|all|none: the text's Metrics section. */
static int parse_metrics(void *ctx, const struct cli_opt *opt, const char *s)
{
	static const char *const names[] = {[REPORT_METRICS_SUMMARY] = "summary",
					    [REPORT_METRICS_ALL] = "all",
					    [REPORT_METRICS_NONE] = "none"};
	struct report_opts *o = ctx;

	(void)opt;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			o->metrics = (enum report_metrics)i;
			return 0;
		}
	}
	return log_usage(NULL, "bad --metrics '%s' (summary, all or none)", s);
}

/* perf report's spellings: --stdio (the text report: perch's default output), --children
 * (order by total: the top table by total) and --no-children (by self: the table by self);
 * opt->val is the letter. */
static int perf_report_option(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;

	(void)arg;
	if (opt->val == 's')
		o->format = REPORT_TEXT;
	else
		o->sort = opt->val == 'c' ? REPORT_SORT_TOTAL : REPORT_SORT_SELF;
	return 0;
}

static int set_merge_chains(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	char *end;

	(void)opt;
	o->merge_chains = strtod(arg, &end);
	if (*end || end == arg || !(o->merge_chains > 0 && o->merge_chains <= 100))
		return log_usage(
			NULL, "bad --merge-chains '%s' (a percentage above 0, at most 100)", arg);
	return 0;
}

static int set_per_thread(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;

	(void)opt;
	(void)arg;
	o->keys[0] = PROFILE_KEY_PID;
	o->keys[1] = PROFILE_KEY_TID;
	o->nkeys = 2;
	o->by_function = true;
	return 0;
}

/* The thread filters --pid, --tid, --comm: opt->val their enum query_thread_key. */
static int thread_option(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	int err;

	if (!o->query && !(o->query = query__new()))
		return log_usage(NULL, "out of memory");
	err = query__add_thread(o->query, (enum query_thread_key)opt->val, arg);
	if (err == -ENOMEM)
		return log_usage(NULL, "out of memory");
	if (err)
		return log_usage(NULL, "bad --%s '%s': %s", opt->long_name, arg,
				 query__error(o->query));
	return 0;
}

static int set_format(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (parse_format(arg, &((struct report_opts *)ctx)->format))
		return unknown_format(arg);
	return 0;
}

static int set_min_percent(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct report_opts *o = ctx;
	char *end;

	(void)opt;
	o->min_percent = strtod(arg, &end);
	if (*end || end == arg || o->min_percent < 0 || o->min_percent > 100)
		return log_usage(NULL, "bad --min-percent '%s'", arg);
	return 0;
}

static int set_top(void *ctx, const struct cli_opt *opt, const char *arg)
{
	unsigned long v;

	(void)opt;
	if (cli_parse_uint(arg, 1000000, &v))
		return log_usage(NULL, "bad --top '%s'", arg);
	((struct report_opts *)ctx)->top = v;
	return 0;
}

static int set_view(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (report__parse_view(arg, &((struct report_opts *)ctx)->view))
		return log_usage(NULL, "bad --view '%s' (cpu, off or wall)", arg);
	return 0;
}

/* The report of r into output (NULL: standard output); the exit status. */
static int print_to(const struct recording *r, const char *path, const struct report_opts *o,
		    const char *output)
{
	char *in[] = {(char *)path};
	struct safeout so;
	int ret = 0;
	FILE *out = cli_output_open(output, in, 1, &so, &ret);

	if (!out)
		return ret;
	if (report__print(r, path, o, out))
		ret = PERCH_EXIT_INTERNAL;
	return cli_output_close(out, &so, ret);
}

/* A usage error when the query names a function the recording has not. */
static int bad_query(const struct recording *r, const char *path, const struct report_opts *o)
{
	int err = report__check_query(r, o);

	if (err == -ENOENT)
		return log_usage(NULL, "%s: %s", path, query__error(o->query));
	return err ? PERCH_EXIT_INTERNAL : 0;
}

/* A usage error for a focus table asked of a format that has none. */
static int focus_format(const struct report_opts *o)
{
	if (!query__has_focus(o->query, NULL) || o->format == REPORT_TEXT ||
	    o->format == REPORT_CSV)
		return 0;
	return log_usage(NULL, "--callers and --callees print a table: --format=text or csv");
}

/* --view: 0, or the exit status after its line. */
static int check_view(const struct recording *r, const char *path, enum report_view v)
{
	if (v != REPORT_VIEW_CPU && !report__has_offcpu(r))
		return log_usage(NULL,
				 "--view=%s: %s holds no off-CPU time (record it with --off-cpu)",
				 v == REPORT_VIEW_OFF ? "off" : "wall", path);
	if (v == REPORT_VIEW_WALL && !sampleset__tick_ns(r))
		return log_usage(NULL, "--view=wall: %s does not say its sampling frequency", path);
	return 0;
}

static const char *report_meta_event(const struct recording *r)
{
	return recording__meta(r, rec_meta_keys[REC_META_event]) ?: "?";
}

/* Each event of a recording of several (perch record -e A,B) in turn, as a text report of its
 * own samples, into one output: one load, a sample set per event (report__print()). */
static int print_each_event(const struct recording *r, const char *path,
			    const struct report_opts *o, const char *output)
{
	char *in[] = {(char *)path};
	struct report_opts eo = *o;
	uint32_t n = report__nevents(r);
	struct safeout so;
	int ret = 0;
	FILE *out = cli_output_open(output, in, 1, &so, &ret);

	if (!out)
		return ret;
	for (eo.event = 1; !ret && eo.event <= n; eo.event++) {
		if (report__print(r, path, &eo, out))
			ret = PERCH_EXIT_INTERNAL;
		fputc('\n', out);
	}
	return cli_output_close(out, &so, ret);
}

/* --event=NAME, or every event in turn (text), or the one event there is. */
static int print_events(const struct recording *r, const char *path, const struct report_opts *o,
			const char *output, const char *event_arg)
{
	struct report_opts eo = *o;
	uint32_t n = report__nevents(r), ev;

	if (!event_arg && (n == 1 || o->format == REPORT_STATS)) /* stats: the whole file's */
		return print_to(r, path, o, output);
	if (event_arg && report__find_event(r, event_arg, &ev))
		return log_usage(NULL, "--event=%s: %s has no such event (%s)", event_arg, path,
				 report_meta_event(r));
	if (event_arg) {
		eo.event = ev + 1;
		return print_to(r, path, &eo, output);
	}
	if (o->format != REPORT_TEXT)
		return log_usage(NULL, "%s holds %u events (%s): choose one with --event=NAME",
				 path, n, report_meta_event(r));
	return print_each_event(r, path, o, output);
}

/* Load the recording once and print it as c asks (output NULL: standard output); the exit
 * status. The recording is only read from then on: every option that chooses or weighs samples
 * makes a sample set of it (report__print()). */
static int report_file(const struct report_cli *c)
{
	const struct report_opts *o = &c->o;
	const char *path = c->path, *output = c->output;
	struct recording *loaded = NULL;
	const struct recording *r;
	int err, ret = 0;

	if ((o->format == REPORT_PPROF || o->format == REPORT_OTLP) && !output &&
	    isatty(STDOUT_FILENO))
		return log_usage(NULL, "--format=%s is binary: give -o FILE or a pipe",
				 o->format == REPORT_PPROF ? "pprof" : "otlp");
	err = recording__load(path, &loaded);
	if (!loaded)
		return load_error(path, err);
	r = loaded;
	if ((o->region && (ret = unknown_region(r, path, o->region))) ||
	    (ret = bad_query(r, path, o)) || (ret = check_view(r, path, o->view))) {
		recording__free(loaded);
		return ret;
	}
	ret = print_events(r, path, o, output, c->event);
	if (err)
		ret = report_damage(path, r, err);
	recording__free(loaded);
	return ret;
}

extern const struct cli_command cli_report;

static int run_report(int argc, char **argv)
{
	static const char dflt[] = "perch.data";
	struct report_cli c = {.o = {.min_percent = 0.5, .top = 20, .by_function = true},
			       .path = dflt};
	int ret;

	make_format_help();
	ret = cli_opts__parse(&cli_report, argc, argv, &c);
	if (!ret && optind < argc && c.path == dflt)
		c.path = argv[optind++];
	if (!ret && optind < argc)
		ret = log_usage(NULL, "unexpected argument '%s'", argv[optind]);
	if (!ret)
		ret = focus_format(&c.o);
	if (!ret)
		ret = report_file(&c);
	query__free(c.o.query);
	return ret == CLI_HELP_DONE ? 0 : ret;
}

#define CLI_CTX struct report_cli

static const struct cli_opt report_rows[] = {
	{0, "format", "FMT", format_help, OPT_FN(set_format), .in = 1},
	{0, "region", "NAME", "only the samples taken inside region NAME (at any depth)",
	 OPT_STR(o.region), .in = 1},
	{0, "min-percent", "N", "hide call-tree nodes below N% of samples (default 0.5)",
	 OPT_FN(set_min_percent), .in = 1},
	{0, "top", "N", "rows in the top-functions tables (default 20)", OPT_FN(set_top), .in = 1},
	{0, "lines", NULL, "one entry per source line (function (file:line)), not per function",
	 OPT_TRUE(o.lines), .in = 1},
	{0, "no-demangle", NULL, "show C++ names as the binary spells them",
	 OPT_TRUE(o.no_demangle), .in = 1},
	{0, "inline", NULL,
	 "code inlined into a function is its own function, which takes the self time (the "
	 "default)",
	 OPT_FALSE(o.no_inline), .in = 1},
	{0, "no-inline", NULL,
	 "each frame is its out-of-line function alone, which takes the self time of code inlined "
	 "into it (perf report --no-inline); the recording keeps the inline chains for --inline",
	 OPT_TRUE(o.no_inline), .in = 1},
	{'o', "output", "FILE", "write the report to FILE (default: standard output)",
	 OPT_STR(output), .in = 1},
	{'i', "input", "FILE", "the recording (as FILE alone; default perch.data)", OPT_STR(path),
	 .in = 1},
	OPT_TEXT("Queries (fble's; every format's samples and call trees, not the region times or "
		 "GPU tables; F is a function's name as the report prints it, exactly, or /REGEX/ "
		 "(POSIX extended, matched anywhere in the name); F,G a list; applied in the order "
		 "given, each repeatable; a name no function has is an error, exit 64):"),
	{0, "select", "F[,G]", "keep the samples whose stack holds every one of F, G",
	 OPT_FN(query_option), .val = QUERY_SELECT, .in = 1},
	{0, "exclude", "F[,G]", "drop the samples whose stack holds any of F, G",
	 OPT_FN(query_option), .val = QUERY_EXCLUDE, .in = 1},
	{0, "fold", "F[,G]",
	 "remove F's frames from each stack (its self goes to its caller; a stack left empty is "
	 "\"[folded]\")",
	 OPT_FN(query_option), .val = QUERY_FOLD, .in = 1},
	{0, "callers", "F",
	 "instead of the report, F's callers (\"going in\": samples holding the edge caller->F, "
	 "each once) as text or --format=csv",
	 OPT_FN(query_option), .val = QUERY_CALLERS, .in = 1},
	{0, "callees", "F", "the same for F's callees (F->callee, and F's self)",
	 OPT_FN(query_option), .val = QUERY_CALLEES, .in = 1},
	{0, "merge-chains", "P",
	 "call tree: show a node whose callee holds >= P% of its samples as one row \"a > b\"",
	 OPT_FN(set_merge_chains), .in = 1},
	{0, "sort", "KEYS",
	 "perf's: comm, pid, tid (each once, in any order) then function: the keys go on top of the "
	 "call tree, the top tables and folded's stacks (rows per keys, and function when listed); "
	 "dso (after the keys): the top tables per module (self: the leaf is in it; total: a frame "
	 "is); dso,sym: per function (sym: function); self or total: only the top table by self, or "
	 "by total",
	 OPT_FN(parse_sort), .in = 1},
	{0, "children", NULL, "perf's: --sort=total, --sort=self", OPT_FN(perf_report_option),
	 .val = 'c', .in = 1},
	{0, "no-children", NULL, NULL, OPT_FN(perf_report_option), .val = 'k', .in = 1},
	{0, "stdio", NULL, "perf's: the text report (the default)", OPT_FN(perf_report_option),
	 .val = 's', .in = 1},
	{0, "per-thread", NULL, "--sort=pid,tid,function", OPT_FN(set_per_thread), .in = 1},
	{0, "pid", "LIST",
	 "keep only the samples of these processes, threads or thread names (every format; with "
	 "the queries, in any order)",
	 OPT_FN(thread_option), .val = QUERY_PID, .in = 1},
	{0, "tid", "LIST", NULL, OPT_FN(thread_option), .val = QUERY_TID, .in = 1},
	{0, "comm", "NAME[,NAME]", NULL, OPT_FN(thread_option), .val = QUERY_COMM, .in = 1},
	{0, "view", "cpu|off|wall",
	 "what the samples weigh: on-CPU ticks (default), off-CPU time, or both in ns (a recording "
	 "made with --off-cpu)",
	 OPT_FN(set_view), .in = 1},
	{0, "metrics", "summary|all|none",
	 "the text's system metrics: summary (default: the CPUs, the busiest processes, the GPUs), "
	 "all (every series of every process; why GPU metrics are missing), none",
	 OPT_FN(parse_metrics), .in = 1},
	{0, "event", "NAME",
	 "only event NAME's samples (a recording of perch record -e A,B; without it the text report "
	 "shows each event in turn, and the other formats need it)",
	 OPT_STR(event), .in = 1},
};

const struct cli_command cli_report = {
	.name = "report",
	.run = run_report,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(report_rows),
			.flags = "",
			.lines = (const char *const[]){"[FILE]", NULL},
			.summary = "a recording (default perch.data) as a text report or an export",
			.about =
				"The text report: the call tree (bounded under recursion), the top functions "
				"by self and by total, regions, GPU kernels, off-CPU time and system metrics, "
				"each saying which view its numbers come from. The other formats are files "
				"for other tools.",
		},
};
