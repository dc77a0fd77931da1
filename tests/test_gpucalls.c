// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * model/gpucalls: the tables of an attach-mode recording (perch record --gpu -p), on a recording
 * built in memory: launches per kernel (named, or per process and handle), copies per direction
 * and memsets with their bytes, calls per entry point, and per call path and region.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/gpu_entries.h"
#include "model/gpucalls.h"

static char *strings[] = {"",	  "app",   "main",    "site_a", "site_b", "cuLaunchKernel",
			  "prep", "inner", "kernel_a"};

/* Frames: main, site_a at two call sites, site_b, cuLaunchKernel. */
static struct rec_frame frames[] = {
	{.kind = REC_FRAME_USER, .module = 1, .name = 2, .offset = 0x10},
	{.kind = REC_FRAME_USER, .module = 1, .name = 3, .offset = 0x20},
	{.kind = REC_FRAME_USER, .module = 1, .name = 3, .offset = 0x28},
	{.kind = REC_FRAME_USER, .module = 1, .name = 4, .offset = 0x30},
	{.kind = REC_FRAME_USER, .module = 1, .name = 5, .offset = 0x40},
};

static const uint32_t stack_a1[] = {0, 1, 4}, stack_a2[] = {0, 2, 4}, stack_b[] = {0, 3, 4};
/* prep, and prep -> inner -> prep (recursion: prep counts once) */
static const uint32_t prep[] = {6}, recursive[] = {6, 7, 6};

static struct rec_sample samples[] = {
	{.pid = 1, .tid = 1, .nregions = 1, .regions = prep, .nframes = 3, .frames = stack_a1},
	{.pid = 1, .tid = 1, .nregions = 3, .regions = recursive, .nframes = 3, .frames = stack_a2},
	{.pid = 1, .tid = 2, .nframes = 3, .frames = stack_b},
};

static size_t entry(const char *symbol)
{
	for (size_t i = 0; i < REC_GPU_NENTRIES; i++) {
		if (!strcmp(rec_gpu_entries[i].symbol, symbol))
			return i;
	}
	fail_msg("no entry point %s", symbol);
	return 0;
}

static struct rec_gpu call(const char *symbol, uint64_t bytes, uint32_t name, uint32_t pid,
			   uint32_t launch_key)
{
	const struct rec_gpu_entry *e = &rec_gpu_entries[entry(symbol)];

	return (struct rec_gpu){.kind = REC_GPU_CALL,
				.correlation = (uint32_t)entry(symbol),
				.flags = e->class,
				.stream = e->dir,
				.bytes = bytes,
				.name = name,
				.pid = pid,
				.tid = pid,
				.launch_key = launch_key};
}

/* kernel_a launched from both of site_a's call sites (one path: call sites in one function are
 * one path), the second inside prep -> inner -> prep; an unnamed handle 0x50 from site_b in two
 * processes (two kernels); a copy HtoD and DtoH and a 2D memset from site_b; one launch with no
 * stack. */
static void gpu_calls_count_kernels_copies_paths_and_regions(void **state)
{
	struct rec_gpu calls[] = {
		call("cuLaunchKernel", 0x40, 8, 1, 1),	    call("cuLaunchKernel", 0x40, 8, 1, 2),
		call("cuLaunchKernel", 0x40, 8, 1, 2),	    call("cuLaunchKernelEx", 0x50, 0, 1, 3),
		call("cuLaunchKernelEx", 0x50, 0, 2, 3),    call("cuMemcpyHtoD_v2", 4096, 0, 1, 3),
		call("cuMemcpyDtoHAsync_v2", 100, 0, 1, 3), call("cuMemsetD2D32_v2", 1200, 0, 1, 3),
		call("cuLaunchKernel", 0x40, 8, 1, 0),
	};
	struct recording r = {.version = 4,
			      .strings = strings,
			      .nstrings = sizeof(strings) / sizeof(strings[0]),
			      .frames = frames,
			      .nframes = sizeof(frames) / sizeof(frames[0]),
			      .samples = samples,
			      .nsamples = sizeof(samples) / sizeof(samples[0]),
			      .gpu_calls = calls,
			      .ngpu_calls = sizeof(calls) / sizeof(calls[0])};
	struct gpu_calls *t;

	(void)state;
	t = gpu_calls__new(&r);
	assert_non_null(t);
	assert_int_equal(t->calls, 9);
	assert_int_equal(t->launches, 6);
	assert_int_equal(t->unnamed, 2);
	assert_int_equal(t->nkernels, 3);
	assert_int_equal(t->kernels[0].name, 8);
	assert_int_equal(t->kernels[0].launches, 4);
	assert_int_equal(t->kernels[1].name, 0);
	assert_int_equal(t->kernels[1].handle, 0x50);
	assert_int_equal(t->kernels[1].launches, 1);
	assert_int_equal(t->kernels[2].handle, 0x50);
	assert_int_not_equal(t->kernels[1].pid, t->kernels[2].pid);
	assert_int_equal(t->copies[REC_GPU_COPY_HTOD].count, 1);
	assert_int_equal(t->copies[REC_GPU_COPY_HTOD].bytes, 4096);
	assert_int_equal(t->copies[REC_GPU_COPY_DTOH].bytes, 100);
	assert_int_equal(t->memsets.count, 1);
	assert_int_equal(t->memsets.bytes, 1200);
	assert_int_equal(t->entries[entry("cuLaunchKernel")], 4);
	assert_int_equal(t->entries[entry("cuLaunchKernelEx")], 2);
	/* site_a's path (3 launches with a stack), then site_b's (2 launches, 2 copies, 1 memset) */
	assert_int_equal(t->npaths, 2);
	assert_int_equal(t->paths[0].launches, 3);
	assert_int_equal(r.samples[t->paths[0].id].frames[1] == 1 ||
				 r.samples[t->paths[0].id].frames[1] == 2,
			 1);
	assert_int_equal(t->paths[1].id, 2);
	assert_int_equal(t->paths[1].launches, 2);
	assert_int_equal(t->paths[1].copies, 2);
	assert_int_equal(t->paths[1].memsets, 1);
	assert_int_equal(t->paths[1].bytes, 4096 + 100 + 1200);
	/* prep: all three of site_a's (recursion counted once), inner: the two inside it */
	assert_int_equal(t->nregions, 2);
	assert_int_equal(t->regions[0].id, 6);
	assert_int_equal(t->regions[0].launches, 3);
	assert_int_equal(t->regions[1].id, 7);
	assert_int_equal(t->regions[1].launches, 2);
	gpu_calls__free(t);
}

/* Frames no symbol named are told apart by address (the report prints module+0xoffset), not
 * merged into one unnamed function. */
static void gpu_calls_unnamed_frames_are_paths_by_address(void **state)
{
	static struct rec_frame unnamed[] = {
		{.kind = REC_FRAME_USER, .module = 1, .offset = 0x50},
		{.kind = REC_FRAME_USER, .module = 1, .offset = 0x60},
	};
	static const uint32_t s0[] = {0}, s1[] = {1};
	struct rec_sample two[] = {{.pid = 1, .tid = 1, .nframes = 1, .frames = s0},
				   {.pid = 1, .tid = 1, .nframes = 1, .frames = s1}};
	struct rec_gpu calls[] = {call("cuLaunchKernel", 0x40, 8, 1, 1),
				  call("cuLaunchKernel", 0x40, 8, 1, 2),
				  call("cuLaunchKernel", 0x40, 8, 1, 2)};
	struct recording r = {.version = 4,
			      .strings = strings,
			      .nstrings = sizeof(strings) / sizeof(strings[0]),
			      .frames = unnamed,
			      .nframes = 2,
			      .samples = two,
			      .nsamples = 2,
			      .gpu_calls = calls,
			      .ngpu_calls = 3};
	struct gpu_calls *t = gpu_calls__new(&r);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->npaths, 2);
	assert_int_equal(t->paths[0].id, 1);
	assert_int_equal(t->paths[0].launches, 2);
	assert_int_equal(t->paths[1].id, 0);
	assert_int_equal(t->paths[1].launches, 1);
	gpu_calls__free(t);
}

/* No attach-mode calls: empty tables, and nothing to sort (qsort is never given NULL). */
static void gpu_calls_empty_recording(void **state)
{
	struct recording r = {.version = 4};
	struct gpu_calls *t = gpu_calls__new(&r);

	(void)state;
	assert_non_null(t);
	assert_int_equal(t->calls, 0);
	assert_int_equal(t->nkernels + t->npaths + t->nregions, 0);
	gpu_calls__free(t);
	gpu_calls__free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gpu_calls_count_kernels_copies_paths_and_regions),
		cmocka_unit_test(gpu_calls_unnamed_frames_are_paths_by_address),
		cmocka_unit_test(gpu_calls_empty_recording),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
