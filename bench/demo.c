// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The program `make demo` profiles: a toy "solver" with a known profile. About 55% of the time
 * goes to solve() (with recursion through refine()), 30% to parse_input(), and the rest to
 * write_output(), which spends it in write(2).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "burn.h"

static char out[16384];

__attribute__((noinline)) void parse_input(void)
{
	BURN(300000);
}

void refine(int level);

__attribute__((noinline)) void solve(int level)
{
	BURN(110000);
	if (level > 0)
		refine(level - 1);
}

__attribute__((noinline)) void refine(int level)
{
	BURN(110000);
	if (level > 0)
		solve(level - 1);
}

__attribute__((noinline)) void write_output(int fd)
{
	for (int i = 0; i < 40; i++)
		if (write(fd, out, sizeof(out)) < 0)
			return;
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);
	int fd = open("/dev/null", O_WRONLY), rounds = 0;

	while (now_s() < end) {
		parse_input();
		solve(4);
		write_output(fd);
		rounds++;
	}
	printf("demo: %d rounds\n", rounds);
	return 0;
}
