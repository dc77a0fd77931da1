// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The system metrics workload: a known RSS ramp, a known CPU share and known bytes written, each
 * measured by the process itself (getrusage, its own counts), for tests/integration/metrics.sh.
 *
 *   metrics [STEPS [STEP_MS [STEP_MIB [SHARE]]]]   (default 20 100 10 0.5)
 *
 * Each step, STEP_MS of wall time long: map STEP_MIB MiB more (no huge pages, so each 4 KiB page
 * is one fault), write every page of it, write 64 KiB to /dev/null, burn CPU until the step's CPU
 * time reaches SHARE of STEP_MS, sleep the rest. Then it holds the memory, asleep, for five
 * steps, so the sampler sees the peak and the last writes. Truth lines: maxrss_kib (ru_maxrss),
 * user_s, sys_s (ru_utime, ru_stime), wall_s, pages_touched, minflt (ru_minflt), written_bytes.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "burn.h"

#define PAGE 4096ul

static void sleep_until(double t)
{
	double left = t - now_s();
	struct timespec ts;

	if (left <= 0)
		return;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

static double rusage_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 20;
	double step_s = (argc > 2 ? atof(argv[2]) : 100) / 1000;
	size_t bytes = (size_t)(argc > 3 ? atof(argv[3]) : 10) << 20;
	double share = argc > 4 ? atof(argv[4]) : 0.5;
	static char chunk[64 << 10];
	unsigned long pages = 0, written = 0;
	int null = open("/dev/null", O_WRONLY);
	double start = now_s();
	struct rusage ru;

	for (int i = 0; i < steps; i++) {
		double t0 = start + i * step_s, cpu0 = process_cpu_s();
		char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			       0);

		if (p == MAP_FAILED || null < 0)
			return 1;
		madvise(p, bytes, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < bytes; off += PAGE, pages++)
			p[off] = (char)i;
		if (write(null, chunk, sizeof(chunk)) == (ssize_t)sizeof(chunk))
			written += sizeof(chunk);
		while (process_cpu_s() < cpu0 + share * step_s && now_s() < t0 + step_s)
			BURN(20000);
		sleep_until(t0 + step_s);
	}
	sleep_until(start + (steps + 5) * step_s);
	getrusage(RUSAGE_SELF, &ru);
	truth("maxrss_kib", ru.ru_maxrss);
	truth("user_s", rusage_s(&ru.ru_utime));
	truth("sys_s", rusage_s(&ru.ru_stime));
	truth("wall_s", now_s() - start);
	truth("pages_touched", pages);
	truth("minflt", ru.ru_minflt);
	truth("written_bytes", written);
	return 0;
}
