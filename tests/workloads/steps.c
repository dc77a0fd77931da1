// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A training loop with steps (perch_step, include/perch.h): NSTEPS steps of MS milliseconds of
 * CPU each, in step_work(), with GAP_MS of CPU between steps in between_steps() (no step open).
 * It measures its own truth, the CLOCK_MONOTONIC interval and the CPU time of each step:
 *   step N START_NS END_NS CPU_NS STEAL_NS
 * (STEAL_NS: what /proc/stat counted stolen from all CPUs during the step's work, in whole
 * clock ticks)
 * START is read before perch_step(N), END after the call that ends step N (the next
 * perch_step() or perch_step_end()), so every tick of step N lies inside [START, END].
 *
 *   steps NSTEPS MS GAP_MS [pause|only [COLD]]
 * pause: in step 1, the program pauses its profiler for MS ms of CPU in paused_work(), with a
 *   region "paused_region" begun and ended inside the pause and a 30 ms sleep (nap_paused());
 *   step 2 sleeps 30 ms unpaused (nap_recorded()):
 *   pause START_NS END_NS CPU_NS   (START after perch_profile_pause(), END before the resume)
 * only: each step from step COLD on (default 0) spends 60 % of its CPU inside region "hot"
 *   (hot_work(), the name registered at its first use, after perch came) and the rest outside
 *   it (cold_work()); the steps before COLD are cold only (time for perch to attach); prints
 *   truth hot_cpu_s / truth step_cpu_s (tests/lib.sh truth lines).
 * regions: step N calls region "part" N % 3 + 1 times (half the step's CPU, split evenly), the
 *   rest in step_work(); each call timed from before its begin to after its end:
 *   region N part CALLS TOTAL_NS
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "burn.h"
#include "perch.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The time the hypervisor took from this machine's CPUs so far (/proc/stat's steal, all CPUs;
 * in clock ticks): a cpu-clock tick comes every period of the CPU's clock while the thread is
 * current, stolen time included, which the thread's CPU clock leaves out. */
static uint64_t steal_ns(void)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8)
		v[7] = 0;
	fclose(f);
	return v[7] * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void step_work(double s)
{
	BURN_CPU(s);
}

static __attribute__((noinline)) void between_steps(double s)
{
	BURN_CPU(s);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {0, ms * 1000000};

	nanosleep(&ts, NULL);
}

/* Blocked 30 ms while paused, and 30 ms while recorded (--off-cpu's truth). */
static __attribute__((noinline)) void nap_paused(void)
{
	sleep_ms(30);
}

static __attribute__((noinline)) void nap_recorded(void)
{
	sleep_ms(30);
}

static __attribute__((noinline)) void paused_work(double s)
{
	perch_region_begin("paused_region");
	BURN_CPU(s);
	nap_paused();
	perch_region_end("paused_region");
}

static __attribute__((noinline)) double hot_work(double s)
{
	double got;

	perch_region_begin("hot");
	got = BURN_CPU(s);
	perch_region_end("hot");
	return got;
}

static __attribute__((noinline)) void cold_work(double s)
{
	BURN_CPU(s);
}

static void pause_phase(double s)
{
	uint64_t a, b, c;

	perch_profile_pause();
	a = mono_ns();
	c = cpu_ns();
	paused_work(s);
	c = cpu_ns() - c;
	b = mono_ns();
	perch_profile_resume();
	printf("pause %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", a, b, c);
}

static __attribute__((noinline)) void part_work(double s)
{
	perch_region_begin("part");
	BURN_CPU(s);
	perch_region_end("part");
}

/* Step i's "part" calls, each timed around its begin and end (the recorded time lies inside). */
static void parts(int i, double s)
{
	int calls = i % 3 + 1;
	uint64_t total = 0;

	for (int k = 0; k < calls; k++) {
		uint64_t a = mono_ns();

		part_work(s / 2 / calls);
		total += mono_ns() - a;
	}
	step_work(s / 2);
	printf("region %d part %d %" PRIu64 "\n", i, calls, total);
}

/* Step i's work as the mode says; returns its CPU time inside region "hot" (only mode). */
static double step_body(const char *mode, int i, double s, int cold)
{
	double hot = 0;

	if (!strcmp(mode, "only") && i < cold) {
		cold_work(s);
	} else if (!strcmp(mode, "only")) {
		hot = hot_work(s * 0.6);
		cold_work(s * 0.4);
	} else if (!strcmp(mode, "regions")) {
		parts(i, s);
	} else {
		step_work(s);
	}
	if (!strcmp(mode, "pause") && i == 1)
		pause_phase(s);
	if (!strcmp(mode, "pause") && i == 2)
		nap_recorded();
	return hot;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	double s = (argc > 2 ? atof(argv[2]) : 100) / 1e3,
	       gap = (argc > 3 ? atof(argv[3]) : 50) / 1e3;
	const char *mode = argc > 4 ? argv[4] : "none";
	int cold = argc > 5 ? atoi(argv[5]) : 0;
	uint64_t start = mono_ns(), cpu = 0, steal = 0;
	double hot = 0, all = 0;

	perch_step(0);
	for (int i = 0; i < n; i++) {
		uint64_t c0 = cpu_ns(), s0 = steal_ns(), next;

		hot += step_body(mode, i, s, cold);
		cpu = cpu_ns() - c0;
		steal = steal_ns() - s0;
		all += (double)cpu / 1e9;
		/* With a gap, the step ends and the gap runs with no step open; without, the next
		 * perch_step() ends it (and the last ends at perch_step_end()). */
		if (gap > 0 || i + 1 == n)
			perch_step_end();
		if (gap > 0) {
			printf("step %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i,
			       start, mono_ns(), cpu, steal);
			if (i + 1 < n)
				between_steps(gap);
		}
		if (i + 1 == n)
			break;
		next = mono_ns();
		perch_step((uint64_t)i + 1);
		if (gap <= 0)
			printf("step %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i,
			       start, mono_ns(), cpu, steal);
		start = next;
	}
	if (gap <= 0)
		printf("step %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", n - 1, start,
		       mono_ns(), cpu, steal);
	truth("hot_cpu_s", hot);
	truth("step_cpu_s", all);
	fflush(stdout);
	return 0;
}
