// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program whose region runtime turns hostile (tests/integration/hostile-regions.sh). It uses
 * the region API for real first (region "good", sized calls, steps, a pause, a second thread),
 * then corrupts everything perch reads out of it: the thread list first comes back on itself
 * (main's block -> the second thread's -> main's: perch before the fix read them 65,536 times a
 * drain), then the second thread's block (a tree that is no tree, cost-model slots full of
 * garbage), the timeline ring (times outside any run, unknown
 * kinds, a head far ahead), the thread list (a chain of thousands of fake blocks that comes
 * back on itself), the registry's control log (garbage times and kinds, a head far ahead); and
 * floods marks, steps and long region names. Meanwhile it keeps calling region "good": the truth
 * line says how many times outside its pause, for the recording to show (the corruption never
 * touches the main thread's tree).
 *
 *   hostile-regions [MS]   (about MS milliseconds in all; 1500 by default)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "burn.h"
#include "perch.h"

#define NFAKE  20000 /* fake thread blocks chained after the real ones */
#define STRIDE 64    /* they overlap: each one's head fields in its own 64 bytes */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int stage; /* 1: the second thread has its block; 2: it may exit */
static struct perch_abi_thread *second;
static uint64_t good_calls; /* timed ones: not in the program's pause */
static int paused;

/* CPU for about s seconds of this thread's time. */
static void burn_for(double s)
{
	double end = thread_cpu_s() + s;

	while (thread_cpu_s() < end)
		burn_sink++;
}

/* Long enough for perch to read what was just written (it reads every loop turn and drain). */
static void let_perch_read(void)
{
	struct timespec ts = {0, 150000000};

	nanosleep(&ts, NULL);
}

static void good(void)
{
	perch_region_begin("good");
	burn_for(0.002);
	perch_region_end("good");
	good_calls += !paused;
}

static void wait_stage(int want)
{
	pthread_mutex_lock(&lock);
	while (stage < want)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void set_stage(int s)
{
	pthread_mutex_lock(&lock);
	stage = s;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

/* A thread with a real block and tree (24 nodes, a cost-model slot), then parked while main
 * corrupts both. */
static void *second_thread(void *arg)
{
	char name[16];

	(void)arg;
	perch_region_begin("second");
	perch_region_begin_n("sized", 1000);
	burn_for(0.01);
	perch_region_end("sized");
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "s%d", i);
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
	perch_region_end("second");
	second = (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;
	set_stage(1);
	wait_stage(2);
	return NULL;
}

/* The second thread's tree: a node its own parent; its cost-model slots: counts past any
 * bound, garbage sums. */
static void corrupt_block(struct perch_abi_thread *th)
{
	th->nnodes = PERCH_NODE_OTHER;
	th->nodes[2].parent = 7;
	th->models.nslots = 0xffffffffu;
	for (int k = 0; k < PERCH_MODEL_SLOTS; k++) {
		struct perch_abi_model *m = &th->models.slots[k];

		m->seen = UINT64_MAX;
		m->name = 0xffffffffu;
		m->node = 0xfffffff0u;
		for (int b = 0; b < PERCH_MODEL_BUCKETS; b++)
			m->buckets[b] = (struct perch_abi_bucket){
				UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
				0,	    -1e308,	1e308,	    0};
		memset(m->points, 0xff, sizeof(m->points));
	}
}

/* The ring of block th: garbage entries, then a head far ahead of anything written. */
static void corrupt_ring(struct perch_abi_thread *th)
{
	static const uint64_t times[] = {0, 1, UINT64_MAX, UINT64_MAX / 2, 1ull << 63};

	for (unsigned i = 0; i < 5 * sizeof(times) / sizeof(times[0]); i++) {
		uint64_t h = th->ring_head;

		th->ring[h % PERCH_RING_ENTRIES] = (struct perch_abi_event){
			times[i % 5], (i % 7u) << PERCH_RING_KIND_SHIFT | (i * 977u), 0xffffffffu};
		th->ring_head = h + 1;
	}
	let_perch_read();
	th->ring_head += 1ull << 40;
}

/* The control log: garbage times and kinds, then a head far ahead. */
static void corrupt_log(void)
{
	static const uint64_t times[] = {0, 1, UINT64_MAX, UINT64_MAX / 2};

	for (unsigned i = 0; i < 40; i++) {
		uint64_t h = perch_registry.log_head;

		perch_registry.log[h % PERCH_LOG_ENTRIES] = (struct perch_abi_log){
			times[i % 4], UINT64_MAX - i, i % 6, 0xffffffffu - i};
		perch_registry.log_head = h + 1;
	}
	let_perch_read();
	perch_registry.log_head += 1ull << 30;
}

/* The list comes back on itself: its last block (main's) points at its first. */
static void cycle(void)
{
	struct perch_abi_thread *last =
		(struct perch_abi_thread *)(uintptr_t)perch_registry.threads;

	while (last->next)
		last = (struct perch_abi_thread *)(uintptr_t)last->next;
	last->next = perch_registry.threads;
	let_perch_read();
	last->next = 0;
}

/* A chain of fake blocks after the real ones, overlapping (each one's next, tid, nnodes and
 * epoch in its own 64 bytes), its last one pointing back at the newest real block. */
static void chain_fakes(void)
{
	size_t len = (size_t)NFAKE * STRIDE + sizeof(struct perch_abi_thread);
	uint8_t *buf = calloc(1, len);
	uint64_t first = perch_registry.threads;
	struct perch_abi_thread *last = (struct perch_abi_thread *)(uintptr_t)first;

	if (!buf)
		exit(1);
	while (last->next)
		last = (struct perch_abi_thread *)(uintptr_t)last->next;
	for (uint32_t i = 0; i < NFAKE; i++) {
		struct perch_abi_thread *f = (struct perch_abi_thread *)(buf + (size_t)i * STRIDE);

		f->next = i + 1 < NFAKE ? (uintptr_t)(buf + (size_t)(i + 1) * STRIDE) : first;
		f->tid = 1000000 + i;
		f->nnodes = PERCH_NODE_OTHER;
		f->epoch = perch_registry.epoch;
	}
	last->next = (uintptr_t)buf; /* the real blocks, the fakes, the real ones again ... */
}

/* Floods: marks past the ring, steps past the control log, long names (cut by the runtime). */
static void flood(void)
{
	char name[256];

	for (int i = 0; i < 3 * PERCH_RING_ENTRIES; i++)
		perch_mark("flood");
	for (uint64_t s = 0; s < 20000; s++)
		perch_step(s);
	perch_step_end();
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	for (int i = 0; i < 300; i++) {
		snprintf(name, 8, "n%05d", i);
		name[7] = 'x';
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
}

int main(int argc, char **argv)
{
	double total = (argc > 1 ? atof(argv[1]) : 1500) / 1e3, t0 = now_s();
	pthread_t t;

	for (uint64_t s = 0; s < 20; s++) {
		perch_step(s);
		good();
	}
	perch_step_end();
	perch_profile_pause();
	paused = 1;
	good();
	paused = 0;
	perch_profile_resume();
	if (pthread_create(&t, NULL, second_thread, NULL))
		return 1;
	wait_stage(1);
	while (now_s() - t0 < total / 3)
		good(); /* perch reads the good state at least once */
	if (second && perch__tls.thread && perch_registry.threads) { /* a profiler switched it on */
		cycle();
		corrupt_block(second);
		corrupt_ring((struct perch_abi_thread *)(uintptr_t)perch__tls.thread);
		corrupt_log();
		chain_fakes();
	}
	flood();
	while (now_s() - t0 < total)
		good();
	set_stage(2);
	pthread_join(t, NULL);
	printf("truth good_calls %llu\n", (unsigned long long)good_calls);
	return 0;
}
