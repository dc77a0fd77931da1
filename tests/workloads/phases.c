// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Three phases of CPU burning, each in its own function, SECONDS of wall time each (default 1);
 * between them the workload asks the perch that launched it to pause (after phase 1) and to
 * resume (after phase 2), then prints each phase's CLOCK_MONOTONIC interval, the truth
 * tests/integration/windows.sh checks the recorded intervals and sample times against:
 *   phase N START_NS END_NS
 *
 *   phases [SECONDS] [signal|fifo CTL ACK|none]
 * signal: SIGUSR1 then SIGUSR2 to its parent (perch record); fifo: "disable" then "enable" into
 * the --control FIFO CTL, each waiting for perch's "ack" on ACK; none: the phases only.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "burn.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void burn_until(uint64_t end)
{
	while (mono_ns() < end)
		BURN(20000);
}

static void phase_one(uint64_t end)
{
	burn_until(end);
}

static void phase_two(uint64_t end)
{
	burn_until(end);
}

static void phase_three(uint64_t end)
{
	burn_until(end);
}

/* "disable" or "enable" into ctl, then wait for the "ack" line on ack. */
static int fifo_command(const char *ctl, const char *ack, const char *cmd)
{
	char buf[8] = {0};
	int fd = open(ctl, O_WRONLY), afd;
	size_t got = 0;

	if (fd < 0 || write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return -1;
	close(fd);
	afd = open(ack, O_RDONLY);
	while (afd >= 0 && got < 4) {
		ssize_t n = read(afd, buf + got, 4 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (afd >= 0)
		close(afd);
	return strcmp(buf, "ack\n") ? -1 : 0;
}

static int control(int argc, char **argv, bool pause)
{
	const char *mode = argc > 2 ? argv[2] : "none";

	if (!strcmp(mode, "signal"))
		return kill(getppid(), pause ? SIGUSR1 : SIGUSR2);
	if (!strcmp(mode, "fifo") && argc > 4)
		return fifo_command(argv[3], argv[4], pause ? "disable\n" : "enable\n");
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t len = (uint64_t)(arg_seconds(argc, argv, 1.0) * 1e9), t[6];
	void (*phase[3])(uint64_t) = {phase_one, phase_two, phase_three};

	for (int i = 0; i < 3; i++) {
		if (i && control(argc, argv, i == 1)) {
			fprintf(stderr, "phases: cannot ask perch to %s\n",
				i == 1 ? "pause" : "resume");
			return 1;
		}
		t[2 * i] = mono_ns();
		phase[i](t[2 * i] + len);
		t[2 * i + 1] = mono_ns();
	}
	for (int i = 0; i < 3; i++)
		printf("phase %d %llu %llu\n", i + 1, (unsigned long long)t[2 * i],
		       (unsigned long long)t[2 * i + 1]);
	return 0;
}
