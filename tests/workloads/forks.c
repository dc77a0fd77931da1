// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth: the parent forks three children that spin in child_work (two of them also exec
 * nothing, one forks a grandchild spinning in grandchild_work); the parent waits. */
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

static double end_time;

__attribute__((noinline)) void grandchild_work(void)
{
	while (now_s() < end_time)
		BURN(100000);
}

__attribute__((noinline)) void child_work(int n)
{
	if (n == 2 && fork() == 0) {
		grandchild_work();
		_exit(0);
	}
	while (now_s() < end_time)
		BURN(100000);
	while (wait(NULL) > 0)
		;
}

int main(int argc, char **argv)
{
	end_time = now_s() + arg_seconds(argc, argv, 2.0);
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			child_work(i);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
