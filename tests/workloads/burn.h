/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers for the test workloads: CPU burning in a known function, and run-time limits. The
 * workloads are the ground truth the integration tests check perch against.
 */
#ifndef PERCH_BURN_H
#define PERCH_BURN_H

#include <stdlib.h>
#include <time.h>

static volatile unsigned long burn_sink;

/* Spin n iterations inside the calling function (a macro, so the cost lands in the caller). */
#define BURN(n)                                                                       \
	do {                                                                          \
		for (unsigned long burn_i = 0; burn_i < (unsigned long)(n); burn_i++) \
			burn_sink += burn_i ^ (burn_i >> 3);                          \
	} while (0)

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline double arg_seconds(int argc, char **argv, double dflt)
{
	return argc > 1 ? atof(argv[1]) : dflt;
}

#endif /* PERCH_BURN_H */
