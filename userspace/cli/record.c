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
#include "record/gpu/gpu.h"
#include "record/record.h"
#include "record/steps.h"
#include "record/targets.h"
#include "format/recording.h"
#include "report/report.h"

#define DEFAULT_FREQ  997 /* a prime: ticks don't lock step with periodic work */
#define PERF_MAX_RATE "/proc/sys/kernel/perf_event_max_sample_rate" /* -F max */

#define DEFAULT_OFF_CPU_MIN_US 100 /* --off-cpu-min */

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

/* What the options set: record_opts, and what does not go into it. */
struct record_cli {
	struct record_opts o;
	bool gpu_off;	    /* --no-gpu */
	const char *stacks; /* --gpu-stacks */
	struct event_choice events;
	pid_t *pids;
};

/* --gpu-stacks=MODE: the injection library reads it from the environment CMD inherits. */
static int set_gpu_stacks(void *ctx, const struct cli_opt *opt, const char *mode)
{
	(void)opt;
	if (strcmp(mode, "site") && strcmp(mode, "every"))
		return log_usage(NULL, "unknown --gpu-stacks mode '%s' (site, every)", mode);
	((struct record_cli *)ctx)->stacks = mode;
	return 0;
}

/* --metrics: off, or a period in ms ("250" or "250ms"), from the drain period up to an hour. */
static int set_metrics(void *ctx, const struct cli_opt *opt, const char *s)
{
	unsigned int *ms = &((struct record_cli *)ctx)->o.metrics_ms;
	unsigned long v;
	char *end;

	(void)opt;
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
static int set_events(void *ctx, const struct cli_opt *opt, const char *s)
{
	struct event_choice *e = &((struct record_cli *)ctx)->events;
	char *copy = strdup(s), *save = NULL;
	int ret = 0;

	(void)opt;
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
static int set_cpus(void *ctx, const struct cli_opt *opt, const char *list)
{
	int n = cpulist_ncpus(), err;
	bool *set;

	(void)opt;
	((struct record_cli *)ctx)->o.cpus = list;
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
static int set_freq(void *ctx, const struct cli_opt *opt, const char *s)
{
	struct record_opts *o = &((struct record_cli *)ctx)->o;
	struct event_choice *e = &((struct record_cli *)ctx)->events;
	unsigned long v;
	FILE *f;

	(void)opt;
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

/* -c PERIOD. */
static int set_period(void *ctx, const struct cli_opt *opt, const char *arg)
{
	unsigned long v;

	(void)opt;
	if (cli_parse_uint(arg, ULONG_MAX, &v) || !v)
		return log_usage(NULL, "bad -c period '%s' (events per sample, 1 or more)", arg);
	((struct record_cli *)ctx)->o.period = v;
	return 0;
}

static int set_pids(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct record_cli *c = ctx;

	(void)opt;
	if (cli_parse_pids(arg, &c->pids, &c->o.npids))
		return log_usage(NULL, "bad PID list '%s'", arg);
	return 0;
}

static int set_duration(void *ctx, const struct cli_opt *opt, const char *arg)
{
	double *d = &((struct record_cli *)ctx)->o.duration_s;
	char *end;

	(void)opt;
	*d = strtod(arg, &end);
	if (*end || end == arg || !(*d > 0))
		return log_usage(NULL, "bad duration '%s'", arg);
	return 0;
}

/* --delay (val 1: 0 allowed) and --max-duration: the double at opt->field. */
static int set_seconds(void *ctx, const struct cli_opt *opt, const char *arg)
{
	char name[32];

	snprintf(name, sizeof(name), "--%s", opt->long_name);
	return parse_seconds(arg, name, opt->val, (double *)((char *)ctx + opt->field));
}

int cli_watch_freq(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct cli_watch *w = (struct cli_watch *)((char *)ctx + opt->field);
	unsigned long v;

	if (cli_parse_uint(arg, 100000, &v))
		return log_usage(NULL, "bad frequency '%s'", arg);
	w->o.freq = v;
	return 0;
}

int cli_watch_pids(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct cli_watch *w = (struct cli_watch *)((char *)ctx + opt->field);

	if (cli_parse_pids(arg, &w->pids, &w->o.npids))
		return log_usage(NULL, "bad PID list '%s'", arg);
	w->o.pids = w->pids;
	return 0;
}

int cli_watch_targets(struct cli_watch *w, int argc, char **argv)
{
	struct record_opts *o = &w->o;

	if (optind < argc)
		o->argv = argv + optind;
	if (o->all_cpus && o->npids)
		return log_usage(NULL, "-a watches every process: give it without -p");
	if (!o->all_cpus && !o->argv == !o->npids)
		return log_usage(NULL, "%s",
				 o->argv ? "give either -p PID or a command, not both"
					 : "nothing to watch: give -- CMD, -p PID or -a");
	return 0;
}

int cli_set_unwind(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct record_opts *o = (struct record_opts *)((char *)ctx + opt->field);

	if (cli_parse_unwind(arg, &o->unwind))
		return log_usage(NULL, "unknown unwind mode '%s' (fp, dwarf, auto)", arg);
	return 0;
}

static int set_max_size(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (parse_size(arg, &((struct record_cli *)ctx)->o.max_size))
		return log_usage(NULL, "bad size '%s' (a number, optionally K, M or G)", arg);
	return 0;
}

static int set_off_cpu_min(void *ctx, const struct cli_opt *opt, const char *arg)
{
	char *end;
	double us = strtod(arg, &end);

	(void)opt;
	if (*end || end == arg || !(us >= 0) || us > 1e9)
		return log_usage(NULL, "bad --off-cpu-min '%s' (microseconds)", arg);
	((struct record_cli *)ctx)->o.off_cpu_min_ns = (uint64_t)(us * 1000);
	return 0;
}

static int set_steps(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct record_opts *o = &((struct record_cli *)ctx)->o;

	(void)opt;
	if (steps_parse(arg, &o->steps_first, &o->steps_last))
		return log_usage(NULL, "bad --steps '%s' (A or A:B, step numbers, A <= B)", arg);
	o->steps = true;
	return 0;
}

static int set_only_region(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)opt;
	if (!*arg)
		return log_usage(NULL, "--only-region needs a region name");
	((struct record_cli *)ctx)->o.only_region = arg;
	return 0;
}

static int set_verbose(void *ctx, const struct cli_opt *opt, const char *arg)
{
	(void)ctx;
	(void)opt;
	(void)arg;
	log_set_verbose(log_verbose() + 1);
	return 0;
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
static int gpu_choose(struct record_opts *o, const struct record_cli *g)
{
	char lib[PATH_MAX];

	if (!o->gpu && !g->gpu_off && o->argv && targets__links_cuda(o->argv[0])) {
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

extern const struct cli_command cli_record;

static int run_record(int argc, char **argv)
{
	struct record_cli c = {.o = {.freq = DEFAULT_FREQ,
				     .output = "perch.data",
				     .metrics_ms = 100,
				     .off_cpu_min_ns = DEFAULT_OFF_CPU_MIN_US * 1000}};
	struct record_opts *o = &c.o;
	struct record_result res;
	int ret = cli_opts__parse(&cli_record, argc, argv, &c);

	if (!ret && optind < argc)
		o->argv = argv + optind;
	if (!ret)
		ret = check_perf_options(o, &c.events);
	if (!ret && c.gpu_off && o->gpu)
		ret = log_usage(NULL, "give either --gpu or --no-gpu, not both");
	if (!ret)
		ret = gpu_choose(o, &c);
	if (!ret && !o->all_cpus && !o->argv == !o->npids)
		ret = log_usage(NULL, "%s",
				o->argv ? "give either -p PID or a command, not both"
					: "nothing to record: give -- CMD or -p PID");
	if (ret) {
		free(c.pids);
		return ret == CLI_HELP_DONE ? 0 : ret;
	}
	o->pids = c.pids;
	ret = record__run(o, &res);
	if (res.complete && (!o->quiet || o->only_region))
		print_summary(o, o->output);
	free(c.pids);
	if (res.duration_stopped)
		fprintf(stderr, "perch: %s stopped after -d %g s (exit status 0)\n", o->argv[0],
			o->duration_s);
	return ret;
}

/* The synopsis lines: launch, attach, system-wide. */
enum { L = 1, P = 2, A = 4 };
#define CLI_CTX struct record_cli

static const struct cli_opt record_rows[] = {
	{'F', "freq", "HZ",
	 "samples per second per CPU (default 997); max: the kernel's highest "
	 "(/proc/sys/kernel/perf_event_max_sample_rate)",
	 OPT_FN(set_freq), .in = L | P | A},
	{'c', "count", "PERIOD",
	 "one sample every PERIOD events (nanoseconds for a clock) instead of -F HZ",
	 OPT_FN(set_period), .in = L | P | A},
	{'e', "event", "EV,...",
	 "sample on these events (repeatable): cpu-clock (default; cycles where the machine has a "
	 "PMU), task-clock, page-faults, minor-faults, major-faults, context-switches, "
	 "cpu-migrations, cycles, instructions (these two need a PMU); clocks at -F HZ, the others "
	 "every event (-c 1) by default",
	 OPT_FN(set_events), .in = L | P | A},
	{'o', "output", "FILE", "recording file (default perch.data)", OPT_STR(o.output),
	 .in = L | P | A},
	{'p', "pid", "PID,...", "attach to running processes (and children they fork)",
	 OPT_FN(set_pids), .needs = P},
	{'a', "all-cpus", NULL,
	 "system-wide: every process, kernel threads and idle too; with -- CMD, until CMD exits; "
	 "alone, until -d or Ctrl-C",
	 OPT_TRUE(o.all_cpus), .needs = A},
	{'C', "cpu", "LIST", "sample only on these CPUs (\"0,2-3\"); alone, implies -a",
	 OPT_FN(set_cpus), .in = L | P | A},
	{'d', "duration", "SEC",
	 "stop after SEC seconds (attach mode; launch: terminate CMD with SIGTERM; perch then exits "
	 "0, \"stopped after -d\")",
	 OPT_FN(set_duration), .in = L | P | A},
	{'D', "delay", "SEC",
	 "start sampling SEC seconds after CMD starts (or the attach); the targets run meanwhile, "
	 "unsampled",
	 OPT_FN(set_seconds), .field = OPT_FIELD(o.delay_s), .val = 1, .in = L | P | A},
	{0, "max-duration", "SEC",
	 "stop sampling for good after SEC seconds; a launched CMD runs on to its end (the recording "
	 "says where it stopped)",
	 OPT_FN(set_seconds), .field = OPT_FIELD(o.max_duration_s), .in = L | P | A},
	{0, "control", "fifo:CTL[,ACK]",
	 "pause and resume through a FIFO, as perf's: the lines 'disable', 'enable' (and 'ping'), "
	 "each answered 'ack' on ACK; SIGUSR1 pauses a recording too, SIGUSR2 resumes it",
	 OPT_STR(o.control), .in = L | P | A},
	{'q', "quiet", NULL, "no summary when recording ends", OPT_TRUE(o.quiet), .in = L | P | A},
	{0, "no-lines", NULL, "no source lines or inline frames (skips reading DWARF)",
	 OPT_TRUE(o.no_lines), .in = L | P | A},
	{0, "unwind", "MODE",
	 "user stacks: auto (default: in the kernel from .eh_frame tables, frame pointers where a "
	 "module has none), dwarf (tables only), fp",
	 OPT_FN(cli_set_unwind), .field = OPT_FIELD(o), .in = L | P | A},
	{0, "call-graph", "MODE", "the same as --unwind (perf's spelling: fp, dwarf)",
	 OPT_FN(cli_set_unwind), .field = OPT_FIELD(o)},
	{'g', NULL, NULL, "perf's \"record call graphs\": perch always does (accepted)",
	 .type = CLI_OPT_NOP},
	{0, "timeline", NULL,
	 "every sample's time and thread, every region begin, end and mark (grows with the run; see "
	 "--max-size)",
	 OPT_TRUE(o.timeline), .in = L | P | A},
	{0, "max-size", "SIZE",
	 "cap the bytes the timeline adds to the file (K, M, G suffixes): past it, sample times and "
	 "spans are dropped, counted; without --timeline: cap the file, sampling stops for good "
	 "there (checked every 100 ms drain)",
	 OPT_FN(set_max_size), .in = L | P | A},
	{0, "gpu", NULL,
	 "CUDA kernels, copies and syncs of CMD (CUPTI, through perch's injection library), joined "
	 "to the calls that launched them (with -p: launches, copies and memsets counted from "
	 "uprobes on the process's libcuda.so, with their stacks; no durations); on by itself when "
	 "CMD links CUDA (libcuda, libcudart)",
	 OPT_TRUE(o.gpu), .in = L | P | A},
	{0, "no-gpu", NULL, "not even when CMD links CUDA", OPT_TRUE(gpu_off), .in = L | A},
	{0, "gpu-stacks", "MODE",
	 "the CPU stack of a launch: site (default: once per call site, later calls attributed to "
	 "it), every (each call)",
	 OPT_FN(set_gpu_stacks), .in = L | P | A},
	{0, "metrics", "MS|off",
	 "system metrics every MS milliseconds (default 100, at least 100): CPU busy per CPU; the "
	 "targets' CPU user/system, RSS, faults, context switches, bytes read and written; GPU "
	 "utilization and memory through NVML (with -a, a process with no tick since its last "
	 "reading is read every 10 s only); --metrics=off: none",
	 OPT_FN(set_metrics), .in = L | P | A},
	{0, "no-python", NULL,
	 "CPython processes (3.11 to 3.13) with their native frames only: no walk of the "
	 "interpreter's frames, so no Python function stands in for _PyEval_EvalFrameDefault",
	 OPT_TRUE(o.no_python), .in = L | P | A},
	{0, "off-cpu", NULL,
	 "also the time target threads spend off the CPU (blocked or preempted), with the stacks "
	 "they left it with (report --view=off|wall); with --timeline each block is also a timed "
	 "span (chrome slices, speedscope evented profiles)",
	 OPT_TRUE(o.off_cpu), .in = L | P | A},
	{0, "off-cpu-min", "US", "leave out blocks shorter than US microseconds (default 100)",
	 OPT_FN(set_off_cpu_min), .in = L | P | A},
	{0, "steps", "A[:B]",
	 "record only steps A to B of a program that marks them with perch_step(n) (perch.h): "
	 "nothing before step A starts; the recording ends when step B ends (a launched CMD runs "
	 "on)",
	 OPT_FN(set_steps), .in = L | P | A},
	{0, "only-region", "NAME",
	 "count only ticks whose thread is inside region NAME (decided in the kernel; NAME may "
	 "register later)",
	 OPT_FN(set_only_region), .in = L | P | A},
	{'v', "verbose", NULL, "debug output (twice: libbpf debug)", OPT_FN(set_verbose),
	 .in = L | P | A},
};

static const char *const record_lines[] = {"-- CMD [ARGS...]", "", "[-- CMD [ARGS...]]", NULL};

static const struct cli_opts record_table = {
	CLI_OPTS(record_rows),
	.flags = "+",
	.lines = record_lines,
	.summary = "record CMD, running processes (-p) or every CPU (-a) into perch.data",
	.about =
		"With -- CMD, perch launches CMD and records it and every child it forks until it "
		"exits; with -p, the given processes until Ctrl-C, -d or their exit; with -a, every "
		"CPU. When the recording is complete, perch prints a summary of it (as perch report "
		"would) on standard error.",
};

const struct cli_command cli_record = {
	.name = "record",
	.run = run_record,
	.opts = &record_table,
};
