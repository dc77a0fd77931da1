/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers for the test workloads: CPU burning in a known function, and run-time limits. The
 * workloads are the ground truth the integration tests check perch against.
 */
#ifndef PERCH_BURN_H
#define PERCH_BURN_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static volatile unsigned long burn_sink;

/* Spin n iterations inside the calling function (a macro, so the cost lands in the caller). */
#define BURN(n)                                                                       \
	do {                                                                          \
		for (unsigned long burn_i = 0; burn_i < (unsigned long)(n); burn_i++) \
			burn_sink += burn_i ^ (burn_i >> 3);                          \
	} while (0)

static inline double arg_seconds(int argc, char **argv, double dflt)
{
	return argc > 1 ? atof(argv[1]) : dflt;
}

static inline double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds the calling thread has run. */
static inline double thread_cpu_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/* CPU seconds of the whole process, its children not included. */
static inline double process_cpu_s(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* Spin in the caller until its thread has run for another `seconds` of CPU time, so the share of
 * time it burns does not depend on how fast the loop runs or on what else the machine does.
 * Returns the CPU time actually spent (the clock reads land inside the caller too). */
#define BURN_CPU(seconds)                                                    \
	({                                                                   \
		double burn_start = thread_cpu_s(), burn_now;                \
		while ((burn_now = thread_cpu_s()) < burn_start + (seconds)) \
			BURN(20000);                                         \
		burn_now - burn_start;                                       \
	})

/*
 * Ground truth for the tests: one line "truth NAME VALUE" on stdout, written at once (one write,
 * so lines of many processes sharing stdout do not interleave). The integration tests read these
 * lines (tests/lib.sh truth) and compare perch's samples with them; a test never assumes what
 * one machine happened to measure.
 */
static inline void truth(const char *name, double value)
{
	printf("truth %s %.9f\n", name, value);
	fflush(stdout);
}

/* The scheduler's time of the calling thread so far, in seconds: on a CPU (*run) and waiting for
 * one (*wait), from /proc/thread-self/schedstat (both 0 without it). A thread that never sleeps
 * over an interval was current on its vCPU for the wall time less the wait: its CPU time plus
 * what the hypervisor stole from the vCPU meanwhile, which the CPU clocks leave out and a tick of
 * the guest's timer may still land in. */
static inline void sched_s(double *run, double *wait)
{
	unsigned long long r = 0, w = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &r, &w) != 2)
			r = w = 0;
		fclose(f);
	}
	*run = r / 1e9;
	*wait = w / 1e9;
}

/* CPU seconds of the process and every child it has waited for (children's rusage). */
static inline double tree_cpu_s(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
	       kids.ru_stime.tv_sec +
	       (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
		kids.ru_stime.tv_usec) /
		       1e6;
}

#endif /* PERCH_BURN_H */
