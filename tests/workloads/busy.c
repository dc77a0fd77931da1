// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for perch record -a (tests/integration/system.sh): a process the test starts
 * itself, not a child of perch. `busy GO SECONDS DUTY`: waits until the file GO exists (so that
 * every process of the test starts burning once perch samples), then for SECONDS of wall time
 * burns CPU in busy_spin for DUTY percent of each 10 ms of its own CPU time and sleeps the rest,
 * and prints the CPU time it spent from GO on ("truth cpu_s", burn.h).
 */
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) static double busy_spin(double seconds)
{
	return BURN_CPU(seconds);
}

int main(int argc, char **argv)
{
	double seconds, duty, end, start;

	if (argc < 4)
		return 2;
	seconds = atof(argv[2]);
	duty = atof(argv[3]) / 100;
	while (access(argv[1], F_OK))
		usleep(2000);
	start = process_cpu_s();
	end = now_s() + seconds;
	while (now_s() < end) {
		busy_spin(0.010 * duty);
		if (duty < 1)
			usleep((useconds_t)(10000 * (1 - duty)));
	}
	truth("cpu_s", process_cpu_s() - start);
	return 0;
}
