// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth for inline frames: all the time goes to hot_inline, which the compiler inlines
 * into caller (always_inline), so no frame of its own exists at run time. */
#include "burn.h"

static inline __attribute__((always_inline)) void hot_inline(void)
{
	BURN(100000); /* LINE:burn */
}

__attribute__((noinline)) void caller(void)
{
	hot_inline(); /* LINE:call */
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 1.0);

	while (now_s() < end)
		caller();
	return 0;
}
