// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth: work_a, work_b and work_c burn about 60%, 30% and 10% of the CPU time. Each spins
 * for a fixed span of its thread's CPU time per round (6, 3 and 1 ms), so the shares depend
 * neither on how fast each loop happens to run nor on what else the machine is doing. At exit it
 * prints the CPU time each really spent and the process's total ("truth" lines, burn.h).
 */
#include "burn.h"

static double spent_a, spent_b, spent_c;

__attribute__((noinline)) void work_a(void)
{
	spent_a += BURN_CPU(0.006);
}

__attribute__((noinline)) void work_b(void)
{
	spent_b += BURN_CPU(0.003);
}

__attribute__((noinline)) void work_c(void)
{
	spent_c += BURN_CPU(0.001);
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);

	while (now_s() < end) {
		work_a();
		work_b();
		work_c();
	}
	truth("work_a", spent_a);
	truth("work_b", spent_b);
	truth("work_c", spent_c);
	truth("cpu", process_cpu_s());
	return 0;
}
