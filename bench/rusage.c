// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a command costs, for bench/overhead.sh: runs CMD and writes the resources the kernel
 * charged to it and its waited-for children (wait4), plus its wall time, to FILE:
 *
 *   rusage FILE CMD [ARGS...]
 *   -> "wall_ms=W user_ms=U sys_ms=S maxrss_kb=R status=X" in FILE
 *
 * Exits with CMD's exit status (128+N if a signal N ended it), so the caller still sees failures.
 * The line goes to a file rather than stderr so it never mixes with CMD's own output.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double tv_ms(struct timeval tv)
{
	return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

static int write_result(const char *path, double wall_ms, const struct rusage *ru, int code)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "rusage: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "wall_ms=%.1f user_ms=%.1f sys_ms=%.1f maxrss_kb=%ld status=%d\n", wall_ms,
		tv_ms(ru->ru_utime), tv_ms(ru->ru_stime), ru->ru_maxrss, code);
	return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	double start;
	int status, code;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: rusage FILE CMD [ARGS...]\n");
		return 2;
	}
	start = now_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rusage: fork: %s\n", strerror(errno));
		return 125;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: exec %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "rusage: wait4: %s\n", strerror(errno));
			return 125;
		}
	}
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (write_result(argv[1], now_ms() - start, &ru, code))
		return 125;
	return code;
}
