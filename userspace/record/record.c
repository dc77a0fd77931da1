// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record`: the recording run. Checks what the user can get wrong before anything starts,
 * opens the sampler (sampler.c), lets the parts that follow the targets listen to the process
 * table (procs.c: the unwinder with --unwind=auto|dwarf, the collector, regions), starts the
 * targets (targets.c), and then drains the sampler's counts every SAMPLER_DRAIN_MS into the
 * recording file until the targets are gone, with the counts of every part (stats.c).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include "collect.h"
#include "control.h"
#include "format/recording.h"
#include "gpu.h"
#include "gpu_attach.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "metrics.h"
#include "proc.h"
#include "procs.h"
#include "record.h"
#include "regions.h"
#include "sampler.h"
#include "stats.h"
#include "steps.h"
#include "targets.h"
#include "unwinder.h"

#define DRAIN_NS ((uint64_t)SAMPLER_DRAIN_MS * 1000000ull)
/* perch's own costs run on while the targets idle: written once a second and at the end, so an
 * idle recording grows by one small STATS block a second (the writer drops unchanged counters). */
#define COST_EVERY_DRAINS (1000 / SAMPLER_DRAIN_MS)

struct session {
	const struct record_opts *o;
	struct procs *procs; /* the targets' processes; the parts below listen to it */
	struct sampler *sp;
	struct targets *tg;
	struct unwinder *uw; /* NULL when the sampler does not unwind (--unwind=fp) */
	struct collector *col;
	struct regions *rg;
	struct gpu *gpu;       /* --gpu */
	struct gpu_attach *ga; /* --gpu -p */
	struct metrics *mt;    /* --metrics (NULL: off) */
	struct control *ctl;   /* when sampling is on (--delay, pauses, caps) */
	struct steps *steps;   /* the programs' steps and pauses (perch_step(), --steps) */
	struct rec_writer *w;
	uint32_t rnames[PERCH_REGION_DEPTH]; /* one sample's region stack (string ids) */
	uint64_t start_ns;
	uint64_t flip_ns; /* the last drain's flip: where the next window starts */
	uint64_t drains;
	unsigned int max_stack;
	bool duration_stop; /* -d ran out: a launched command was sent SIGTERM */
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int check_caps(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &hdr, data))
		return 0; /* can't tell: let the kernel decide */
#define HAS(cap) (!!(data[(cap) / 32].effective & (1u << ((cap) % 32))))
	admin = HAS(CAP_SYS_ADMIN);
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
#undef HAS
	if (admin || (bpf && perfmon))
		return 0;
	log_err("permission denied: missing %s%s%s (run as root, or grant CAP_BPF and CAP_PERFMON)",
		bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		perfmon ? "" : "CAP_PERFMON");
	return PERCH_EXIT_PERM;
}

static int check_btf(void)
{
	const char *path = sampler_kernel_btf();

	if (access(path, R_OK) == 0)
		return 0;
	log_err("kernel has no BTF (%s: %s); perch needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		path, strerror(errno));
	return PERCH_EXIT_NOBTF;
}

/* perf's rule: a frequency over kernel.perf_event_max_sample_rate is refused before anything
 * starts (the kernel would refuse the events, after the command was launched). Every tick of
 * every CPU runs the sampler, targets or not, so the limit is the machine's, not the target's. */
static int check_freq(const struct record_opts *o)
{
	unsigned int max = 0;

	if (proc_read_uint("/proc/sys/kernel/perf_event_max_sample_rate", &max) || !max ||
	    o->freq <= max)
		return 0;
	log_err("-F %u: over kernel.perf_event_max_sample_rate (%u Hz): use -F %u or less", o->freq,
		max, max);
	return PERCH_EXIT_USAGE;
}

/* --gpu: the injection library is there (a perch built without the CUDA toolkit has none). */
static int check_gpu(const struct record_opts *o)
{
	char lib[PATH_MAX];

	if (!o->gpu || !o->argv || !gpu_find_library(lib, sizeof(lib)))
		return 0; /* attaching needs no library: libcuda's entry points are probed */
	log_err("--gpu: this perch was built without CUDA: no libperch_cuda.so beside it or in "
		"../lib/perch/ (build where the CUDA toolkit is, CUDA_HOME)");
	return PERCH_EXIT_NOGPU;
}

static int preflight(const struct record_opts *o)
{
	int ret = check_freq(o);

	if (!ret)
		ret = check_gpu(o);
	if (!ret)
		ret = targets__check(o);
	if (!ret)
		ret = check_caps();
	if (!ret)
		ret = check_btf();
	return ret;
}

/* --timeline: one tick (dropped past --max-size: the writer counts it). */
static void add_tick(void *ctx, uint64_t time_ns, uint32_t key)
{
	struct session *s = ctx;

	rec_writer__event(s->w, time_ns, key);
}

/* --off-cpu: a key's blocked time. */
static void add_offcpu(void *ctx, uint32_t key, uint64_t ns)
{
	struct session *s = ctx;

	rec_writer__offcpu(s->w, key, ns);
}

/* --off-cpu --timeline: one block's span (past --max-size: dropped, counted by the writer). */
static void add_offspan(void *ctx, uint32_t key, uint64_t start_ns, uint64_t end_ns)
{
	struct session *s = ctx;

	rec_writer__offspan(s->w, key, start_ns, end_ns);
}

/* The parts that follow the targets, in the order they hear of them: the unwinder first (the
 * sampler needs its tables from a process's next tick on), only when the sampler unwinds. */
static int add_listeners(struct session *s)
{
	const struct sampler_fds *fds = sampler__fds(s->sp);

	if (sampler__unwind_mode(s->sp) != PERCH_UNWIND_FP) {
		s->uw = unwinder__new(fds->unwind_rows, fds->proc_unwind, s->procs);
		if (!s->uw) {
			log_err("unwind tables: %s", strerror(errno));
			return PERCH_EXIT_BPF;
		}
	}
	s->col = collector__new(s->w, s->max_stack, s->procs);
	if (!s->col)
		return PERCH_EXIT_INTERNAL;
	collector__set_lines(s->col, !s->o->no_lines);
	collector__set_kernel_syms(s->col, sampler__kernel_syms(s->sp));
	/* Key ids name --timeline's ticks, --gpu's launch stacks and the samples of steps. */
	collector__set_keys(s->col, true);
	sampler__on_tick(s->sp, add_tick, s);
	sampler__on_off_cpu(s->sp, add_offcpu, s);
	sampler__on_off_span(s->sp, add_offspan, s);
	s->rg = regions__new(s->w, fds->region_procs, fds->region_stacks, s->procs);
	s->steps = steps__new(s->w, s->o->steps, s->o->steps_first, s->o->steps_last);
	if (!s->rg || !s->steps)
		return PERCH_EXIT_INTERNAL;
	regions__set_timeline(s->rg, s->o->timeline);
	regions__set_ctl(s->rg, s->o->steps, s->o->steps_first, s->o->steps_last, s->o->only_region,
			 steps__event, s->steps);
	return 0;
}

/* --gpu: a launch's stack and region stack, keyed (SAMPLER_NO_KEY: lost, counted in STATS). */
static void add_launch(void *ctx, const struct perch_launch *l, uint32_t key)
{
	struct session *s = ctx;

	if (key != SAMPLER_NO_KEY)
		gpu__launch_key(s->gpu, l->key.tgid, l->key.tid, l->correlation_id, l->time_ns,
				key);
}

/* --gpu -p: libcuda's entry points, probed once the processes are targets (start_gpu_attach). */
static int add_gpu_attach(struct session *s)
{
	int ret = 0;

	s->ga = gpu_attach__new(s->w, s->sp, s->procs, &ret);
	if (!s->ga && !ret) {
		log_err("gpu: %s", strerror(errno));
		ret = PERCH_EXIT_INTERNAL;
	}
	return ret;
}

static int start_gpu_attach(struct session *s)
{
	if (s->ga && gpu_attach__start(s->ga, s->o->pids, s->o->npids)) {
		log_err("gpu: %s", strerror(ENOMEM));
		return PERCH_EXIT_INTERNAL;
	}
	return 0;
}

/* --gpu: the channel, handed to the command at its exec; the probe on its launches. */
static int add_gpu(struct session *s)
{
	char lib[PATH_MAX];

	if (!s->o->gpu)
		return 0;
	if (!s->o->argv)
		return add_gpu_attach(s);
	if (gpu_find_library(lib, sizeof(lib)))
		return PERCH_EXIT_NOGPU; /* checked before: the file went away */
	s->gpu = gpu__new(s->w, lib);
	if (!s->gpu) {
		log_err("gpu: the channel: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	targets__before_exec(s->tg, gpu__child, s->gpu);
	return sampler__probe_launches(s->sp, lib, add_launch, s);
}

static int setup(struct session *s)
{
	int ret;

	s->tg = targets__new(s->o);
	if (!s->tg)
		return PERCH_EXIT_INTERNAL;
	if (proc_read_uint("/proc/sys/kernel/perf_event_max_stack", &s->max_stack) ||
	    s->max_stack > PERCH_MAX_STACK)
		s->max_stack = PERCH_MAX_STACK;
	s->w = rec_writer__open(s->o->output);
	if (!s->w) {
		log_err("cannot write %s: %s", s->o->output, strerror(errno));
		return PERCH_EXIT_OUTPUT;
	}
	rec_writer__max_size(s->w, s->o->max_size);
	s->procs = procs__new();
	if (!s->procs)
		return PERCH_EXIT_INTERNAL;
	ret = sampler__open(s->o, s->procs, &s->sp);
	if (!ret)
		ret = add_listeners(s);
	if (!ret && s->o->metrics_ms && !(s->mt = metrics__new(s->w, s->procs, s->o->metrics_ms)))
		log_warn("metrics: %s: the recording goes on without them", strerror(errno));
	return ret ? ret : add_gpu(s);
}

/* Everything has opened: only now does the recording take the output's name (the previous one
 * kept as .old); a run that failed before leaves it untouched. The exit status. */
static int publish(struct session *s)
{
	int err = rec_writer__publish(s->w);

	if (!err)
		return 0;
	log_err("cannot write %s: %s", s->o->output, strerror(-err));
	return PERCH_EXIT_OUTPUT;
}

/* Process events first (forks, exits), then the mmap records they make relevant, then forget the
 * targets that exited: their last mmap records have been read. */
static void read_events(struct session *s, int timeout_ms)
{
	sampler__read_events(s->sp, timeout_ms);
	regions__poll(s->rg);
	gpu__poll(s->gpu);
	gpu_attach__poll(s->ga);
	procs__flush(s->procs);
}

/* One counted bucket of the sampler, with the region stack of its thread; its key id for the
 * timeline. */
static uint32_t add_sample(void *ctx, const struct perch_key *key, uint64_t count,
			   const uint64_t *u, const uint64_t *k)
{
	struct session *s = ctx;
	uint32_t nr =
		regions__names(s->rg, key->tgid, key->region_hash, s->rnames, PERCH_REGION_DEPTH);

	if (key->flags & PERCH_KEY_REGION_LOST || (key->region_hash && !nr))
		regions__count_lost(s->rg, count);
	collector__add(s->col, key, count, s->rnames, nr, u, k);
	steps__sample(s->steps, key->tgid, key->step, collector__last_key(s->col), count);
	return collector__last_key(s->col);
}

static void write_stats(struct session *s, bool cost)
{
	const struct stats_parts p = {s->o,	    s->sp,  s->tg, s->col, s->uw,   s->rg,
				      s->max_stack, s->gpu, s->ga, s->mt,  s->steps};

	stats__write(s->w, &p, cost);
}

/* The counts of a drain are the window [last flip, this flip) on CLOCK_MONOTONIC. */
static void flip_and_drain(struct session *s)
{
	uint64_t flip;
	int sig;

	read_events(s, 0); /* fork/exec/mmap events first: they say whose maps to use */
	flip = sampler__drain(s->sp, add_sample, s);
	collector__drained(s->col);
	if (s->o->on_drain && (sig = s->o->on_drain(s->o->drain_ctx, s->w)) && !stop_signal)
		stop_signal = sig;
	rec_writer__window(s->w, s->flip_ns, flip);
	s->flip_ns = flip;
	regions__spans_until(s->rg, flip);
	regions__collect(s->rg);
	steps__flush(s->steps);
	rec_writer__flush(s->w);
	metrics__drained(s->mt);
	write_stats(s, s->drains % COST_EVERY_DRAINS == 0);
	s->drains++;
	/* --max-size without --timeline caps the whole file: checked a drain at a time. */
	if (!s->o->timeline && s->o->max_size && rec_writer__size(s->w) >= s->o->max_size) {
		control__cap(s->ctl, REC_STOP_MAX_SIZE, flip);
		gpu__stop(s->gpu); /* the command runs on: its channel is read, not written */
	}
}

/* A cap ends an attached recording; a launched command runs on, unsampled, to its end. */
static bool capped(struct session *s)
{
	return control__stopped(s->ctl) != REC_STOP_NONE && !s->o->argv;
}

static void run_loop(struct session *s)
{
	uint64_t deadline = s->o->duration_s > 0 ? s->start_ns + s->o->duration_s * 1e9 : 0;
	uint64_t next_drain = now_ns() + DRAIN_NS;

	for (;;) {
		uint64_t t = now_ns();
		/* Rounded up: rounded down, the last part of a millisecond before a drain would be
		 * spent polling with no timeout, over and over. */
		int wait_ms = t < next_drain ? (int)((next_drain - t + 999999) / 1000000) : 0;

		wait_ms = control__wait_ms(s->ctl, t, wait_ms);
		read_events(s, sampler__wait_ms(s->sp, wait_ms));
		control__poll(s->ctl, now_ns());
		if (steps__done(s->steps)) /* the last step of --steps ended */
			control__cap(s->ctl, REC_STOP_STEPS, now_ns());
		if (targets__done(s->tg) || capped(s))
			break;
		if (stop_signal && targets__stop(s->tg, stop_signal))
			break;
		t = now_ns();
		if (deadline && t >= deadline) {
			s->duration_stop = !stop_signal;
			if (targets__stop(s->tg, SIGTERM))
				break;
		}
		if (t >= next_drain) {
			flip_and_drain(s);
			next_drain = t + DRAIN_NS;
			if (capped(s))
				break;
		}
	}
}

static int finish(struct session *s, int status)
{
	struct rec_kv kv[CONTROL_END_KV];
	char names[2 * REC_END_ENABLED_MAX][32];
	uint64_t end;
	size_t n;
	int err;

	/* Both buffers: the active one holds the last period, the idle one is empty. */
	sampler__ending(s->sp);
	flip_and_drain(s);
	flip_and_drain(s);
	sampler__flush_ticks(s->sp);
	collector__finish(s->col);
	regions__finish(s->rg);
	steps__flush(s->steps);
	gpu__finish(s->gpu);
	gpu_attach__finish(s->ga);
	metrics__finish(s->mt);
	write_stats(s, true);
	end = now_ns();
	n = control__end(s->ctl, end, kv, names);
	stats__end(s->w, end - s->start_ns, status, s->drains, kv, n);
	err = rec_writer__close(s->w);
	s->w = NULL;
	if (err) {
		log_err("writing %s failed: %s; the recording is incomplete", s->o->output,
			strerror(-err));
		return PERCH_EXIT_OUTPUT;
	}
	return 0;
}

static void session_free(struct session *s)
{
	regions__finish(s->rg); /* switch attached runtimes off, whatever went wrong */
	procs__free(s->procs);	/* before its listeners */
	unwinder__free(s->uw);
	regions__free(s->rg);
	gpu__free(s->gpu);
	gpu_attach__free(s->ga);
	collector__free(s->col);
	metrics__free(s->mt);
	steps__free(s->steps);
	sampler__free(s->sp);
	targets__free(s->tg);
	rec_writer__discard(s->w); /* a run that failed before finish(): unpublished, removed */
	control__free(s->ctl);
}

int record__run(const struct record_opts *o, struct record_result *res)
{
	struct session s = {.o = o};
	struct sigaction sa = {.sa_handler = on_signal};
	int ret, status = 0, end;

	*res = (struct record_result){0};
	ret = control__open(o, &s.ctl); /* a bad --control is a usage error: before the rest */
	if (!ret)
		ret = preflight(o);
	if (ret) {
		control__free(s.ctl);
		return ret;
	}
	ret = setup(&s);
	if (!ret)
		ret = publish(&s);
	if (ret)
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s.start_ns = now_ns();
	s.flip_ns = s.start_ns;
	control__start(s.ctl, s.sp, s.start_ns);
	ret = targets__start(s.tg, s.sp, s.procs, s.rg);
	if (s.gpu)
		gpu__launched(s.gpu);
	if (!ret)
		ret = start_gpu_attach(&s);
	/* From here on, whatever happens, what was collected is written. */
	stats__meta(s.w, &(const struct stats_parts){o, s.sp, s.tg, s.col, s.uw, s.rg, s.max_stack,
						     s.gpu, s.ga, s.mt, s.steps});
	if (ret && (o->argv || !targets__live(s.tg) || ret == PERCH_EXIT_BUSY)) {
		status = ret;
		goto end;
	}
	run_loop(&s);
	status = targets__status(s.tg, ret);
end:
	end = finish(&s, status);
	res->complete = !end && status != PERCH_EXIT_BUSY;
	/* the command died of perch's own SIGTERM at -d: that is the run asked for, not a failure
	 * (an exit status the command chose when it caught the signal stays its own) */
	res->duration_stopped = o->argv && s.duration_stop && status == 128 + SIGTERM;
	ret = end ? end : res->duration_stopped ? 0 : status;
out:
	session_free(&s);
	return ret;
}
