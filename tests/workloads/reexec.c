// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for a process that re-execs itself, as shells, launchers and shims do: each image
 * burns SLICE ms of CPU in image_work and execs /proc/self/exe again, COUNT times, so a drain
 * period of the profiler holds many images of one process (at a different address each, with
 * ASLR). Each image prints the CPU time image_work took; the last prints the process's total
 * (an exec keeps the process's CPU clock).
 *
 *   reexec [COUNT [SLICE_MS]]      default 300 images of 5 ms
 */
#include <stdio.h>
#include <unistd.h>
#include "burn.h"

__attribute__((noinline)) void image_work(double seconds)
{
	truth("image_work", BURN_CPU(seconds));
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 300;
	double slice_ms = argc > 2 ? atof(argv[2]) : 5;
	char next[16], slice[32];

	image_work(slice_ms / 1000);
	if (count <= 1) {
		truth("cpu", process_cpu_s());
		return 0;
	}
	snprintf(next, sizeof(next), "%d", count - 1);
	snprintf(slice, sizeof(slice), "%g", slice_ms);
	execl("/proc/self/exe", argv[0], next, slice, (char *)NULL);
	perror("exec /proc/self/exe");
	return 1;
}
