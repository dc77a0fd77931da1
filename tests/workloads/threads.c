// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Ground truth: four threads, each spinning in its own function; each gets the share of the
 * process's samples that its CPU time is of the process's, which each prints at its end (about a
 * quarter: the scheduler shares the CPUs fairly). */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include "burn.h"

static double end_time;

#define THREAD_FN(name)                                 \
	__attribute__((noinline)) void *name(void *arg) \
	{                                               \
		(void)arg;                              \
		while (now_s() < end_time)              \
			BURN(100000);                   \
		truth(#name, thread_cpu_s());           \
		return NULL;                            \
	}

THREAD_FN(thread_fn_0)
THREAD_FN(thread_fn_1)
THREAD_FN(thread_fn_2)
THREAD_FN(thread_fn_3)

int main(int argc, char **argv)
{
	void *(*fns[4])(void *) = {thread_fn_0, thread_fn_1, thread_fn_2, thread_fn_3};
	pthread_t t[4];

	end_time = now_s() + arg_seconds(argc, argv, 2.0);
	for (int i = 0; i < 4; i++) {
		char name[16];

		if (pthread_create(&t[i], NULL, fns[i], NULL))
			return 1;
		/* Each thread named as a server's workers are: the profile names them so. */
		snprintf(name, sizeof(name), "spin-%d", i);
		pthread_setname_np(t[i], name);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	truth("cpu", process_cpu_s());
	return 0;
}
