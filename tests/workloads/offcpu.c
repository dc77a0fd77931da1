// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Off-CPU workload (tests/integration/offcpu.sh): thread "worker" loops over three phases, each
 * a function of its own, and measures the time it spends in each (CLOCK_MONOTONIC):
 *   phase_sleep  nanosleep for SLEEP_MS                                          (off-CPU: sleep)
 *   phase_spin   spin on the clock for SPIN_MS                                   (on-CPU)
 *   phase_lock   wait on a mutex thread "holder" keeps for LOCK_MS               (off-CPU: lock)
 * (40 %, 40 %, 20 % by default). Thread "reader" (after OFFCPU_READER_MS, default 300) blocks in
 * read() on a pipe, in pipe_wait_read, until the worker is done, and measures that time. At the end it prints
 *   sleep_ns=N spin_ns=N lock_ns=N read_ns=N long_ns=N spin_run_ns=N
 * the ground truth the test holds perch's --view=wall and --view=off against; long_ns is the wall
 * time of the sleep and lock phases that took OFFCPU_LONG_MS (default 400) or more each, what
 * --off-cpu-min at that length may keep of them (a loaded machine wakes a thread late);
 * spin_run_ns is what the scheduler counted of the spin phases (/proc/thread-self/schedstat: time
 * on a CPU and time waiting for one), the wall time less what the hypervisor stole from the
 * vCPU meanwhile, which no tick of the guest sees (a loaded VM: seconds a minute).
 *
 * usage: offcpu [SECONDS] [SLEEP_MS SPIN_MS LOCK_MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "burn.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t go, held;
static volatile int done;
static unsigned int lock_ms = 10;
static int pipefd[2];
static uint64_t read_ns;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) void phase_sleep(unsigned int ms)
{
	sleep_ms(ms);
}

__attribute__((noinline)) void phase_spin(unsigned int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;

	while (now_ns() < end)
		;
}

/* The holder takes the mutex, says so, keeps it lock_ms: the worker waits on it that long. */
__attribute__((noinline)) void phase_lock(void)
{
	sem_post(&go);
	sem_wait(&held);
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "holder");
	for (;;) {
		sem_wait(&go);
		if (done)
			return NULL;
		pthread_mutex_lock(&lock);
		sem_post(&held);
		sleep_ms(lock_ms);
		pthread_mutex_unlock(&lock);
	}
}

__attribute__((noinline)) void pipe_wait_read(void)
{
	char c;
	uint64_t t0 = now_ns();

	if (read(pipefd[0], &c, 1) < 0)
		perror("read");
	read_ns = now_ns() - t0;
}

/* The scheduler's time of this thread so far: on a CPU plus waiting for one (ns). */
static uint64_t sched_ns(void)
{
	double run, wait;

	sched_s(&run, &wait);
	return (uint64_t)((run + wait) * 1e9);
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	/* A stack is taken when the thread leaves the CPU: one that blocks in the first moments
	 * after exec, before perch has listed the process's unwind tables, is copied for perch to
	 * walk once it has (a frame-pointer walk would lose pipe_wait_read: glibc's read() makes
	 * no frame). OFFCPU_READER_MS=0 blocks at once, in that window. */
	const char *ms = getenv("OFFCPU_READER_MS");

	sleep_ms(ms ? atoi(ms) : 300);
	pipe_wait_read();
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	unsigned int sleep_ms_ = argc > 4 ? atoi(argv[2]) : 20,
		     spin_ms = argc > 4 ? atoi(argv[3]) : 20;
	uint64_t t[3] = {0}, end, t0, d, long_ns = 0, long_min, s0, spin_run = 0;
	pthread_t h, r;

	if (argc > 4)
		lock_ms = atoi(argv[4]);
	long_min = (uint64_t)(getenv("OFFCPU_LONG_MS") ? atoi(getenv("OFFCPU_LONG_MS")) : 400) *
		   1000000ull;
	if (pipe(pipefd) || sem_init(&go, 0, 0) || sem_init(&held, 0, 0))
		return 1;
	pthread_setname_np(pthread_self(), "worker");
	pthread_create(&h, NULL, holder, NULL);
	pthread_create(&r, NULL, reader, NULL);
	end = now_ns() + (uint64_t)(seconds * 1e9);
	while (now_ns() < end) {
		t0 = now_ns();
		phase_sleep(sleep_ms_);
		d = now_ns() - t0;
		t[0] += d;
		long_ns += d >= long_min ? d : 0;
		s0 = sched_ns();
		t0 = now_ns();
		phase_spin(spin_ms);
		t[1] += now_ns() - t0;
		spin_run += sched_ns() - s0;
		t0 = now_ns();
		phase_lock();
		d = now_ns() - t0;
		t[2] += d;
		long_ns += d >= long_min ? d : 0;
	}
	done = 1;
	sem_post(&go);
	pthread_join(h, NULL);
	if (write(pipefd[1], "x", 1) != 1)
		return 1;
	pthread_join(r, NULL);
	printf("sleep_ns=%llu spin_ns=%llu lock_ns=%llu read_ns=%llu long_ns=%llu spin_run_ns=%llu\n",
	       (unsigned long long)t[0], (unsigned long long)t[1], (unsigned long long)t[2],
	       (unsigned long long)read_ns, (unsigned long long)long_ns,
	       (unsigned long long)(spin_run < t[1] ? spin_run : t[1]));
	return 0;
}
