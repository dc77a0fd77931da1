// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth under load: N threads (default 1000), more than the CPUs can run, each spinning in
 * thread_work until the end time, so the target fills every CPU and the profiler competes with
 * it for time. At exit it prints the CPU time all threads spent in thread_work and the process's
 * total.
 *
 *   manythreads [SECONDS [N]]
 */
#include <pthread.h>
#include "burn.h"

static double end_time, spent;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void thread_work(void)
{
	double start = thread_cpu_s();

	while (now_s() < end_time)
		BURN(20000);
	pthread_mutex_lock(&lock);
	spent += thread_cpu_s() - start;
	pthread_mutex_unlock(&lock);
}

static void *thread_main(void *arg)
{
	(void)arg;
	thread_work();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t *t = calloc(n, sizeof(*t));
	pthread_attr_t attr;
	int started = 0;

	if (!t)
		return 1;
	end_time = now_s() + arg_seconds(argc, argv, 2.0);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (; started < n; started++)
		if (pthread_create(&t[started], &attr, thread_main, NULL))
			break;
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	truth("thread_work", spent);
	truth("cpu", process_cpu_s());
	truth("threads", started);
	free(t);
	return started == n ? 0 : 1;
}
