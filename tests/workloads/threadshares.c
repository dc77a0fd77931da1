// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth for the per-thread views (perch report --per-thread, --tid, --comm): three
 * threads that burn unequal shares of CPU (busy 15, 35 and 70 % of each 100 ms period, asleep the
 * rest: per-CPU cpu-clock sampling, perch's and `perf record -a`'s alike, misses part of the
 * first tick of each burst after an idle CPU wakes, so 1.5 ms bursts every 10 ms came out 2-4
 * points under their CPU time where perf's per-task events did not; 15 ms bursts make that
 * effect ten times rarer, and this workload is about the per-thread views), each named share-N by itself (pthread_setname_np). Each prints its tid and its CPU time
 * from its own clock (CLOCK_THREAD_CPUTIME_ID) at its end, the process its CPU time at exit: the
 * share of samples each thread gets is what the tests compare, never the duty cycles above. */
#define _GNU_SOURCE /* pthread_setname_np, gettid */
#include <pthread.h>
#include <unistd.h>
#include "burn.h"

static double end_time;

struct worker {
	int index;
	double duty; /* busy fraction of each period */
};

/* Burn until the thread's CPU clock has run duty x period more, then sleep out the period. */
__attribute__((noinline)) static void share_work(double duty)
{
	const double period = 0.100;

	while (now_s() < end_time) {
		double start = now_s(), left;

		BURN_CPU(duty * period);
		left = period - (now_s() - start);
		if (left > 0)
			usleep((useconds_t)(left * 1e6));
	}
}

static void *worker(void *arg)
{
	const struct worker *w = arg;
	char name[16];

	snprintf(name, sizeof(name), "share-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	share_work(w->duty);
	snprintf(name, sizeof(name), "tid_%d", w->index);
	truth(name, gettid());
	snprintf(name, sizeof(name), "share-%d", w->index);
	truth(name, thread_cpu_s());
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[3] = {{0, 0.15}, {1, 0.35}, {2, 0.70}};
	pthread_t t[3];

	end_time = now_s() + arg_seconds(argc, argv, 2.0);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			return 1;
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	truth("pid", getpid());
	truth("cpu", process_cpu_s());
	return 0;
}
