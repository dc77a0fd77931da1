// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of cuda/gpu_records and cuda/gpu_join, without a GPU: real CUPTI activity structs (CUDA
 * 13's headers) filled here are decoded into perch's channel records, CUPTI's clock is converted
 * to CLOCK_MONOTONIC, kernel names are interned, the channel stream is read back, and the
 * correlation join meets either side first, graphs, both sides unmatched and dropped records.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>

#include "cuda/gpu_join.h"
#include "cuda/gpu_records.h"

static const struct gpu_clock mono = {.mode = PERCH_CUDA_CLOCK_CALLBACK};

static void decode_concurrent_kernel(void **state)
{
	CUpti_ActivityKernel10 k = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000;
	k.end = 5000;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 7;
	k.correlationId = 42;
	k.gridX = 4, k.gridY = 2, k.gridZ = 1;
	k.blockX = 128, k.blockY = 1, k.blockZ = 1;
	k.name = "_Z4spinPfi";
	assert_int_equal(gpu_decode(&k, &mono, 99, &r, &name), 1);
	assert_int_equal(r.kind, PERCH_CUDA_KERNEL);
	assert_int_equal(r.correlation_id, 42);
	assert_int_equal(r.start_ns, 1000);
	assert_int_equal(r.end_ns, 5000);
	assert_int_equal(r.bytes, 4 * 2 * 128); /* threads */
	assert_int_equal(r.device, 1);
	assert_int_equal(r.context, 2);
	assert_int_equal(r.stream, 7);
	assert_int_equal(r.pid, 99);
	assert_int_equal(r.flags, 0);
	assert_ptr_equal(name, k.name);

	k.graphId = 3; /* a node of a graph */
	assert_int_equal(gpu_decode(&k, &mono, 99, &r, &name), 1);
	assert_int_equal(r.flags, PERCH_CUDA_F_GRAPH);
	assert_int_equal(r.graph_id, 3);
}

static void decode_memcpy_maps_directions(void **state)
{
	static const struct {
		uint8_t cupti;
		uint32_t perch;
	} dirs[] = {
		{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, PERCH_CUDA_COPY_HTOD},
		{CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, PERCH_CUDA_COPY_DTOH},
		{CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, PERCH_CUDA_COPY_DTOH},
		{CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, PERCH_CUDA_COPY_DTOD},
		{CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, PERCH_CUDA_COPY_HTOH},
		{CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, PERCH_CUDA_COPY_PTOP},
		{CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, PERCH_CUDA_COPY_OTHER},
	};
	CUpti_ActivityMemcpy6 m = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.bytes = 1 << 20;
	m.start = 10;
	m.end = 20;
	m.correlationId = 5;
	m.streamId = 3;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		m.copyKind = dirs[i].cupti;
		assert_int_equal(gpu_decode(&m, &mono, 1, &r, &name), 1);
		assert_int_equal(r.kind, PERCH_CUDA_MEMCPY);
		assert_int_equal(r.detail, dirs[i].perch);
		assert_int_equal(r.bytes, 1 << 20);
		assert_int_equal(r.correlation_id, 5);
		assert_int_equal(r.stream, 3);
		assert_null(name);
	}
}

static void decode_memset_and_sync(void **state)
{
	CUpti_ActivityMemset4 ms = {0};
	CUpti_ActivitySynchronization2 sy = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.bytes = 4096;
	ms.value = 0xab;
	ms.correlationId = 8;
	ms.start = 100;
	ms.end = 150;
	assert_int_equal(gpu_decode(&ms, &mono, 1, &r, &name), 1);
	assert_int_equal(r.kind, PERCH_CUDA_MEMSET);
	assert_int_equal(r.bytes, 4096);
	assert_int_equal(r.detail, 0xab);

	sy.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	sy.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	sy.correlationId = 9;
	sy.streamId = 7;
	sy.start = 200;
	sy.end = 900;
	assert_int_equal(gpu_decode(&sy, &mono, 1, &r, &name), 1);
	assert_int_equal(r.kind, PERCH_CUDA_SYNC);
	assert_int_equal(r.detail, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	assert_int_equal(r.correlation_id, 9);
	assert_int_equal(r.end_ns - r.start_ns, 700);
}

static void decode_api_marks_launches(void **state)
{
	CUpti_ActivityAPI a = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.threadId = 1234;
	a.correlationId = 11;
	a.start = 1;
	a.end = 2;
	assert_int_equal(gpu_decode(&a, &mono, 1, &r, &name), 1);
	assert_int_equal(r.kind, PERCH_CUDA_API);
	assert_int_equal(r.tid, 1234);
	assert_int_equal(r.detail, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
	assert_int_equal(r.flags, PERCH_CUDA_F_RUNTIME | PERCH_CUDA_F_LAUNCH);

	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch;
	assert_int_equal(gpu_decode(&a, &mono, 1, &r, &name), 1);
	assert_int_equal(r.flags, PERCH_CUDA_F_LAUNCH);

	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2; /* not a launch */
	assert_int_equal(gpu_decode(&a, &mono, 1, &r, &name), 1);
	assert_int_equal(r.flags, 0);
}

static void decode_skips_other_kinds(void **state)
{
	CUpti_ActivityMarker2 m = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	assert_int_equal(gpu_decode(&m, &mono, 1, &r, &name), 0);
}

static void clock_offset_converts_realtime(void **state)
{
	const struct gpu_clock off = {.mode = PERCH_CUDA_CLOCK_OFFSET, .offset_ns = 1000000};
	CUpti_ActivityKernel10 k = {0};
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	assert_int_equal(gpu_clock_to_mono(&off, 1000500), 500);
	assert_int_equal(gpu_clock_to_mono(&off, 0), 0);      /* CUPTI's unknown stays unknown */
	assert_int_equal(gpu_clock_to_mono(&off, 999999), 0); /* before the monotonic epoch */
	assert_int_equal(gpu_clock_to_mono(&mono, 1000500), 1000500);

	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 3000000;
	k.end = 0; /* never completed */
	assert_int_equal(gpu_decode(&k, &off, 1, &r, &name), 1);
	assert_int_equal(r.start_ns, 2000000);
	assert_int_equal(r.end_ns, 0);
}

/* Scripted clock readings: (mono1, real, mono2) triples. */
struct script {
	const uint64_t (*v)[3];
	int at;
};

static void read_script(void *ctx, uint64_t *mono1, uint64_t *real, uint64_t *mono2)
{
	struct script *s = ctx;

	*mono1 = s->v[s->at][0];
	*real = s->v[s->at][1];
	*mono2 = s->v[s->at][2];
	s->at++;
}

static void clock_measure_takes_tightest_bracket(void **state)
{
	/* a preempted read (wide bracket) would be 5000 off; the tight one is exact */
	static const uint64_t v[][3] = {
		{1000, 1000000 + 1000 + 5000, 11000},
		{20000, 1000000 + 20010, 20020}, /* width 20: offset 1000000 */
		{30000, 1000000 + 30000 + 40, 30100},
		{40100, 1000000 + 40000, 40000}, /* mono went back: ignored */
	};
	struct script s = {v, 0};

	(void)state;
	assert_int_equal(gpu_clock_measure(read_script, &s, 4), 1000000);
	assert_int_equal(s.at, 4);
}

static void names_interned_once(void **state)
{
	struct gpu_names *n = gpu_names__new();
	char a[] = "_Z4spinPfi", b[] = "_Z4spinPfi";
	bool is_new;

	(void)state;
	assert_non_null(n);
	assert_int_equal(gpu_names__intern(n, a, &is_new), 1);
	assert_true(is_new);
	assert_int_equal(gpu_names__intern(n, a, &is_new), 1);
	assert_false(is_new);
	/* another module's copy of the same name: its own id (perch merges by text) */
	assert_int_equal(gpu_names__intern(n, b, &is_new), 2);
	assert_true(is_new);
	/* a pointer CUPTI reused for another kernel after an unload */
	strcpy(a, "_Z5otherv");
	assert_int_equal(gpu_names__intern(n, a, &is_new), 3);
	assert_true(is_new);
	gpu_names__free(n);
	gpu_names__free(NULL);
}

static size_t put_record(char *buf, size_t off, uint16_t kind, uint32_t corr, const char *name)
{
	struct perch_cuda_rec r = {.kind = kind, .correlation_id = corr};
	size_t len = name ? strlen(name) : 0;

	r.name_len = (uint16_t)len;
	memcpy(buf + off, &r, sizeof(r));
	memset(buf + off + sizeof(r), 0, perch_cuda_rec_size((uint32_t)len) - sizeof(r));
	memcpy(buf + off + sizeof(r), name ? name : "", len);
	return off + perch_cuda_rec_size((uint32_t)len);
}

static void stream_reads_records_and_names(void **state)
{
	char buf[512];
	size_t len = 0, off = 0;
	struct perch_cuda_rec r;
	const char *name;

	(void)state;
	len = put_record(buf, len, PERCH_CUDA_NAME, 0, "spin");
	len = put_record(buf, len, PERCH_CUDA_KERNEL, 7, NULL);
	assert_int_equal(len, 64 + 8 + 64);
	assert_int_equal(gpu_stream_next(buf, len, &off, &r, &name), 1);
	assert_int_equal(r.kind, PERCH_CUDA_NAME);
	assert_int_equal(r.name_len, 4);
	assert_memory_equal(name, "spin", 4);
	assert_int_equal(gpu_stream_next(buf, len, &off, &r, &name), 1);
	assert_int_equal(r.correlation_id, 7);
	assert_null(name);
	assert_int_equal(gpu_stream_next(buf, len, &off, &r, &name), 0);
	/* a record cut short: more to come */
	off = 0;
	assert_int_equal(gpu_stream_next(buf, 64 + 4, &off, &r, &name), 0);
	assert_int_equal(off, 0);
	/* damage: an unknown kind, a name past the limit */
	put_record(buf, 0, 77, 0, NULL);
	assert_int_equal(gpu_stream_next(buf, len, &off, &r, &name), -EINVAL);
	put_record(buf, 0, PERCH_CUDA_NAME, 0, NULL);
	((struct perch_cuda_rec *)buf)->name_len = PERCH_CUDA_NAME_MAX + 1;
	assert_int_equal(gpu_stream_next(buf, len, &off, &r, &name), -EINVAL);
}

/* What the join handed on, in order. */
struct seen {
	uint32_t corr[16];
	uint64_t stack[16]; /* 0: no launch */
	int n;
};

static void on_joined(void *ctx, const struct gpu_launch *l, const struct perch_cuda_rec *a)
{
	struct seen *s = ctx;

	assert_true(s->n < 16);
	s->corr[s->n] = a->correlation_id;
	s->stack[s->n] = l ? l->stack_id : 0;
	s->n++;
}

static struct perch_cuda_rec kernel(uint32_t pid, uint32_t corr)
{
	return (struct perch_cuda_rec){
		.kind = PERCH_CUDA_KERNEL, .pid = pid, .correlation_id = corr};
}

static struct gpu_launch launch(uint32_t pid, uint32_t corr, uint64_t stack)
{
	return (struct gpu_launch){.pid = pid,
				   .correlation_id = corr,
				   .stack_id = stack,
				   .flags = PERCH_CUDA_F_LAUNCH};
}

static void join_launch_first(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct gpu_launch l = launch(10, 1, 0xaa);
	struct perch_cuda_rec k = kernel(10, 1);

	(void)state;
	assert_int_equal(gpu_join__launch(j, &l), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(gpu_join__activity(j, &k), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.stack[0], 0xaa);
	gpu_join__finish(j);
	assert_int_equal(gpu_join__stats(j)->joined, 1);
	assert_int_equal(gpu_join__stats(j)->launches_unmatched, 0);
	assert_int_equal(gpu_join__stats(j)->activities_unmatched, 0);
	gpu_join__free(j);
}

static void join_activity_first(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct perch_cuda_rec k1 = kernel(10, 1), k2 = kernel(10, 2), m1 = kernel(10, 1);
	struct gpu_launch l1 = launch(10, 1, 0xaa), l2 = launch(10, 2, 0xbb);

	(void)state;
	m1.kind = PERCH_CUDA_MEMCPY;
	assert_int_equal(gpu_join__activity(j, &k1), 0);
	assert_int_equal(gpu_join__activity(j, &k2), 0);
	assert_int_equal(gpu_join__activity(j, &m1), 0);
	assert_int_equal(s.n, 0); /* all wait */
	assert_int_equal(gpu_join__launch(j, &l2), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.stack[0], 0xbb);
	assert_int_equal(gpu_join__launch(j, &l1), 0);
	assert_int_equal(s.n, 3); /* both of id 1, in arrival order */
	assert_int_equal(s.corr[1], 1);
	assert_int_equal(s.stack[1], 0xaa);
	assert_int_equal(s.stack[2], 0xaa);
	gpu_join__finish(j);
	assert_int_equal(s.n, 3); /* nothing handed on twice */
	assert_int_equal(gpu_join__stats(j)->joined, 3);
	assert_int_equal(gpu_join__stats(j)->activities_unmatched, 0);
	gpu_join__free(j);
}

static void join_graph_many_kernels(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct gpu_launch l = launch(10, 7, 0xcc);
	struct perch_cuda_rec k = kernel(10, 7);

	(void)state;
	k.flags = PERCH_CUDA_F_GRAPH;
	for (int i = 0; i < 3; i++) /* some nodes ran before the launch's probe came back */
		assert_int_equal(gpu_join__activity(j, &k), 0);
	assert_int_equal(gpu_join__launch(j, &l), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(gpu_join__activity(j, &k), 0);
	gpu_join__finish(j);
	assert_int_equal(s.n, 8);
	for (int i = 0; i < 8; i++)
		assert_int_equal(s.stack[i], 0xcc);
	assert_int_equal(gpu_join__stats(j)->launches, 1);
	assert_int_equal(gpu_join__stats(j)->joined, 8);
	gpu_join__free(j);
}

static void join_counts_unmatched_both_sides(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct gpu_launch lost = launch(10, 1, 0xaa), malloc_call = launch(10, 2, 0xbb);
	struct perch_cuda_rec orphan = kernel(10, 3), other_pid = kernel(11, 1);

	(void)state;
	malloc_call.flags = 0; /* an API call that launches nothing: not counted */
	assert_int_equal(gpu_join__launch(j, &lost), 0);
	assert_int_equal(gpu_join__launch(j, &malloc_call), 0);
	assert_int_equal(gpu_join__activity(j, &orphan), 0);
	assert_int_equal(gpu_join__activity(j, &other_pid), 0); /* id 1, another process */
	gpu_join__finish(j);
	assert_int_equal(gpu_join__stats(j)->launches_unmatched, 1);
	assert_int_equal(gpu_join__stats(j)->activities_unmatched, 2);
	assert_int_equal(gpu_join__stats(j)->joined, 0);
	/* unmatched activities are handed on without a launch, never hidden */
	assert_int_equal(s.n, 2);
	assert_int_equal(s.stack[0], 0);
	assert_int_equal(s.stack[1], 0);
	gpu_join__free(j);
}

static void join_merges_probe_and_api_record(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct perch_cuda_rec api = {.kind = PERCH_CUDA_API,
				     .pid = 10,
				     .correlation_id = 4,
				     .tid = 77,
				     .end_ns = 500,
				     .flags = PERCH_CUDA_F_RUNTIME | PERCH_CUDA_F_LAUNCH};
	struct gpu_launch probe = launch(10, 4, 0xdd);
	struct perch_cuda_rec k = kernel(10, 4);

	(void)state;
	assert_int_equal(gpu_join__channel(j, &api), 0);
	assert_int_equal(gpu_join__launch(j, &probe), 0); /* the stack comes from the probe */
	assert_int_equal(gpu_join__channel(j, &k), 0);
	assert_int_equal(s.stack[0], 0xdd);
	assert_int_equal(gpu_join__stats(j)->launches, 1);
	assert_int_equal(gpu_join__stats(j)->duplicate_launches, 1);
	gpu_join__free(j);
}

static void join_counts_dropped_records(void **state)
{
	struct seen s = {0};
	struct gpu_join *j = gpu_join__new(on_joined, &s);
	struct perch_cuda_rec d = {.kind = PERCH_CUDA_DROPPED, .bytes = 17};

	(void)state;
	assert_int_equal(gpu_join__channel(j, &d), 0);
	d.bytes = 5;
	assert_int_equal(gpu_join__channel(j, &d), 0);
	gpu_join__dropped(j, 3);
	assert_int_equal(gpu_join__stats(j)->dropped, 25);
	assert_int_equal(s.n, 0);
	gpu_join__free(j);
	gpu_join__free(NULL);
}

/* Counts what the join handed on, with and without a launch. */
struct tally {
	uint64_t with, without;
};

static void on_tally(void *ctx, const struct gpu_launch *l, const struct perch_cuda_rec *a)
{
	struct tally *t = ctx;

	(void)a;
	if (l)
		t->with++;
	else
		t->without++;
}

static struct gpu_join *small_join(void *ctx, gpu_join_fn *fn)
{
	struct gpu_join *j = gpu_join__new(fn, ctx);
	struct gpu_join_limits lim = {.max_launches = 8, .max_pending = 8, .window_ns = 100};

	assert_non_null(j);
	assert_int_equal(gpu_join__set_limits(j, &lim), 0);
	lim.max_pending = 1;
	assert_int_equal(gpu_join__set_limits(j, &lim), -EINVAL);
	return j;
}

/* A flood of launches nothing runs for (a hostile channel): the table never holds more than its
 * bound, and every launch shed is counted. */
static void join_launch_flood_is_bounded(void **state)
{
	struct tally t = {0};
	struct gpu_join *j = small_join(&t, on_tally);
	size_t nl, nw;

	(void)state;
	for (uint32_t i = 1; i <= 1000; i++) {
		struct gpu_launch l = launch(10, i, i);

		assert_int_equal(gpu_join__launch(j, &l), 0);
		gpu_join__size(j, &nl, &nw);
		assert_true(nl <= 8);
	}
	assert_true(gpu_join__stats(j)->launches_dropped >= 1000 - 8);
	/* the newest are kept: their kernels still join */
	{
		struct perch_cuda_rec k = kernel(10, 1000);

		assert_int_equal(gpu_join__activity(j, &k), 0);
		assert_int_equal(t.with, 1);
	}
	gpu_join__finish(j);
	assert_int_equal(gpu_join__stats(j)->launches_unmatched, 999);
	assert_int_equal(gpu_join__stats(j)->launches, 1000);
	gpu_join__size(j, &nl, &nw);
	assert_int_equal(nl, 0);
	gpu_join__free(j);
}

/* A flood of activities whose launch never comes: the waiting table stays bounded, and every
 * activity is still handed on (without a launch), counted. */
static void join_activity_flood_is_bounded(void **state)
{
	struct tally t = {0};
	struct gpu_join *j = small_join(&t, on_tally);
	size_t nl, nw;

	(void)state;
	for (uint32_t i = 1; i <= 1000; i++) {
		struct perch_cuda_rec k = kernel(10, i % 3 ? i : 7); /* some share an id */

		assert_int_equal(gpu_join__activity(j, &k), 0);
		gpu_join__size(j, &nl, &nw);
		assert_true(nw <= 8);
	}
	assert_true(t.without >= 1000 - 8);
	assert_int_equal(gpu_join__stats(j)->waits_cut, t.without);
	/* those still waiting join their launch: the lists survived the shedding */
	{
		struct gpu_launch l = launch(10, 1000, 0xaa);

		assert_int_equal(gpu_join__launch(j, &l), 0);
		assert_int_equal(t.with, 1);
	}
	gpu_join__finish(j);
	assert_int_equal(t.with + t.without, 1000);
	assert_int_equal(gpu_join__stats(j)->activities_unmatched, 999);
	gpu_join__free(j);
}

/* A joined launch is kept through the join window (a graph's later kernels still join), and
 * forgotten past it; one still waiting for its activity is not. */
static void join_forgets_joined_launches_past_window(void **state)
{
	struct tally t = {0};
	struct gpu_join *j = small_join(&t, on_tally);
	struct gpu_launch g = launch(10, 1, 0xaa), waiting = launch(10, 2, 0xbb);
	struct perch_cuda_rec k = kernel(10, 1);
	size_t nl, nw;

	(void)state;
	assert_int_equal(gpu_join__tick(j, 1000), 0);
	assert_int_equal(gpu_join__launch(j, &g), 0);
	assert_int_equal(gpu_join__launch(j, &waiting), 0);
	assert_int_equal(gpu_join__activity(j, &k), 0);
	assert_int_equal(gpu_join__tick(j, 1090), 0);
	assert_int_equal(gpu_join__activity(j, &k), 0); /* within the window: joins */
	assert_int_equal(t.with, 2);
	assert_int_equal(gpu_join__tick(j, 1300), 0);
	gpu_join__size(j, &nl, &nw);
	assert_int_equal(nl, 1); /* the graph launch forgotten, the waiting one kept */
	assert_int_equal(gpu_join__activity(j, &k), 0);
	assert_int_equal(t.with, 2); /* a kernel of the forgotten launch now waits */
	k.correlation_id = 2;
	assert_int_equal(gpu_join__activity(j, &k), 0);
	assert_int_equal(t.with, 3);
	gpu_join__finish(j);
	assert_int_equal(t.without, 1);
	assert_int_equal(gpu_join__stats(j)->launches_dropped, 0);
	gpu_join__free(j);
}

/* A full table sheds the joined launches first: those still waiting for their activity stay. */
static void join_full_table_sheds_joined_first(void **state)
{
	struct tally t = {0};
	struct gpu_join *j = small_join(&t, on_tally);
	struct perch_cuda_rec k;

	(void)state;
	for (uint32_t i = 1; i <= 8; i++) {
		struct gpu_launch l = launch(10, i, i);

		assert_int_equal(gpu_join__launch(j, &l), 0);
		k = kernel(10, i);
		if (i <= 5) /* 1..5 joined, 6..8 wait */
			assert_int_equal(gpu_join__activity(j, &k), 0);
	}
	{
		struct gpu_launch l =
			launch(10, 9, 9); /* full: down to 4, all of them joined ones */

		assert_int_equal(gpu_join__launch(j, &l), 0);
	}
	for (uint32_t i = 6; i <= 8; i++) {
		k = kernel(10, i);
		assert_int_equal(gpu_join__activity(j, &k), 0);
	}
	assert_int_equal(t.with, 8);
	assert_int_equal(gpu_join__stats(j)->launches_dropped, 0);
	gpu_join__finish(j);
	assert_int_equal(gpu_join__stats(j)->launches_unmatched, 1); /* 9 */
	gpu_join__free(j);
}

/* An id whose launch was shed and comes again: its new activity is handed on once. */
static void join_id_again_after_shedding(void **state)
{
	struct tally t = {0};
	struct gpu_join *j = small_join(&t, on_tally);
	struct perch_cuda_rec k = kernel(10, 1);
	struct gpu_launch l = launch(10, 1, 0xaa);

	(void)state;
	assert_int_equal(gpu_join__activity(j, &k), 0); /* waits */
	assert_int_equal(gpu_join__launch(j, &l), 0);	/* joins it */
	for (uint32_t i = 2; i <= 9; i++) {		/* sheds launch 1 */
		struct gpu_launch o = launch(10, i, i);

		assert_int_equal(gpu_join__launch(j, &o), 0);
	}
	assert_int_equal(gpu_join__activity(j, &k), 0); /* waits again */
	assert_int_equal(gpu_join__launch(j, &l), 0);
	assert_int_equal(t.with, 2);
	gpu_join__finish(j);
	assert_int_equal(t.with + t.without, 2);
	gpu_join__free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_concurrent_kernel),
		cmocka_unit_test(decode_memcpy_maps_directions),
		cmocka_unit_test(decode_memset_and_sync),
		cmocka_unit_test(decode_api_marks_launches),
		cmocka_unit_test(decode_skips_other_kinds),
		cmocka_unit_test(clock_offset_converts_realtime),
		cmocka_unit_test(clock_measure_takes_tightest_bracket),
		cmocka_unit_test(names_interned_once),
		cmocka_unit_test(stream_reads_records_and_names),
		cmocka_unit_test(join_launch_first),
		cmocka_unit_test(join_activity_first),
		cmocka_unit_test(join_graph_many_kernels),
		cmocka_unit_test(join_counts_unmatched_both_sides),
		cmocka_unit_test(join_merges_probe_and_api_record),
		cmocka_unit_test(join_counts_dropped_records),
		cmocka_unit_test(join_launch_flood_is_bounded),
		cmocka_unit_test(join_activity_flood_is_bounded),
		cmocka_unit_test(join_forgets_joined_launches_past_window),
		cmocka_unit_test(join_full_table_sheds_joined_first),
		cmocka_unit_test(join_id_again_after_shedding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
