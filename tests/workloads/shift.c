// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for `perch diff` (tests/integration/diff.sh): hot and cold share a 10 ms round of
 * the thread's CPU time, hot HOT_MS of it and cold the rest, so a run with another HOT_MS moves
 * a known share from one to the other. Each burns its span of its thread's CPU time (not of a
 * loop count), and the workload prints the CPU time each really spent ("truth" lines, burn.h).
 *
 *   shift SECONDS HOT_MS    (HOT_MS from 0 to 10)
 */
#include "burn.h"

static double spent_hot, spent_cold;

__attribute__((noinline)) void hot(double s)
{
	spent_hot += BURN_CPU(s);
}

__attribute__((noinline)) void cold(double s)
{
	spent_cold += BURN_CPU(s);
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);
	double hot_s = (argc > 2 ? atof(argv[2]) : 5) / 1000;

	if (hot_s < 0 || hot_s > 0.010) {
		fprintf(stderr, "shift: HOT_MS must be 0 to 10\n");
		return 2;
	}
	while (now_s() < end) {
		if (hot_s > 0)
			hot(hot_s);
		if (hot_s < 0.010)
			cold(0.010 - hot_s);
	}
	truth("hot", spent_hot);
	truth("cold", spent_cold);
	truth("cpu", process_cpu_s());
	return 0;
}
