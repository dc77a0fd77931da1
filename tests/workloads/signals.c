// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for unwinding through a signal frame, built without frame pointers: a 100 Hz
 * SIGALRM interrupts interrupted() (main's loop) and its handler burns 5 ms of CPU in
 * in_handler() (half of each period). Every sample in in_handler must go on through handler, the
 * signal trampoline (__restore_rt) and the interrupted code back to main. At exit it prints the
 * CPU time in_handler took and the process's total.
 */
#include <signal.h>
#include <unistd.h>
#include "burn.h"

static volatile double handler_cpu;

__attribute__((noinline)) void in_handler(void)
{
	handler_cpu += BURN_CPU(0.005);
}

static void handler(int sig)
{
	(void)sig;
	in_handler();
	burn_sink++;
}

__attribute__((noinline)) void interrupted(double end)
{
	while (now_s() < end)
		BURN(1000);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = handler};

	sigaction(SIGALRM, &sa, NULL);
	ualarm(10000, 10000);
	interrupted(now_s() + arg_seconds(argc, argv, 1.0));
	ualarm(0, 0);
	burn_sink++;
	truth("in_handler", handler_cpu);
	truth("cpu", process_cpu_s());
	return 0;
}
