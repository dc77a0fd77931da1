// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for perch annotate: hot_loop spends its time on one source line, the whole loop
 * written on it, whose number the workload prints ("truth hot_line N"); main only calls it until
 * the process has run for the seconds asked (default 1.5). Built -O1 -g like the other
 * workloads; hotline-nodebug is the same binary with its DWARF stripped (strip --strip-debug).
 */
#include "burn.h"

static int hot_line;

__attribute__((noinline)) unsigned long hot_loop(unsigned long n)
{
	unsigned long s = 0;

	/* clang-format off */
	hot_line = __LINE__; for (unsigned long i = 0; i < n; i++) s += (i * i) ^ (s >> 3);
	/* clang-format on */
	return s;
}

int main(int argc, char **argv)
{
	double seconds = arg_seconds(argc, argv, 1.5), start = process_cpu_s();

	while (process_cpu_s() < start + seconds)
		burn_sink += hot_loop(200000);
	truth("hot_line", hot_line);
	truth("cpu", process_cpu_s());
	return 0;
}
