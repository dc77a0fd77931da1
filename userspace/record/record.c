// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record`: the recording run. Checks what the user can get wrong before anything starts,
 * opens the sampler (sampler.c) and the parts of the run (run_parts.c's table: those that follow
 * the targets listen to the process table, procs.c), starts the targets (targets.c), and then
 * drains the sampler's counts every SAMPLER_DRAIN_MS into the recording file until the targets
 * are gone, each part following the drains, with the counts of every part (stats.c).
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
#include "control.h"
#include "format/recording.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "metrics.h"
#include "proc.h"
#include "procs.h"
#include "record.h"
#include "record/collect/collect.h"
#include "record/gpu/gpu.h"
#include "record/gpu/gpu_attach.h"
#include "record/regions/regions.h"
#include "record/sampler/sampler.h"
#include "run.h"
#include "stats.h"
#include "steps.h"
#include "targets.h"

#define DRAIN_NS ((uint64_t)SAMPLER_DRAIN_MS * 1000000ull)
/* perch's own costs run on while the targets idle: written once a second and at the end, so an
 * idle recording grows by one small STATS block a second (the writer drops unchanged counters). */
#define COST_EVERY_DRAINS (1000 / SAMPLER_DRAIN_MS)

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

static int start_gpu_attach(struct record_run *s)
{
	if (s->ga && gpu_attach__start(s->ga, s->o->pids, s->o->npids)) {
		log_err("gpu: %s", strerror(ENOMEM));
		return PERCH_EXIT_INTERNAL;
	}
	return 0;
}

static int setup(struct record_run *s)
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
	return ret ? ret : run_parts_open(s);
}

/* Everything has opened: only now does the recording take the output's name (the previous one
 * kept as .old); a run that failed before leaves it untouched. The exit status. */
static int publish(struct record_run *s)
{
	int err = rec_writer__publish(s->w);

	if (!err)
		return 0;
	log_err("cannot write %s: %s", s->o->output, strerror(-err));
	return PERCH_EXIT_OUTPUT;
}

/* Process events first (forks, exits), then the mmap records they make relevant, then forget the
 * targets that exited: their last mmap records have been read. */
static void read_events(struct record_run *s, int timeout_ms)
{
	sampler__read_events(s->sp, timeout_ms);
	regions__poll(s->rg);
	gpu__poll(s->gpu);
	gpu_attach__poll(s->ga);
	procs__flush(s->procs);
}

/* One counted bucket of the sampler, with the region stack of its thread; its key id for the
 * timeline. */
static uint32_t add_sample(void *ctx, const struct raw_sample *raw)
{
	struct record_run *s = ctx;
	uint32_t nr =
		regions__names(s->rg, raw->pid, raw->region_stack, s->rnames, PERCH_REGION_DEPTH);

	if (raw->flags & RAW_REGIONS_LOST || (raw->region_stack && !nr))
		regions__count_lost(s->rg, raw->count);
	collector__add(s->col, raw, s->rnames, nr);
	metrics__sampled(s->mt, raw->pid);
	steps__sample(s->steps, raw->pid, raw->step, collector__last_key(s->col), raw->count);
	return collector__last_key(s->col);
}

/* The counts of a drain are the window [last flip, this flip) on CLOCK_MONOTONIC. */
static void flip_and_drain(struct record_run *s)
{
	uint64_t flip;

	read_events(s, 0); /* fork/exec/mmap events first: they say whose maps to use */
	flip = sampler__drain(s->sp, add_sample, s);
	run_parts_drained(s, flip);
	if (s->stop_signal && !stop_signal) /* perch top's on_drain asked to stop */
		stop_signal = s->stop_signal;
	s->stop_signal = 0;
	stats__write(s, s->drains % COST_EVERY_DRAINS == 0);
	s->drains++;
	/* --max-size without --timeline caps the whole file: checked a drain at a time. */
	if (!s->o->timeline && s->o->max_size && rec_writer__size(s->w) >= s->o->max_size) {
		control__cap(s->ctl, REC_STOP_MAX_SIZE, flip);
		gpu__stop(s->gpu); /* the command runs on: its channel is read, not written */
	}
}

/* A cap ends an attached recording; a launched command runs on, unsampled, to its end. */
static bool capped(struct record_run *s)
{
	return control__stopped(s->ctl) != REC_STOP_NONE && !s->o->argv;
}

static void run_loop(struct record_run *s)
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

static int finish(struct record_run *s, int status)
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
	run_parts_finish(s);
	stats__write(s, true);
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

static void session_free(struct record_run *s)
{
	regions__finish(s->rg); /* switch attached runtimes off, whatever went wrong */
	procs__free(s->procs);	/* before its listeners */
	run_parts_free(s);
	targets__free(s->tg);
	rec_writer__discard(s->w); /* a run that failed before finish(): unpublished, removed */
	control__free(s->ctl);
}

int record__run(const struct record_opts *o, struct record_result *res)
{
	struct record_run s = {.o = o};
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
	sampler__targets_started(s.sp);
	if (s.gpu)
		gpu__launched(s.gpu);
	if (!ret)
		ret = start_gpu_attach(&s);
	/* From here on, whatever happens, what was collected is written. */
	stats__meta(&s);
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
	res->signalled = stop_signal;
	res->forgotten = s.forgotten;
out:
	session_free(&s);
	return ret;
}
