// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perch's command line: `perch record` and `perch report`. The only file that exits; every
 * other part returns an error and has printed its one line.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "record/record.h"
#include "format/recording.h"
#include "report/report.h"
#include "symcmd.h"

#define DEFAULT_FREQ 997 /* a prime: ticks don't lock step with periodic work */

static const char usage_text[] =
	"usage: perch record [-F HZ] [-o FILE] [-q] [--unwind=MODE] -- CMD [ARGS...]\n"
	"       perch record [-F HZ] [-o FILE] [-q] [--unwind=MODE] -p PID[,PID...] [-d SECONDS]\n"
	"       perch report [--format=FMT] [--region=NAME] [--min-percent=N] [--top=N]\n"
	"                    [--lines] [--no-demangle] [FILE]\n"
	"       perch symbolize -e FILE [-i] [--no-demangle] [ADDR...]\n"
	"\n"
	"record options:\n"
	"  -F, --freq=HZ        samples per second per CPU (default 997)\n"
	"  -o, --output=FILE    recording file (default perch.data)\n"
	"  -p, --pid=PID,...    attach to running processes (and children they fork)\n"
	"  -d, --duration=SEC   stop after SEC seconds (attach mode; launch: terminate CMD)\n"
	"  -q, --quiet          no summary when recording ends\n"
	"      --no-lines       no source lines or inline frames (skips reading DWARF)\n"
	"      --unwind=MODE    user stacks: auto (default: in the kernel from .eh_frame tables,\n"
	"                       frame pointers where a module has none), dwarf (tables only), fp\n"
	"  -v, --verbose        debug output (twice: libbpf debug)\n"
	"report options:\n"
	"  --format=FMT         text (default), folded (flamegraph.pl, speedscope; regions lead\n"
	"                       the stacks as region:NAME) or csv (per region and thread: calls,\n"
	"                       total, self, mean, min, max in seconds, samples, size), stats\n"
	"                       (\"key value\" lines: every count the recording holds)\n"
	"  --region=NAME        only the samples taken inside region NAME (at any depth)\n"
	"  --min-percent=N      hide call-tree nodes below N% of samples (default 0.5)\n"
	"  --top=N              rows in the top-functions tables (default 20)\n"
	"  --lines              one entry per source line (function (file:line)), not per function\n"
	"  --no-demangle        show C++ names as the binary spells them\n";

static int bad_option(char **argv)
{
	return log_usage(NULL, "unknown option '%s'", argv[optind - 1]);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *out == 0 || *out > max || s[0] == '-' ? -EINVAL : 0;
}

static int parse_pids(const char *s, pid_t **pids, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	unsigned long v;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *t;

		if (parse_uint(tok, INT_MAX, &v))
			goto err_out;
		t = realloc(*pids, (*n + 1) * sizeof(*t));
		if (!t)
			goto err_out;
		*pids = t;
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(copy);
	return *n ? 0 : -EINVAL;
err_out:
	free(copy);
	return -EINVAL;
}

/* What `perch record` prints when the recording is complete: read back from the file, so the
 * summary is what `perch report` would say. */
static void print_summary(const char *path)
{
	struct recording *r = NULL;
	int err = recording__load(path, &r);

	if (r)
		report__summary(r, path, stderr);
	else
		log_warn("cannot read back %s: %s", path, strerror(-err));
	recording__free(r);
}

static int cmd_record(int argc, char **argv)
{
	bool complete;
	static const struct option longopts[] = {
		{"freq", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"quiet", no_argument, NULL, 'q'},
		{"no-lines", no_argument, NULL, 'L'},
		{"unwind", required_argument, NULL, 'U'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct record_opts o = {.sz = sizeof(o), .freq = DEFAULT_FREQ, .output = "perch.data"};
	pid_t *pids = NULL;
	unsigned long v;
	char *end;
	int c, ret;

	while ((c = getopt_long(argc, argv, "+F:o:p:d:qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (parse_uint(optarg, 100000, &v))
				return log_usage(NULL, "bad frequency '%s'", optarg);
			o.freq = v;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (parse_pids(optarg, &pids, &o.npids))
				return log_usage(NULL, "bad PID list '%s'", optarg);
			break;
		case 'd':
			o.duration_s = strtod(optarg, &end);
			if (*end || end == optarg || !(o.duration_s > 0))
				return log_usage(NULL, "bad duration '%s'", optarg);
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'L':
			o.no_lines = true;
			break;
		case 'U':
			if (!strcmp(optarg, "auto"))
				o.unwind = RECORD_UNWIND_AUTO;
			else if (!strcmp(optarg, "fp"))
				o.unwind = RECORD_UNWIND_FP;
			else if (!strcmp(optarg, "dwarf"))
				o.unwind = RECORD_UNWIND_DWARF;
			else
				return log_usage(NULL, "unknown unwind mode '%s' (fp, dwarf, auto)",
						 optarg);
			break;
		case 'v':
			log_set_verbose(log_verbose() + 1);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (!o.argv == !o.npids)
		return log_usage(NULL, "%s",
				 o.argv ? "give either -p PID or a command, not both"
					: "nothing to record: give -- CMD or -p PID");
	o.pids = pids;
	ret = record__run(&o, &complete);
	free(pids);
	if (complete && !o.quiet)
		print_summary(o.output);
	return ret;
}

static int load_error(const char *path, int err)
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

static int report_damage(const char *path, const struct recording *r, int err)
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

static int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"min-percent", required_argument, NULL, 'm'},
		{"top", required_argument, NULL, 't'},
		{"lines", no_argument, NULL, 'l'},
		{"no-demangle", no_argument, NULL, 'D'},
		{"region", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct report_opts o = {.sz = sizeof(o), .min_percent = 0.5, .top = 20};
	struct recording *r = NULL;
	const char *path = "perch.data";
	unsigned long v;
	char *end;
	int c, err, ret = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (!strcmp(optarg, "text"))
				o.format = REPORT_TEXT;
			else if (!strcmp(optarg, "folded"))
				o.format = REPORT_FOLDED;
			else if (!strcmp(optarg, "csv"))
				o.format = REPORT_CSV;
			else if (!strcmp(optarg, "stats"))
				o.format = REPORT_STATS;
			else
				return log_usage(NULL,
						 "unknown format '%s' (text, folded, csv, stats)",
						 optarg);
			break;
		case 'm':
			o.min_percent = strtod(optarg, &end);
			if (*end || end == optarg || o.min_percent < 0 || o.min_percent > 100)
				return log_usage(NULL, "bad --min-percent '%s'", optarg);
			break;
		case 't':
			if (parse_uint(optarg, 1000000, &v))
				return log_usage(NULL, "bad --top '%s'", optarg);
			o.top = v;
			break;
		case 'l':
			o.lines = true;
			break;
		case 'D':
			o.no_demangle = true;
			break;
		case 'r':
			o.region = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return bad_option(argv);
		}
	}
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return log_usage(NULL, "unexpected argument '%s'", argv[optind]);
	err = recording__load(path, &r);
	if (!r)
		return load_error(path, err);
	if (o.region && (ret = unknown_region(r, path, o.region))) {
		recording__free(r);
		return ret;
	}
	if (report__print(r, path, &o, stdout))
		ret = PERCH_EXIT_INTERNAL;
	fflush(stdout);
	if (err)
		ret = report_damage(path, r, err);
	recording__free(r);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	opterr = 0;
	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		fputs(usage_text, cmd ? stdout : stderr);
		return cmd ? 0 : PERCH_EXIT_USAGE;
	}
	if (!strcmp(cmd, "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(cmd, "symbolize"))
		return symcmd__run(argc - 1, argv + 1);
	return log_usage(NULL, "unknown command '%s' (record, report, symbolize)", cmd);
}
