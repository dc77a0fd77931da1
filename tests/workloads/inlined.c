// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth for inline frames: all the time goes to hot_inline, which the compiler inlines
 * into caller (always_inline), so no frame of its own exists at run time.
 *
 * With a second argument "split": split_caller spends about a third of the CPU time in its own
 * body and two thirds in split_hot, inlined into it; the CPU time of each is printed ("truth"
 * lines), for report --inline (split_hot takes its share) and --no-inline (split_caller takes
 * both). */
#include <string.h>

#include "burn.h"

static inline __attribute__((always_inline)) void hot_inline(void)
{
	BURN(100000); /* LINE:burn */
}

__attribute__((noinline)) void caller(void)
{
	hot_inline(); /* LINE:call */
}

static double spent_hot, spent_own;

static inline __attribute__((always_inline)) void split_hot(void)
{
	spent_hot += BURN_CPU(0.006);
}

__attribute__((noinline)) void split_caller(void)
{
	spent_own += BURN_CPU(0.003);
	split_hot();
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 1.0);

	if (argc > 2 && !strcmp(argv[2], "split")) {
		while (now_s() < end)
			split_caller();
		truth("split_hot", spent_hot);
		truth("split_caller", spent_own);
		truth("cpu", process_cpu_s());
		return 0;
	}
	while (now_s() < end)
		caller();
	return 0;
}
