// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of steps and program pauses below the sampler: --steps parses A and A:B and refuses the
 * rest; the STEPS block round-trips exactly (key ids loaded as samples, the last block wins,
 * compaction keeps it), the writer refuses undefined keys, a damaged block is refused keeping
 * the one before; the record-time table (record/steps.c) keeps exactly the steps of --steps,
 * ends a step at the next one, at perch_step_end() or when its process goes, keeps a program's
 * pause window, and says when the last step asked for has ended; the per-step region figures
 * (model/steptab.h) give each activation to the step open at its begin.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format/recording.h"
#include "model/steptab.h"
#include "perch_abi.h"
#include "record/regions/regions.h"
#include "record/steps.h"

static char tmpdir[] = "/tmp/perch-test-steps.XXXXXX";

static const char *tmp_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void steps_option_takes_a_and_a_to_b(void **state)
{
	static const char *const bad[] = {
		"",    "x",	"3:",	 ":3", "-1", "+3",   "3:-4",
		"3:x", "20:10", "3:5:7", "3 ", " 3", "0x10", "18446744073709551616"};
	uint64_t a = 0, b = 0;

	(void)state;
	assert_int_equal(steps_parse("3:5", &a, &b), 0);
	assert_int_equal(a, 3);
	assert_int_equal(b, 5);
	assert_int_equal(steps_parse("7", &a, &b), 0);
	assert_int_equal(a, 7);
	assert_int_equal(b, 7);
	assert_int_equal(steps_parse("0:18446744073709551615", &a, &b), 0);
	assert_int_equal(a, 0);
	assert_true(b == UINT64_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = b = 99;
		assert_int_equal(steps_parse(bad[i], &a, &b), -EINVAL);
		assert_int_equal(a, 99); /* untouched */
	}
}

/* A writer with two keys (ids 0 and 1): two threads' one-frame stacks. */
static struct rec_writer *writer_with_keys(const char *path)
{
	struct rec_writer *w = rec_writer__open(path);
	uint32_t mod, f[2], key;
	struct rec_sample s = {.pid = 9, .tid = 9, .count = 1, .nframes = 1};

	assert_non_null(w);
	mod = rec_writer__string(w, "/bin/app");
	f[0] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "work"), 16);
	f[1] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "idle"), 32);
	for (int i = 0; i < 2; i++) {
		s.tid = 9 + (uint32_t)i;
		s.frames = &f[i];
		assert_int_equal(rec_writer__add_sample(w, &s), 0);
		assert_int_equal(rec_writer__key(w, &s, &key), 0);
		assert_int_equal(key, (uint32_t)i);
	}
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	return w;
}

static void steps_round_trip_last_block_wins(void **state)
{
	const char *path = tmp_path("rt.data");
	struct rec_writer *w = writer_with_keys(path);
	struct rec_count c3[] = {{0, 40}, {1, 2}}, c4[] = {{1, 7}};
	struct rec_step s[] = {
		{REC_STEP_STEP, 9, 3, 1100, 1400, 2, c3},
		{REC_STEP_PAUSE, 9, 0, 1450, 1500, 0, NULL},
		{REC_STEP_STEP, 9, 4, 1500, 0, 1, c4}, /* still open */
	};
	struct recording *r;
	uint32_t tid1;

	(void)state;
	assert_int_equal(rec_writer__steps(w, s, 1), 0);
	assert_int_equal(rec_writer__steps(w, s, 3), 0);
	assert_int_equal(rec_writer__close(w), 0); /* compacts: the block is rewritten */
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsteps, 3);
	assert_int_equal(r->steps[0].kind, REC_STEP_STEP);
	assert_int_equal(r->steps[0].n, 3);
	assert_int_equal(r->steps[0].start_ns, 1100);
	assert_int_equal(r->steps[0].end_ns, 1400);
	assert_int_equal(r->steps[0].ncounts, 2);
	assert_int_equal(r->steps[0].counts[0].count, 40);
	assert_int_equal(r->samples[r->steps[0].counts[0].sample].tid, 9);
	tid1 = r->samples[r->steps[0].counts[1].sample].tid;
	assert_int_equal(tid1, 10);
	assert_int_equal(r->steps[1].kind, REC_STEP_PAUSE);
	assert_int_equal(r->steps[1].ncounts, 0);
	assert_int_equal(r->steps[2].end_ns, 0);
	assert_int_equal(r->steps[2].counts[0].count, 7);
	recording__free(r);
}

static void writer_refuses_undefined_keys(void **state)
{
	struct rec_writer *w = writer_with_keys(tmp_path("bad.data"));
	struct rec_count c[] = {{2, 1}};
	struct rec_step s = {REC_STEP_STEP, 9, 1, 10, 20, 1, c};

	(void)state;
	assert_int_equal(rec_writer__steps(w, &s, 1), -EINVAL);
	s.ncounts = 0;
	s.kind = 7;
	assert_int_equal(rec_writer__steps(w, &s, 1), -EINVAL);
	assert_int_equal(rec_writer__steps(NULL, &s, 1), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A STEPS block claiming two entries with one entry's bytes (its CRC right) is refused, and the
 * steps of the block before it stay. */
static void damaged_steps_block_keeps_the_earlier_one(void **state)
{
	static const uint8_t payload[] = {2, 0, 0, 0,		     /* u32 n */
					  0, 9, 5, 10, 20, 1, 0, 3}; /* one step; no 2nd */
	const char *path = tmp_path("dmg.data");
	struct rec_writer *w = writer_with_keys(path);
	uint8_t block[16 + sizeof(payload)] = {0};
	struct rec_step s = {REC_STEP_STEP, 9, 1, 10, 20, 0, NULL};
	struct recording *r;
	int fd;

	(void)state;
	assert_int_equal(rec_writer__steps(w, &s, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	put_le32(block, REC_STEPS); /* the block header: type, length, CRC-32, 0 */
	put_le32(block + 4, sizeof(payload));
	put_le32(block + 8, (uint32_t)crc32(0, payload, sizeof(payload)));
	memcpy(block + 16, payload, sizeof(payload));
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, block, sizeof(block)), sizeof(block));
	close(fd);
	assert_int_equal(recording__load(path, &r), -EBADMSG);
	assert_non_null(r);
	assert_int_equal(r->nsteps, 1);
	assert_int_equal(r->steps[0].n, 1);
	recording__free(r);
}

/* --steps=3:4 on a program that runs steps 2 to 5 and pauses once: only steps 3 and 4 kept, 3
 * ended by 4's start, 4 by 5's (which also says the recording is done); samples of step 3 (the
 * key carries 1 + n) go to it. */
static void table_keeps_the_steps_asked_and_ends_them(void **state)
{
	const char *path = tmp_path("table.data");
	struct rec_writer *w = writer_with_keys(path);
	struct steps *st = steps__new(w, true, 3, 4);
	struct recording *r;

	(void)state;
	assert_non_null(st);
	steps__event(st, 9, PERCH_LOG_STEP, 100, 2);
	steps__event(st, 9, PERCH_LOG_STEP, 200, 3);
	steps__sample(st, 9, 4, 0, 5); /* step 3 */
	steps__sample(st, 9, 4, 0, 1);
	steps__event(st, 9, PERCH_LOG_PAUSE, 250, 0);
	steps__event(st, 9, PERCH_LOG_RESUME, 260, 0);
	steps__event(st, 9, PERCH_LOG_STEP, 300, 4);
	assert_false(steps__done(st));
	steps__event(st, 9, PERCH_LOG_STEP_END, 350, 4);
	assert_true(steps__done(st)); /* the last step asked for ended */
	steps__event(st, 9, PERCH_LOG_STEP, 400, 5);
	steps__flush(st);
	assert_int_equal(rec_writer__close(w), 0);
	steps__free(st);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsteps, 3);
	assert_int_equal(r->steps[0].n, 3);
	assert_int_equal(r->steps[0].start_ns, 200);
	assert_int_equal(r->steps[0].end_ns, 300);
	assert_int_equal(r->steps[0].ncounts, 1);
	assert_int_equal(r->steps[0].counts[0].count, 6);
	assert_int_equal(r->steps[1].kind, REC_STEP_PAUSE);
	assert_int_equal(r->steps[1].start_ns, 250);
	assert_int_equal(r->steps[1].end_ns, 260);
	assert_int_equal(r->steps[2].n, 4);
	assert_int_equal(r->steps[2].end_ns, 350);
	recording__free(r);
}

/* No --steps: every step kept; a process that goes ends its open step and its pause. */
static void process_gone_ends_its_step_and_pause(void **state)
{
	const char *path = tmp_path("gone.data");
	struct rec_writer *w = writer_with_keys(path);
	struct steps *st = steps__new(w, false, 0, 0);
	struct recording *r;

	(void)state;
	steps__event(st, 9, PERCH_LOG_STEP, 100, 0);
	steps__event(st, 9, PERCH_LOG_PAUSE, 150, 0);
	steps__event(st, 9, REGIONS_CTL_GONE, 180, 0);
	assert_false(steps__done(st));
	steps__flush(st);
	assert_int_equal(rec_writer__close(w), 0);
	steps__free(st);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsteps, 2);
	assert_int_equal(r->steps[0].end_ns, 180);
	assert_int_equal(r->steps[1].kind, REC_STEP_PAUSE);
	assert_int_equal(r->steps[1].end_ns, 180);
	recording__free(r);
}

/* A program's log is the target's: a step or pause that would end before it began is refused
 * (counted) and stays open, so the STEPS block stays one the reader loads. */
static void end_before_start_is_refused_and_the_block_loads(void **state)
{
	const char *path = tmp_path("backwards.data");
	struct rec_writer *w = writer_with_keys(path);
	struct steps *st = steps__new(w, false, 0, 0);
	struct recording *r;

	(void)state;
	steps__event(st, 9, PERCH_LOG_STEP, 100, 3);
	steps__event(st, 9, PERCH_LOG_STEP_END, 40, 3); /* before it began */
	steps__event(st, 9, PERCH_LOG_PAUSE, 150, 0);
	steps__event(st, 9, PERCH_LOG_RESUME, 120, 0); /* before it paused */
	assert_int_equal(steps__refused(st), 2);
	steps__flush(st);
	steps__event(st, 9, PERCH_LOG_STEP_END, 300, 3);
	steps__flush(st);
	assert_int_equal(rec_writer__close(w), 0);
	steps__free(st);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsteps, 2);
	assert_int_equal(r->steps[0].start_ns, 100);
	assert_int_equal(r->steps[0].end_ns, 300);
	assert_int_equal(r->steps[1].kind, REC_STEP_PAUSE);
	assert_int_equal(r->steps[1].end_ns, 0); /* still open */
	recording__free(r);
}

#define SPAN(pid, tid, t, kind, name)                 \
	{                                             \
		pid, tid, t, REC_SPAN_##kind, name, 0 \
	}

/* Steps of pid 1: step 5 [100, 200), step 6 [200, open); pid 2: step 5 [0, 50). Region name ids
 * 1 (a) and 2 (b). */
static void step_regions_by_begin_time(void **state)
{
	struct rec_step steps[] = {
		{REC_STEP_STEP, 1, 5, 100, 200, 0, NULL},
		{REC_STEP_PAUSE, 1, 0, 120, 130, 0, NULL},
		{REC_STEP_STEP, 1, 6, 200, 0, 0, NULL},
		{REC_STEP_STEP, 2, 5, 10, 50, 0, NULL},
	};
	struct rec_span spans[] = {
		SPAN(1, 1, 90, BEGIN, 1),  SPAN(1, 1, 110, END, 1),   /* before step 5: none */
		SPAN(1, 2, 150, BEGIN, 1), SPAN(1, 1, 120, BEGIN, 1), /* threads interleaved */
		SPAN(1, 1, 125, BEGIN, 1), SPAN(1, 1, 140, END, 1),   /* nested a: total once */
		SPAN(1, 1, 150, BEGIN, 2), SPAN(1, 1, 160, END, 1),   /* a's end closes b too */
		SPAN(1, 1, 170, END, 2),			      /* matches nothing open */
		SPAN(1, 2, 250, END, 1),			      /* begun in 5, ends in 6 */
		SPAN(1, 1, 210, BEGIN, 2), SPAN(1, 1, 230, END, 2),   /* step 6 (open) */
		SPAN(1, 1, 300, BEGIN, 2),			      /* never ended: none */
		SPAN(2, 3, 20, BEGIN, 1),  SPAN(2, 3, 60, END, 1),    /* pid 2's own step 5 */
	};
	struct recording r = {.steps = steps,
			      .nsteps = sizeof(steps) / sizeof(steps[0]),
			      .spans = spans,
			      .nspans = sizeof(spans) / sizeof(spans[0])};
	struct steptab *t = steptab__new(&r);
	const struct step_region *rows;

	(void)state;
	assert_non_null(t);
	/* step 5 of pid 1: a from thread 2 (100 ns) and thread 1 (outer 40, nested 15); b 10 */
	assert_int_equal(steptab__rows(t, 0, &rows), 2);
	assert_int_equal(rows[0].name, 1);
	assert_int_equal(rows[0].calls, 3);
	assert_int_equal(rows[0].total_ns, 100 + 40);
	assert_int_equal(rows[0].sum_ns, 100 + 40 + 15);
	assert_int_equal(rows[0].min_ns, 15);
	assert_int_equal(rows[0].max_ns, 100);
	assert_int_equal(rows[1].name, 2);
	assert_int_equal(rows[1].calls, 1);
	assert_int_equal(rows[1].total_ns, 10);
	assert_int_equal(steptab__rows(t, 1, &rows), 0); /* the pause has none */
	assert_int_equal(steptab__rows(t, 2, &rows), 1);
	assert_int_equal(rows[0].name, 2);
	assert_int_equal(rows[0].calls, 1);
	assert_int_equal(rows[0].total_ns, 20);
	assert_int_equal(steptab__rows(t, 3, &rows), 1);
	assert_int_equal(rows[0].total_ns, 40);
	assert_int_equal(steptab__all(t, &rows), 4);
	steptab__free(t);
}

static void step_regions_none_without_steps(void **state)
{
	struct rec_span spans[] = {SPAN(1, 1, 90, BEGIN, 1), SPAN(1, 1, 110, END, 1)};
	struct recording r = {.spans = spans, .nspans = 2};
	struct steptab *t = steptab__new(&r);
	const struct step_region *rows;

	(void)state;
	assert_non_null(t);
	assert_int_equal(steptab__all(t, &rows), 0);
	assert_int_equal(steptab__rows(t, 0, &rows), 0);
	steptab__free(t);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(steps_option_takes_a_and_a_to_b),
		cmocka_unit_test(steps_round_trip_last_block_wins),
		cmocka_unit_test(writer_refuses_undefined_keys),
		cmocka_unit_test(damaged_steps_block_keeps_the_earlier_one),
		cmocka_unit_test(table_keeps_the_steps_asked_and_ends_them),
		cmocka_unit_test(process_gone_ends_its_step_and_pause),
		cmocka_unit_test(end_before_start_is_refused_and_the_block_loads),
		cmocka_unit_test(step_regions_by_begin_time),
		cmocka_unit_test(step_regions_none_without_steps),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
