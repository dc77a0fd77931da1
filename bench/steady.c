// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The steady three-stack workload of bench/size.sh: main calls a, b and c in a fixed loop, each
 * a counted loop of pure user-mode arithmetic (6:3:1), with no system call until it ends; it
 * reads CLOCK_MONOTONIC through the vDSO, in user mode, once a round. What a profiler meets
 * beyond the three stacks is the kernel's own interrupts.
 *
 *   steady SECONDS
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define WORK(name, n)                                                    \
	__attribute__((noinline)) static void name(void)                 \
	{                                                                \
		unsigned long x = sink;                                  \
		for (unsigned long i = 0; i < (n); i++)                  \
			x = x * 6364136223846793005UL + (i ^ (x >> 29)); \
		sink = x;                                                \
	}

WORK(work_a, 600000)
WORK(work_b, 300000)
WORK(work_c, 100000)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now_s() + (argc > 1 ? atof(argv[1]) : 10.0);

	while (now_s() < end) {
		work_a();
		work_b();
		work_c();
	}
	return 0;
}
