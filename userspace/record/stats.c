// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A recording's META, STATS and END blocks (see stats.h): one entry per key of format/keys.h,
 * from the part that counts it (each part's STATS entries: its row of run_parts.c's table).
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include "control.h"
#include "format/keys.h"
#include "record/sampler/sampler.h"
#include "stats.h"
#include "targets.h"

static struct rec_kv meta_kv(enum rec_meta key, const char *value)
{
	return (struct rec_kv){.key = (char *)rec_meta_keys[key], .str = (char *)value};
}

int stats__meta(const struct record_run *p)
{
	static const char *const unwind_names[] = {[PERCH_UNWIND_FP] = "fp",
						   [PERCH_UNWIND_AUTO] = "auto",
						   [PERCH_UNWIND_DWARF] = "dwarf"};
	char command[4096], pids[1024], freq[32], start[64], maxstack[32], budget[32], steps[48];
	char period[256], offset[32];
	struct utsname u;
	time_t now = time(NULL);
	struct timespec real, mono;
	struct rec_kv kv[19];
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
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	snprintf(offset, sizeof(offset), "%lld",
		 (long long)(real.tv_sec - mono.tv_sec) * 1000000000ll +
			 (long long)(real.tv_nsec - mono.tv_nsec));
	kv[n++] = meta_kv(REC_META_realtime_offset_ns, offset);
	return rec_writer__meta(p->w, kv, n);
}

void stats__write(const struct record_run *r, bool cost)
{
	struct run_counters c = {.cost = cost};
	struct rec_kv kv[REC_STAT_NR];

	sampler__stats(r->sp, c.totals, c.ok);
	rec_writer__stats(r->w, kv, run_parts_stats(r, &c, kv));
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
