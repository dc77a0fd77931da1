// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch report [FILE]`: its options, the output picked by name from report/'s table, and the
 * exit status a missing, foreign, damaged or cut recording gets.
 */
#include <errno.h>
#include <getopt.h>
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

#define HELP_DONE  (-1) /* --help was printed: exit 0 */
#define HELP_COL   23	/* where the option texts start */
#define HELP_WIDTH 88	/* the widest line of help */

/* text from column HELP_COL on (where the caller is), wrapped at HELP_WIDTH. */
static void put_wrapped(const char *text, FILE *out)
{
	size_t col = HELP_COL;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (col > HELP_COL && col + 1 + len > HELP_WIDTH) {
			fprintf(out, "\n%*s", HELP_COL, "");
			col = HELP_COL;
		} else if (col > HELP_COL) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)len, text);
		col += len;
		text += len + (text[len] == ' ');
	}
	fputc('\n', out);
}

/* --format: every output of report/'s table with its help, "A (..), B (..) or C (..)". */
static void format_help(FILE *out)
{
	char text[2048];
	size_t len = 0;

	for (int i = 0; i < REPORT_NR && len < sizeof(text); i++) {
		const char *sep = !i ? "" : i + 1 < REPORT_NR ? ", " : " or ";

		len += snprintf(text + len, sizeof(text) - len, "%s%s %s", sep,
				report_outputs[i].name, report_outputs[i].help);
	}
	fprintf(out, "%-*s", HELP_COL, "  --format=FMT");
	put_wrapped(text, out);
}

static void report_options(FILE *out)
{
	fputs("report options:\n", out);
	format_help(out);
	fputs("  --region=NAME        only the samples taken inside region NAME (at any depth)\n"
	      "  --min-percent=N      hide call-tree nodes below N% of samples (default 0.5)\n"
	      "  --top=N              rows in the top-functions tables (default 20)\n"
	      "  --lines              one entry per source line (function (file:line)), not per "
	      "function\n"
	      "  --no-demangle        show C++ names as the binary spells them\n"
	      "  --inline             code inlined into a function is its own function, which takes\n"
	      "                       the self time (the default)\n"
	      "  --no-inline          each frame is its out-of-line function alone, which takes the\n"
	      "                       self time of code inlined into it (perf report --no-inline);\n"
	      "                       the recording keeps the inline chains for --inline\n"
	      "  -o, --output=FILE    write the report to FILE (default: standard output)\n"
	      "  -i, --input=FILE     the recording (as FILE alone; default perch.data)\n"
	      "queries (fble's; every format's samples and call trees, not the region times or GPU\n"
	      "tables; F is a function's name as the report prints it, exactly, or /REGEX/ (POSIX\n"
	      "extended, matched anywhere in the name); F,G a list; applied in the order given, each\n"
	      "repeatable; a name no function has is an error, exit 64):\n"
	      "  --select=F[,G]       keep the samples whose stack holds every one of F, G\n"
	      "  --exclude=F[,G]      drop the samples whose stack holds any of F, G\n"
	      "  --fold=F[,G]         remove F's frames from each stack (its self goes to its caller;\n"
	      "                       a stack left empty is \"[folded]\")\n"
	      "  --callers=F          instead of the report, F's callers (\"going in\": samples holding\n"
	      "                       the edge caller->F, each once) as text or --format=csv\n"
	      "  --callees=F          the same for F's callees (F->callee, and F's self)\n"
	      "  --merge-chains=P     call tree: show a node whose callee holds >= P% of its samples\n"
	      "                       as one row \"a > b\"\n"
	      "  --sort=KEYS          perf's: comm, pid, tid (each once, in any order) then function:\n"
	      "                       the keys go on top of the call tree, the top tables and\n"
	      "                       folded's stacks (rows per keys, and function when listed);\n"
	      "                       dso (after the keys): the top tables per module (self: the\n"
	      "                       leaf is in it; total: a frame is); dso,sym: per function\n"
	      "                       (sym: function); self or total: only the top table by self,\n"
	      "                       or by total\n"
	      "  --children, --no-children\n"
	      "                       perf's: --sort=total, --sort=self\n"
	      "  --stdio              perf's: the text report (the default)\n"
	      "  --per-thread         --sort=pid,tid,function\n"
	      "  --pid=LIST, --tid=LIST, --comm=NAME[,NAME]\n"
	      "                       keep only the samples of these processes, threads or thread\n"
	      "                       names (every format; with the queries, in any order)\n"
	      "  --view=cpu|off|wall  what the samples weigh: on-CPU ticks (default), off-CPU\n"
	      "                       time, or both in ns (a recording made with --off-cpu)\n"
	      "  --metrics=WHICH      the text's system metrics: summary (default: the CPUs, the\n"
	      "                       busiest processes, the GPUs), all (every series of every\n"
	      "                       process; why GPU metrics are missing), none\n"
	      "  --event=NAME         only event NAME's samples (a recording of perch record -e A,B;\n"
	      "                       without it the text report shows each event in turn, and the\n"
	      "                       other formats need it)\n",
	      out);
}

/* --event=NAME, the one option that names what only the loaded recording can resolve. */
static const char *event_arg;

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

/* A query option: c is its getopt code, one of "SXFCE". */
static int query_option(int c, struct report_opts *o)
{
	static const char codes[] = "SXFCE";
	static const char *const names[] = {"select", "exclude", "fold", "callers", "callees"};
	enum query_kind kind = (enum query_kind)(strchr(codes, c) - codes);
	int err;

	if (!o->query && !(o->query = query__new()))
		return log_usage(NULL, "out of memory");
	err = query__add(o->query, kind, optarg);
	if (err == -ENOMEM)
		return log_usage(NULL, "out of memory");
	if (err)
		return log_usage(NULL, "bad --%s '%s': %s", names[kind], optarg,
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
static int parse_sort(const char *arg, struct report_opts *o)
{
	struct report_opts s = {.sort = REPORT_SORT_BOTH};

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
static int parse_metrics(const char *s, struct report_opts *o)
{
	static const char *const names[] = {[REPORT_METRICS_SUMMARY] = "summary",
					    [REPORT_METRICS_ALL] = "all",
					    [REPORT_METRICS_NONE] = "none"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			o->metrics = (enum report_metrics)i;
			return 0;
		}
	}
	return log_usage(NULL, "bad --metrics '%s' (summary, all or none)", s);
}

/* perf report's spellings: --stdio (the text report: perch's default output), --children
 * (order by total: the top table by total) and --no-children (by self: the table by self). */
static int perf_report_option(int c, struct report_opts *o)
{
	if (c == 's')
		o->format = REPORT_TEXT;
	else
		o->sort = c == 'c' ? REPORT_SORT_TOTAL : REPORT_SORT_SELF;
	return 0;
}

/* --merge-chains=P and --sort. */
static int tree_option(int c, struct report_opts *o)
{
	char *end;

	if (c == 'O')
		return parse_sort(optarg, o);
	o->merge_chains = strtod(optarg, &end);
	if (*end || end == optarg || !(o->merge_chains > 0 && o->merge_chains <= 100))
		return log_usage(NULL,
				 "bad --merge-chains '%s' (a percentage above 0, at most 100)",
				 optarg);
	return 0;
}

/* --per-thread, and the thread filters --pid, --tid, --comm (c: 'W', 'P', 'T', 'N'). */
static int thread_option(int c, struct report_opts *o)
{
	static const char codes[] = "PTN";
	static const char *const names[] = {"pid", "tid", "comm"};
	enum query_thread_key key;
	int err;

	if (c == 'W') {
		o->keys[0] = PROFILE_KEY_PID;
		o->keys[1] = PROFILE_KEY_TID;
		o->nkeys = 2;
		o->by_function = true;
		return 0;
	}
	key = (enum query_thread_key)(strchr(codes, c) - codes);
	if (!o->query && !(o->query = query__new()))
		return log_usage(NULL, "out of memory");
	err = query__add_thread(o->query, key, optarg);
	if (err == -ENOMEM)
		return log_usage(NULL, "out of memory");
	if (err)
		return log_usage(NULL, "bad --%s '%s': %s", names[key], optarg,
				 query__error(o->query));
	return 0;
}

/* One option c (getopt's) into o (and -o into *output); 0, HELP_DONE, or the exit status after
 * a usage line. */
static int report_option(int c, struct report_opts *o, const char **output, char **argv)
{
	unsigned long v;
	char *end;

	switch (c) {
	case 'f':
		if (parse_format(optarg, &o->format))
			return unknown_format(optarg);
		return 0;
	case 'm':
		o->min_percent = strtod(optarg, &end);
		if (*end || end == optarg || o->min_percent < 0 || o->min_percent > 100)
			return log_usage(NULL, "bad --min-percent '%s'", optarg);
		return 0;
	case 't':
		if (cli_parse_uint(optarg, 1000000, &v))
			return log_usage(NULL, "bad --top '%s'", optarg);
		o->top = v;
		return 0;
	case 'l':
		o->lines = true;
		return 0;
	case 'D':
		o->no_demangle = true;
		return 0;
	case 'n':
		o->no_inline = false;
		return 0;
	case 'U':
		o->no_inline = true;
		return 0;
	case 'r':
		o->region = optarg;
		return 0;
	case 'o':
		*output = optarg;
		return 0;
	case 'S':
	case 'X':
	case 'F':
	case 'C':
	case 'E':
		return query_option(c, o);
	case 'M':
	case 'O':
		return tree_option(c, o);
	case 's':
	case 'c':
	case 'k':
		return perf_report_option(c, o);
	case 'W':
	case 'P':
	case 'T':
	case 'N':
		return thread_option(c, o);
	case 'e':
		event_arg = optarg;
		return 0;
	case 'Y':
		return parse_metrics(optarg, o);
	case 'V':
		if (report__parse_view(optarg, &o->view))
			return log_usage(NULL, "bad --view '%s' (cpu, off or wall)", optarg);
		return 0;
	case 'h':
		cli_usage(stdout);
		return HELP_DONE;
	default:
		return cli_bad_option(argv);
	}
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
			const char *output)
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

/* Load path once and print it as o asks into output (NULL: standard output); the exit status.
 * The recording is only read from then on: every option that chooses or weighs samples makes
 * a sample set of it (report__print()). */
static int report_file(const char *path, const struct report_opts *o, const char *output)
{
	struct recording *loaded = NULL;
	const struct recording *r;
	int err, ret = 0;

	if (o->format == REPORT_PPROF && !output && isatty(STDOUT_FILENO))
		return log_usage(NULL, "--format=pprof is binary: give -o FILE or a pipe");
	err = recording__load(path, &loaded);
	if (!loaded)
		return load_error(path, err);
	r = loaded;
	if ((o->region && (ret = unknown_region(r, path, o->region))) ||
	    (ret = bad_query(r, path, o)) || (ret = check_view(r, path, o->view))) {
		recording__free(loaded);
		return ret;
	}
	ret = print_events(r, path, o, output);
	if (err)
		ret = report_damage(path, r, err);
	recording__free(loaded);
	return ret;
}

static int run_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"min-percent", required_argument, NULL, 'm'},
		{"top", required_argument, NULL, 't'},
		{"lines", no_argument, NULL, 'l'},
		{"no-demangle", no_argument, NULL, 'D'},
		{"inline", no_argument, NULL, 'n'},
		{"no-inline", no_argument, NULL, 'U'},
		{"region", required_argument, NULL, 'r'},
		{"output", required_argument, NULL, 'o'},
		{"select", required_argument, NULL, 'S'},
		{"exclude", required_argument, NULL, 'X'},
		{"fold", required_argument, NULL, 'F'},
		{"callers", required_argument, NULL, 'C'},
		{"callees", required_argument, NULL, 'E'},
		{"merge-chains", required_argument, NULL, 'M'},
		{"sort", required_argument, NULL, 'O'},
		{"view", required_argument, NULL, 'V'},
		{"per-thread", no_argument, NULL, 'W'},
		{"pid", required_argument, NULL, 'P'},
		{"tid", required_argument, NULL, 'T'},
		{"comm", required_argument, NULL, 'N'},
		{"event", required_argument, NULL, 'e'},
		{"metrics", required_argument, NULL, 'Y'},
		{"stdio", no_argument, NULL, 's'},
		{"children", no_argument, NULL, 'c'},
		{"no-children", no_argument, NULL, 'k'},
		{"input", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct report_opts o = {
		.sz = sizeof(o), .min_percent = 0.5, .top = 20, .by_function = true};
	const char *dflt = "perch.data", *path = dflt, *output = NULL;
	int c, ret = 0;

	while (!ret && (c = getopt_long(argc, argv, "hi:o:", longopts, NULL)) != -1) {
		if (c == 'i')
			path = optarg; /* perf's spelling of the positional FILE */
		else
			ret = report_option(c, &o, &output, argv);
	}
	if (!ret && optind < argc && path == dflt)
		path = argv[optind++];
	if (!ret && optind < argc)
		ret = log_usage(NULL, "unexpected argument '%s'", argv[optind]);
	if (!ret)
		ret = focus_format(&o);
	if (!ret)
		ret = report_file(path, &o, output);
	query__free(o.query);
	return ret == HELP_DONE ? 0 : ret;
}

const struct cli_command cli_report = {
	.name = "report",
	.run = run_report,
	.synopsis =
		"perch report [--format=FMT] [--region=NAME] [--min-percent=N] [--top=N]\n"
		"                    [--lines] [--no-demangle] [--inline|--no-inline]\n"
		"                    [--select=F] [--exclude=F] [--fold=F]\n"
		"                    [--callers=F | --callees=F] [--merge-chains=P]\n"
		"                    [--sort=self|total|comm,pid,tid,dso,function|sym] [--per-thread]\n"
		"                    [--children|--no-children] [--stdio]\n"
		"                    [--pid=LIST] [--tid=LIST] [--comm=NAME[,NAME]] [--view=cpu|off|wall]\n"
		"                    [--event=NAME] [--metrics=summary|all|none]\n"
		"                    [-o FILE] [FILE | -i FILE]\n",
	.options = report_options,
};
