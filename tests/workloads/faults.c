// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for perch record -e (tests/integration/events.sh). `faults PAGES SLEEPS`: maps
 * PAGES new anonymous pages and writes one byte to each in touch_pages (each write a first
 * touch: one page fault, counted by the workload from its own rusage minor faults around the
 * loop), then sleeps SLEEPS times 1 ms in nap (each sleep at least one context switch; the
 * workload counts its voluntary switches around the loop). Prints "truth faults N",
 * "truth switches N".
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "burn.h"

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static long nvcsw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw;
}

__attribute__((noinline)) static void touch_pages(volatile char *p, long pages, long pagesz)
{
	for (long i = 0; i < pages; i++)
		p[i * pagesz] = 1;
}

__attribute__((noinline)) static void nap(long n)
{
	for (long i = 0; i < n; i++)
		usleep(1000);
}

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 10000, sleeps = argc > 2 ? atol(argv[2]) : 200;
	long pagesz = sysconf(_SC_PAGESIZE), f0, s0, f1, s1;
	char *p = mmap(NULL, pages * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return 1;
	/* no huge pages: one fault per page */
	madvise(p, pages * pagesz, MADV_NOHUGEPAGE);
	f0 = minflt();
	touch_pages(p, pages, pagesz);
	f1 = minflt();
	s0 = nvcsw();
	nap(sleeps);
	s1 = nvcsw();
	truth("faults", (double)(f1 - f0));
	truth("switches", (double)(s1 - s0));
	munmap(p, pages * pagesz);
	return 0;
}
