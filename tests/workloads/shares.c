// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth: work_a, work_b and work_c burn 60%, 30% and 10% of the CPU time. Each spins for
 * a fixed span of its thread's CPU time per round (6, 3 and 1 ms), so the shares depend neither
 * on how fast each loop happens to run nor on what else the machine is doing; the clock reads
 * they make land inside them.
 */
#include "burn.h"

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void spin_for(double seconds)
{
	double end = cpu_s() + seconds;

	while (cpu_s() < end)
		BURN(20000);
}

__attribute__((noinline)) void work_a(void)
{
	spin_for(0.006);
}

__attribute__((noinline)) void work_b(void)
{
	spin_for(0.003);
}

__attribute__((noinline)) void work_c(void)
{
	spin_for(0.001);
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);

	while (now_s() < end) {
		work_a();
		work_b();
		work_c();
	}
	return 0;
}
