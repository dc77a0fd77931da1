// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parts of the recording run (struct record_part, run.h): one row each, walked in the order
 * of the table. The order is the run's: the unwinder listens to the process table before the
 * collector (the sampler needs its tables from a process's next tick on); at a drain, the
 * collector's counts become a window (and perch top peeks at them first) before the regions'
 * spans and steps join the file, which is flushed before the metrics' series are written; at the
 * end the sampler's held-back ticks come first. A part with files of its own keeps its row there
 * (offcpu.c); the rest are here.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "format/keys.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "metrics.h"
#include "record/collect/collect.h"
#include "record/gpu/gpu.h"
#include "record/gpu/gpu_attach.h"
#include "record/python/python.h"
#include "record/regions/regions.h"
#include "record/sampler/sampler.h"
#include "run.h"
#include "steps.h"
#include "targets.h"
#include "unwinder.h"

extern const struct record_part run_offcpu_part; /* offcpu.c: --off-cpu */

struct rec_kv run_stat_kv(enum rec_stat key, uint64_t value)
{
	return (struct rec_kv){.key = (char *)rec_stat_keys[key], .value = value};
}

#define KV(k, v) (kv[n++] = run_stat_kv(REC_STAT_##k, (v)))

/* The sampler (opened before the table: the parts below take its maps). */
static void sampler_finish(struct record_run *r)
{
	sampler__flush_ticks(r->sp);
}

static void sampler_free(struct record_run *r)
{
	sampler__free(r->sp);
}

static size_t cost_kv(struct rec_kv *kv, const struct sampler *sp)
{
	uint64_t cost[6];
	struct rusage ru;
	size_t n = 0;

	sampler__cost(sp, &cost[0], &cost[1], &cost[4], &cost[5]);
	getrusage(RUSAGE_SELF, &ru);
	cost[2] = ru.ru_utime.tv_sec * 1000000ull + ru.ru_utime.tv_usec;
	cost[3] = ru.ru_stime.tv_sec * 1000000ull + ru.ru_stime.tv_usec;
#define COST_KV(k, i) KV(k, cost[i]);
	REC_STATS_COST(COST_KV)
	return n;
}

/* Its counters; early stacks only when it unwinds from tables; its cost when asked. */
static size_t sampler_stats(const struct record_run *r, const struct run_counters *c,
			    struct rec_kv *kv)
{
	size_t n = 0;

#define BPF_KV(k, i)  \
	if (c->ok[i]) \
		KV(k, c->totals[i]);
	REC_STATS_BPF(BPF_KV)
#define EARLY_BPF_KV(k, i)     \
	if (r->uw && c->ok[i]) \
		KV(k, c->totals[i]);
	REC_STATS_EARLY_BPF(EARLY_BPF_KV)
#define EARLY_KV(k, i) \
	if (r->uw)     \
		KV(k, sampler__early_stat(r->sp, i));
	REC_STATS_EARLY(EARLY_KV)
#define LAUNCHED_KV(k, i)           \
	if (r->o->argv && c->ok[i]) \
		KV(k, c->totals[i]);
	REC_STATS_LAUNCHED(LAUNCHED_KV)
	if (c->cost)
		n += cost_kv(kv + n, r->sp);
	return n;
}

/* The unwinder, only when the sampler unwinds from tables. */
static int unwinder_open(struct record_run *r)
{
	const struct sampler_fds *fds = sampler__fds(r->sp);

	if (sampler__unwind_mode(r->sp) == PERCH_UNWIND_FP)
		return 0;
	r->uw = unwinder__new(fds->unwind_rows, fds->proc_unwind, fds->early_until, r->procs);
	if (!r->uw) {
		log_err("unwind tables: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

static void unwinder_free(struct record_run *r)
{
	unwinder__free(r->uw);
}

static size_t unwinder_stats(const struct record_run *r, const struct run_counters *c,
			     struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
#define UNWINDER_KV(k, i) \
	if (r->uw)        \
		KV(k, unwinder__stat(r->uw, i));
	REC_STATS_UNWINDER(UNWINDER_KV)
	return n;
}

/* The collector. Key ids name --timeline's ticks, --gpu's launch stacks and the samples of
 * steps. */
static int collector_open(struct record_run *r)
{
	r->col = collector__new(r->w, r->max_stack, r->procs);
	if (!r->col)
		return PERCH_EXIT_INTERNAL;
	collector__set_lines(r->col, !r->o->no_lines);
	collector__set_kernel_syms(r->col, sampler__kernel_syms(r->sp));
	collector__set_keys(r->col, true);
	collector__set_python(r->col, r->py);
	return 0;
}

static void collector_drained(struct record_run *r, uint64_t flip)
{
	(void)flip;
	collector__drained(r->col);
}

static void collector_finish(struct record_run *r)
{
	collector__finish(r->col);
}

static void collector_free(struct record_run *r)
{
	collector__free(r->col);
}

/* CPython: its processes found and told to the sampler (before the collector, which names their
 * frames through it). */
static int python_open(struct record_run *r)
{
	if (r->o->no_python)
		return 0;
	r->py = python__new(sampler__fds(r->sp)->py_procs, r->procs);
	return r->py ? 0 : PERCH_EXIT_INTERNAL;
}

static void python_free(struct record_run *r)
{
	python__free(r->py);
}

static size_t python_stats(const struct record_run *r, const struct run_counters *c,
			   struct rec_kv *kv)
{
	size_t n = 0;

	if (!python__stat(r->py, PYTHON_PROCS) && !python__stat(r->py, PYTHON_UNSUPPORTED))
		return 0;
	REC_STATS_PYTHON_BPF(BPF_KV)
#define PYTHON_KV(k, i) KV(k, python__stat(r->py, i));
	REC_STATS_PYTHON(PYTHON_KV)
	return n;
}

static size_t collector_stats(const struct record_run *r, const struct run_counters *c,
			      struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
#define COLLECT_KV(k, i) KV(k, collector__stat(r->col, i));
	REC_STATS_COLLECT(COLLECT_KV)
	return n;
}

/* --timeline: one tick (dropped past --max-size: the writer counts it). */
static void add_tick(void *ctx, uint64_t time_ns, uint32_t key)
{
	struct record_run *r = ctx;

	rec_writer__event(r->w, time_ns, key);
}

static int timeline_open(struct record_run *r)
{
	sampler__on_tick(r->sp, add_tick, r);
	return 0;
}

static size_t timeline_stats(const struct record_run *r, const struct run_counters *c,
			     struct rec_kv *kv)
{
	uint64_t v[1] = {sampler__ticks_unkeyed(r->sp)};
	size_t n = 0;

	(void)c;
	if (!r->o->timeline)
		return 0;
#define TIMELINE_KV(k, i) KV(k, v[i]);
	REC_STATS_TIMELINE(TIMELINE_KV)
	return n;
}

/* A drain's counts are the window [last flip, this flip) on CLOCK_MONOTONIC; perch top and agent
 * peek at them before. */
static void window_drained(struct record_run *r, uint64_t flip)
{
	int sig;

	if (r->o->on_drain && (sig = r->o->on_drain(r->o->drain_ctx, r->w, r->flip_ns, flip)))
		r->stop_signal = sig;
	rec_writer__window(r->w, r->flip_ns, flip);
	r->flip_ns = flip;
}

/* Regions: their spans up to the flip, and their tables. */
static int regions_open(struct record_run *r)
{
	const struct sampler_fds *fds = sampler__fds(r->sp);

	r->rg = regions__new(r->w, fds->region_procs, fds->region_stacks, r->procs);
	if (!r->rg)
		return PERCH_EXIT_INTERNAL;
	regions__set_timeline(r->rg, r->o->timeline);
	return 0;
}

static void regions_drained(struct record_run *r, uint64_t flip)
{
	regions__spans_until(r->rg, flip);
	regions__collect(r->rg);
}

static void regions_finish(struct record_run *r)
{
	regions__finish(r->rg);
}

static void regions_free(struct record_run *r)
{
	regions__free(r->rg);
}

static size_t regions_stats(const struct record_run *r, const struct run_counters *c,
			    struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
#define REGIONS_KV(k, i) KV(k, regions__stat(r->rg, i));
	REC_STATS_REGIONS(REGIONS_KV)
	REC_STATS_REGIONS_REFUSED(REGIONS_KV)
	return n;
}

/* Steps and program pauses, told by the regions' control logs. */
static int steps_open(struct record_run *r)
{
	const struct record_opts *o = r->o;

	r->steps = steps__new(r->w, o->steps, o->steps_first, o->steps_last);
	if (!r->steps)
		return PERCH_EXIT_INTERNAL;
	regions__set_ctl(r->rg, o->steps, o->steps_first, o->steps_last, o->only_region,
			 steps__event, r->steps);
	return 0;
}

static void steps_drained(struct record_run *r, uint64_t flip)
{
	(void)flip;
	steps__flush(r->steps);
}

static void steps_finish(struct record_run *r)
{
	steps__flush(r->steps);
}

static void steps_free(struct record_run *r)
{
	steps__free(r->steps);
}

static size_t steps_stats(const struct record_run *r, const struct run_counters *c,
			  struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
	if (!regions__stat(r->rg, REGIONS_STEPS_PROCS))
		return 0;
	KV(region_control_lost, regions__stat(r->rg, REGIONS_LOG_LOST));
	KV(steps_dropped, steps__dropped(r->steps));
	KV(region_control_refused, regions__stat(r->rg, REGIONS_LOG_REFUSED));
	KV(steps_refused, steps__refused(r->steps));
	return n;
}

/* The file: what the drain made, written. */
static void file_drained(struct record_run *r, uint64_t flip)
{
	(void)flip;
	rec_writer__flush(r->w);
}

static size_t file_stats(const struct record_run *r, const struct run_counters *c,
			 struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
	KV(timeline_events_dropped, rec_writer__events_dropped(r->w));
	KV(timeline_spans_dropped, rec_writer__spans_dropped(r->w));
	KV(entries_refused, rec_writer__refused(r->w));
	return n;
}

/* --metrics: a failure to start them is only a warning. */
static int metrics_open(struct record_run *r)
{
	if (r->o->metrics_ms && !(r->mt = metrics__new(r->w, r->procs, r->o->metrics_ms)))
		log_warn("metrics: %s: the recording goes on without them", strerror(errno));
	if (r->o->all_cpus)
		metrics__busy_only(r->mt);
	return 0;
}

static void metrics_drained(struct record_run *r, uint64_t flip)
{
	(void)flip;
	metrics__drained(r->mt);
}

static void metrics_finish(struct record_run *r)
{
	metrics__finish(r->mt);
}

static void metrics_free(struct record_run *r)
{
	metrics__free(r->mt);
}

static size_t metrics_stats(const struct record_run *r, const struct run_counters *c,
			    struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
	if (!r->mt)
		return 0;
	KV(metrics_samples, metrics__samples(r->mt));
	KV(metrics_cost_ns, metrics__cost_ns(r->mt));
	return n;
}

/* --gpu with a command: a launch's stack and region stack, keyed (SAMPLER_NO_KEY: lost, counted
 * in STATS). */
static void add_launch(void *ctx, const struct perch_launch *l, uint32_t key)
{
	struct record_run *r = ctx;

	if (key != SAMPLER_NO_KEY)
		gpu__launch_key(r->gpu, l->key.tgid, l->key.tid, l->correlation_id, l->time_ns,
				key);
}

/* --gpu with a command: the channel, handed to the command at its exec; the probe on its
 * launches. */
static int gpu_open(struct record_run *r)
{
	char lib[PATH_MAX];

	if (!r->o->gpu || !r->o->argv)
		return 0;
	if (gpu_find_library(lib, sizeof(lib)))
		return PERCH_EXIT_NOGPU; /* checked before: the file went away */
	r->gpu = gpu__new(r->w, lib);
	if (!r->gpu) {
		log_err("gpu: the channel: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	targets__before_exec(r->tg, gpu__child, r->gpu);
	return sampler__probe_launches(r->sp, lib, add_launch, r);
}

static void gpu_finish(struct record_run *r)
{
	gpu__finish(r->gpu);
}

static void gpu_free(struct record_run *r)
{
	gpu__free(r->gpu);
}

/* A launch whose stack got no key id at its drain is lost too. */
static size_t gpu_stats(const struct record_run *r, const struct run_counters *c, struct rec_kv *kv)
{
	size_t n = 0;

	if (!r->gpu)
		return 0;
#define GPU_KV(k, i) KV(k, gpu__stat(r->gpu, i));
	REC_STATS_GPU(GPU_KV)
#define LAUNCH_KV(k, i)           \
	if (c->ok[i])             \
		KV(k,             \
		   c->totals[i] + \
			   (i == PERCH_STAT_LAUNCH_LOST ? sampler__launches_unkeyed(r->sp) : 0));
	REC_STATS_LAUNCH(LAUNCH_KV)
	return n;
}

/* --gpu -p: libcuda's entry points, probed once the processes are targets (record.c starts
 * them). */
static int gpu_attach_open(struct record_run *r)
{
	int ret = 0;

	if (!r->o->gpu || r->o->argv)
		return 0;
	r->ga = gpu_attach__new(r->w, r->sp, r->procs, &ret);
	if (!r->ga && !ret) {
		log_err("gpu: %s", strerror(errno));
		ret = PERCH_EXIT_INTERNAL;
	}
	return ret;
}

static void gpu_attach_finish(struct record_run *r)
{
	gpu_attach__finish(r->ga);
}

static void gpu_attach_free(struct record_run *r)
{
	gpu_attach__free(r->ga);
}

/* A call whose stack got no key id at its drain is lost too. */
static size_t gpu_attach_stats(const struct record_run *r, const struct run_counters *c,
			       struct rec_kv *kv)
{
	size_t n = 0;

	if (!r->ga)
		return 0;
#define GPU_ATTACH_KV(k, i) KV(k, gpu_attach__stat(r->ga, i));
	REC_STATS_GPU_ATTACH(GPU_ATTACH_KV)
#define GPU_CALLS_KV(k, i)                                                        \
	if (c->ok[i])                                                             \
		KV(k, c->totals[i] + (i == PERCH_STAT_GPU_CALL_LOST               \
					      ? sampler__gpu_calls_unkeyed(r->sp) \
					      : 0));
	REC_STATS_GPU_CALLS(GPU_CALLS_KV)
	return n;
}

/* o->forget_exited: a process is forgotten this long after its exit: its early ticks and its
 * early off-CPU keys wait up to PERCH_EARLY_NS for their walk (sampler_early.c), and the drains
 * that hand them on need its image. */
#define FORGET_AFTER_NS (PERCH_EARLY_NS + 2000000000ull)
#define SWEEP_EVERY_NS	1000000000ull

/* FORGET_AFTER_NS, or PERCH_TEST_FORGET_AFTER_MS (tests only: a short run sees its exited
 * processes forgotten). */
static uint64_t forget_after_ns(void)
{
	const char *v = getenv("PERCH_TEST_FORGET_AFTER_MS");
	long ms = v ? atol(v) : 0;

	return ms > 0 && ms < 60000 ? (uint64_t)ms * 1000000ull : FORGET_AFTER_NS;
}

static void forget_drained(struct record_run *r, uint64_t flip)
{
	uint64_t after = forget_after_ns();

	if (!r->o->forget_exited || flip < after ||
	    flip < r->swept_ns + (after < SWEEP_EVERY_NS ? after : SWEEP_EVERY_NS))
		return;
	r->swept_ns = flip;
	r->forgotten += procs__sweep(r->procs, flip - after);
}

static size_t forget_stats(const struct record_run *r, const struct run_counters *c,
			   struct rec_kv *kv)
{
	size_t n = 0;

	(void)c;
	if (!r->o->forget_exited)
		return 0;
#define FORGET_KV(k, i) KV(k, r->forgotten + (i));
	REC_STATS_FORGET(FORGET_KV)
	return n;
}

static const struct record_part sampler_part = {
	.name = "sampler",
	.finish = sampler_finish,
	.free = sampler_free,
	.stats = sampler_stats,
};
static const struct record_part unwinder_part = {
	.name = "unwinder",
	.open = unwinder_open,
	.free = unwinder_free,
	.stats = unwinder_stats,
};
static const struct record_part collector_part = {
	.name = "collector",
	.open = collector_open,
	.drained = collector_drained,
	.finish = collector_finish,
	.free = collector_free,
	.stats = collector_stats,
};
static const struct record_part timeline_part = {
	.name = "timeline",
	.open = timeline_open,
	.stats = timeline_stats,
};
static const struct record_part window_part = {
	.name = "window",
	.drained = window_drained,
};
static const struct record_part regions_part = {
	.name = "regions",
	.open = regions_open,
	.drained = regions_drained,
	.finish = regions_finish,
	.free = regions_free,
	.stats = regions_stats,
};
static const struct record_part steps_part = {
	.name = "steps",
	.open = steps_open,
	.drained = steps_drained,
	.finish = steps_finish,
	.free = steps_free,
	.stats = steps_stats,
};
static const struct record_part file_part = {
	.name = "file",
	.drained = file_drained,
	.stats = file_stats,
};
static const struct record_part metrics_part = {
	.name = "metrics",
	.open = metrics_open,
	.drained = metrics_drained,
	.finish = metrics_finish,
	.free = metrics_free,
	.stats = metrics_stats,
};
static const struct record_part gpu_part = {
	.name = "gpu",
	.open = gpu_open,
	.finish = gpu_finish,
	.free = gpu_free,
	.stats = gpu_stats,
};
static const struct record_part gpu_attach_part = {
	.name = "gpu-attach",
	.open = gpu_attach_open,
	.finish = gpu_attach_finish,
	.free = gpu_attach_free,
	.stats = gpu_attach_stats,
};

static const struct record_part python_part = {
	.name = "python",
	.open = python_open,
	.free = python_free,
	.stats = python_stats,
};
static const struct record_part forget_part = {
	.name = "forget",
	.drained = forget_drained,
	.stats = forget_stats,
};
static const struct record_part *const parts[] = {
	&sampler_part,	  &unwinder_part, &python_part,	    &collector_part, &timeline_part,
	&run_offcpu_part, &window_part,	  &regions_part,    &steps_part,     &file_part,
	&metrics_part,	  &gpu_part,	  &gpu_attach_part, &forget_part,
};

#define NPARTS (sizeof(parts) / sizeof(parts[0]))

int run_parts_open(struct record_run *r)
{
	for (size_t i = 0; i < NPARTS; i++) {
		int ret = parts[i]->open ? parts[i]->open(r) : 0;

		if (ret) {
			log_debug("record: its part %s did not open", parts[i]->name);
			return ret;
		}
	}
	return 0;
}

void run_parts_drained(struct record_run *r, uint64_t flip)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->drained)
			parts[i]->drained(r, flip);
}

void run_parts_finish(struct record_run *r)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->finish)
			parts[i]->finish(r);
}

void run_parts_free(struct record_run *r)
{
	for (size_t i = NPARTS; i-- > 0;)
		if (parts[i]->free)
			parts[i]->free(r);
}

size_t run_parts_stats(const struct record_run *r, const struct run_counters *c, struct rec_kv *kv)
{
	size_t n = 0;

	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->stats)
			n += parts[i]->stats(r, c, kv + n);
	return n;
}
