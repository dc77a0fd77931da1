// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The writer never writes what its own reader refuses: every block writer is fed the values a
 * hostile target can hand perch (times past the deltas' range, ends before starts, huge names
 * and counts, ids never defined), each refused one is counted, and the recording written around
 * them loads whole, with every good entry and the count of what was refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format/keys.h"
#include "format/merge.h"
#include "format/recording.h"

#define HUGE_T UINT64_MAX
#define FAR_T  (REC_TIME_MAX + 1)

static char path[] = "/tmp/perch-test-hostile-XXXXXX";

/* Strings 1 "/bin/app", 2 "main", 3 "solve"; frame 0 main; key 0: pid 9 tid 10 in main. */
static uint32_t define_app(struct rec_writer *w)
{
	static const uint32_t main_only[] = {0};
	struct rec_sample s = {.pid = 9, .tid = 10, .count = 1, .nframes = 1, .frames = main_only};
	uint32_t app = rec_writer__string(w, "/bin/app"), key;

	assert_int_equal(
		rec_writer__frame(w, REC_FRAME_USER, app, rec_writer__string(w, "main"), 0x10), 0);
	assert_int_equal(rec_writer__string(w, "solve"), 3);
	assert_int_equal(rec_writer__key(w, &s, &key), 0);
	return key;
}

/* Samples, windows and names: out-of-range ones refused, huge counts saturate. */
static void feed_samples(struct rec_writer *w)
{
	static const uint32_t main_only[] = {0}, bad_frame[] = {77};
	char *name = malloc((1u << 21) + 1);

	assert_non_null(name);
	memset(name, 'x', 1u << 21);
	name[1u << 21] = '\0';
	assert_int_equal(rec_writer__string(w, name), 0); /* over MAX_STRING */
	assert_int_equal(errno, E2BIG);
	free(name);
	assert_int_equal(rec_writer__sample(w, 9, 10, UINT64_MAX, 0, main_only, 1), 0);
	assert_int_equal(rec_writer__sample(w, 9, 10, UINT64_MAX, 0, main_only, 1), 0);
	assert_int_equal(rec_writer__sample(w, 9, 10, 1, 0, bad_frame, 1), -EINVAL);
	assert_int_equal(rec_writer__sample(w, 9, 10, 1, 0, main_only, UINT32_MAX), -EINVAL);
	assert_int_equal(rec_writer__window(w, 2000, 1000), -EINVAL); /* ends before it starts */
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	assert_int_equal(rec_writer__window(w, 500, 3000), -EINVAL); /* back in time */
	assert_int_equal(rec_writer__window(w, 2000, HUGE_T), 0);    /* far, but a u64 */
}

/* Every timed entry: times past REC_TIME_MAX refused (counted), huge deltas either way kept. */
static int feed_times(struct rec_writer *w, uint32_t key)
{
	struct rec_span span = {9, 10, HUGE_T, REC_SPAN_MARK, 3, UINT64_MAX};
	struct rec_gpu g = {.kind = REC_GPU_KERNEL, .start_ns = FAR_T, .end_ns = HUGE_T, .pid = 9};

	assert_int_equal(rec_writer__event(w, HUGE_T, key), -ERANGE);
	assert_int_equal(rec_writer__event(w, FAR_T, key), -ERANGE);
	assert_int_equal(rec_writer__event(w, REC_TIME_MAX, key), 0);
	assert_int_equal(rec_writer__event(w, 1, key), 0); /* the largest step back */
	assert_int_equal(rec_writer__event(w, REC_TIME_MAX, key), 0);
	assert_int_equal(rec_writer__span(w, &span), -ERANGE);
	span.time_ns = 5;
	assert_int_equal(rec_writer__span(w, &span), 0);
	span.time_ns = REC_TIME_MAX;
	assert_int_equal(rec_writer__span(w, &span), 0);
	assert_int_equal(rec_writer__gpu(w, &g), -ERANGE);
	g.start_ns = 7;
	g.end_ns = 6;
	assert_int_equal(rec_writer__gpu(w, &g), -EINVAL); /* ends before it starts */
	g.end_ns = HUGE_T;				   /* a huge duration: a u64 still */
	assert_int_equal(rec_writer__gpu(w, &g), 0);
	g = (struct rec_gpu){.kind = REC_GPU_LAUNCH,
			     .start_ns = 8,
			     .end_ns = 9,
			     .detail = key,
			     .tid = 10,
			     .launch_ns = HUGE_T};
	assert_int_equal(rec_writer__gpu(w, &g), -ERANGE);
	assert_int_equal(rec_writer__offspan(w, key, FAR_T, HUGE_T), -ERANGE);
	assert_int_equal(rec_writer__offspan(w, key, 10, 9), -EINVAL);
	assert_int_equal(rec_writer__offspan(w, key, 10, HUGE_T), 0);
	assert_int_equal(rec_writer__offcpu(w, key, UINT64_MAX), 0);
	assert_int_equal(rec_writer__offcpu(w, key, UINT64_MAX), 0);
	return 6; /* refused with -ERANGE */
}

/* The blocks written whole: steps, metrics, regions, sizes, lines. */
static int feed_tables(struct rec_writer *w, uint32_t key)
{
	struct rec_count c = {key, UINT64_MAX};
	struct rec_step steps[2] = {{REC_STEP_STEP, 9, UINT64_MAX, 100, 50, 1, &c}};
	struct rec_metric_point pts[2] = {{200, UINT64_MAX}, {100, 0}};
	struct rec_metric m = {
		.metric = 4, .subject = 9, .start_ns = 0, .npoints = 2, .points = pts};
	struct rec_region_node nodes[2] = {{0}, {.name = 3, .parent = 1, .calls = 1}};
	struct rec_region_thread t = {.pid = 9, .tid = 10, .nnodes = 2, .nodes = nodes};
	struct rec_size_bucket b[2] = {{.log2 = 65}, {.log2 = 1}};
	struct rec_size_model sm = {.name = 3, .seen = 1, .nbuckets = 1, .buckets = b};
	struct rec_size_thread st = {.pid = 9, .tid = 10, .nmodels = 1, .models = &sm};
	struct rec_line lines[1] = {{99, 0, 1}};

	assert_int_equal(rec_writer__steps(w, steps, 1), -ERANGE); /* ends before it starts */
	steps[0].end_ns = 0;					   /* still open */
	steps[1] = (struct rec_step){REC_STEP_PAUSE, 9, 0, 100, 100, 0, NULL};
	assert_int_equal(rec_writer__steps(w, steps, 2), 0);
	steps[1].end_ns = 99; /* refused after a good table: the good one is still what is kept */
	assert_int_equal(rec_writer__steps(w, steps, 2), -ERANGE);
	assert_int_equal(rec_writer__metrics(w, 1, 0, &m, 1), -EINVAL); /* back in time */
	pts[1].end_ns = 300;
	assert_int_equal(rec_writer__metrics(w, 1, 0, &m, 1), 0);
	m.metric = 999; /* refused after a good block: the good one is still what is kept */
	assert_int_equal(rec_writer__metrics(w, 1, 0, &m, 1), -EINVAL);
	assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL); /* its own parent */
	nodes[1].parent = 0;
	nodes[1].name = 99;
	assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL); /* an undefined name */
	nodes[1].name = 3;
	assert_int_equal(rec_writer__regions(w, &t, 1), 0);
	assert_int_equal(rec_writer__sizes(w, &st, 1), -EINVAL); /* log2 past 64 */
	b[0].log2 = 2;
	sm.nbuckets = 2;
	assert_int_equal(rec_writer__sizes(w, &st, 1), -EINVAL); /* not ascending */
	sm.nbuckets = 1;
	assert_int_equal(rec_writer__sizes(w, &st, 1), 0);
	assert_int_equal(rec_writer__lines(w, 0, lines, 1), -EINVAL);
	assert_int_equal(rec_writer__lines(w, 0, lines, 100000), -EINVAL);
	return 2;
}

static void write_refused(struct rec_writer *w)
{
	struct rec_kv kv = {.key = (char *)rec_stat_keys[REC_STAT_entries_refused],
			    .value = rec_writer__refused(w)};

	assert_int_equal(rec_writer__stats(w, &kv, 1), 0);
}

/* What both feeds kept (each feed's timed entries twice over). */
static void assert_loaded(const struct recording *r, uint32_t key)
{
	uint64_t refused = 0;

	assert_int_equal(r->nsamples, 1);
	assert_int_equal(r->samples[key].count, UINT64_MAX); /* saturated */
	assert_int_equal(r->samples[key].offcpu_ns, UINT64_MAX);
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[1].end_ns, HUGE_T);
	assert_int_equal(r->nevents, 6);
	assert_int_equal(r->events[0].time_ns, 1);
	assert_int_equal(r->events[1].time_ns, 1);
	assert_int_equal(r->events[5].time_ns, REC_TIME_MAX);
	assert_int_equal(r->nspans, 4);
	assert_int_equal(r->ngpu, 2);
	assert_int_equal(r->gpu[0].end_ns, HUGE_T);
	assert_int_equal(r->noffspans, 2);
	assert_int_equal(r->nsteps, 2);
	assert_int_equal(r->steps[0].end_ns, 0);
	assert_int_equal(r->nmetrics, 1);
	assert_int_equal(r->nrthreads, 1);
	assert_int_equal(r->nsthreads, 1);
	assert_true(recording__stat(r, rec_stat_keys[REC_STAT_entries_refused], &refused));
	assert_int_equal(refused, 14); /* 6 a feed of times, 2 step tables */
}

static void every_block_writer_refuses_what_its_reader_would(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	int fd = mkstemp(path), refused;
	uint32_t key;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	key = define_app(w);
	feed_samples(w);
	refused = feed_times(w, key);
	assert_int_equal(rec_writer__flush(w),
			 0); /* mid-way: later blocks start their deltas over */
	refused += feed_tables(w, key);
	refused += feed_times(w, key);
	assert_int_equal(rec_writer__refused(w), refused);
	write_refused(w);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0); /* whole: not "damaged after N blocks" */
	unlink(path);
	assert_loaded(r, key);
	recording__free(r);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The file at at path with its last TIMELINE block's last byte but one (the second event's
 * delta, -1: zigzag 1) made +1 (zigzag 2), CRC made right: an event past REC_TIME_MAX, which
 * the reader loads (any u64) and this writer would not write. */
static void patch_past_time_max(const char *at)
{
	FILE *f = fopen(at, "r+b");
	uint8_t d[4096];
	size_t len, pos = 16, last = 0;
	uint32_t crc;

	assert_non_null(f);
	len = fread(d, 1, sizeof(d), f);
	for (; pos + 16 <= len; pos += 16 + le32(d + pos + 4))
		last = le32(d + pos) == REC_TIMELINE ? pos : last;
	assert_true(last && d[last + 16 + le32(d + last + 4) - 2] == 1);
	d[last + 16 + le32(d + last + 4) - 2] = 2;
	crc = crc32(crc32(0L, Z_NULL, 0), d + last + 16, le32(d + last + 4));
	for (int i = 0; i < 4; i++)
		d[last + 8 + i] = crc >> (8 * i);
	rewind(f);
	assert_int_equal(fwrite(d, 1, len, f), len);
	fclose(f);
}

/* perch merge of such a file: the event past REC_TIME_MAX is refused and counted, the merge
 * goes on and its output loads. */
static void merge_of_a_time_past_the_writers_range_drops_it(void **state)
{
	char in_path[] = "/tmp/perch-test-hostile-in-XXXXXX",
	     out_path[] = "/tmp/perch-test-hostile-out-XXXXXX";
	struct rec_merge_input in = {NULL, "a"};
	struct recording *r = NULL, *out = NULL;
	struct rec_writer *w;
	uint32_t key;

	(void)state;
	close(mkstemp(in_path));
	close(mkstemp(out_path));
	w = rec_writer__open(in_path);
	key = define_app(w);
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	assert_int_equal(rec_writer__event(w, REC_TIME_MAX, key), 0);
	assert_int_equal(rec_writer__event(w, REC_TIME_MAX - 1, key), 0);
	assert_int_equal(rec_writer__close(w), 0);
	patch_past_time_max(in_path);
	assert_int_equal(recording__load(in_path, &r), 0);
	assert_int_equal(r->nevents, 2);
	assert_true(r->events[1].time_ns > REC_TIME_MAX);
	in.r = r;
	assert_int_equal(rec_merge(&in, 1, out_path), 0);
	assert_int_equal(recording__load(out_path, &out), 0);
	assert_int_equal(out->nevents, 1);
	recording__free(out);
	recording__free(r);
	unlink(in_path);
	unlink(out_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_block_writer_refuses_what_its_reader_would),
		cmocka_unit_test(merge_of_a_time_past_the_writers_range_drops_it),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
