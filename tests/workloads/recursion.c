// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth: ping and pong call each other to depths 1..60 and burn at every level; the call
 * graph is main -> ping <-> pong, so the bounded tree has a fixed size however long it runs. */
#include "burn.h"

void pong(int depth);

__attribute__((noinline)) void ping(int depth)
{
	BURN(2000);
	if (depth > 0)
		pong(depth - 1);
	BURN(2000);
}

__attribute__((noinline)) void pong(int depth)
{
	BURN(2000);
	if (depth > 0)
		ping(depth - 1);
	BURN(2000);
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 1.0);

	while (now_s() < end)
		for (int d = 1; d <= 60; d++)
			ping(d);
	truth("cpu", process_cpu_s());
	return 0;
}
