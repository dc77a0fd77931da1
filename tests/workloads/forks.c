// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth: the parent forks three children that spin in child_work (two of them also exec
 * nothing, one forks a grandchild spinning in grandchild_work); the parent waits. Each
 * prints the CPU time it measured: grandchild_work its own, each child its own and its waited-for
 * children's (child_tree), the parent the whole tree's (cpu). */
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

static double end_time;

__attribute__((noinline)) void grandchild_work(void)
{
	while (now_s() < end_time)
		BURN(100000);
	truth("grandchild_work", thread_cpu_s());
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
	truth("child_tree", tree_cpu_s());
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
	truth("cpu", tree_cpu_s());
	return 0;
}
