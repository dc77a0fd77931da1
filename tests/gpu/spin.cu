// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A CUDA workload with known answers for tests/gpu/run.sh (issue 13). Kernels spin on the GPU's
 * %globaltimer for a set time, so their durations are known without trusting any profiler;
 * each phase launches from its own host function (never inlined: the call path perch must join
 * each launch to) inside its own region (perch.h), and prints a "truth" line of what it did.
 *
 *   phase_a   50 x spin 2 ms     launch_a()     region "phase_a"
 *   phase_b   20 x spin 5 ms     launch_b()     region "phase_b"
 *   copies    64 MiB host to device, then back  copy_both()    region "copies"
 *   storm     100000 x empty kernel            launch_storm() region "storm"
 *   graph     10 x a graph of 4 x spin 1 ms    launch_graph() region "graph"
 *
 * Each phase ends with a synchronize, so phases never overlap on the GPU. The first and last lines
 * are CLOCK_MONOTONIC before and after all of it.
 */
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <perch.h>

#define CHECK(call)                                                                   \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "spin: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(3);                                                      \
		}                                                                     \
	} while (0)

__device__ static unsigned long long globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void spin_a(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();

	while (globaltimer() - t0 < ns)
		;
}

__global__ void spin_b(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();

	while (globaltimer() - t0 < ns)
		;
}

__global__ void graph_node(unsigned long long ns)
{
	unsigned long long t0 = globaltimer();

	while (globaltimer() - t0 < ns)
		;
}

__global__ void empty(void)
{
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static void launch_a(void)
{
	unsigned long long t0 = mono_ns();

	perch_region_begin("phase_a");
	for (int i = 0; i < 50; i++)
		spin_a<<<1, 1>>>(2000000);
	CHECK(cudaDeviceSynchronize());
	perch_region_end("phase_a");
	printf("truth kernel=spin_a calls=50 ns=2000000 site=launch_a region=phase_a wall_ns=%llu\n",
	       mono_ns() - t0);
}

__attribute__((noinline)) static void launch_b(void)
{
	unsigned long long t0 = mono_ns();

	perch_region_begin("phase_b");
	for (int i = 0; i < 20; i++)
		spin_b<<<1, 1>>>(5000000);
	CHECK(cudaDeviceSynchronize());
	perch_region_end("phase_b");
	printf("truth kernel=spin_b calls=20 ns=5000000 site=launch_b region=phase_b wall_ns=%llu\n",
	       mono_ns() - t0);
}

__attribute__((noinline)) static void copy_both(void)
{
	size_t n = 64u << 20;
	void *host, *dev;

	perch_region_begin("copies");
	CHECK(cudaMallocHost(&host, n));
	CHECK(cudaMalloc(&dev, n));
	CHECK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost));
	CHECK(cudaFree(dev));
	CHECK(cudaFreeHost(host));
	perch_region_end("copies");
	printf("truth copy=htod bytes=%zu site=copy_both region=copies\n", n);
	printf("truth copy=dtoh bytes=%zu site=copy_both region=copies\n", n);
}

__attribute__((noinline)) static void launch_storm(void)
{
	unsigned long long t0, t1;

	perch_region_begin("storm");
	t0 = mono_ns();
	for (int i = 0; i < 100000; i++)
		empty<<<1, 1>>>();
	CHECK(cudaDeviceSynchronize());
	t1 = mono_ns();
	perch_region_end("storm");
	printf("truth kernel=empty calls=100000 site=launch_storm region=storm wall_ns=%llu\n",
	       t1 - t0);
}

__attribute__((noinline)) static void launch_graph(void)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t exec;

	perch_region_begin("graph");
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < 4; i++)
		graph_node<<<1, 1, 0, s>>>(1000000);
	CHECK(cudaStreamEndCapture(s, &g));
	CHECK(cudaGraphInstantiate(&exec, g, 0));
	for (int i = 0; i < 10; i++)
		CHECK(cudaGraphLaunch(exec, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaGraphExecDestroy(exec));
	CHECK(cudaGraphDestroy(g));
	CHECK(cudaStreamDestroy(s));
	perch_region_end("graph");
	printf("truth kernel=graph_node calls=40 ns=1000000 launches=10 site=launch_graph "
	       "region=graph\n");
}

int main(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
		printf("skipped: no GPU\n");
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("truth t0=%llu\n", mono_ns());
	launch_a();
	launch_b();
	copy_both();
	launch_storm();
	launch_graph();
	printf("truth t1=%llu\n", mono_ns());
	return 0;
}
