// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record`: its options into struct record_opts, the run (record/), and the summary it
 * prints when the recording is complete.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "format/events.h"
#include "record/cpulist.h"
#include "record/gpu.h"
#include "record/record.h"
#include "record/steps.h"
#include "record/targets.h"
#include "format/recording.h"
#include "report/report.h"

#define DEFAULT_FREQ  997 /* a prime: ticks don't lock step with periodic work */
#define PERF_MAX_RATE "/proc/sys/kernel/perf_event_max_sample_rate" /* -F max */

#define DEFAULT_OFF_CPU_MIN_US 100 /* --off-cpu-min */

#define HELP_DONE (-1) /* --help was printed: exit 0 */

static void record_options(FILE *out)
{
	fputs("record options:\n"
	      "  -F, --freq=HZ        samples per second per CPU (default 997); max: the kernel's\n"
	      "                       highest (/proc/sys/kernel/perf_event_max_sample_rate)\n"
	      "  -c, --count=PERIOD   one sample every PERIOD events (nanoseconds for a clock)\n"
	      "                       instead of -F HZ\n"
	      "  -e, --event=EV,...   sample on these events (repeatable): cpu-clock (default;\n"
	      "                       cycles where the machine has a PMU), task-clock,\n"
	      "                       page-faults, minor-faults, major-faults, context-switches,\n"
	      "                       cpu-migrations, cycles, instructions (these two need a PMU);\n"
	      "                       clocks at -F HZ, the others every event (-c 1) by default\n"
	      "  -o, --output=FILE    recording file (default perch.data)\n"
	      "  -p, --pid=PID,...    attach to running processes (and children they fork)\n"
	      "  -a, --all-cpus       system-wide: every process, kernel threads and idle too;\n"
	      "                       with -- CMD, until CMD exits; alone, until -d or Ctrl-C\n"
	      "  -C, --cpu=LIST       sample only on these CPUs (\"0,2-3\"); alone, implies -a\n"
	      "  -d, --duration=SEC   stop after SEC seconds (attach mode; launch: terminate CMD\n"
	      "                       with SIGTERM; perch then exits 0, \"stopped after -d\")\n"
	      "  -D, --delay=SEC      start sampling SEC seconds after CMD starts (or the attach);\n"
	      "                       the targets run meanwhile, unsampled\n"
	      "      --max-duration=SEC  stop sampling for good after SEC seconds; a launched CMD\n"
	      "                       runs on to its end (the recording says where it stopped)\n"
	      "      --control=fifo:CTL[,ACK]  pause and resume through a FIFO, as perf's: the lines\n"
	      "                       'disable', 'enable' (and 'ping'), each answered 'ack' on ACK;\n"
	      "                       SIGUSR1 pauses a recording too, SIGUSR2 resumes it\n"
	      "  -q, --quiet          no summary when recording ends\n"
	      "      --no-lines       no source lines or inline frames (skips reading DWARF)\n"
	      "      --unwind=MODE    user stacks: auto (default: in the kernel from .eh_frame "
	      "tables,\n"
	      "                       frame pointers where a module has none), dwarf (tables "
	      "only), fp\n"
	      "      --call-graph=MODE  the same as --unwind (perf's spelling: fp, dwarf)\n"
	      "  -g                   perf's \"record call graphs\": perch always does (accepted)\n"
	      "      --timeline       every sample's time and thread, every region begin, end and\n"
	      "                       mark (grows with the run; see --max-size)\n"
	      "      --max-size=SIZE  cap the bytes the timeline adds to the file (K, M, G\n"
	      "                       suffixes): past it, sample times and spans are dropped, "
	      "counted;\n"
	      "                       without --timeline: cap the file, sampling stops for good\n"
	      "                       there (checked every 100 ms drain)\n"
	      "      --gpu            CUDA kernels, copies and syncs of CMD (CUPTI, through perch's\n"
	      "                       injection library), joined to the calls that launched them\n"
	      "                       (with -p: launches, copies and memsets counted from uprobes on\n"
	      "                       the process's libcuda.so, with their stacks; no durations);\n"
	      "                       on by itself when CMD links CUDA (libcuda, libcudart)\n"
	      "      --no-gpu         not even when CMD links CUDA\n"
	      "      --gpu-stacks=MODE  the CPU stack of a launch: site (default: once per call\n"
	      "                       site, later calls attributed to it), every (each call)\n"
	      "      --metrics=MS     system metrics every MS milliseconds (default 100, at least\n"
	      "                       100): CPU busy per CPU; the targets' CPU user/system, RSS,\n"
	      "                       faults, context switches, bytes read and written; GPU\n"
	      "                       utilization and memory through NVML; --metrics=off: none\n"
	      "      --off-cpu        also the time target threads spend off the CPU (blocked or\n"
	      "                       preempted), with the stacks they left it with (report\n"
	      "                       --view=off|wall); with --timeline each block is also a\n"
	      "                       timed span (chrome slices, speedscope evented profiles)\n"
	      "      --off-cpu-min=US  leave out blocks shorter than US microseconds (default 100)\n"
	      "      --steps=A[:B]    record only steps A to B of a program that marks them with\n"
	      "                       perch_step(n) (perch.h): nothing before step A starts; the\n"
	      "                       recording ends when step B ends (a launched CMD runs on)\n"
	      "      --only-region=NAME  count only ticks whose thread is inside region NAME\n"
	      "                       (decided in the kernel; NAME may register later)\n"
	      "  -v, --verbose        debug output (twice: libbpf debug)\n",
	      out);
}

/* --off-cpu (O), --off-cpu-min=US (m). */
static int off_cpu_option(int c, struct record_opts *o)
{
	char *end;
	double us;

	if (c == 'O') {
		o->off_cpu = true;
		return 0;
	}
	us = strtod(optarg, &end);
	if (*end || end == optarg || !(us >= 0) || us > 1e9)
		return log_usage(NULL, "bad --off-cpu-min '%s' (microseconds)", optarg);
	o->off_cpu_min_ns = (uint64_t)(us * 1000);
	return 0;
}

int cli_parse_pids(const char *s, pid_t **pids, size_t *n)
{
	char *copy = strdup(s), *save = NULL;
	unsigned long v;
	size_t cap = *n;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cli_parse_uint(tok, INT_MAX, &v) ||
		    vec_grow(pids, &cap, *n + 1, sizeof(**pids), 4))
			goto err_out;
		(*pids)[(*n)++] = (pid_t)v;
	}
	free(copy);
	return *n ? 0 : -EINVAL;
err_out:
	free(copy);
	return -EINVAL;
}

/* SIZE with an optional K, M or G (powers of 1024) suffix; more than 0. */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMG";
	size_t n = strlen(s);
	unsigned int shift = 0;
	unsigned long v;
	const char *u;
	char num[32];

	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	u = strchr(units, toupper((unsigned char)s[n - 1]));
	if (u && *u) {
		shift = 10 * (unsigned int)(u - units + 1);
		num[n - 1] = '\0';
	}
	if (cli_parse_uint(num, ULONG_MAX >> shift, &v) || !v)
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_parse_unwind(const char *s, enum record_unwind *mode)
{
	if (!strcmp(s, "auto"))
		*mode = RECORD_UNWIND_AUTO;
	else if (!strcmp(s, "fp"))
		*mode = RECORD_UNWIND_FP;
	else if (!strcmp(s, "dwarf"))
		*mode = RECORD_UNWIND_DWARF;
	else
		return -EINVAL;
	return 0;
}

/* A number of seconds, finite, more than 0 (or 0 too, with zero_ok). 0 or the usage status. */
static int parse_seconds(const char *s, const char *opt, bool zero_ok, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*end || end == s || !(v >= 0 && v < 1e9) || (!zero_ok && v == 0))
		return log_usage(NULL, "bad %s '%s' (seconds, %s)", opt, s,
				 zero_ok ? "0 or more" : "more than 0");
	*out = v;
	return 0;
}

/* -e: the events named, as the table spells them (static strings). */
struct event_choice {
	const char *names[REC_EVENTS_MAX];
	size_t n;
	bool freq_max; /* -F max */
};

/* The options that do not go into record_opts. */
struct gpu_choice {
	bool off;	    /* --no-gpu */
	const char *stacks; /* --gpu-stacks */
	struct event_choice events;
};

/* --gpu-stacks=MODE: the injection library reads it from the environment CMD inherits. */
static int gpu_stacks(struct gpu_choice *g, const char *mode)
{
	if (strcmp(mode, "site") && strcmp(mode, "every"))
		return log_usage(NULL, "unknown --gpu-stacks mode '%s' (site, every)", mode);
	g->stacks = mode;
	return 0;
}

/* One option c (getopt's) into o; 0, HELP_DONE, or the exit status after a usage line. */
/* --metrics: off, or a period in ms ("250" or "250ms"), from the drain period up to an hour. */
static int parse_metrics(const char *s, unsigned int *ms)
{
	unsigned long v;
	char *end;

	if (!strcmp(s, "off")) {
		*ms = 0;
		return 0;
	}
	errno = 0;
	v = strtoul(s, &end, 10);
	if (end != s && *s != '-' && !errno && (!*end || !strcmp(end, "ms")) && v >= 100 &&
	    v <= 3600000) {
		*ms = (unsigned int)v;
		return 0;
	}
	return log_usage(NULL,
			 "bad --metrics value '%s' (off, or milliseconds from 100 to 3600000)", s);
}

/* -e EV,...: each name checked, kept as the table spells it. */
static int parse_events(const char *s, struct event_choice *e)
{
	char *copy = strdup(s), *save = NULL;
	int ret = 0;

	if (!copy)
		return PERCH_EXIT_INTERNAL;
	for (char *t = strtok_r(copy, ",", &save); !ret && t; t = strtok_r(NULL, ",", &save)) {
		const struct rec_event_def *d = rec_event_find(t);

		if (!d)
			ret = log_usage(NULL, "unknown event '%s' (%s)", t, rec_event_names());
		else if (e->n == REC_EVENTS_MAX)
			ret = log_usage(NULL, "at most %d events at once", REC_EVENTS_MAX);
		else
			e->names[e->n++] = d->name;
	}
	free(copy);
	if (!ret && !e->n)
		ret = log_usage(NULL, "bad event list '%s'", s);
	return ret;
}

/* -C LIST: against the machine's CPUs. */
static int check_cpus(const char *list)
{
	int n = cpulist_ncpus(), err;
	bool *set;

	if (n <= 0)
		return PERCH_EXIT_INTERNAL;
	set = calloc(n, sizeof(*set));
	if (!set)
		return PERCH_EXIT_INTERNAL;
	err = cpulist_parse(list, n, set);
	free(set);
	if (err == -ERANGE)
		return log_usage(NULL, "bad CPU list '%s': this machine has CPUs 0-%d", list,
				 n - 1);
	if (err)
		return log_usage(NULL, "bad CPU list '%s' (e.g. 0,2-3)", list);
	return 0;
}

/* -F HZ, or -F max: the highest frequency the kernel allows (as perf reads it). */
static int parse_freq(const char *s, struct record_opts *o, struct event_choice *e)
{
	unsigned long v;
	FILE *f;

	if (!strcmp(s, "max")) {
		f = fopen(PERF_MAX_RATE, "r");
		if (!f || fscanf(f, "%lu", &v) != 1 || !v || v > UINT32_MAX)
			v = 0;
		if (f)
			fclose(f);
		if (!v)
			return log_usage(NULL, "-F max: cannot read %s", PERF_MAX_RATE);
		e->freq_max = true;
	} else if (cli_parse_uint(s, 100000, &v)) {
		return log_usage(NULL, "bad frequency '%s' (1 to 100000, or max)", s);
	}
	o->freq = v;
	o->freq_given = true;
	return 0;
}

/* -a, -C, -e, -c, -F, -g: the perf user's options. */
static int perf_option(int c, struct record_opts *o, struct event_choice *e)
{
	unsigned long v;

	switch (c) {
	case 'F':
		return parse_freq(optarg, o, e);
	case 'g':
		return 0; /* perf's "record call graphs": perch always does (--call-graph: how) */
	case 'a':
		o->all_cpus = true;
		return 0;
	case 'C':
		o->cpus = optarg;
		return check_cpus(optarg);
	case 'e':
		return parse_events(optarg, e);
	default: /* 'c' */
		if (cli_parse_uint(optarg, ULONG_MAX, &v) || !v)
			return log_usage(NULL, "bad -c period '%s' (events per sample, 1 or more)",
					 optarg);
		o->period = v;
		return 0;
	}
}

static int record_option(int c, struct record_opts *o, struct gpu_choice *g, pid_t **pids,
			 char **argv)
{
	char *end;

	switch (c) {
	case 'a':
	case 'C':
	case 'e':
	case 'c':
	case 'F':
	case 'g':
		return perf_option(c, o, &g->events);
	case 'o':
		o->output = optarg;
		return 0;
	case 'p':
		if (cli_parse_pids(optarg, pids, &o->npids))
			return log_usage(NULL, "bad PID list '%s'", optarg);
		return 0;
	case 'd':
		o->duration_s = strtod(optarg, &end);
		if (*end || end == optarg || !(o->duration_s > 0))
			return log_usage(NULL, "bad duration '%s'", optarg);
		return 0;
	case 'D':
		return parse_seconds(optarg, "--delay", true, &o->delay_s);
	case 'M':
		return parse_seconds(optarg, "--max-duration", false, &o->max_duration_s);
	case 'x':
		o->control = optarg;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'L':
		o->no_lines = true;
		return 0;
	case 'U':
		if (cli_parse_unwind(optarg, &o->unwind))
			return log_usage(NULL, "unknown unwind mode '%s' (fp, dwarf, auto)",
					 optarg);
		return 0;
	case 'G':
		o->gpu = true;
		return 0;
	case 'N':
		g->off = true;
		return 0;
	case 'K':
		return gpu_stacks(g, optarg);
	case 'T':
		o->timeline = true;
		return 0;
	case 'Y':
		return parse_metrics(optarg, &o->metrics_ms);
	case 'S':
		if (parse_size(optarg, &o->max_size))
			return log_usage(NULL, "bad size '%s' (a number, optionally K, M or G)",
					 optarg);
		return 0;
	case 'O':
	case 'm':
		return off_cpu_option(c, o);
	case 'W':
		if (steps_parse(optarg, &o->steps_first, &o->steps_last))
			return log_usage(NULL, "bad --steps '%s' (A or A:B, step numbers, A <= B)",
					 optarg);
		o->steps = true;
		return 0;
	case 'R':
		if (!*optarg)
			return log_usage(NULL, "--only-region needs a region name");
		o->only_region = optarg;
		return 0;
	case 'v':
		log_set_verbose(log_verbose() + 1);
		return 0;
	case 'h':
		cli_usage(stdout);
		return HELP_DONE;
	default:
		return cli_bad_option(argv);
	}
}

/* pid's children, as "A, B, ..." into buf (the first few; /proc/PID/task/TID/children); false
 * when it has none. */
static bool children_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t used = 0;
	unsigned long child;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	buf[0] = '\0';
	while (used + 24 < len && fscanf(f, "%lu", &child) == 1)
		used += (size_t)snprintf(buf + used, len - used, "%s%lu", used ? ", " : "", child);
	fclose(f);
	return used > 0;
}

/* The samples the recording holds. */
static uint64_t sampled_of(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].count;
	return n;
}

/* -p on a process that took no tick: perch follows the threads of the PIDs given, not the
 * children they started (as perf record -p), so an idle parent of busy children says so. */
static void hint_idle_pids(const struct record_opts *o, const struct recording *r)
{
	char kids[256];

	if (!o->npids || sampled_of(r) != 0)
		return;
	for (size_t i = 0; i < o->npids; i++) {
		if (children_of(o->pids[i], kids, sizeof(kids)))
			fprintf(stderr,
				"perch: note: no samples: %d was idle; -p follows its threads, not the "
				"processes it started (%s): give their PIDs, or -a\n",
				(int)o->pids[i], kids);
	}
}

/* --only-region=NAME and not one sample in it (a name the program never used, or a region it
 * never entered while perch sampled): said even with -q, as an empty recording is no answer. */
static void warn_empty_region(const struct record_opts *o, const struct recording *r)
{
	if (o->only_region && sampled_of(r) == 0)
		log_warn(
			"--only-region=%s: no sample fell in region '%s' (the recording holds none)",
			o->only_region, o->only_region);
}

/* What `perch record` prints when the recording is complete: read back from the file, so the
 * summary is what `perch report` would say (with -q, only the warnings). */
static void print_summary(const struct record_opts *o, const char *path)
{
	struct recording *r = NULL;
	int err = recording__load(path, &r);
	uint32_t n = r && !o->quiet ? report__nevents(r) : 0;

	if (r && n == 1)
		report__summary(r, path, stderr);
	else if (!r)
		log_warn("cannot read back %s: %s", path, strerror(-err));
	/* perch record -e A,B: each event's summary in turn, from the one load */
	for (uint32_t ev = 0; r && n > 1 && ev < n; ev++)
		report__summary_of(r, path, ev + 1, stderr);
	if (r && !o->quiet)
		hint_idle_pids(o, r);
	if (r)
		warn_empty_region(o, r);
	recording__free(r);
}

/* --gpu by itself when the command links CUDA and this perch has the injection library; the
 * --gpu-stacks mode for the library. 0, or the exit status. */
static int gpu_choose(struct record_opts *o, const struct gpu_choice *g)
{
	char lib[PATH_MAX];

	if (!o->gpu && !g->off && o->argv && targets__links_cuda(o->argv[0])) {
		o->gpu = !gpu_find_library(lib, sizeof(lib));
		if (!o->quiet && o->gpu)
			fprintf(stderr,
				"perch: note: %s links CUDA: --gpu is on (--no-gpu turns it "
				"off)\n",
				o->argv[0]);
		else if (!o->quiet)
			fprintf(stderr,
				"perch: note: %s links CUDA, but this perch was built "
				"without libperch_cuda.so: no GPU data\n",
				o->argv[0]);
	}
	if (g->stacks && gpu_set_stacks(g->stacks))
		return PERCH_EXIT_INTERNAL;
	return 0;
}

/* -a, -C, -e, -c together with the rest. */
static int check_perf_options(struct record_opts *o, const struct event_choice *e)
{
	if (o->period && o->freq_given)
		return log_usage(NULL, "give either -F HZ or -c PERIOD, not both");
	if (o->cpus && !o->argv && !o->npids)
		o->all_cpus = true; /* perf's rule: -C alone is system-wide on those CPUs */
	if (o->all_cpus && o->npids)
		return log_usage(NULL, "give either -a or -p PID, not both");
	o->events = e->n ? e->names : NULL;
	o->nevents = e->n;
	if (e->freq_max && !o->quiet) /* as perf says it */
		fprintf(stderr, "perch: info: -F max: the kernel's maximum, %u Hz (%s)\n", o->freq,
			PERF_MAX_RATE);
	return 0;
}

static int run_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"freq", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"pid", required_argument, NULL, 'p'},
		{"duration", required_argument, NULL, 'd'},
		{"delay", required_argument, NULL, 'D'},
		{"max-duration", required_argument, NULL, 'M'},
		{"control", required_argument, NULL, 'x'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"cpu", required_argument, NULL, 'C'},
		{"event", required_argument, NULL, 'e'},
		{"count", required_argument, NULL, 'c'},
		{"call-graph", required_argument, NULL, 'U'},
		{"quiet", no_argument, NULL, 'q'},
		{"no-lines", no_argument, NULL, 'L'},
		{"unwind", required_argument, NULL, 'U'},
		{"timeline", no_argument, NULL, 'T'},
		{"max-size", required_argument, NULL, 'S'},
		{"metrics", required_argument, NULL, 'Y'},
		{"gpu", no_argument, NULL, 'G'},
		{"no-gpu", no_argument, NULL, 'N'},
		{"gpu-stacks", required_argument, NULL, 'K'},
		{"off-cpu", no_argument, NULL, 'O'},
		{"off-cpu-min", required_argument, NULL, 'm'},
		{"steps", required_argument, NULL, 'W'},
		{"only-region", required_argument, NULL, 'R'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	struct record_opts o = {.sz = sizeof(o),
				.freq = DEFAULT_FREQ,
				.output = "perch.data",
				.metrics_ms = 100,
				.off_cpu_min_ns = DEFAULT_OFF_CPU_MIN_US * 1000};
	struct gpu_choice g = {0};
	pid_t *pids = NULL;
	struct record_result res;
	int c, ret = 0;

	while (!ret &&
	       (c = getopt_long(argc, argv, "+F:o:p:d:D:aC:e:c:gqvh", longopts, NULL)) != -1)
		ret = record_option(c, &o, &g, &pids, argv);
	if (!ret && optind < argc)
		o.argv = argv + optind;
	if (!ret)
		ret = check_perf_options(&o, &g.events);
	if (!ret && g.off && o.gpu)
		ret = log_usage(NULL, "give either --gpu or --no-gpu, not both");
	if (!ret)
		ret = gpu_choose(&o, &g);
	if (!ret && !o.all_cpus && !o.argv == !o.npids)
		ret = log_usage(NULL, "%s",
				o.argv ? "give either -p PID or a command, not both"
				       : "nothing to record: give -- CMD or -p PID");
	if (ret) {
		free(pids);
		return ret == HELP_DONE ? 0 : ret;
	}
	o.pids = pids;
	ret = record__run(&o, &res);
	if (res.complete && (!o.quiet || o.only_region))
		print_summary(&o, o.output);
	free(pids);
	if (res.duration_stopped)
		fprintf(stderr, "perch: %s stopped after -d %g s (exit status 0)\n", o.argv[0],
			o.duration_s);
	return ret;
}

const struct cli_command cli_record = {
	.name = "record",
	.run = run_record,
	.synopsis =
		"perch record [-F HZ] [-o FILE] [-q] [-v] [--no-lines] [--unwind=MODE] [--timeline] "
		"[--max-size=SIZE] [--gpu|--no-gpu] [--gpu-stacks=MODE] [-d SEC] [-D SEC] "
		"[-a] [-C CPUS] [-e EVENT,...] [-c PERIOD] [-g] [--call-graph=fp|dwarf] "
		"[--max-duration=SEC] [--control=fifo:CTL[,ACK]] [--metrics=MS|off] "
		"[--off-cpu [--off-cpu-min=US]] -- CMD [ARGS...]\n"
		"perch record [-F HZ] [-o FILE] [-q] [-v] [--no-lines] [--unwind=MODE] [--timeline] "
		"[--max-size=SIZE] [--gpu] [-D SEC] [--max-duration=SEC] "
		"[--control=fifo:CTL[,ACK]] [--metrics=MS|off] [--off-cpu [--off-cpu-min=US]] "
		"-p PID[,PID...] [-d SEC]\n"
		"perch record -a [-C CPUS] [-e EVENT,...] [-c PERIOD | -F HZ] [-d SEC] [options]\n",
	.options = record_options,
};
