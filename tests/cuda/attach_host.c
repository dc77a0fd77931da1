// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The "CUDA program" of tests/integration/gpu-attach.sh (`perch record --gpu -p PID`), linked to
 * the stand-in libcuda.so.1 (fake_libcuda.c), not a GPU. It resolves kernel_early before perch
 * attaches, prints "ready PID" and waits for GO_FILE to exist (the test creates it once perch
 * says its probes are in place); then resolves kernel_a (cuModuleGetFunction) and kernel_b
 * (cuLibraryGetKernel + cuKernelGetFunction) and, ROUNDS times, calls from known call sites in
 * known regions:
 *   launch_site_a, region "prep":  2 x cuLaunchKernel(kernel_a)
 *   launch_site_b, region "solve": 1 x cuLaunchKernelEx(kernel_b)
 *   launch_site_early, no region:  1 x cuLaunchKernel_ptsz(kernel_early), whose name perch
 *                                  never saw: it prints as kernel@0xHANDLE
 *   copy_site, region "io":        cuMemcpyHtoD 4096 B, cuMemcpyDtoHAsync 1000 B, cuMemcpyDtoD
 *                                  12345 B, cuMemsetD32 256 x 4 B, cuMemsetD2D8 100 x 3 B
 * and then spins HOST_SPIN_MS (default 200) of CPU in host_spin. It counts every call it made
 * and prints the counts as `truth` lines, which the test compares with perch's report, and how
 * long the rounds took (loop_ns, and cpu_ns of the thread's CPU time, the probes' kernel work
 * included: what a probe hit costs, with and without perch attached).
 *
 *   attach_host GO_FILE [ROUNDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>
#include "perch.h"

/* cuda.h declares the _ptsz names only for CUDA_API_PER_THREAD_DEFAULT_STREAM builds. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int shmem, CUstream s, void **params,
				     void **extra);

enum { A, B, EARLY, HTOD, DTOH, DTOD, SET32, SET2D, NCOUNTS };
static unsigned long counts[NCOUNTS];
static unsigned long bytes[NCOUNTS];

static void check(CUresult r, const char *what)
{
	if (r == CUDA_SUCCESS)
		return;
	fprintf(stderr, "attach_host: %s: error %d\n", what, (int)r);
	exit(1);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void __attribute__((noinline)) host_spin(unsigned int ms)
{
	uint64_t end = mono_ns() + (uint64_t)ms * 1000000ull;
	volatile uint64_t x = 0;

	while (mono_ns() < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
}

/* The call sites the report must name: out of line, distinct, never tail calls. */
static void __attribute__((noinline)) launch_site_a(CUfunction f)
{
	for (int i = 0; i < 2; i++) {
		check(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), "launch a");
		counts[A]++;
	}
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) launch_site_b(CUfunction f)
{
	CUlaunchConfig cfg = {.gridDimX = 1,
			      .gridDimY = 1,
			      .gridDimZ = 1,
			      .blockDimX = 64,
			      .blockDimY = 1,
			      .blockDimZ = 1};

	check(cuLaunchKernelEx(&cfg, f, NULL, NULL), "launch b");
	counts[B]++;
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) launch_site_early(CUfunction f)
{
	check(cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "launch early");
	counts[EARLY]++;
	__asm__ volatile("" ::: "memory");
}

static void count(int which, size_t n)
{
	counts[which]++;
	bytes[which] += n;
}

static void __attribute__((noinline)) copy_site(CUdeviceptr d1, CUdeviceptr d2, char *host)
{
	check(cuMemcpyHtoD(d1, host, 4096), "HtoD");
	count(HTOD, 4096);
	check(cuMemcpyDtoHAsync(host, d1, 1000, NULL), "DtoH");
	count(DTOH, 1000);
	check(cuMemcpyDtoD(d2, d1, 12345), "DtoD");
	count(DTOD, 12345);
	check(cuMemsetD32(d1, 0, 256), "memset D32");
	count(SET32, 256 * 4);
	check(cuMemsetD2D8(d2, 128, 7, 100, 3), "memset 2D");
	count(SET2D, 100 * 3);
	__asm__ volatile("" ::: "memory");
}

static void wait_for(const char *go)
{
	for (int i = 0; access(go, F_OK); i++) {
		if (i == 60000) {
			fprintf(stderr, "attach_host: %s never came\n", go);
			exit(2);
		}
		usleep(1000);
	}
}

static void print_truth(CUfunction early)
{
	printf("handle kernel_early %p\n", (void *)early);
	printf("truth kernel kernel_a %lu\n", counts[A]);
	printf("truth kernel kernel_b %lu\n", counts[B]);
	printf("truth kernel early %lu\n", counts[EARLY]);
	printf("truth site launch_site_a %lu\n", counts[A]);
	printf("truth site launch_site_b %lu\n", counts[B]);
	printf("truth site launch_site_early %lu\n", counts[EARLY]);
	printf("truth region prep %lu\n", counts[A]);
	printf("truth region solve %lu\n", counts[B]);
	printf("truth copy HtoD %lu %lu\n", counts[HTOD], bytes[HTOD]);
	printf("truth copy DtoH %lu %lu\n", counts[DTOH], bytes[DTOH]);
	printf("truth copy DtoD %lu %lu\n", counts[DTOD], bytes[DTOD]);
	printf("truth memsets %lu %lu\n", counts[SET32] + counts[SET2D],
	       bytes[SET32] + bytes[SET2D]);
	printf("truth region io %lu %lu\n",
	       counts[HTOD] + counts[DTOH] + counts[DTOD] + counts[SET32] + counts[SET2D],
	       bytes[HTOD] + bytes[DTOH] + bytes[DTOD] + bytes[SET32] + bytes[SET2D]);
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	const char *spin = getenv("HOST_SPIN_MS");
	CUfunction early, fa, fb;
	CUkernel kb;
	static char host[1 << 14];
	CUdeviceptr d1 = 0x100000, d2 = 0x200000;
	uint64_t t0, t1, c0, c1;

	if (argc < 2) {
		fprintf(stderr, "usage: attach_host GO_FILE [ROUNDS]\n");
		return 64;
	}
	check(cuInit(0), "cuInit");
	check(cuModuleGetFunction(&early, (CUmodule)0x1, "kernel_early"), "kernel_early");
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_for(argv[1]);
	check(cuModuleGetFunction(&fa, (CUmodule)0x1, "kernel_a"), "kernel_a");
	check(cuLibraryGetKernel(&kb, (CUlibrary)0x2, "kernel_b"), "kernel_b");
	check(cuKernelGetFunction(&fb, kb), "kernel_b's function");
	t0 = mono_ns();
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (int r = 0; r < rounds; r++) {
		perch_region_begin("prep");
		launch_site_a(fa);
		perch_region_end("prep");
		perch_region_begin("solve");
		launch_site_b(fb);
		perch_region_end("solve");
		launch_site_early(early);
		perch_region_begin("io");
		copy_site(d1, d2, host);
		perch_region_end("io");
	}
	t1 = mono_ns();
	c1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	host_spin(spin ? (unsigned int)atoi(spin) : 200);
	print_truth(early);
	printf("loop_ns %llu cpu_ns %llu\n", (unsigned long long)(t1 - t0),
	       (unsigned long long)(c1 - c0));
	return 0;
}
