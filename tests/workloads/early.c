// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Early ticks (tests/integration/early.sh): built without frame pointers, burns CPU from main's
 * first instruction for SECONDS of its own CPU time (default 0.2) in spin(), called through
 * outer(), so a tick anywhere in it has a stack only CFI can walk to main. Prints its CPU time.
 */
#include "burn.h"

static __attribute__((noinline)) void spin(double until)
{
	while (clock_s(CLOCK_PROCESS_CPUTIME_ID) < until)
		BURN(20000);
}

static __attribute__((noinline)) void outer(double until)
{
	spin(until);
	burn_sink++;
}

int main(int argc, char **argv)
{
	double s = arg_seconds(argc, argv, 0.2);

	outer(s);
	printf("cpu %.3f\n", clock_s(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
