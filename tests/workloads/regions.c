// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ground truth for region markers (include/perch.h), linked with the runtime.
 *
 *   regions shape        known calls: nesting, recursion, one name in two places, two threads,
 *                        a mismatched end, marks, a region left open at exit (see below)
 *   regions share SEC    "solve" burns 7 ms and "io" 3 ms of CPU in each "step"
 *   regions loop SEC     "batch" regions of 200 ms, each of 100 "tick"s (for attaching); a
 *                        batch ends at the first tick past 200 ms, so a preempted one runs
 *                        longer: the shortest and longest batch, as measured, are its truth
 *   regions limits       past the runtime's limits: "nest" 70 deep, once, then 4105 names each
 *                        once over 5 threads ("name_0000" .. "name_4104"): the table keeps
 *                        "nest" and up to "name_4094"; the last 10 do not fit
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "burn.h"
#include "perch.h"

/* ---- shape: calls per region name, all threads, are
 *   frame 10, update 10, render 10, draw 45 (30 under render, 10 under ui, 5 on the worker
 *   thread), ui 10, rec 10 (5 deep, twice; folded), worker 5, outer 1, inner 1 (the mismatch:
 *   "inner" is ended by the end of "outer"), checkpoint 2 (marks), left_open 0 (open at exit). */

static void draw(void)
{
	PERCH_SCOPE("draw");
	BURN(20000);
}

static void rec(int depth)
{
	PERCH_SCOPE("rec");
	BURN(10000);
	if (depth > 0)
		rec(depth - 1);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++) {
		perch_region_begin("worker");
		draw();
		perch_region_end("worker");
	}
	return NULL;
}

static int shape(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	for (int i = 0; i < 10; i++) {
		PERCH_SCOPE("frame");
		perch_region_begin("update");
		BURN(50000);
		perch_region_end("update");
		perch_region_begin("render");
		for (int k = 0; k < 3; k++)
			draw();
		perch_region_end("render");
		perch_region_begin_n("ui", 4);
		draw();
		perch_region_end("ui");
	}
	rec(4);
	rec(4);
	perch_mark("checkpoint");
	perch_mark("checkpoint");
	pthread_join(t, NULL);
	perch_region_begin("outer");
	perch_region_begin("inner");
	perch_region_end("outer"); /* mismatched: "inner" is still open */
	perch_region_begin("left_open");
	BURN(1000);
	return 0; /* "left_open" never ends */
}

/* ---- share */

static void share(double seconds)
{
	double end = now_s() + seconds, solve = 0, io = 0;

	while (now_s() < end) {
		PERCH_SCOPE("step");
		perch_region_begin("solve");
		solve += BURN_CPU(0.007);
		perch_region_end("solve");
		perch_region_begin("io");
		io += BURN_CPU(0.003);
		perch_region_end("io");
	}
	truth("solve", solve);
	truth("io", io);
	truth("cpu", process_cpu_s());
}

/* ---- loop */

static void loop(double seconds)
{
	double start = now_s(), end = start + seconds, shortest = 1e9, longest = 0;
	unsigned long ticks = 0;

	while (now_s() < end) {
		double batch_start = now_s(), took;

		perch_region_begin("batch");
		while (now_s() < batch_start + 0.2) {
			PERCH_SCOPE("tick");
			BURN(50000);
			ticks++;
		}
		perch_region_end("batch");
		took = now_s() - batch_start;
		shortest = took < shortest ? took : shortest;
		longest = took > longest ? took : longest;
	}
	truth("ticks_per_s", ticks / (now_s() - start));
	truth("batch_min", shortest);
	truth("batch_max", longest);
}

/* ---- limits */

static void nest(int depth)
{
	PERCH_SCOPE("nest");
	if (depth > 1)
		nest(depth - 1);
}

/* Names [first, first + 822): one thread's share, well within its tree's 1024 nodes. */
static void *some_names(void *arg)
{
	int first = (int)(intptr_t)arg;
	char name[32];

	for (int i = first; i < first + 822 && i < PERCH_MAX_NAMES + 9; i++) {
		snprintf(name, sizeof(name), "name_%04d", i);
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
	return NULL;
}

static int limits(void)
{
	nest(PERCH_MAX_DEPTH + 6); /* first: its name must fit */
	for (int first = 0; first < PERCH_MAX_NAMES + 9; first += 822) {
		pthread_t t;

		if (pthread_create(&t, NULL, some_names, (void *)(intptr_t)first))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "shape";
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;

	if (!strcmp(mode, "share"))
		share(seconds);
	else if (!strcmp(mode, "loop"))
		loop(seconds);
	else if (!strcmp(mode, "limits"))
		return limits();
	else
		return shape();
	return 0;
}
