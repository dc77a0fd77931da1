// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A context-switch-heavy workload for bench/offcpu.sh: two threads pass one byte back and forth
 * over two pipes, ROUNDS round trips; each side blocks in read() until the other writes, so
 * every round trip is two blocks and two wake-ups (four context switches on one CPU). It times
 * its own loop and prints
 *   rounds=N wall_ns=N cpu_us=N switches_per_s=N
 * (cpu_us: user + system time of the whole process during the loop, getrusage; switches: the
 * voluntary context switches of both threads, getrusage RUSAGE_SELF, per second of the loop).
 *
 *   pingpong [ROUNDS [DELAY_MS]]   (default 200000, 0): DELAY_MS before the loop, for a
 *                                  profiler to attach
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 200000;

static void *pong(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++) {
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			return NULL;
	}
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double cpu_us(struct rusage *ru)
{
	getrusage(RUSAGE_SELF, ru);
	return ru->ru_utime.tv_sec * 1e6 + ru->ru_utime.tv_usec + ru->ru_stime.tv_sec * 1e6 +
	       ru->ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
	struct rusage r0, r1;
	pthread_t t;
	double t0, c0, c1, wall;
	char c = 'x';

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		usleep(atoi(argv[2]) * 1000);
	if (pipe(ab) || pipe(ba) || pthread_create(&t, NULL, pong, NULL))
		return 1;
	c0 = cpu_us(&r0);
	t0 = now_ns();
	for (long i = 0; i < rounds; i++) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	}
	wall = now_ns() - t0;
	pthread_join(t, NULL);
	c1 = cpu_us(&r1);
	printf("rounds=%ld wall_ns=%.0f cpu_us=%.0f switches_per_s=%.0f\n", rounds, wall, c1 - c0,
	       (r1.ru_nvcsw - r0.ru_nvcsw) / (wall / 1e9));
	return 0;
}
