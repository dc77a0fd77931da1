// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFCPU block (format/offcpu.c) and report --view (model/sampleset.c): off-CPU totals survive
 * appended flushes and compaction, a recording without them has no OFFCPU block, a damaged block
 * changes nothing, and the views weigh samples as documented. The OFFSPANS block
 * (format/offspans.c): spans come back sorted by start through flushes and compaction, past
 * --max-size they are dropped and counted, a damaged block adds none, and under --view=off|wall
 * the windows carry each window's off-CPU time, spans cut at their bounds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <zlib.h>

#include "format/keys.h"
#include "format/recording.h"
#include "model/sampleset.h"
#include "report/report.h"

static char path[] = "/tmp/perch-test-offcpu.XXXXXX";

/* Two keys (frames "blocked" and "spinning"), key 0 with 3 ticks, key 1 with none. */
static struct rec_writer *two_keys(uint32_t key[2])
{
	struct rec_writer *w = rec_writer__open(path);
	uint32_t mod, f[2];
	struct rec_kv meta = {.key = "frequency", .str = "1000"};
	struct rec_sample s = {.pid = 7, .tid = 8, .nframes = 1};

	assert_non_null(w);
	assert_int_equal(rec_writer__publish(w), 0); /* read back while written */
	assert_int_equal(rec_writer__meta(w, &meta, 1), 0);
	mod = rec_writer__string(w, "/bin/x");
	f[0] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "blocked"), 16);
	f[1] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "spinning"), 32);
	s.frames = &f[1];
	s.count = 3;
	assert_int_equal(rec_writer__add_sample(w, &s), 0);
	assert_int_equal(rec_writer__key(w, &s, &key[0]), 0);
	s.frames = &f[0];
	s.count = 0;
	assert_int_equal(rec_writer__add_sample(w, &s), 0);
	assert_int_equal(rec_writer__key(w, &s, &key[1]), 0);
	return w;
}

static const struct rec_sample *named(const struct recording *r, const char *fn)
{
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		if (s->nframes && !strcmp(recording__string(r, r->frames[s->frames[0]].name), fn))
			return s;
	}
	fail_msg("no sample in %s", fn);
	return NULL;
}

static void offcpu_totals_survive_flushes_and_compaction(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t key[2];

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offcpu(w, key[1], 1000), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__offcpu(w, key[1], 500), 0);
	assert_int_equal(rec_writer__offcpu(w, key[0], 0), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(recording__load(path, &r), 0); /* appended blocks, not compacted yet */
	assert_int_equal(named(r, "blocked")->offcpu_ns, 1500);
	assert_int_equal(named(r, "spinning")->offcpu_ns, 0);
	recording__free(r);
	assert_int_equal(rec_writer__close(w), 0); /* compacts: every total once */
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(named(r, "blocked")->offcpu_ns, 1500);
	assert_int_equal(named(r, "blocked")->count, 0);
	assert_int_equal(named(r, "spinning")->count, 3);
	assert_true(report__has_offcpu(r));
	recording__free(r);
}

static void offcpu_undefined_key_is_einval(void **state)
{
	struct rec_writer *w;
	struct recording *r = NULL;
	uint32_t key[2];

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offcpu(w, 99, 1), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_false(report__has_offcpu(r));
	recording__free(r);
}

/* The samples of r as view v weighs them: a set the caller frees; *v_r its recording. */
static struct sampleset *viewed(const struct recording *r, enum sample_view v,
				const struct recording **v_r)
{
	struct sampleset_opts o = {.view = v};
	struct sampleset *set = sampleset__new(r, &o);

	assert_non_null(set);
	*v_r = sampleset__recording(set);
	return set;
}

/* wall = ticks x 1e9 / frequency + off-CPU ns; off = off-CPU ns; cpu leaves the counts. */
static void views_weigh_samples(void **state)
{
	struct recording *r = NULL;
	const struct recording *v_r;
	struct sampleset *set;
	struct rec_writer *w;
	uint32_t key[2];
	enum report_view v;

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offcpu(w, key[1], 7000000), 0);
	assert_int_equal(rec_writer__offcpu(w, key[0], 1000), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(report__parse_view("wall", &v), 0);
	assert_int_equal(v, REPORT_VIEW_WALL);
	assert_int_equal(report__parse_view("bogus", &v), -EINVAL);
	assert_int_equal(recording__load(path, &r), 0);
	set = viewed(r, SAMPLE_VIEW_CPU, &v_r);
	assert_ptr_equal(v_r, r); /* cpu changes nothing: the recording itself */
	assert_int_equal(named(v_r, "spinning")->count, 3);
	sampleset__free(set);
	set = viewed(r, SAMPLE_VIEW_WALL, &v_r);
	assert_int_equal(named(v_r, "spinning")->count, 3 * 1000000 + 1000);
	assert_int_equal(named(v_r, "blocked")->count, 7000000);
	assert_int_equal(v_r->nwindows, 0);
	sampleset__free(set);
	set = viewed(r, SAMPLE_VIEW_OFF, &v_r);
	assert_int_equal(named(v_r, "spinning")->count, 1000);
	sampleset__free(set);
	assert_int_equal(named(r, "spinning")->count, 3); /* the loaded recording as it was */
	recording__free(r);
}

/* A block naming a key the file never defined is refused whole: totals before it stay. */
static void damaged_offcpu_block_changes_nothing(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t key[2];
	/* header: type 19 (OFFCPU), length 8, crc, 0; payload: n = 2, (0, 5), (9 (undefined), 1) */
	uint8_t block[16 + 8] = {19, 0, 0, 0, 8, 0, 0, 0};
	uint8_t payload[8] = {2, 0, 0, 0, 0, 5, 9, 1};
	uint32_t crc;
	FILE *f;

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offcpu(w, key[1], 40), 0);
	assert_int_equal(rec_writer__close(w), 0);
	memcpy(block + 16, payload, sizeof(payload));
	crc = (uint32_t)crc32(0, payload, sizeof(payload)); /* the reader checks it first */
	memcpy(block + 8, &crc, 4);
	f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
	fclose(f);
	assert_int_equal(recording__load(path, &r), -EBADMSG);
	assert_non_null(r);
	assert_int_equal(named(r, "blocked")->offcpu_ns, 40);
	assert_int_equal(named(r, "spinning")->offcpu_ns, 0);
	recording__free(r);
}

/* Spans written out of order over two flushes, then compacted: loaded by start, each on its key. */
static void offspans_survive_flushes_and_compaction(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t key[2];

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offspan(w, key[1], 5000, 9000), 0);
	assert_int_equal(rec_writer__offspan(w, key[1], 1000, 3000), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__offspan(w, key[0], 2000, 2500), 0);
	assert_int_equal(rec_writer__offspan(w, 99, 1, 2), -EINVAL);
	assert_int_equal(rec_writer__offspan(w, key[0], 3, 2), -EINVAL);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(recording__load(path, &r), 0); /* appended, not compacted yet */
	assert_int_equal(r->noffspans, 3);
	recording__free(r);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->noffspans, 3);
	assert_int_equal(r->offspans[0].start_ns, 1000);
	assert_int_equal(r->offspans[0].end_ns, 3000);
	assert_ptr_equal(&r->samples[r->offspans[0].sample], named(r, "blocked"));
	assert_int_equal(r->offspans[1].start_ns, 2000);
	assert_ptr_equal(&r->samples[r->offspans[1].sample], named(r, "spinning"));
	assert_int_equal(r->offspans[2].end_ns, 9000);
	recording__free(r);
}

/* The cap the timeline shares: spans past it dropped and counted, those before it kept. */
static void offspans_past_max_size_are_dropped_and_counted(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t key[2];
	int kept = 0;

	(void)state;
	w = two_keys(key);
	rec_writer__max_size(w, 40);
	for (uint64_t i = 0; i < 20; i++)
		kept += rec_writer__offspan(w, key[1], 1000 * i, 1000 * i + 500) == 0;
	assert_true(kept > 0 && kept < 20);
	assert_int_equal(rec_writer__offspans_dropped(w), 20 - kept);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->noffspans, kept);
	recording__free(r);
}

/* A span naming a key the file never defined: the whole block is refused. */
static void damaged_offspans_block_adds_none(void **state)
{
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t key[2];
	/* header: type 22 (OFFSPANS), length 10; payload: n = 2, (0, +2, 1), (9 (undefined), 2, 1) */
	uint8_t block[16 + 10] = {22, 0, 0, 0, 10, 0, 0, 0};
	uint8_t payload[10] = {2, 0, 0, 0, 0, 4, 1, 9, 4, 1};
	uint32_t crc;
	FILE *f;

	(void)state;
	w = two_keys(key);
	assert_int_equal(rec_writer__offspan(w, key[1], 10, 20), 0);
	assert_int_equal(rec_writer__close(w), 0);
	memcpy(block + 16, payload, sizeof(payload));
	crc = (uint32_t)crc32(0, payload, sizeof(payload));
	memcpy(block + 8, &crc, 4);
	f = fopen(path, "ab");
	assert_non_null(f);
	assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
	fclose(f);
	assert_int_equal(recording__load(path, &r), -EBADMSG);
	assert_non_null(r);
	assert_int_equal(r->noffspans, 1);
	recording__free(r);
}

/* Windows [0, 100) and [100, 200) (gap) [300, 400); one span [50, 350) of "blocked": off gives it
 * 50, 100 and 50 ns; wall adds each window's ticks x the period (1 ms). */
static void views_cut_spans_at_windows(void **state)
{
	struct recording *r = NULL;
	const struct recording *v;
	struct sampleset *set;
	struct rec_writer *w;
	uint32_t key[2];
	const struct rec_sample *blocked;

	(void)state;
	w = two_keys(key); /* "spinning": 3 ticks, pending for the first window */
	assert_int_equal(rec_writer__window(w, 0, 100), 0);
	assert_int_equal(rec_writer__window(w, 100, 200), 0);
	assert_int_equal(rec_writer__window(w, 300, 400), 0);
	assert_int_equal(rec_writer__offcpu(w, key[1], 300), 0);
	assert_int_equal(rec_writer__offspan(w, key[1], 50, 350), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	set = viewed(r, SAMPLE_VIEW_OFF, &v);
	blocked = named(v, "blocked");
	assert_int_equal(v->nwindows, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(v->windows[i].ncounts, 1);
		assert_ptr_equal(&v->samples[v->windows[i].counts[0].sample], blocked);
	}
	assert_int_equal(v->windows[0].counts[0].count, 50);
	assert_int_equal(v->windows[1].counts[0].count, 100); /* the gap [200, 300) holds none */
	assert_int_equal(v->windows[2].counts[0].count, 50);
	sampleset__free(set);
	set = viewed(r, SAMPLE_VIEW_WALL, &v);
	assert_int_equal(v->windows[0].ncounts, 2);
	assert_ptr_equal(&v->samples[v->windows[0].counts[0].sample], named(v, "spinning"));
	assert_int_equal(v->windows[0].counts[0].count, 3 * 1000000);
	assert_int_equal(v->windows[0].counts[1].count, 50);
	sampleset__free(set);
	assert_int_equal(r->windows[0].ncounts, 1); /* the loaded windows count ticks still */
	assert_int_equal(r->windows[0].counts[0].count, 3);
	recording__free(r);
}

static int setup(void **state)
{
	int fd = mkstemp(path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	char old[sizeof(path) + 4];

	(void)state;
	snprintf(old, sizeof(old), "%s.old", path);
	unlink(path);
	unlink(old);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(offcpu_totals_survive_flushes_and_compaction),
		cmocka_unit_test(offcpu_undefined_key_is_einval),
		cmocka_unit_test(views_weigh_samples),
		cmocka_unit_test(damaged_offcpu_block_changes_nothing),
		cmocka_unit_test(offspans_survive_flushes_and_compaction),
		cmocka_unit_test(offspans_past_max_size_are_dropped_and_counted),
		cmocka_unit_test(damaged_offspans_block_adds_none),
		cmocka_unit_test(views_cut_spans_at_windows),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
