// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for short-lived processes: the parent forks 200 children one after another; each
 * execs this program again ("child"), burns 10 ms of CPU in child_burn and exits, so every child
 * is gone long before perch drains its samples. Each child prints the CPU time child_burn took,
 * and the time it was current on its vCPU meanwhile (child_burn_oncpu: the wall time less the
 * scheduler's wait; more than the CPU time by what the hypervisor stole, which a tick of the
 * guest's timer may land in), the parent the CPU time of the whole tree (its own and its
 * children's rusage), exec and start-up included.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) void child_burn(void)
{
	truth("child_burn", BURN_CPU(0.010));
}

int main(int argc, char **argv)
{
	int n = argc > 1 && strcmp(argv[1], "child") ? atoi(argv[1]) : 200;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		double run0, wait0, run1, wait1, t0, t1;

		sched_s(&run0, &wait0);
		t0 = now_s();
		child_burn();
		t1 = now_s();
		sched_s(&run1, &wait1);
		truth("child_burn_oncpu", t1 - t0 - (wait1 - wait0));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "child", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	truth("cpu", tree_cpu_s());
	return 0;
}
