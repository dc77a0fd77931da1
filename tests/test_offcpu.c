// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The OFFCPU block (format/offcpu.c) and report --view (report/view.c): off-CPU totals survive
 * appended flushes and compaction, a recording without them has no OFFCPU block, a damaged block
 * changes nothing, and the views weigh samples as documented.
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

/* wall = ticks x 1e9 / frequency + off-CPU ns; off = off-CPU ns; cpu leaves the counts. */
static void views_weigh_samples(void **state)
{
	struct recording *r = NULL;
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
	assert_int_equal(report__apply_view(r, REPORT_VIEW_CPU), 0);
	assert_int_equal(named(r, "spinning")->count, 3);
	assert_int_equal(report__apply_view(r, REPORT_VIEW_WALL), 0);
	assert_int_equal(named(r, "spinning")->count, 3 * 1000000 + 1000);
	assert_int_equal(named(r, "blocked")->count, 7000000);
	assert_int_equal(r->nwindows, 0);
	recording__free(r);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(report__apply_view(r, REPORT_VIEW_OFF), 0);
	assert_int_equal(named(r, "spinning")->count, 1000);
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
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
