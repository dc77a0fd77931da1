// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for cost models (perch model): three sized regions of known cost shape, linked
 * with the region runtime, each call timed by the workload itself.
 *
 *   costs [CALLS]   "linear"    t = 300 ns + 2 ns*n,       n log-uniform in [16, 65536]
 *                   "nlogn"     t = 40 ns*n*log2(n),        n log-uniform in [16, 65536]
 *                   "quadratic" t = 0.5 ns*n^2,             n log-uniform in [16, 4096] (to
 *                               65536 one call would take 2 s: the scenario's budget is 20 s)
 *                   every 50th call of each made 10x slower (2 % outliers)
 *                   and, first, "setup" (no size) and "once" (one sized call): bad inputs
 *
 * The cost is a dependent multiply chain run for the calibrated number of iterations; what a
 * call really cost on this machine is what the workload measures (TSC, the clock the runtime
 * times regions with, inside the region), so it prints its own fit of each region's normal
 * calls (the deliberately slowed ones left out, and calls over 1.5x the median ratio to their
 * target, which an interrupt hit, and those during which the thread was off the CPU, by its
 * own CPU time: preempted on a busy machine): the truth perch's fit is compared with.
 *
 * Each call is timed twice: inside its markers (inner) and around them (outer, the markers'
 * own cost included); the region's time as the runtime takes it lies between the two.
 *
 *   truth REGION inner|outer|all a=NS b=NS_PER_UNIT calls=K used=U
 *
 * ("all": every normal call timed inside its markers, the preempted ones too: what perch, which
 * cannot tell them apart, fits from on a busy machine.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "perch.h"

#define MAX_CALLS 4000

struct call {
	double n, t, target;
	double outer;  /* the same call timed around its markers */
	int slow;      /* made 10x slower on purpose */
	int disturbed; /* the thread was off the CPU during the call (preempted) */
};

static volatile uint64_t sink;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

static __attribute__((noinline)) void spin(uint64_t k)
{
	uint64_t x = sink;

	for (uint64_t i = 0; i < k; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double linear(double n)
{
	return 300 + 2 * n;
}
static double nlogn(double n)
{
	return 40 * n * log2(n);
}
static double quadratic(double n)
{
	return 0.5 * n * n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Which calls a fit takes: the undisturbed ones timed inside their markers, or around them; or
 * every normal call timed inside, the preempted too (what a profiler that cannot tell them apart
 * sees: on a busy machine the truth lies between this and the undisturbed fit). */
enum { FIT_INNER, FIT_OUTER, FIT_ALL };

/* Weighted least squares on relative error of t = a + b*g(n) over the normal calls. */
static void own_fit(const char *name, struct call *c, int k, double (*g)(double), double base,
		    int how)
{
	double ratio[MAX_CALLS], med, s[5] = {0};
	int m = 0, used = 0, outer = how == FIT_OUTER, all = how == FIT_ALL;

	for (int i = 0; i < k; i++) {
		if (!c[i].slow && (all || !c[i].disturbed))
			ratio[m++] = c[i].t / c[i].target;
	}
	if (!m) {
		printf("warning %s: no undisturbed call\n", name);
		return;
	}
	qsort(ratio, (size_t)m, sizeof(ratio[0]), cmp_double);
	med = ratio[m / 2];
	for (int i = 0; i < k; i++) {
		double w, x, t;

		if (c[i].slow || (!all && c[i].disturbed) || c[i].t / c[i].target > 1.5 * med)
			continue;
		t = outer ? c[i].outer : c[i].t;
		w = 1 / (t * t);
		x = g(c[i].n) / base;
		s[0] += w;
		s[1] += w * x;
		s[2] += w * x * x;
		s[3] += w * t;
		s[4] += w * x * t;
		used++;
	}
	/* normal equations of [1 x] */
	double det = s[0] * s[2] - s[1] * s[1];
	double a = (s[3] * s[2] - s[1] * s[4]) / det, b = (s[0] * s[4] - s[1] * s[3]) / det;

	printf("truth %s %s a=%.4f b=%.6f calls=%d used=%d\n", name,
	       all     ? "all"
	       : outer ? "outer"
		       : "inner",
	       a, b / base, k, used);
	if (!all && used < k / 4)
		printf("warning %s: only %d of %d calls ran undisturbed\n", name, used, k);
}

static double g_lin(double n)
{
	return n;
}
static double g_nlogn(double n)
{
	return n * log2(n);
}
static double g_sq(double n)
{
	return n * n;
}

int main(int argc, char **argv)
{
	static struct call c[3][MAX_CALLS];
	static uint64_t cpu[3][MAX_CALLS];
	int k = argc > 1 ? atoi(argv[1]) : 600;
	uint64_t t0, n0, iters;
	double ns_per_iter, ns_per_tick;

	if (k < 10 || k > MAX_CALLS)
		return 2;
	/* on-CPU time: a shared machine's other jobs must not stretch the calibration */
	n0 = cpu_ns();
	spin(20000000);
	ns_per_iter = (double)(cpu_ns() - n0) / 20000000.0;
	/* for perch model's bad inputs: a region with no sizes, and one with a single sized call */
	perch_region_begin("setup");
	spin(1000);
	perch_region_end("setup");
	perch_region_begin_n("once", 100);
	spin(1000);
	perch_region_end("once");
	t0 = tsc();
	n0 = mono_ns();
	for (int r = 0; r < 3; r++) {
		double lo = 16, hi = r == 2 ? 4096 : 65536;
		double (*cost)(double) = r == 0 ? linear : r == 1 ? nlogn : quadratic;

		for (int i = 0; i < k; i++) {
			double n = floor(exp(log(lo) + (log(hi) - log(lo)) * uniform()));
			uint64_t a, b, o0, o1, cpu0;

			c[r][i].n = n;
			c[r][i].target = cost(n);
			c[r][i].slow = i % 50 == 7;
			iters = (uint64_t)(cost(n) / ns_per_iter * (c[r][i].slow ? 10 : 1));
			cpu0 = cpu_ns();
			o0 = tsc();
			if (r == 0) {
				perch_region_begin_n("linear", (uint64_t)n);
				a = tsc();
				spin(iters);
				b = tsc();
				perch_region_end("linear");
			} else if (r == 1) {
				perch_region_begin_n("nlogn", (uint64_t)n);
				a = tsc();
				spin(iters);
				b = tsc();
				perch_region_end("nlogn");
			} else {
				perch_region_begin_n("quadratic", (uint64_t)n);
				a = tsc();
				spin(iters);
				b = tsc();
				perch_region_end("quadratic");
			}
			o1 = tsc();
			cpu[r][i] = cpu_ns() - cpu0;
			c[r][i].outer = (double)(o1 - o0);
			c[r][i].t = (double)(b - a);
		}
	}
	ns_per_tick = (double)(mono_ns() - n0) / (double)(tsc() - t0);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < k; i++) {
			c[r][i].t *= ns_per_tick;
			c[r][i].outer *= ns_per_tick;
			/* on-CPU time (the bracket's, markers included) short of the wall time */
			c[r][i].disturbed = (double)cpu[r][i] < c[r][i].t * 0.98 - 5000;
		}
	}
	for (int how = FIT_INNER; how <= FIT_ALL; how++) {
		own_fit("linear", c[0], k, g_lin, 1000, how);
		own_fit("nlogn", c[1], k, g_nlogn, 1e5, how);
		own_fit("quadratic", c[2], k, g_sq, 1e6, how);
	}
	printf("ns_per_iter %.4f ns_per_tick %.6f\n", ns_per_iter, ns_per_tick);
	return 0;
}
