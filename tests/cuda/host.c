// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The "CUDA program" of tests/cuda.sh, run against the stand-in libcupti (fake_cupti.c), not a
 * GPU. It loads CUDA_INJECTION64_PATH and calls InitializeInjection() as the CUDA driver does,
 * then drives known calls through the stand-in: three launches of spin_a, a graph launch of four
 * graph_node kernels, a launch whose kernel never shows up, a kernel no launch is known for, a
 * 1 MiB host-to-device copy and five dropped records (with HOST_FORK set, a fork() whose child
 * exits before the drops; with HOST_SYNCS set, a stream sync of 2 ms and a context sync of 3 ms
 * on the main thread and an event sync of 1 ms on a second thread, each printed as "sync TYPE
 * CORR TID WAIT_NS", then a DtoH copy; with HOST_SPIN_MS, that much CPU time in host_spin() at the end). It
 * prints what the test compares with:
 * its CLOCK_MONOTONIC before and after, the correlation id of each call, and the stand-in's view
 * of how it was set up. Each launch comes from a known call site inside a known region (the
 * region runtime, include/perch.h, is built in): spin_a from launch_site_a() in region "prep",
 * the graph from launch_site_graph() in region "solve" nested in "prep", the lost launch from
 * main() in no region; so perch's uprobe on the library's probe has a stack and region stack to
 * find for each (tests/integration/gpu-standin.sh).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "perch.h"

struct fake_state {
	char subscriber[64];
	int clock_before_enable;
	int clock_registered;
	int enables;
	unsigned long long kinds;
	int callbacks[2];
};

typedef uint32_t (*launch_fn)(int, uint32_t, const char *, int);

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* HOST_SPIN_MS: CPU time for a sampler to see (perch record --gpu -- host, integration). */
static void __attribute__((noinline)) host_spin(unsigned int ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000ull;
	volatile uint64_t x = 0;

	while (mono_ns() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
}

/* The call sites the report must name: kept out of line and distinct. */
static void __attribute__((noinline)) launch_site_a(launch_fn launch)
{
	printf("launch spin_a %u\n", launch(1, 211 /* cudaLaunchKernel_v7000 */, "spin_a", 1));
	__asm__ volatile("" ::: "memory"); /* no tail call: the site stays on the stack */
}

static void __attribute__((noinline)) launch_site_graph(launch_fn launch)
{
	printf("launch graph %u\n", launch(1, 311 /* cudaGraphLaunch_v10000 */, "graph_node", 4));
	__asm__ volatile("" ::: "memory");
}

typedef uint32_t (*sync_fn)(uint32_t, uint64_t);

/* One sync through the stand-in, printed with the thread that waited. */
static void sync_once(sync_fn sync, uint32_t type, uint64_t wait_ns)
{
	uint32_t corr = sync(type, wait_ns);

	printf("sync %u %u %ld %llu\n", type, corr, (long)syscall(SYS_gettid),
	       (unsigned long long)wait_ns);
}

static void *sync_thread(void *sync)
{
	sync_once((sync_fn)sync, 1 /* EVENT_SYNCHRONIZE */, 1000000);
	return NULL;
}

/* HOST_SYNCS: who waited, on two threads (one after the other: the stand-in is not thread-safe),
 * then a 1 MiB device-to-host copy, so the device idles between the kernels and it. */
static void syncs(void *cupti, uint32_t (*memcpy_)(uint64_t, uint8_t))
{
	sync_fn sync = (sync_fn)dlsym(cupti, "fake_cupti_sync");
	pthread_t t;

	if (!sync)
		return;
	sync_once(sync, 3 /* STREAM_SYNCHRONIZE */, 2000000);
	sync_once(sync, 4 /* CONTEXT_SYNCHRONIZE */, 3000000);
	if (!pthread_create(&t, NULL, sync_thread, (void *)sync))
		pthread_join(t, NULL);
	printf("memcpy %u\n", memcpy_(1 << 20, 2 /* DTOH */));
}

static void *need(void *lib, const char *sym)
{
	void *p = dlsym(lib, sym);

	if (!p) {
		fprintf(stderr, "host: %s: %s\n", sym, dlerror());
		exit(2);
	}
	return p;
}

int main(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	void *inj, *cupti;
	int (*init)(void);
	launch_fn launch;
	uint32_t (*memcpy_)(uint64_t, uint8_t);
	uint32_t (*orphan)(const char *);
	void (*drop)(size_t), (*complete)(void), (*state)(struct fake_state *);
	struct fake_state s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	inj = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
	if (!inj) {
		fprintf(stderr, "host: load %s: %s\n", path ? path : "(unset)", dlerror());
		return 2;
	}
	cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (!cupti) {
		fprintf(stderr, "host: libcupti.so.13 not loaded: %s\n", dlerror());
		return 2;
	}
	init = (int (*)(void))need(inj, "InitializeInjection");
	launch = (launch_fn)need(cupti, "fake_cupti_launch");
	memcpy_ = (uint32_t(*)(uint64_t, uint8_t))need(cupti, "fake_cupti_memcpy");
	orphan = (uint32_t(*)(const char *))need(cupti, "fake_cupti_orphan_kernel");
	drop = (void (*)(size_t))need(cupti, "fake_cupti_drop");
	complete = (void (*)(void))need(cupti, "fake_cupti_complete");
	state = (void (*)(struct fake_state *))need(cupti, "fake_cupti_state");

	/* HOST_SETTLE_MS: time for a profiler to read the libraries just loaded (perch builds their
	 * unwind tables from its mmap watch; a launch before that has its stack cut there). */
	if (getenv("HOST_SETTLE_MS"))
		usleep((useconds_t)atoi(getenv("HOST_SETTLE_MS")) * 1000u);
	printf("t0 %llu\n", (unsigned long long)mono_ns());
	printf("init %d\n", init());
	perch_region_begin("prep");
	for (int i = 0; i < 3; i++)
		launch_site_a(launch);
	perch_region_begin("solve");
	launch_site_graph(launch);
	perch_region_end("solve");
	perch_region_end("prep");
	printf("launch lost %u\n", launch(0, 307 /* cuLaunchKernel */, "lost", 0));
	printf("orphan %u\n", orphan("orphan"));
	complete();
	printf("memcpy %u\n", memcpy_(1 << 20, 1 /* HTOD */));
	if (getenv("HOST_FORK")) { /* a child that exits through exit(): it must send nothing */
		pid_t pid = fork();

		if (pid == 0)
			exit(0);
		waitpid(pid, NULL, 0);
	}
	if (getenv("HOST_SYNCS"))
		syncs(cupti, memcpy_);
	drop(5);
	state(&s);
	printf("fake subscriber=%s clock_registered=%d clock_before_enable=%d kinds=%#llx "
	       "driver_callbacks=%d runtime_callbacks=%d\n",
	       s.subscriber, s.clock_registered, s.clock_before_enable, s.kinds, s.callbacks[0],
	       s.callbacks[1]);
	if (getenv("HOST_SPIN_MS"))
		host_spin((unsigned int)atoi(getenv("HOST_SPIN_MS")));
	printf("t1 %llu\n", (unsigned long long)mono_ns());
	return 0; /* the rest is flushed by the library at exit */
}
