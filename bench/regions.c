// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region marker cost: ns per begin/end pair in a tight loop, on 1 and 2 threads, for
 *   perch    perch_region_begin/end with no profiler attached (the shipped fast path)
 *   active   the same with perch_registry.active set, i.e. the path a profiler turns on:
 *            TSC timestamps and the per-thread region tree (what recording costs in-process)
 *   timeline the same with perch_registry.timeline set too (perch record --timeline): every
 *            begin and end also goes into the thread's timeline ring
 *   sized    perch_region_begin_n/end with sizes 16 .. 4111 (13 log2 buckets): profiled, each
 *            end also feeds the node's cost-model slot (bucket sums, reservoir of (n, t))
 *   sized-active  the same with perch_registry.active set
 *   nvtx     NVTX-style markers: calls through global function pointers to no-op stubs, which
 *            is what nvtxRangePush/Pop cost with no tool attached
 *   usdt     a USDT probe pair (sys/sdt.h), not traced
 *   rdtsc2   two time-stamp counter reads back to back, their values unused (x86)
 *   timed    the least a timed pair does, in the loop perch's rows run: begin (a call) stores a
 *            time-stamp counter read, end (a call) reads it again and adds the difference and a
 *            call to thread-local sums: the floor of any pair that is timed (x86)
 *   empty    the loop alone
 * Built twice by bench/regions.sh: normally and with -DPERCH_DISABLE (the "perch" row of that
 * build is the compiled-out cost).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sdt.h>
#include "perch.h"

static unsigned long long ITERS = 50000000ull; /* argv[3] for alternated A/B runs */

/* Per thread, so two threads do not share the cache line they write every iteration. */
static __thread volatile unsigned long sink;

__attribute__((noinline)) static void nvtx_noop_push(const char *name)
{
	(void)name;
}

__attribute__((noinline)) static void nvtx_noop_pop(void)
{
}

static void (*volatile nvtx_push)(const char *) = nvtx_noop_push;
static void (*volatile nvtx_pop)(void) = nvtx_noop_pop;

#if defined(__x86_64__)
static __thread unsigned long long timed_start, timed_sum, timed_calls;

__attribute__((noinline)) static void timed_begin(void)
{
	timed_start = __builtin_ia32_rdtsc();
}

__attribute__((noinline)) static void timed_end(void)
{
	timed_sum += __builtin_ia32_rdtsc() - timed_start;
	timed_calls++;
}
#endif

static double now(void)
{
	struct timespec ts;

	/* the thread's CPU time: other jobs on a shared machine do not stretch it */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *mode;

static void *loop(void *arg)
{
	double *ns = arg, t0 = now();

	if (!strcmp(mode, "perch") || !strcmp(mode, "active") || !strcmp(mode, "timeline")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			perch_region_begin("bench");
			sink = i;
			perch_region_end("bench");
		}
	} else if (!strcmp(mode, "sized") || !strcmp(mode, "sized-active")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			perch_region_begin_n("bench", (i & 4095) + 16);
			sink = i;
			perch_region_end("bench");
		}
	} else if (!strcmp(mode, "nvtx")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			nvtx_push("bench");
			sink = i;
			nvtx_pop();
		}
	} else if (!strcmp(mode, "usdt")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			DTRACE_PROBE1(perch_bench, begin, i);
			sink = i;
			DTRACE_PROBE(perch_bench, end);
		}
#if defined(__x86_64__)
	} else if (!strcmp(mode, "rdtsc2")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			sink = __builtin_ia32_rdtsc();
			sink = __builtin_ia32_rdtsc();
		}
	} else if (!strcmp(mode, "timed")) {
		for (unsigned long long i = 0; i < ITERS; i++) {
			timed_begin();
			sink = i;
			timed_end();
		}
#endif
	} else {
		for (unsigned long long i = 0; i < ITERS; i++)
			sink = i;
	}
	*ns = (now() - t0) * 1e9 / ITERS;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t t[2];
	double ns[2] = {0, 0};

	mode = argc > 1 ? argv[1] : "perch";
	if (argc > 3)
		ITERS = strtoull(argv[3], NULL, 10);
	if (!ITERS)
		return 2;
#ifndef PERCH_DISABLE
	perch_registry.timeline = !strcmp(mode, "timeline");
	perch_registry.active =
		!strcmp(mode, "active") || !strcmp(mode, "sized-active") || perch_registry.timeline;
#endif
	if (threads < 1 || threads > 2)
		return 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, loop, &ns[i]);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%.2f\n", threads == 2 ? (ns[0] + ns[1]) / 2 : ns[0]);
	return 0;
}
