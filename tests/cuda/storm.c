// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A launch storm through the stand-in libcupti (fake_cupti.c): NOT a GPU. It makes N fake launch
 * calls, round robin from SITES distinct call sites (storm_site0 .. storm_site3), inside region
 * "storm", through the same callback path a real launch takes in the injection library (runtime
 * enter, driver enter and exit, runtime exit, the probe at the end) and hands the stand-in's
 * activity buffers to the library every 64 launches, so the library decodes and sends every API
 * record and kernel as it would under CUPTI. With CUDA_INJECTION64_PATH unset nothing is
 * subscribed: the calls cost what the stand-in costs alone ("no profiler").
 *
 * What it measures is the CPU side of a launch, which is what perch adds to: wall and CPU time
 * of the loop, per launch. It prints, one line:
 *   storm launches=N sites=S wall_ns=W cpu_ns=C per_site=A,B,C,D
 * per_site: the launches each site made (the truth a recording's launch stacks are held to).
 *
 *   storm [N [SITES]]   (N default 1000000, SITES 1..4, default 4)
 *   env HOST_SETTLE_MS: wait this long after loading, for a profiler to read the new libraries
 *   env STORM_WORK_NS: CPU work per launch besides the call (a stand-in for the driver's own)
 *   env STORM_REGIONS=1: each round of SITES launches inside region "even" or "odd" (nested in
 *   "storm"), alternately: every site launches from both, half its launches in each
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "perch.h"

#define MAX_SITES 4
#define BATCH	  64 /* launches per activity buffer: the stand-in holds 256 records */

typedef uint32_t (*launch_fn)(int, uint32_t, const char *, int);

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void work(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = clock_ns(CLOCK_MONOTONIC) + ns;
	while (clock_ns(CLOCK_MONOTONIC) < end)
		;
}

/* The call sites a recording must tell apart: out of line, distinct, no tail call. */
#define SITE(n)                                                               \
	static void __attribute__((noinline)) storm_site##n(launch_fn launch) \
	{                                                                     \
		launch(1, 211 /* cudaLaunchKernel_v7000 */, "storm_k" #n, 1); \
		__asm__ volatile("" ::: "memory");                            \
	}
SITE(0)
SITE(1)
SITE(2)
SITE(3)

/* STORM_REGIONS: region "odd" or "even" around a launch (the markers take literals). */
static void __attribute__((noinline)) round_begin(int odd)
{
	if (odd)
		perch_region_begin("odd");
	else
		perch_region_begin("even");
}

static void __attribute__((noinline)) round_end(int odd)
{
	if (odd)
		perch_region_end("odd");
	else
		perch_region_end("even");
}

/* The site's launch from one call instruction in both regions: only the region stack tells the
 * two apart. */
static void __attribute__((noinline)) round_site(void (*site)(launch_fn), launch_fn launch, int odd)
{
	round_begin(odd);
	site(launch);
	round_end(odd);
}

static void *need(void *lib, const char *sym)
{
	void *p = dlsym(lib, sym);

	if (!p) {
		fprintf(stderr, "storm: %s: %s\n", sym, dlerror());
		exit(2);
	}
	return p;
}

/* The stand-in, through the injection library when one is given (as the driver loads it). */
static void *load(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *lib;

	if (path) {
		lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		if (!lib) {
			fprintf(stderr, "storm: load %s: %s\n", path, dlerror());
			exit(2);
		}
		((int (*)(void))need(lib, "InitializeInjection"))();
	}
	lib = dlopen("libcupti.so.13", RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "storm: libcupti.so.13: %s\n", dlerror());
		exit(2);
	}
	return lib;
}

int main(int argc, char **argv)
{
	static void (*const sites[MAX_SITES])(launch_fn) = {storm_site0, storm_site1, storm_site2,
							    storm_site3};
	long n = argc > 1 ? atol(argv[1]) : 1000000, nsites = argc > 2 ? atol(argv[2]) : MAX_SITES;
	uint64_t per_site[MAX_SITES] = {0}, work_ns, w0, c0, w1, c1;
	int regions = getenv("STORM_REGIONS") && atoi(getenv("STORM_REGIONS"));
	void *cupti;
	launch_fn launch;
	void (*complete)(void);

	if (n <= 0 || nsites < 1 || nsites > MAX_SITES) {
		fprintf(stderr, "usage: storm [N [SITES (1..4)]]\n");
		return 64;
	}
	work_ns = getenv("STORM_WORK_NS") ? strtoull(getenv("STORM_WORK_NS"), NULL, 10) : 0;
	cupti = load();
	launch = (launch_fn)need(cupti, "fake_cupti_launch");
	complete = (void (*)(void))need(cupti, "fake_cupti_complete");
	if (getenv("HOST_SETTLE_MS"))
		usleep((useconds_t)atoi(getenv("HOST_SETTLE_MS")) * 1000u);

	w0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	perch_region_begin("storm");
	for (long i = 0; i < n; i++) {
		if (regions)
			round_site(sites[i % nsites], launch, (i / nsites) % 2);
		else
			sites[i % nsites](launch);
		per_site[i % nsites]++;
		work(work_ns);
		if (i % BATCH == BATCH - 1)
			complete();
	}
	complete();
	perch_region_end("storm");
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	w1 = clock_ns(CLOCK_MONOTONIC);
	printf("storm launches=%ld sites=%ld wall_ns=%llu cpu_ns=%llu per_site=%llu,%llu,%llu,%llu\n",
	       n, nsites, (unsigned long long)(w1 - w0), (unsigned long long)(c1 - c0),
	       (unsigned long long)per_site[0], (unsigned long long)per_site[1],
	       (unsigned long long)per_site[2], (unsigned long long)per_site[3]);
	return 0;
}
