// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch agent --url=URL [--otlp|--parca] [--every=SEC] [--name=SERVICE] [-F HZ]
 * (-a | -p PID,... | -- CMD)`: continuous profiling into a fleet backend. The same run as `perch
 * record` (record/) writing to /dev/null, with a hook at every drain (100 ms) that copies the
 * drain's counts into a recording of the current interval (format/writer_copy.h) in a private
 * directory; when the interval has lasted --every seconds, that recording is closed, built into
 * the backend's profile (cli/push.h: pprof for Pyroscope and Parca, an OTLP request) and handed
 * to a sender thread, and the next interval starts at the same drain boundary: intervals are
 * contiguous by construction, each drain in exactly one. SIGINT and SIGTERM end the run after
 * its last drain; the last, partial interval is pushed too. A push that fails is retried once,
 * then the interval is logged, dropped and counted; a sender still busy when the next interval
 * is ready drops the older waiting one (counted). Nothing is kept of an interval once handed
 * on. Source lines are not resolved (the backends symbolize by function).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/recording.h"
#include "format/writer_copy.h"
#include "format/writer_peek.h"
#include "record/record.h"
#include "push.h"

#define DEFAULT_FREQ	19
#define DEFAULT_EVERY_S 10.0

/* One interval's profile, on its way to the backend. */
struct job {
	struct push p; /* its name, time range and rate */
	struct push_body body;
	unsigned long long n; /* the interval's number, from 1 */
	uint64_t samples;
};

struct agent {
	struct push p; /* the backend, as the options give it */
	double every_s;
	char dir[64], path[96]; /* the private directory, the interval's recording in it */
	struct rec_copy *copy;
	struct rec_writer *iw; /* the interval being gathered; NULL between two */
	uint64_t start_ns;     /* its start (CLOCK_MONOTONIC) */
	long long offset_ns;   /* CLOCK_REALTIME less CLOCK_MONOTONIC (META realtime_offset_ns) */
	uint64_t samples;      /* its samples so far */
	unsigned long long intervals, pushed, dropped, retried;
	/* the sender: one job at a time, one waiting */
	pthread_t sender;
	bool sender_up, stopping;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *waiting;
};

static void job_free(struct job *j)
{
	if (j)
		free(j->body.data);
	free(j);
}

/* The backend's answer to j: pushed, or retried once and then dropped. */
static void send_job(struct agent *a, struct job *j)
{
	int ret = push__send(&j->p, &j->body);
	bool retried = false;

	if (ret) {
		retried = true;
		ret = push__send(&j->p, &j->body);
	}
	pthread_mutex_lock(&a->mu);
	a->retried += retried;
	if (ret)
		a->dropped++;
	else
		a->pushed++;
	pthread_mutex_unlock(&a->mu);
	if (ret)
		log_warn("agent: interval %llu (%llu samples) dropped: the backend failed it twice",
			 j->n, (unsigned long long)j->samples);
	else
		log_debug("agent: interval %llu pushed (%llu samples, %zu bytes)%s", j->n,
			  (unsigned long long)j->samples, j->body.len, retried ? ", retried" : "");
}

static void *sender_main(void *arg)
{
	struct agent *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		struct job *j = a->waiting;

		if (!j && a->stopping)
			break;
		if (!j) {
			pthread_cond_wait(&a->cv, &a->mu);
			continue;
		}
		a->waiting = NULL;
		pthread_mutex_unlock(&a->mu);
		send_job(a, j);
		job_free(j);
		pthread_mutex_lock(&a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* j to the sender; a job still waiting there is dropped for it (the backend is slower than the
 * intervals come). */
static void hand_on(struct agent *a, struct job *j)
{
	struct job *old;

	pthread_mutex_lock(&a->mu);
	old = a->waiting;
	a->waiting = j;
	if (old)
		a->dropped++;
	pthread_cond_signal(&a->cv);
	pthread_mutex_unlock(&a->mu);
	if (old)
		log_warn("agent: interval %llu (%llu samples) dropped: the backend is still busy "
			 "with the one before",
			 old->n, (unsigned long long)old->samples);
	job_free(old);
}

/* Unix seconds of CLOCK_MONOTONIC's mono_ns. */
static long long unix_s(const struct agent *a, uint64_t mono_ns)
{
	return ((long long)mono_ns + a->offset_ns) / 1000000000ll;
}

/* ISO 8601 local time of CLOCK_MONOTONIC's mono_ns ("" when the offset is not known). */
static void start_time(const struct agent *a, uint64_t mono_ns, char *out, size_t size)
{
	time_t t = (time_t)unix_s(a, mono_ns);
	struct tm tm;

	if (!a->offset_ns || !localtime_r(&t, &tm) ||
	    !strftime(out, size, "%Y-%m-%dT%H:%M:%S%z", &tm))
		out[0] = '\0';
}

/* A new interval's recording, from the drain that starts at start_ns; its META is the run's,
 * with the interval's start time. */
static int interval_open(struct agent *a, const struct rec_writer *w, uint64_t start_ns)
{
	char when[64], offset[32];
	struct rec_kv over[1] = {{.key = "start_time", .str = when}};
	int err;

	a->iw = rec_writer__open(a->path);
	if (!a->iw)
		return -errno;
	err = rec_writer__publish(a->iw);
	rec_writer__peek_meta(w, "realtime_offset_ns", offset, sizeof(offset));
	a->offset_ns = strtoll(offset, NULL, 10);
	start_time(a, start_ns, when, sizeof(when));
	if (!err)
		err = rec_copy__meta(w, a->iw, over, when[0] ? 1 : 0);
	a->start_ns = start_ns;
	a->samples = 0;
	rec_copy__reset(a->copy);
	return err;
}

/* The interval ends at end_ns: its recording closed, read back, built into the backend's
 * profile and handed to the sender; nothing of it is kept here. */
static void interval_close(struct agent *a, uint64_t end_ns)
{
	struct rec_kv end[1] = {{.key = "duration_ns", .value = end_ns - a->start_ns}};
	struct recording *r = NULL;
	struct job *j;
	int err;

	a->intervals++;
	err = rec_writer__end(a->iw, end, 1);
	err = rec_writer__close(a->iw) ?: err;
	a->iw = NULL;
	j = calloc(1, sizeof(*j));
	if (!err && !j)
		err = -ENOMEM;
	if (!err)
		err = recording__load(a->path, &r);
	if (!err) {
		j->p = a->p;
		j->n = a->intervals;
		j->samples = a->samples;
		if (push__prepare(&j->p, r, a->path, &j->body))
			err = -EINVAL;
		/* Pyroscope's from and until, in seconds: one interval's until is the next's from */
		j->p.from = unix_s(a, a->start_ns);
		j->p.until = unix_s(a, end_ns);
		if (j->p.until <= j->p.from)
			j->p.until = j->p.from + 1;
	}
	recording__free(r);
	unlink(a->path);
	if (err) {
		log_warn(
			"agent: interval %llu (%llu samples) dropped: cannot build its profile: %s",
			a->intervals, (unsigned long long)a->samples, strerror(-err));
		pthread_mutex_lock(&a->mu);
		a->dropped++;
		pthread_mutex_unlock(&a->mu);
		job_free(j);
		return;
	}
	hand_on(a, j);
}

static void count_pending(void *ctx, uint32_t key, uint64_t count)
{
	(void)key;
	((struct agent *)ctx)->samples += count;
}

/* record/'s hook, every drain: its counts into the interval, [start_ns, end_ns) its window. */
static int on_drain(void *ctx, const struct rec_writer *w, uint64_t start_ns, uint64_t end_ns)
{
	struct agent *a = ctx;
	int err = 0;

	if (!a->iw && (err = interval_open(a, w, start_ns))) {
		log_warn("agent: cannot open the interval's recording in %s: %s", a->dir,
			 strerror(-err));
		rec_writer__discard(a->iw);
		a->iw = NULL;
		return 0;
	}
	rec_writer__peek_pending(w, count_pending, a);
	err = rec_copy__pending(a->copy, w, a->iw);
	if (!err)
		err = rec_writer__window(a->iw, start_ns, end_ns);
	if (err)
		log_warn("agent: a drain's samples are lost to the interval: %s", strerror(-err));
	if ((double)(end_ns - a->start_ns) >= a->every_s * 1e9)
		interval_close(a, end_ns);
	return 0;
}

/* What the options set. */
struct agent_cli {
	struct cli_watch w;
	struct agent a;
};

static int set_every(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct agent *a = &((struct agent_cli *)ctx)->a;
	char *end;

	(void)opt;
	a->every_s = strtod(arg, &end);
	if (*end || end == arg || !(a->every_s >= 0.5 && a->every_s <= 86400))
		return log_usage(NULL, "bad --every '%s' (seconds, 0.5 to 86400)", arg);
	return 0;
}

static int set_duration(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct record_opts *o = &((struct agent_cli *)ctx)->w.o;
	char *end;

	(void)opt;
	o->duration_s = strtod(arg, &end);
	if (*end || end == arg || !(o->duration_s > 0 && o->duration_s <= 1e9))
		return log_usage(NULL, "bad duration '%s' (seconds)", arg);
	return 0;
}

extern const struct cli_command cli_agent;

static int parse_agent(int argc, char **argv, struct agent_cli *c)
{
	struct agent *a = &c->a;
	int ret = cli_opts__parse(&cli_agent, argc, argv, c);

	if (!ret && !a->p.url)
		ret = log_usage(NULL, "agent needs --url=http://HOST:PORT[/PATH]");
	else if (!ret && a->p.otlp && a->p.parca)
		ret = log_usage(NULL, "--otlp and --parca are two backends: choose one");
	return ret ? ret : cli_watch_targets(&c->w, argc, argv);
}

static int agent_start(struct agent *a)
{
	snprintf(a->dir, sizeof(a->dir), "%s", "/tmp/perch-agent-XXXXXX");
	if (!mkdtemp(a->dir)) {
		log_err("agent: cannot make a private directory under /tmp: %s", strerror(errno));
		return PERCH_EXIT_OUTPUT;
	}
	snprintf(a->path, sizeof(a->path), "%s/interval.data", a->dir);
	a->copy = rec_copy__new();
	if (!a->copy || pthread_mutex_init(&a->mu, NULL) || pthread_cond_init(&a->cv, NULL) ||
	    pthread_create(&a->sender, NULL, sender_main, a)) {
		log_err("agent: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	a->sender_up = true;
	return 0;
}

/* The last interval pushed, the sender done, the directory gone. */
static void agent_stop(struct agent *a, uint64_t end_ns)
{
	if (a->iw)
		interval_close(a, end_ns);
	if (a->sender_up) {
		pthread_mutex_lock(&a->mu);
		a->stopping = true;
		pthread_cond_signal(&a->cv);
		pthread_mutex_unlock(&a->mu);
		pthread_join(a->sender, NULL);
	}
	rec_copy__free(a->copy);
	unlink(a->path);
	rmdir(a->dir);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int run_agent(int argc, char **argv)
{
	struct agent_cli c = {.w.o = {.freq = DEFAULT_FREQ,
				      .output = "/dev/null",
				      .quiet = true,
				      .no_lines = true,
				      .forget_exited = true,
				      .on_drain = on_drain},
			      .a = {.every_s = DEFAULT_EVERY_S, .p = {.timeout_s = 10}}};
	struct agent *a = &c.a;
	struct record_result res = {0};
	int ret = parse_agent(argc, argv, &c);

	if (ret) {
		free(c.w.pids);
		return ret == CLI_HELP_DONE ? 0 : ret;
	}
	c.w.o.drain_ctx = a;
	ret = agent_start(a);
	if (!ret)
		ret = record__run(&c.w.o, &res);
	agent_stop(a, now_ns());
	free(c.w.pids);
	if (a->intervals || a->dropped)
		fprintf(stderr,
			"perch agent: %llu intervals: %llu pushed, %llu dropped (%llu retried); "
			"%llu exited processes forgotten\n",
			a->intervals, a->pushed, a->dropped, a->retried,
			(unsigned long long)res.forgotten);
	return ret && res.signalled ? 0 : ret;
}

#define CLI_CTX struct agent_cli

enum { L = 1, P = 2, A = 4 }; /* the synopsis lines: launch, attach, system-wide */

static const struct cli_opt agent_rows[] = {
	{0, "url", "URL",
	 "http://HOST:PORT[/PATH] of the backend: Pyroscope (default path /ingest), Parca with "
	 "--parca (/profiles/writeraw), an OTLP/HTTP endpoint with --otlp "
	 "(/v1development/profiles)",
	 OPT_FN(push__set_url), .field = OPT_FIELD(a.p), .needs = L | P | A},
	{0, "otlp", NULL, "push OTLP profiles (gzipped protobuf, as --format=otlp writes them)",
	 OPT_TRUE(a.p.otlp), .in = L | P | A},
	{0, "parca", NULL, "push to Parca's /profiles/writeraw instead of Pyroscope's /ingest",
	 OPT_TRUE(a.p.parca), .in = L | P | A},
	{0, "every", "SEC", "push every SEC seconds the profile of those seconds (default 10)",
	 OPT_FN(set_every), .in = L | P | A},
	{0, "name", "SERVICE",
	 "the application (Pyroscope, Parca) or service.name (OTLP) (default: the command's, or "
	 "perch)",
	 OPT_FN(push__set_name), .field = OPT_FIELD(a.p), .in = L | P | A},
	{0, "timeout", "S", "give up on a push that takes over S seconds (default 10)",
	 OPT_FN(push__set_timeout), .field = OPT_FIELD(a.p), .in = L | P | A},
	{'F', "freq", "HZ", "samples per second per CPU (default 19)", OPT_FN(cli_watch_freq),
	 .field = OPT_FIELD(w), .in = L | P | A},
	{'a', "all-cpus", NULL, "every process on every CPU, as record -a", OPT_TRUE(w.o.all_cpus),
	 .needs = A},
	{'p', "pid", "PID,...", "attach to running processes (and children they fork)",
	 OPT_FN(cli_watch_pids), .field = OPT_FIELD(w), .needs = P},
	{'d', "duration", "SEC", "stop after SEC seconds (default: until SIGINT or SIGTERM)",
	 OPT_FN(set_duration), .in = L | P | A},
	{'o', "output", "FILE",
	 "also write the whole run to FILE, as perch record would (default: none)",
	 OPT_STR(w.o.output), .in = L | P | A},
	{0, "unwind", "MODE", "user stacks: auto (default), dwarf, fp (as record's)",
	 OPT_FN(cli_set_unwind), .field = OPT_FIELD(w.o), .in = L | P | A},
};

const struct cli_command cli_agent = {
	.name = "agent",
	.run = run_agent,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(agent_rows),
			.flags = "+",
			.lines = (const char *const[]){"-- CMD [ARGS...]", "", "", NULL},
			.summary = "continuous profiling: the profile of every interval pushed to "
				   "Pyroscope, Parca or an OTLP endpoint",
			.about =
				"SIGINT or SIGTERM pushes the last, partial interval and exits 0; a "
				"push that fails is retried once, then that interval is dropped and "
				"counted. With CMD, the agent ends when it exits, with its status.",
		},
};
