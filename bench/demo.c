// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The program `make demo` profiles: a toy "solver". Most of its time goes to solve(), which
 * recurses through refine(); about a third to parse_input(); and some to write_output(), which
 * spends it in the kernel copying /dev/zero (read(2)).
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "burn.h"

static char buf[65536];

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
	for (int i = 0; i < 160; i++)
		if (read(fd, buf, sizeof(buf)) < 0)
			return;
}

int main(int argc, char **argv)
{
	double end = now_s() + arg_seconds(argc, argv, 2.0);
	int fd = open("/dev/zero", O_RDONLY), rounds = 0;

	while (now_s() < end) {
		parse_input();
		solve(4);
		write_output(fd);
		rounds++;
	}
	printf("demo: %d rounds\n", rounds);
	return 0;
}
