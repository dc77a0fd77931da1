// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The target bench/overhead.sh profiles: a fixed amount of CPU work a few calls deep, started
 * only when released, so that a profiler can attach first and its start-up stays out of the
 * target's timing.
 *
 *   cpu_work FIFO [ROUNDS]
 *
 * Blocks until one byte can be read from FIFO, then runs ROUNDS rounds of work (default: about
 * 3 s on the 2-core bench VM) and prints one line, "wall_ms=W cpu_ms=C", measured from the
 * release to the end of the work.
 *
 * About 1% of the time goes to read(2) from /dev/zero: real programs spend some time in the
 * kernel, and a profiler that finds no kernel frame in a recording skips loading kernel symbols,
 * which made its cost vary from run to run when kernel samples were down to chance.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ROUNDS 7300
#define KERNEL_BYTES   65536

static volatile unsigned long sink;
static char kernel_buf[KERNEL_BYTES];

/* The leaf, where nearly all samples land; noinline so every level is a real frame. */
__attribute__((noinline)) static unsigned long mix(unsigned long seed, unsigned long n)
{
	unsigned long x = seed;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + (i ^ (x >> 29));
	return x;
}

__attribute__((noinline)) static unsigned long step(unsigned long seed)
{
	return mix(seed, 100000) ^ mix(seed + 1, 50000);
}

__attribute__((noinline)) static unsigned long round_of_work(unsigned long seed)
{
	return step(seed) + step(seed ^ 0x9e3779b9UL);
}

/* Time in the kernel, in the target's context: zeroing the buffer inside read(2). */
__attribute__((noinline)) static void kernel_work(int fd)
{
	if (read(fd, kernel_buf, sizeof(kernel_buf)) < 0)
		sink++;
}

__attribute__((noinline)) static void work(unsigned long rounds, int zero_fd)
{
	for (unsigned long r = 0; r < rounds; r++) {
		sink += round_of_work(r);
		kernel_work(zero_fd);
	}
}

static double ms_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int wait_for_release(const char *fifo)
{
	char byte;
	ssize_t n;
	int fd;

	/* open() itself blocks until the writer opens its end. */
	fd = open(fifo, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "cpu_work: open %s: %s\n", fifo, strerror(errno));
		return -1;
	}
	do
		n = read(fd, &byte, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != 1) {
		fprintf(stderr, "cpu_work: %s closed without a release byte\n", fifo);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds = DEFAULT_ROUNDS;
	double wall0, cpu0;
	int zero_fd;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: cpu_work FIFO [ROUNDS]\n");
		return 2;
	}
	if (argc == 3)
		rounds = strtoul(argv[2], NULL, 10);
	zero_fd = open("/dev/zero", O_RDONLY);
	if (zero_fd < 0) {
		fprintf(stderr, "cpu_work: open /dev/zero: %s\n", strerror(errno));
		return 1;
	}
	if (wait_for_release(argv[1]))
		return 1;

	wall0 = ms_of(CLOCK_MONOTONIC);
	cpu0 = ms_of(CLOCK_PROCESS_CPUTIME_ID);
	work(rounds, zero_fd);
	printf("wall_ms=%.1f cpu_ms=%.1f\n", ms_of(CLOCK_MONOTONIC) - wall0,
	       ms_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
	return 0;
}
