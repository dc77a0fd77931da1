// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A recording's META, STATS and END blocks (see stats.h): one entry per key of format/keys.h,
 * from the part that counts it.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include "control.h"
#include "format/keys.h"
#include "stats.h"
#include "steps.h"

static struct rec_kv meta_kv(enum rec_meta key, const char *value)
{
	return (struct rec_kv){.key = (char *)rec_meta_keys[key], .str = (char *)value};
}

int stats__meta(struct rec_writer *w, const struct stats_parts *p)
{
	static const char *const unwind_names[] = {[PERCH_UNWIND_FP] = "fp",
						   [PERCH_UNWIND_AUTO] = "auto",
						   [PERCH_UNWIND_DWARF] = "dwarf"};
	char command[4096], pids[1024], freq[32], start[64], maxstack[32], budget[32], steps[48];
	char period[256];
	struct utsname u;
	time_t now = time(NULL);
	struct rec_kv kv[18];
	size_t n = 0;

	targets__command(p->tg, command, sizeof(command));
	targets__pids(p->tg, pids, sizeof(pids));
	snprintf(freq, sizeof(freq), "%u", p->o->freq);
	snprintf(maxstack, sizeof(maxstack), "%u", p->max_stack);
	snprintf(budget, sizeof(budget), "%u", REC_WINDOW_BUDGET);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	uname(&u);
	kv[n++] = meta_kv(REC_META_command, command);
	kv[n++] = meta_kv(REC_META_pids, pids);
	kv[n++] = meta_kv(REC_META_mode, p->o->all_cpus ? "system-wide"
					 : p->o->argv	? "launch"
							: "attach");
	kv[n++] = meta_kv(REC_META_event, sampler__event_name(p->sp));
	kv[n++] = meta_kv(REC_META_frequency, freq);
	kv[n++] = meta_kv(REC_META_start_time, start);
	kv[n++] = meta_kv(REC_META_hostname, u.nodename);
	kv[n++] = meta_kv(REC_META_kernel, u.release);
	kv[n++] = meta_kv(REC_META_max_stack, maxstack);
	kv[n++] = meta_kv(REC_META_unwind, unwind_names[sampler__unwind_mode(p->sp)]);
	/* The windows' clock, bpf_ktime_get_ns()'s, and how many the writer keeps. */
	kv[n++] = meta_kv(REC_META_clock, "CLOCK_MONOTONIC");
	kv[n++] = meta_kv(REC_META_window_budget, budget);
	if (p->gpu) /* the GPU section is shown, data or not */
		kv[n++] = meta_kv(REC_META_gpu, "cupti");
	else if (p->ga) /* --gpu -p: libcuda's entry points, no durations */
		kv[n++] = meta_kv(REC_META_gpu, "attach");
	sampler__periods(p->sp, period, sizeof(period));
	if (period[0])
		kv[n++] = meta_kv(REC_META_period, period);
	if (p->o->cpus)
		kv[n++] = meta_kv(REC_META_cpus, p->o->cpus);
	snprintf(steps, sizeof(steps), "%llu:%llu", (unsigned long long)p->o->steps_first,
		 (unsigned long long)p->o->steps_last);
	if (p->o->steps) /* only these steps were recorded */
		kv[n++] = meta_kv(REC_META_steps, steps);
	if (p->o->only_region) /* only ticks inside this region were counted */
		kv[n++] = meta_kv(REC_META_only_region, p->o->only_region);
	return rec_writer__meta(w, kv, n);
}

static struct rec_kv stat_kv(enum rec_stat key, uint64_t value)
{
	return (struct rec_kv){.key = (char *)rec_stat_keys[key], .value = value};
}

static size_t cost_kv(struct rec_kv *kv, const struct sampler *sp)
{
	uint64_t cost[4];
	struct rusage ru;
	size_t n = 0;

	sampler__cost(sp, &cost[0], &cost[1]);
	getrusage(RUSAGE_SELF, &ru);
	cost[2] = ru.ru_utime.tv_sec * 1000000ull + ru.ru_utime.tv_usec;
	cost[3] = ru.ru_stime.tv_sec * 1000000ull + ru.ru_stime.tv_usec;
#define COST_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, cost[i]);
	REC_STATS_COST(COST_KV)
	return n;
}

static size_t timeline_kv(struct rec_kv *kv, const struct sampler *sp)
{
	uint64_t v[1] = {sampler__ticks_unkeyed(sp)};
	size_t n = 0;

#define TIMELINE_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, v[i]);
	REC_STATS_TIMELINE(TIMELINE_KV)
	return n;
}

/* --gpu -p: a call whose stack got no key id at its drain is lost too. */
static size_t gpu_attach_kv(struct rec_kv *kv, const struct stats_parts *p, const uint64_t *totals,
			    const bool *ok)
{
	size_t n = 0;

#define GPU_ATTACH_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, gpu_attach__stat(p->ga, i));
	REC_STATS_GPU_ATTACH(GPU_ATTACH_KV)
#define GPU_CALLS_KV(k, i)                                                                 \
	if (ok[i])                                                                         \
		kv[n++] = stat_kv(REC_STAT_##k,                                            \
				  totals[i] + (i == PERCH_STAT_GPU_CALL_LOST               \
						       ? sampler__gpu_calls_unkeyed(p->sp) \
						       : 0));
	REC_STATS_GPU_CALLS(GPU_CALLS_KV)
	return n;
}

/* --off-cpu --timeline: the block spans written, lost (ring full, or no key id) and dropped
 * past --max-size; the kv written. */
static size_t offspans_kv(struct rec_kv *kv, const struct rec_writer *w,
			  const struct stats_parts *p, const uint64_t *totals, const bool *ok)
{
	uint64_t ring = ok[PERCH_STAT_OFFSPAN_LOST] ? totals[PERCH_STAT_OFFSPAN_LOST] : 0;

	kv[0] = stat_kv(REC_STAT_off_cpu_spans, sampler__off_spans(p->sp));
	kv[1] = stat_kv(REC_STAT_off_cpu_spans_lost, ring + sampler__off_spans_unkeyed(p->sp));
	kv[2] = stat_kv(REC_STAT_off_cpu_spans_dropped, rec_writer__offspans_dropped(w));
	return 3;
}

void stats__write(struct rec_writer *w, const struct stats_parts *p, bool cost)
{
	uint64_t totals[PERCH_STAT_MAX];
	bool ok[PERCH_STAT_MAX];
	struct rec_kv kv[REC_STAT_NR];
	size_t n = 0;

	sampler__stats(p->sp, totals, ok);
#define BPF_KV(k, i) \
	if (ok[i])   \
		kv[n++] = stat_kv(REC_STAT_##k, totals[i]);
	REC_STATS_BPF(BPF_KV)
#define COLLECT_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, collector__stat(p->col, i));
	REC_STATS_COLLECT(COLLECT_KV)
	/* Written only when it ran. */
#define UNWINDER_KV(k, i) \
	if (p->uw)        \
		kv[n++] = stat_kv(REC_STAT_##k, unwinder__stat(p->uw, i));
	REC_STATS_UNWINDER(UNWINDER_KV)
	/* Early stacks: only when the sampler unwinds from tables. */
#define EARLY_BPF_KV(k, i)  \
	if (p->uw && ok[i]) \
		kv[n++] = stat_kv(REC_STAT_##k, totals[i]);
	REC_STATS_EARLY_BPF(EARLY_BPF_KV)
#define EARLY_KV(k, i) \
	if (p->uw)     \
		kv[n++] = stat_kv(REC_STAT_##k, sampler__early_stat(p->sp, i));
	REC_STATS_EARLY(EARLY_KV)
#define REGIONS_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, regions__stat(p->rg, i));
	REC_STATS_REGIONS(REGIONS_KV)
	if (p->o->timeline)
		n += timeline_kv(kv + n, p->sp);
	if (cost)
		n += cost_kv(kv + n, p->sp);
	kv[n++] = stat_kv(REC_STAT_timeline_events_dropped, rec_writer__events_dropped(w));
	kv[n++] = stat_kv(REC_STAT_timeline_spans_dropped, rec_writer__spans_dropped(w));
	kv[n++] = stat_kv(REC_STAT_entries_refused, rec_writer__refused(w));
#define REGIONS_REFUSED_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, regions__stat(p->rg, i));
	REC_STATS_REGIONS_REFUSED(REGIONS_REFUSED_KV)
#define GPU_KV(k, i) \
	if (p->gpu)  \
		kv[n++] = stat_kv(REC_STAT_##k, gpu__stat(p->gpu, i));
	REC_STATS_GPU(GPU_KV)
	/* A launch whose stack got no key id at its drain is lost too. */
#define LAUNCH_KV(k, i)                                                                   \
	if (p->gpu && ok[i])                                                              \
		kv[n++] = stat_kv(REC_STAT_##k,                                           \
				  totals[i] + (i == PERCH_STAT_LAUNCH_LOST                \
						       ? sampler__launches_unkeyed(p->sp) \
						       : 0));
	REC_STATS_LAUNCH(LAUNCH_KV)
	if (p->ga)
		n += gpu_attach_kv(kv + n, p, totals, ok);
	if (p->mt) {
		kv[n++] = stat_kv(REC_STAT_metrics_samples, metrics__samples(p->mt));
		kv[n++] = stat_kv(REC_STAT_metrics_cost_ns, metrics__cost_ns(p->mt));
	}
	/* A block whose key got no key id is lost too. */
#define OFFCPU_KV(k, i)                                                                  \
	if (p->o->off_cpu && ok[i])                                                      \
		kv[n++] = stat_kv(REC_STAT_##k,                                          \
				  totals[i] + (i == PERCH_STAT_OFF_CPU_LOST              \
						       ? sampler__off_cpu_unkeyed(p->sp) \
						       : 0));
	REC_STATS_OFFCPU(OFFCPU_KV)
	if (regions__stat(p->rg, REGIONS_STEPS_PROCS)) {
		kv[n++] = stat_kv(REC_STAT_region_control_lost,
				  regions__stat(p->rg, REGIONS_LOG_LOST));
		kv[n++] = stat_kv(REC_STAT_steps_dropped, steps__dropped(p->steps));
		kv[n++] = stat_kv(REC_STAT_region_control_refused,
				  regions__stat(p->rg, REGIONS_LOG_REFUSED));
		kv[n++] = stat_kv(REC_STAT_steps_refused, steps__refused(p->steps));
	}
	if (p->o->off_cpu && p->o->timeline)
		n += offspans_kv(kv + n, w, p, totals, ok);
#define LAUNCHED_KV(k, i)        \
	if (p->o->argv && ok[i]) \
		kv[n++] = stat_kv(REC_STAT_##k, totals[i]);
	REC_STATS_LAUNCHED(LAUNCHED_KV)
	rec_writer__stats(w, kv, n);
}

int stats__end(struct rec_writer *w, uint64_t duration_ns, int status, uint64_t drains,
	       const struct rec_kv *extra, size_t nextra)
{
	struct rec_kv kv[3 + CONTROL_END_KV] = {
		{.key = (char *)rec_end_keys[REC_END_duration_ns], .value = duration_ns},
		{.key = (char *)rec_end_keys[REC_END_exit_status], .value = (uint64_t)status},
		{.key = (char *)rec_end_keys[REC_END_drains], .value = drains},
	};

	for (size_t i = 0; i < nextra && i < CONTROL_END_KV; i++)
		kv[3 + i] = extra[i];
	return rec_writer__end(w, kv, 3 + (nextra < CONTROL_END_KV ? nextra : CONTROL_END_KV));
}
