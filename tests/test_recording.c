// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the recording file: what the writer writes the loader reads back exactly (region
 * frames and REGIONS trees included), and a file that is cut, damaged or from elsewhere is
 * refused with the documented error while every complete block before the damage is kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "format/recording.h"

#define MAX_BLOCKS 64

static char tmpdir[PATH_MAX];

static const char *tmp_path(const char *name)
{
	static char path[4][PATH_MAX + 64];
	static int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%.32s", tmpdir, name);
	return p;
}

/* A writer whose file has its name at once (as perch record's has once everything opened), so
 * a test can read it back while it writes. */
static struct rec_writer *open_named(const char *path)
{
	struct rec_writer *w = rec_writer__open(path);

	assert_non_null(w);
	assert_int_equal(rec_writer__publish(w), 0);
	return w;
}

static uint8_t *read_bytes(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long size;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	size = ftell(f);
	rewind(f);
	data = malloc(size + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, size, f), size);
	fclose(f);
	*len = size;
	return data;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Where each block of a file is, read straight from the bytes, independent of the loader. */
struct layout {
	size_t nblocks;
	size_t start[MAX_BLOCKS], end[MAX_BLOCKS];
	uint32_t type[MAX_BLOCKS], n[MAX_BLOCKS];
};

static void layout_of(const uint8_t *data, size_t len, struct layout *l)
{
	size_t pos = 16;

	memset(l, 0, sizeof(*l));
	while (pos < len) {
		assert_true(l->nblocks < MAX_BLOCKS);
		l->start[l->nblocks] = pos;
		l->type[l->nblocks] = le32(data + pos);
		l->n[l->nblocks] = le32(data + pos + 16);
		pos += 16 + le32(data + pos + 4);
		l->end[l->nblocks++] = pos;
	}
	assert_int_equal(pos, len);
}

static size_t sum_n(const struct layout *l, size_t k, uint32_t type)
{
	size_t sum = 0;

	for (size_t i = 0; i < k; i++)
		sum += l->type[i] == type ? l->n[i] : 0;
	return sum;
}

static bool has_block(const struct layout *l, size_t k, uint32_t type)
{
	for (size_t i = 0; i < k; i++) {
		if (l->type[i] == type)
			return true;
	}
	return false;
}

/* r holds exactly the first k blocks of the file laid out as l. */
static void assert_prefix(const struct recording *r, const struct layout *l, size_t k)
{
	assert_non_null(r);
	assert_int_equal(r->nblocks, k);
	assert_int_equal(r->good_size, k ? l->end[k - 1] : 16);
	assert_int_equal(r->nstrings, 1 + sum_n(l, k, REC_STRINGS));
	assert_int_equal(r->nframes, sum_n(l, k, REC_FRAMES));
	assert_int_equal(r->nthreads, sum_n(l, k, REC_THREADS));
	assert_int_equal(r->nsamples, sum_n(l, k, REC_SAMPLES) + sum_n(l, k, REC_KEYS));
	assert_int_equal(r->nwindows, sum_n(l, k, REC_WINDOWS));
	assert_int_equal(r->meta != NULL, has_block(l, k, REC_META));
	assert_int_equal(r->stats != NULL, has_block(l, k, REC_STATS));
	assert_int_equal(r->end != NULL, has_block(l, k, REC_END));
}

/* ---- a known recording ---- */

static const uint32_t stack_a[] = {0, 1, 2};
static const uint32_t stack_b[] = {0, 3};

static void write_meta(struct rec_writer *w)
{
	struct rec_kv meta[] = {
		{.key = "command", .str = "./app --size=3"},
		{.key = "pids", .str = "42"},
		{.key = "empty", .str = ""},
	};

	assert_int_equal(rec_writer__meta(w, meta, 3), 0);
}

static void write_first_batch(struct rec_writer *w)
{
	uint32_t app = rec_writer__string(w, "/usr/bin/app");
	uint32_t kernel = rec_writer__string(w, "[kernel]");

	assert_int_equal(app, 1);
	assert_int_equal(kernel, 2);
	assert_int_equal(rec_writer__string(w, "main"), 3);
	assert_int_equal(rec_writer__string(w, "solve"), 4);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, app, 3, 0x1130), 0);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, app, 4, 0x1200), 1);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_KERNEL, kernel, 0, 0xffffffff81000010ULL),
			 2);
	assert_int_equal(rec_writer__thread(w, 42, 42, 1, rec_writer__string(w, "app")), 0);
	assert_int_equal(rec_writer__sample(w, 42, 42, 7, REC_SAMPLE_TRUNCATED, stack_a, 3), 0);
	assert_int_equal(rec_writer__sample(w, 42, 42, 1, 0, NULL, 0), 0);
	assert_int_equal(rec_writer__flush(w), 0);
}

static void write_second_batch(struct rec_writer *w)
{
	uint32_t lib = rec_writer__string(w, "/usr/lib/libc.so.6");

	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, lib, 0, UINT64_MAX), 3);
	assert_int_equal(rec_writer__thread(w, 42, 43, 42, rec_writer__string(w, "worker")), 0);
	assert_int_equal(rec_writer__sample(w, 42, 43, UINT64_MAX,
					    REC_SAMPLE_USER_LOST | REC_SAMPLE_KERN_LOST, stack_b,
					    2),
			 0);
	assert_int_equal(rec_writer__flush(w), 0);
}

static void write_stats_end(struct rec_writer *w, bool with_end)
{
	struct rec_kv stats1[] = {{.key = "lost", .value = 1}};
	struct rec_kv stats2[] = {{.key = "lost", .value = 3}, {.key = "samples", .value = 9}};
	struct rec_kv end[] = {{.key = "duration_ns", .value = 123456789},
			       {.key = "exit_status", .value = 0}};

	assert_int_equal(rec_writer__stats(w, stats1, 1), 0);
	assert_int_equal(rec_writer__stats(w, stats2, 2), 0);
	if (with_end)
		assert_int_equal(rec_writer__end(w, end, 2), 0);
}

/* META, two batches of STRINGS FRAMES THREADS SAMPLES, two STATS, END (when with_end). */
static void write_known(const char *path, bool with_end)
{
	struct rec_writer *w = rec_writer__open(path);

	assert_non_null(w);
	write_meta(w);
	write_first_batch(w);
	write_second_batch(w);
	write_stats_end(w, with_end);
	assert_int_equal(rec_writer__close(w), 0);
}

static void assert_frame(const struct recording *r, uint32_t id, uint8_t kind, const char *module,
			 const char *name, uint64_t offset)
{
	const struct rec_frame *f = &r->frames[id];

	assert_int_equal(f->kind, kind);
	assert_string_equal(recording__string(r, f->module), module);
	assert_string_equal(recording__string(r, f->name), name);
	assert_true(f->offset == offset);
}

static void assert_sample(const struct rec_sample *s, uint32_t pid, uint32_t tid, uint64_t count,
			  uint32_t flags, const uint32_t *frames, uint32_t nframes)
{
	assert_int_equal(s->pid, pid);
	assert_int_equal(s->tid, tid);
	assert_true(s->count == count);
	assert_int_equal(s->flags, flags);
	assert_int_equal(s->nframes, nframes);
	if (nframes)
		assert_memory_equal(s->frames, frames, nframes * sizeof(*frames));
}

static void assert_known_strings_frames(const struct recording *r)
{
	assert_int_equal(r->nstrings, 8);
	assert_string_equal(r->strings[0], "");
	assert_string_equal(r->strings[1], "/usr/bin/app");
	assert_string_equal(r->strings[5], "app");
	assert_string_equal(r->strings[7], "worker");
	assert_int_equal(r->nframes, 4);
	assert_frame(r, 0, REC_FRAME_USER, "/usr/bin/app", "main", 0x1130);
	assert_frame(r, 1, REC_FRAME_USER, "/usr/bin/app", "solve", 0x1200);
	assert_frame(r, 2, REC_FRAME_KERNEL, "[kernel]", "", 0xffffffff81000010ULL);
	assert_frame(r, 3, REC_FRAME_USER, "/usr/lib/libc.so.6", "", UINT64_MAX);
}

static void assert_known_threads_samples(const struct recording *r)
{
	assert_int_equal(r->nthreads, 2);
	assert_int_equal(r->threads[0].pid, 42);
	assert_int_equal(r->threads[0].tid, 42);
	assert_int_equal(r->threads[0].ppid, 1);
	assert_string_equal(recording__string(r, r->threads[0].comm), "app");
	assert_int_equal(r->threads[1].tid, 43);
	assert_int_equal(r->threads[1].ppid, 42);
	assert_string_equal(recording__string(r, r->threads[1].comm), "worker");
	assert_int_equal(r->nsamples, 3);
	assert_sample(&r->samples[0], 42, 42, 7, REC_SAMPLE_TRUNCATED, stack_a, 3);
	assert_sample(&r->samples[1], 42, 42, 1, 0, NULL, 0);
	assert_sample(&r->samples[2], 42, 43, UINT64_MAX,
		      REC_SAMPLE_USER_LOST | REC_SAMPLE_KERN_LOST, stack_b, 2);
}

static void assert_known_kv(const struct recording *r)
{
	uint64_t v = 0;

	assert_int_equal(r->nmeta, 3);
	assert_string_equal(recording__meta(r, "command"), "./app --size=3");
	assert_string_equal(recording__meta(r, "pids"), "42");
	assert_string_equal(recording__meta(r, "empty"), "");
	assert_int_equal(r->nstats, 2);
	assert_true(recording__stat(r, "lost", &v));
	assert_int_equal(v, 3);
	assert_true(recording__stat(r, "samples", &v));
	assert_int_equal(v, 9);
	assert_int_equal(r->nend, 2);
	assert_true(recording__end(r, "duration_ns", &v));
	assert_int_equal(v, 123456789);
	assert_true(recording__end(r, "exit_status", &v));
	assert_int_equal(v, 0);
}

/* ---- raw files, for what the writer never writes ---- */

struct raw {
	uint8_t data[4096];
	size_t len;
};

static void raw_bytes(struct raw *b, const void *p, size_t len)
{
	assert_true(b->len + len <= sizeof(b->data));
	memcpy(b->data + b->len, p, len);
	b->len += len;
}

static void raw_u8(struct raw *b, uint8_t v)
{
	raw_bytes(b, &v, 1);
}

static void raw_u32(struct raw *b, uint32_t v)
{
	uint8_t p[4] = {v, v >> 8, v >> 16, v >> 24};

	raw_bytes(b, p, 4);
}

static void raw_u64(struct raw *b, uint64_t v)
{
	raw_u32(b, v);
	raw_u32(b, v >> 32);
}

static void raw_str(struct raw *b, const char *s)
{
	raw_u32(b, strlen(s));
	raw_bytes(b, s, strlen(s));
}

static void raw_header(struct raw *b, uint32_t version)
{
	b->len = 0;
	raw_bytes(b, PERCH_FILE_MAGIC, 8);
	raw_u32(b, version);
	raw_u32(b, 16);
}

static void raw_block(struct raw *b, uint32_t type, const struct raw *payload)
{
	raw_u32(b, type);
	raw_u32(b, payload->len);
	raw_u32(b, crc32(crc32(0L, Z_NULL, 0), payload->data, payload->len));
	raw_u32(b, 0);
	raw_bytes(b, payload->data, payload->len);
}

/* STRINGS "mod" "fn" (ids 1, 2), then FRAMES of one frame (id 0) naming them. */
static void raw_strings_frames(struct raw *b)
{
	struct raw p = {.len = 0};

	raw_u32(&p, 2);
	raw_str(&p, "mod");
	raw_str(&p, "fn");
	raw_block(b, REC_STRINGS, &p);
	p.len = 0;
	raw_u32(&p, 1);
	raw_u8(&p, REC_FRAME_USER);
	raw_u32(&p, 1);
	raw_u32(&p, 2);
	raw_u64(&p, 0x10);
	raw_block(b, REC_FRAMES, &p);
}

/* One sample as a file of the given version spells it (a comm from version 3 on). */
static void raw_sample_payload_v(struct raw *p, uint32_t version, uint32_t comm, uint32_t nframes,
				 uint32_t frame)
{
	p->len = 0;
	raw_u32(p, 1);
	raw_u32(p, 5);
	raw_u32(p, 5);
	raw_u64(p, 1);
	raw_u32(p, 0);
	if (version >= 3)
		raw_u32(p, comm);
	raw_u32(p, nframes);
	for (uint32_t i = 0; i < nframes; i++)
		raw_u32(p, frame);
}

static void raw_sample_payload(struct raw *p, uint32_t nframes, uint32_t frame)
{
	raw_sample_payload_v(p, PERCH_FILE_VERSION, 0, nframes, frame);
}

static int load_raw(const struct raw *b, struct recording **r)
{
	const char *path = tmp_path("raw.data");

	write_bytes(path, b->data, b->len);
	return recording__load(path, r);
}

/* ---- tests ---- */

static void round_trip_keeps_every_block_type_exact(void **state)
{
	const char *path = tmp_path("known.data");
	struct recording *r;
	size_t len;
	uint8_t *data;

	(void)state;
	write_known(path, true);
	assert_int_equal(recording__load(path, &r), 0);
	assert_known_strings_frames(r);
	assert_known_threads_samples(r);
	assert_known_kv(r);
	data = read_bytes(path, &len);
	assert_int_equal(r->good_size, len);
	/* Compacted at close: META STRINGS FRAMES THREADS STACKS KEYS WINDOWS STATS END */
	assert_int_equal(r->nblocks, 9);
	assert_int_equal(r->nwindows, 2); /* untimed: one a flush */
	free(data);
	recording__free(r);
}

static void writer_size_counts_every_byte_written(void **state)
{
	const char *path = tmp_path("size.data");
	struct rec_writer *w = open_named(path);
	uint64_t size;
	size_t len;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__size(w), 16);
	write_meta(w);
	write_first_batch(w);
	size = rec_writer__size(w);
	free(read_bytes(path, &len));
	assert_int_equal(size, len);
	assert_int_equal(rec_writer__close(w), 0);
}

/* An idle recording must not grow: a STATS block holds only what changed since the last one, and
 * none is written when nothing did; the loader keeps each counter's last value. */
static void stats_blocks_hold_only_changed_counters(void **state)
{
	const char *path = tmp_path("stats.data");
	struct rec_writer *w = rec_writer__open(path);
	struct rec_kv a[] = {{.key = "samples", .value = 5},
			     {.key = "lost", .value = 0},
			     {.key = "perch_user_us", .value = 100}};
	struct rec_kv b[] = {{.key = "samples", .value = 7}, {.key = "lost", .value = 0}};
	struct recording *r = NULL;
	uint64_t size, v = 0;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__stats(w, a, 3), 0);
	size = rec_writer__size(w);
	for (int i = 0; i < 100; i++)
		assert_int_equal(rec_writer__stats(w, a, 3), 0);
	assert_int_equal(rec_writer__size(w), size);
	assert_int_equal(rec_writer__stats(w, b, 2), 0);
	/* one block: header, count, and the one counter that changed */
	assert_int_equal(rec_writer__size(w), size + 16 + 4 + 4 + strlen("samples") + 8);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nstats, 3);
	assert_true(recording__stat(r, "samples", &v));
	assert_int_equal(v, 7);
	assert_true(recording__stat(r, "perch_user_us", &v));
	assert_int_equal(v, 100);
	assert_true(recording__stat(r, "lost", &v));
	assert_int_equal(v, 0);
	recording__free(r);
}

static void writer_dedups_strings_and_frames(void **state)
{
	const char *path = tmp_path("dedup.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r;
	uint32_t a, b, c, f;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__string(w, ""), 0);
	assert_int_equal(rec_writer__string(w, NULL), 0);
	a = rec_writer__string(w, "alpha");
	b = rec_writer__string(w, "beta");
	assert_int_not_equal(a, b);
	assert_int_equal(rec_writer__string(w, "alpha"), a);
	f = rec_writer__frame(w, REC_FRAME_USER, a, b, 0x40);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, a, b, 0x40), f);
	assert_int_not_equal(rec_writer__frame(w, REC_FRAME_KERNEL, a, b, 0x40), f);
	assert_int_not_equal(rec_writer__frame(w, REC_FRAME_USER, b, b, 0x40), f);
	assert_int_not_equal(rec_writer__frame(w, REC_FRAME_USER, a, a, 0x40), f);
	assert_int_not_equal(rec_writer__frame(w, REC_FRAME_USER, a, b, 0x41), f);
	/* a return address at 0x40 is a frame of its own, written as a user frame */
	c = rec_writer__frame(w, REC_FRAME_USER | REC_FRAME_CALL, a, b, 0x40);
	assert_int_not_equal(c, f);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER | REC_FRAME_CALL, a, b, 0x40), c);
	assert_int_equal(rec_writer__flush(w), 0);
	/* Still the same ids after a flush, and not written again. */
	assert_int_equal(rec_writer__string(w, "beta"), b);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, a, b, 0x40), f);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nstrings, 3);
	assert_int_equal(r->nframes, 6);
	assert_int_equal(r->frames[c].kind, REC_FRAME_USER);
	assert_int_equal(r->frames[c].offset, 0x40);
	recording__free(r);
}

static void writer_dedups_many_strings_through_table_growth(void **state)
{
	const char *path = tmp_path("many.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r;
	char name[32];

	(void)state;
	assert_non_null(w);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		assert_int_equal(rec_writer__string(w, name), i + 1);
		assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, i + 1, i + 1, i), i);
	}
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "fn_%d", i);
		assert_int_equal(rec_writer__string(w, name), i + 1);
		assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, i + 1, i + 1, i), i);
	}
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nstrings, 5001);
	assert_string_equal(r->strings[4321], "fn_4320");
	assert_int_equal(r->nframes, 5000);
	recording__free(r);
}

static void writer_rejects_undefined_ids(void **state)
{
	const char *path = tmp_path("undef.data");
	struct rec_writer *w = rec_writer__open(path);
	uint32_t s, f, bad[] = {0, 1};
	struct recording *r;

	(void)state;
	assert_non_null(w);
	s = rec_writer__string(w, "x");
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, s + 1, 0, 0), UINT32_MAX);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, 0, s + 1, 0), UINT32_MAX);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_REGION + 1, s, s, 0), UINT32_MAX);
	f = rec_writer__frame(w, REC_FRAME_USER, s, s, 0);
	assert_int_equal(f, 0);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, bad, 2), -EINVAL);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, NULL, 1), -EINVAL);
	assert_int_equal(rec_writer__thread(w, 1, 1, 0, s + 1), -EINVAL);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsamples, 1);
	recording__free(r);
}

static void load_keeps_last_thread_definition(void **state)
{
	const char *path = tmp_path("threads.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__thread(w, 7, 8, 1, rec_writer__string(w, "before-exec")), 0);
	assert_int_equal(rec_writer__thread(w, 7, 9, 1, rec_writer__string(w, "other")), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__thread(w, 7, 8, 2, rec_writer__string(w, "mid")), 0);
	assert_int_equal(rec_writer__thread(w, 7, 8, 3, rec_writer__string(w, "after-exec")), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nthreads, 2);
	assert_int_equal(r->threads[0].tid, 8);
	assert_int_equal(r->threads[0].ppid, 3);
	assert_string_equal(recording__string(r, r->threads[0].comm), "after-exec");
	assert_string_equal(recording__string(r, r->threads[1].comm), "other");
	recording__free(r);
}

static void flush_writes_blocks_in_dependency_order(void **state)
{
	const char *path = tmp_path("order.data");
	struct rec_writer *w = open_named(path);
	struct layout l;
	uint32_t f;
	uint8_t *data;
	size_t len;

	(void)state;
	assert_non_null(w);
	f = rec_writer__frame(w, REC_FRAME_USER, rec_writer__string(w, "m"), 0, 1);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), 0);
	assert_int_equal(rec_writer__thread(w, 1, 1, 0, 0), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__flush(w), 0); /* nothing pending: writes nothing */
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	assert_int_equal(l.nblocks, 7);
	assert_int_equal(l.type[0], REC_STRINGS);
	assert_int_equal(l.type[1], REC_FRAMES);
	assert_int_equal(l.type[2], REC_THREADS);
	assert_int_equal(l.type[3], REC_STACKS);
	assert_int_equal(l.type[4], REC_KEYS);
	assert_int_equal(l.type[5], REC_WINDOWS);
	assert_int_equal(l.type[6], REC_WINDOWS); /* the key is known: only its new count */
	free(data);
	assert_int_equal(rec_writer__close(w), 0);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	assert_int_equal(l.nblocks, 6); /* compacted: both windows in one block */
	assert_int_equal(l.type[5], REC_WINDOWS);
	assert_int_equal(l.n[5], 2);
	free(data);
}

static void writer_cuts_large_pending_data_into_blocks(void **state)
{
	const char *path = tmp_path("large.data");
	struct rec_writer *w = rec_writer__open(path);
	uint32_t stack[8] = {0};
	struct recording *r;
	char name[64];

	(void)state;
	assert_non_null(w);
	for (int i = 0; i < 150000; i++) {
		snprintf(name, sizeof(name), "a_rather_long_function_name_%d", i);
		assert_int_equal(rec_writer__string(w, name), i + 1);
	}
	assert_int_equal(rec_writer__frame(w, REC_FRAME_USER, 1, 2, 0), 0);
	for (int i = 0; i < 150000; i++)
		assert_int_equal(rec_writer__sample(w, 1, i, 1, 0, stack, 8), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_true(r->nblocks > 4);
	assert_int_equal(r->nstrings, 150001);
	assert_string_equal(r->strings[150000], "a_rather_long_function_name_149999");
	assert_int_equal(r->nsamples, 150000);
	assert_int_equal(r->samples[149999].tid, 149999);
	assert_int_equal(r->samples[149999].frames[7], 0);
	recording__free(r);
}

static void load_cut_at_every_length_keeps_complete_blocks(void **state)
{
	const char *path = tmp_path("full.data"), *cut = tmp_path("cut.data");
	struct recording *r;
	struct layout l;
	size_t len, k = 0;
	uint8_t *data;

	(void)state;
	write_known(path, true);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	for (size_t n = 0; n <= len; n++) {
		bool boundary = n == 16 || (k < l.nblocks && n == l.end[k]);
		int err;

		k += k < l.nblocks && n == l.end[k];
		write_bytes(cut, data, n);
		err = recording__load(cut, &r);
		if (n < 16) {
			assert_int_equal(err, -EPROTO);
			assert_null(r);
			continue;
		}
		assert_int_equal(err, boundary ? 0 : -ENODATA);
		assert_prefix(r, &l, k);
		recording__free(r);
	}
	assert_int_equal(k, l.nblocks);
	free(data);
}

static void load_flipped_payload_byte_is_ebadmsg_keeping_earlier_blocks(void **state)
{
	const char *path = tmp_path("full.data"), *bad = tmp_path("flipped.data");
	struct recording *r;
	struct layout l;
	uint8_t *data;
	size_t len;

	(void)state;
	write_known(path, true);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	for (size_t k = 0; k < l.nblocks; k++) {
		size_t at = l.start[k] + 16 + (l.end[k] - l.start[k] - 16) / 2;

		data[at] ^= 0x20;
		write_bytes(bad, data, len);
		data[at] ^= 0x20;
		assert_int_equal(recording__load(bad, &r), -EBADMSG);
		assert_prefix(r, &l, k);
		assert_int_equal(r->good_size, l.start[k]);
		recording__free(r);
	}
	free(data);
}

/* A file extended and never written (or a disk that lost its last writes) ends in zeros: damage
 * after the good blocks, not a stream of empty blocks. */
static void load_zero_filled_tail_is_ebadmsg_keeping_the_blocks_before(void **state)
{
	const char *path = tmp_path("full.data"), *bad = tmp_path("zero-tail.data");
	struct recording *r;
	struct layout l;
	uint8_t *data;
	size_t len;

	(void)state;
	write_known(path, true);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	data = realloc(data, len + 4096);
	assert_non_null(data);
	memset(data + len, 0, 4096);
	write_bytes(bad, data, len + 4096);
	free(data);
	assert_int_equal(recording__load(bad, &r), -EBADMSG);
	assert_prefix(r, &l, l.nblocks);
	assert_int_equal(r->good_size, len);
	recording__free(r);
}

/* A FIFO (even with no writer) or a device has no end: refused at once, never read. */
static void load_refuses_fifos_and_devices(void **state)
{
	const char *fifo = tmp_path("fifo.data");
	struct recording *r = (struct recording *)1;

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(recording__load(fifo, &r), -EINVAL);
	assert_null(r);
	assert_int_equal(recording__load("/dev/zero", &r), -EINVAL);
	assert_null(r);
	assert_int_equal(recording__load(tmpdir, &r), -EISDIR);
}

static void load_nonzero_reserved_field_is_ebadmsg(void **state)
{
	struct recording *r;
	struct raw b;

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	b.data[16 + 12] = 1;
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 0);
	recording__free(r);
}

static void load_wrong_magic_is_eproto(void **state)
{
	struct recording *r = (struct recording *)1;
	struct raw b;

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	b.data[0] = 'X';
	assert_int_equal(load_raw(&b, &r), -EPROTO);
	assert_null(r);
}

static void load_later_version_is_eprotonosupport(void **state)
{
	struct recording *r = (struct recording *)1;
	struct raw b;

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION + 1);
	raw_strings_frames(&b);
	assert_int_equal(load_raw(&b, &r), -EPROTONOSUPPORT);
	assert_null(r);
}

static void load_missing_file_is_enoent(void **state)
{
	struct recording *r = (struct recording *)1;

	(void)state;
	assert_int_equal(recording__load(tmp_path("no-such.data"), &r), -ENOENT);
	assert_null(r);
}

static void load_sample_with_undefined_frame_is_ebadmsg(void **state)
{
	struct recording *r;
	struct raw b, p;

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_sample_payload(&p, 1, 0);
	raw_block(&b, REC_SAMPLES, &p);
	raw_sample_payload(&p, 2, 1); /* only frame 0 is defined */
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 3);
	assert_int_equal(r->nsamples, 1);
	assert_int_equal(r->samples[0].frames[0], 0);
	recording__free(r);
}

/* Samples name their thread as it was when taken (version 3); a version 2 file, whose samples
 * have no name, still loads, and a name that no string defines is damage. */
static void samples_carry_their_thread_name_and_version_2_still_loads(void **state)
{
	const char *path = tmp_path("comm.data");
	struct rec_writer *w = rec_writer__open(path);
	uint32_t frame, py, sh;
	struct recording *r;
	struct raw b, p;

	(void)state;
	assert_non_null(w);
	sh = rec_writer__string(w, "bash");
	py = rec_writer__string(w, "python3.11");
	frame = rec_writer__frame(w, REC_FRAME_USER, sh, 0, 0x10);
	assert_int_equal(rec_writer__sample_named(w, 7, 7, sh, 2, 0, &frame, 1), 0);
	assert_int_equal(rec_writer__sample_named(w, 7, 7, py, 3, 0, &frame, 1), 0);
	assert_int_equal(rec_writer__sample_named(w, 7, 7, 99, 1, 0, &frame, 1), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->version, PERCH_FILE_VERSION);
	assert_int_equal(r->nsamples, 2);
	assert_string_equal(recording__string(r, r->samples[0].comm), "bash");
	assert_string_equal(recording__string(r, r->samples[1].comm), "python3.11");
	recording__free(r);

	raw_header(&b, 2);
	raw_strings_frames(&b);
	raw_sample_payload_v(&p, 2, 0, 1, 0);
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), 0);
	assert_int_equal(r->nsamples, 1);
	assert_int_equal(r->samples[0].comm, 0);
	assert_int_equal(r->samples[0].frames[0], 0);
	recording__free(r);

	raw_header(&b, 3);
	raw_strings_frames(&b);
	raw_sample_payload_v(&p, 3, 1000, 1, 0);
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nsamples, 0);
	recording__free(r);
}

static void load_frame_with_undefined_string_leaves_nothing_of_its_block(void **state)
{
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_u32(&p, 2);
	raw_u8(&p, REC_FRAME_USER);
	raw_u32(&p, 1);
	raw_u32(&p, 2);
	raw_u64(&p, 0x20);
	raw_u8(&p, REC_FRAME_USER);
	raw_u32(&p, 3); /* strings 0..2 are defined */
	raw_u32(&p, 0);
	raw_u64(&p, 0x30);
	raw_block(&b, REC_FRAMES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 2);
	assert_int_equal(r->nframes, 1);
	assert_true(r->frames[0].offset == 0x10);
	recording__free(r);
}

static void load_bad_thread_block_leaves_earlier_threads_alone(void **state)
{
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_u32(&p, 1);
	raw_u32(&p, 5);
	raw_u32(&p, 5);
	raw_u32(&p, 1);
	raw_u32(&p, 1);
	raw_block(&b, REC_THREADS, &p);
	p.len = 0;
	raw_u32(&p, 2);
	raw_u32(&p, 5); /* would replace thread 5/5 ... */
	raw_u32(&p, 5);
	raw_u32(&p, 1);
	raw_u32(&p, 2);
	raw_u32(&p, 5); /* ... but the next one names an undefined string */
	raw_u32(&p, 6);
	raw_u32(&p, 1);
	raw_u32(&p, 99);
	raw_block(&b, REC_THREADS, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 3);
	assert_int_equal(r->nthreads, 1);
	assert_string_equal(recording__string(r, r->threads[0].comm), "mod");
	recording__free(r);
}

static void load_huge_counts_are_ebadmsg(void **state)
{
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_u32(&p, UINT32_MAX);
	raw_u32(&p, 0);
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 2);
	recording__free(r);

	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_sample_payload(&p, 0, 0);
	p.len -= 4;
	raw_u32(&p, UINT32_MAX); /* nframes */
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nsamples, 0);
	recording__free(r);
}

static void load_trailing_payload_bytes_are_ebadmsg(void **state)
{
	struct recording *r;
	struct raw b, p;

	(void)state;
	for (uint32_t type = REC_META; type <= REC_END; type++) {
		raw_header(&b, PERCH_FILE_VERSION);
		raw_strings_frames(&b);
		p.len = 0;
		raw_u32(&p, 0);
		raw_u8(&p, 0xaa);
		raw_block(&b, type, &p);
		assert_int_equal(load_raw(&b, &r), -EBADMSG);
		assert_int_equal(r->nblocks, 2);
		assert_int_equal(r->nstrings, 3);
		assert_int_equal(r->nframes, 1);
		assert_null(r->meta);
		assert_null(r->stats);
		assert_null(r->end);
		recording__free(r);
	}
}

static void load_trailing_bytes_after_entries_drop_the_block(void **state)
{
	struct recording *r;
	struct raw b, p;

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_sample_payload(&p, 1, 0);
	raw_u8(&p, 0);
	raw_block(&b, REC_SAMPLES, &p);
	p.len = 0;
	raw_u32(&p, 1);
	raw_u32(&p, 5);
	raw_u32(&p, 5);
	raw_u32(&p, 1);
	raw_u32(&p, 1);
	raw_u8(&p, 0);
	raw_block(&b, REC_THREADS, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 2);
	assert_int_equal(r->nsamples, 0);
	recording__free(r);
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_block(&b, REC_THREADS, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nthreads, 0);
	recording__free(r);
}

static void load_skips_unknown_block_type(void **state)
{
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_str(&p, "from a later perch");
	raw_block(&b, 99, &p);
	raw_sample_payload(&p, 1, 0);
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), 0);
	assert_int_equal(r->nblocks, 4);
	assert_int_equal(r->good_size, b.len);
	assert_int_equal(r->nsamples, 1);
	recording__free(r);
}

/* The descriptor rec_writer__open() got for path. */
static int fd_of(const char *path)
{
	char link[64], target[PATH_MAX];

	for (int fd = 3; fd < 1024; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, path))
			return fd;
	}
	return -1;
}

static void writer_reports_enospc_when_disk_is_full(void **state)
{
	const char *path = tmp_path("full-disk.data");
	struct rec_writer *w;
	int fd, full;
	uint32_t f;

	(void)state;
	assert_null(rec_writer__open("/dev/full"));
	assert_int_equal(errno, ENOSPC);
	w = open_named(path);
	fd = fd_of(path);
	assert_true(fd >= 0);
	full = open("/dev/full", O_WRONLY);
	assert_true(full >= 0);
	assert_int_equal(dup2(full, fd), fd);
	close(full);
	f = rec_writer__frame(w, REC_FRAME_USER, rec_writer__string(w, "m"), 0, 0);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), 0);
	assert_int_equal(rec_writer__flush(w), -ENOSPC);
	assert_int_equal(rec_writer__flush(w), -ENOSPC);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), -ENOSPC);
	assert_int_equal(rec_writer__end(w, NULL, 0), -ENOSPC);
	assert_int_equal(rec_writer__size(w), 16);
	assert_int_equal(rec_writer__close(w), -ENOSPC);
}

static void write_header_only(const char *path)
{
	struct rec_writer *w = rec_writer__open(path);

	assert_non_null(w);
	assert_int_equal(rec_writer__close(w), 0);
}

static void assert_new_recording(const char *path)
{
	struct recording *r = NULL;
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(recording__load(path, &r), 0);
	recording__free(r);
}

/* A link planted at the output path (a perch.data in a sticky /tmp) must not send the recording
 * onto its target: the link is kept as .old, untouched, and the recording is a new file. */
static void writer_never_writes_through_a_symlink(void **state)
{
	const char *path = tmp_path("link.data"), *victim = tmp_path("victim");
	char target[PATH_MAX];
	size_t len;
	uint8_t *data;
	ssize_t n;

	(void)state;
	write_bytes(victim, "keep me", 7);
	assert_int_equal(symlink(victim, path), 0);
	write_header_only(path);
	data = read_bytes(victim, &len);
	assert_int_equal(len, 7);
	assert_memory_equal(data, "keep me", 7);
	free(data);
	n = readlink(tmp_path("link.data.old"), target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, victim);
	assert_new_recording(path);
}

/* As perf does: recording again keeps the previous recording as FILE.old. */
static void writer_keeps_an_existing_recording_as_old(void **state)
{
	const char *path = tmp_path("again.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__meta(w, &(struct rec_kv){.key = "run", .str = "1"}, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	write_header_only(path);
	assert_new_recording(path);
	assert_int_equal(recording__load(tmp_path("again.data.old"), &r), 0);
	assert_string_equal(recording__meta(r, "run"), "1");
	recording__free(r);
}

/* How many files in tmpdir have a name starting with prefix. */
static int count_named(const char *prefix)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

static void assert_run(const char *path, const char *run)
{
	struct recording *r = NULL;

	assert_int_equal(recording__load(path, &r), 0);
	assert_string_equal(recording__meta(r, "run"), run);
	recording__free(r);
}

static void write_run(struct rec_writer *w, char *run)
{
	assert_non_null(w);
	assert_int_equal(rec_writer__meta(w, &(struct rec_kv){.key = "run", .str = run}, 1), 0);
	assert_int_equal(rec_writer__flush(w), 0);
}

/* A run that fails before everything has opened (perch record -e cycles without a PMU) leaves
 * the recording already there as it was: nothing is renamed to .old before publish, and a
 * discarded writer leaves no file behind; a published one keeps the previous as .old. */
static void writer_touches_the_previous_recording_only_once_published(void **state)
{
	const char *path = tmp_path("kept.data");
	struct rec_writer *w = rec_writer__open(path);

	(void)state;
	write_run(w, "1");
	assert_int_equal(rec_writer__close(w), 0);
	w = rec_writer__open(path);
	write_run(w, "2");
	assert_int_equal(count_named("kept.data"), 2); /* it, and the new one beside it */
	assert_run(path, "1");
	rec_writer__discard(w);
	assert_int_equal(count_named("kept.data"), 1);
	assert_run(path, "1");
	w = rec_writer__open(path);
	write_run(w, "3");
	assert_int_equal(rec_writer__publish(w), 0);
	assert_run(path, "3");
	assert_run(tmp_path("kept.data.old"), "1");
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(count_named("kept.data"), 2);
}

static void load_without_end_has_null_end(void **state)
{
	const char *path = tmp_path("no-end.data");
	struct recording *r;
	uint64_t v = 1;

	(void)state;
	write_known(path, false);
	assert_int_equal(recording__load(path, &r), 0);
	assert_null(r->end);
	assert_int_equal(r->nend, 0);
	assert_false(recording__end(r, "duration_ns", &v));
	assert_int_equal(v, 1);
	recording__free(r);
}

static void load_empty_end_block_still_marks_finished(void **state)
{
	const char *path = tmp_path("empty-end.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__end(w, NULL, 0), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_non_null(r->end);
	assert_int_equal(r->nend, 0);
	recording__free(r);
}

static void lookups_answer_absent_keys_and_ids(void **state)
{
	const char *path = tmp_path("known.data");
	struct recording *r;
	uint64_t v = 5;

	(void)state;
	write_known(path, true);
	assert_int_equal(recording__load(path, &r), 0);
	assert_null(recording__meta(r, "nope"));
	assert_false(recording__stat(r, "nope", &v));
	assert_false(recording__end(r, "nope", &v));
	assert_int_equal(v, 5);
	assert_string_equal(recording__string(r, 8), "");
	assert_string_equal(recording__string(r, UINT32_MAX), "");
	assert_null(recording__meta(NULL, "command"));
	assert_string_equal(recording__string(NULL, 1), "");
	recording__free(r);
	recording__free(NULL);
	assert_int_equal(rec_writer__close(NULL), 0);
}

static int make_tmpdir(void **state)
{
	const char *base = getenv("TMPDIR");
	char made[PATH_MAX];

	(void)state;
	snprintf(made, sizeof(made), "%s/perch-rec-XXXXXX", base && *base ? base : "/tmp");
	/* Resolved, as fd_of() compares it with what /proc/self/fd links to. */
	return mkdtemp(made) && realpath(made, tmpdir) ? 0 : -1;
}

/* Everything the tests left in tmpdir (recordings, their .old copies, links). */
static int remove_tmpdir(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	(void)state;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(tmp_path(e->d_name));
	}
	if (d)
		closedir(d);
	return rmdir(tmpdir);
}

/* LINES: a frame's inline chain comes back innermost first; a later chain for the same frame
 * replaces the earlier one. */
static void lines_round_trip_and_later_chain_replaces(void **state)
{
	const char *path = tmp_path("lines.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;
	uint32_t mod, outer, inner, file, f0, f1;

	(void)state;
	assert_non_null(w);
	mod = rec_writer__string(w, "/bin/app");
	outer = rec_writer__string(w, "outer");
	inner = rec_writer__string(w, "inner");
	file = rec_writer__string(w, "app.c");
	f0 = rec_writer__frame(w, REC_FRAME_USER, mod, outer, 0x10);
	f1 = rec_writer__frame(w, REC_FRAME_USER, mod, outer, 0x20);
	{
		struct rec_line chain[] = {{inner, file, 7}, {outer, file, 30}};
		struct rec_line first[] = {{outer, file, 1}};
		struct rec_line bad[] = {{99, file, 1}};

		assert_int_equal(rec_writer__lines(w, f1, first, 1), 0);
		assert_int_equal(rec_writer__flush(w), 0);
		assert_int_equal(rec_writer__lines(w, f1, chain, 2), 0);
		assert_int_equal(rec_writer__lines(w, 7, chain, 2), -EINVAL);
		assert_int_equal(rec_writer__lines(w, f0, bad, 1), -EINVAL);
	}
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->frames[f0].nlines, 0);
	assert_null(r->frames[f0].lines);
	assert_int_equal(r->frames[f1].nlines, 2);
	assert_string_equal(recording__string(r, r->frames[f1].lines[0].function), "inner");
	assert_int_equal(r->frames[f1].lines[0].line, 7);
	assert_string_equal(recording__string(r, r->frames[f1].lines[1].function), "outer");
	assert_string_equal(recording__string(r, r->frames[f1].lines[1].file), "app.c");
	assert_int_equal(r->frames[f1].lines[1].line, 30);
	recording__free(r);
}

static void load_lines_for_undefined_frame_is_ebadmsg(void **state)
{
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_u32(&p, 1);
	raw_u32(&p, 1); /* only frame 0 is defined */
	raw_u32(&p, 1);
	raw_u32(&p, 2);
	raw_u32(&p, 1);
	raw_u32(&p, 3);
	raw_block(&b, REC_LINES, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nblocks, 2);
	assert_int_equal(r->frames[0].nlines, 0);
	recording__free(r);
}

/* ---- regions -------------------------------------------------------------------------------- */

static void assert_rnode(const struct rec_region_node *got, const struct rec_region_node *want)
{
	assert_int_equal(got->name, want->name);
	assert_int_equal(got->parent, want->parent);
	assert_int_equal(got->calls, want->calls);
	assert_int_equal(got->total_ns, want->total_ns);
	assert_int_equal(got->self_ns, want->self_ns);
	assert_int_equal(got->min_ns, want->min_ns);
	assert_int_equal(got->max_ns, want->max_ns);
	assert_int_equal(got->size_sum, want->size_sum);
	assert_int_equal(got->untimed, want->untimed);
	assert_int_equal(got->open, want->open);
	assert_int_equal(got->sum_ns, want->sum_ns);
}

static const struct rec_region_thread *find_rthread(const struct recording *r, uint32_t pid,
						    uint32_t tid)
{
	for (size_t i = 0; i < r->nrthreads; i++) {
		if (r->rthreads[i].pid == pid && r->rthreads[i].tid == tid)
			return &r->rthreads[i];
	}
	fail_msg("no region thread %u/%u", pid, tid);
	return NULL;
}

/* Every field comes back exact (64-bit values beyond 32 bits too); a later block for the same
 * (pid, tid) replaces the thread, other threads stay. */
static void regions_round_trip_and_later_thread_replaces(void **state)
{
	const char *path = tmp_path("regions.data");
	struct rec_writer *w = rec_writer__open(path);
	const struct rec_region_thread *t;
	struct recording *r = NULL;
	uint32_t solve, step;

	(void)state;
	assert_non_null(w);
	solve = rec_writer__string(w, "solve");
	step = rec_writer__string(w, "step");
	{
		struct rec_region_node a[] = {
			{0},
			{solve, 0, 3, 1ull << 40, 5000, 100, 1ull << 39, 77, 1, 2,
			 (1ull << 41) + 7},
			{step, 1, 9, 4000, 4000, 10, 900, 0, 0, 0, 4100},
			{solve, 2, 1, 30, 30, 30, 30, 0, 0, 0, 30},
		};
		struct rec_region_node b[] = {{0}, {step, 0, 1, 5, 5, 5, 5, 1, 0, 0, 5}};
		struct rec_region_node a2[] = {{0}, {step, 0, 2, 8, 8, 4, 4, 0, 0, 1, 8}};
		struct rec_region_thread first[] = {
			{.pid = 7, .tid = 7, .mismatches = 3, .nnodes = 4, .nodes = a},
			{.pid = 7, .tid = 8, .nnodes = 2, .nodes = b},
		};
		struct rec_region_thread later = {
			.pid = 7, .tid = 7, .mismatches = 1ull << 33, .nnodes = 2, .nodes = a2};
		struct rec_region_thread root_only = {.pid = 9, .tid = 9, .nnodes = 1, .nodes = a};

		assert_int_equal(rec_writer__regions(w, first, 2), 0);
		assert_int_equal(rec_writer__close(w), 0);
		assert_int_equal(recording__load(path, &r), 0);
		assert_int_equal(r->nrthreads, 2);
		t = find_rthread(r, 7, 7);
		assert_int_equal(t->mismatches, 3);
		assert_int_equal(t->nnodes, 4);
		for (uint32_t i = 0; i < 4; i++)
			assert_rnode(&t->nodes[i], &a[i]);
		assert_string_equal(recording__string(r, t->nodes[3].name), "solve");
		t = find_rthread(r, 7, 8);
		assert_int_equal(t->nnodes, 2);
		assert_rnode(&t->nodes[1], &b[1]);
		recording__free(r);

		w = rec_writer__open(path);
		assert_non_null(w);
		assert_int_equal(rec_writer__string(w, "solve"), solve);
		assert_int_equal(rec_writer__string(w, "step"), step);
		assert_int_equal(rec_writer__regions(w, first, 2), 0);
		assert_int_equal(rec_writer__regions(w, &later, 1), 0);
		assert_int_equal(rec_writer__regions(w, &root_only, 1), 0);
		assert_int_equal(rec_writer__regions(w, NULL, 0), 0); /* an empty block is fine */
		assert_int_equal(rec_writer__close(w), 0);
		assert_int_equal(recording__load(path, &r), 0);
		assert_int_equal(r->nrthreads, 3);
		t = find_rthread(r, 7, 7);
		assert_true(t->mismatches == 1ull << 33);
		assert_int_equal(t->nnodes, 2);
		assert_rnode(&t->nodes[0], &a2[0]);
		assert_rnode(&t->nodes[1], &a2[1]);
		assert_int_equal(find_rthread(r, 7, 8)->nnodes, 2);
		assert_int_equal(find_rthread(r, 9, 9)->nnodes, 1);
		recording__free(r);
	}
}

/* The writer refuses a tree the loader would refuse, and writes nothing of that call. */
static void writer_rejects_bad_region_trees(void **state)
{
	const char *path = tmp_path("regions-bad.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;
	uint32_t s;

	(void)state;
	assert_non_null(w);
	s = rec_writer__string(w, "solve");
	{
		struct rec_region_node self_parent[] = {{0}, {.name = s, .parent = 1}};
		struct rec_region_node later_parent[] = {
			{0}, {.name = s, .parent = 2}, {.name = s}};
		struct rec_region_node undefined[] = {{0}, {.name = s + 1}};
		struct rec_region_node unnamed[] = {{0}, {.parent = 0}};
		struct rec_region_node named_root[] = {{.name = s}};
		struct rec_region_node good[] = {{0}, {s, 0, 1, 10, 10, 10, 10, 0, 0, 0, 10}};
		struct rec_region_thread t = {.pid = 1, .tid = 1, .nnodes = 2};
		struct rec_region_thread two[] = {
			{.pid = 1, .tid = 1, .nnodes = 2, .nodes = good},
			{.pid = 1, .tid = 2, .nnodes = 2, .nodes = undefined},
		};

		t.nodes = self_parent;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		t.nodes = later_parent;
		t.nnodes = 3;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		t.nodes = undefined;
		t.nnodes = 2;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		t.nodes = unnamed;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		t.nodes = named_root;
		t.nnodes = 1;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		t.nodes = good;
		t.nnodes = 0;
		assert_int_equal(rec_writer__regions(w, &t, 1), -EINVAL);
		assert_int_equal(rec_writer__regions(w, NULL, 1), -EINVAL);
		assert_int_equal(rec_writer__regions(w, two, 2), -EINVAL);
	}
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nrthreads, 0);
	assert_int_equal(r->nstrings, 2);
	recording__free(r);
}

/* One region thread into p: pid/tid 5/tid, nodes given as (name, parent) pairs. */
static void raw_rthread(struct raw *p, uint32_t tid, const uint32_t (*np)[2], uint32_t n)
{
	raw_u32(p, 5);
	raw_u32(p, tid);
	raw_u64(p, 0);
	raw_u32(p, n);
	for (uint32_t i = 0; i < n; i++) {
		raw_u32(p, np[i][0]);
		raw_u32(p, np[i][1]);
		for (int k = 0; k < 7; k++)
			raw_u64(p, 10 + k);
		raw_u32(p, 0);
		raw_u64(p, 20); /* sum_ns */
	}
}

/* A damaged REGIONS block: -EBADMSG, and every earlier block, region threads included, kept;
 * a thread the bad block would have replaced keeps its earlier definition. */
static void load_bad_regions_block_is_ebadmsg_keeping_earlier_blocks(void **state)
{
	static const uint32_t good[][2] = {{0, 0}, {2, 0}, {1, 1}};
	static const uint32_t bad_parent[][2] = {{0, 0}, {2, 1}};
	static const uint32_t later_parent[][2] = {{0, 0}, {2, 2}, {2, 0}};
	static const uint32_t bad_name[][2] = {{0, 0}, {3, 0}}; /* strings 0..2 are defined */
	static const uint32_t replacement[][2] = {{0, 0}};
	const struct {
		const uint32_t (*nodes)[2];
		uint32_t n;
	} bad[] = {{bad_parent, 2}, {later_parent, 3}, {bad_name, 2}};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct recording *r;
		struct raw b, p = {.len = 0};

		raw_header(&b, PERCH_FILE_VERSION);
		raw_strings_frames(&b);
		raw_u32(&p, 1);
		raw_rthread(&p, 5, good, 3);
		raw_block(&b, REC_REGIONS, &p);
		p.len = 0;
		raw_u32(&p, 2);
		raw_rthread(&p, 5, replacement, 1);	    /* would replace 5/5 ... */
		raw_rthread(&p, 6, bad[i].nodes, bad[i].n); /* ... but this one is damaged */
		raw_block(&b, REC_REGIONS, &p);
		assert_int_equal(load_raw(&b, &r), -EBADMSG);
		assert_int_equal(r->nblocks, 3);
		assert_int_equal(r->nrthreads, 1);
		assert_int_equal(r->rthreads[0].tid, 5);
		assert_int_equal(r->rthreads[0].nnodes, 3);
		assert_int_equal(r->rthreads[0].nodes[2].parent, 1);
		assert_string_equal(recording__string(r, r->rthreads[0].nodes[1].name), "fn");
		assert_int_equal(r->rthreads[0].nodes[1].total_ns, 11);
		recording__free(r);
	}
}

/* Region frames (kind 2) come back as written in the frame table; a sample's region frames come
 * back as its regions (their names, outermost first), apart from its function frames. */
static void region_frames_round_trip(void **state)
{
	const char *path = tmp_path("rframes.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;
	uint32_t mod, solve, rsolve, rstep, fmain, frames[3];

	(void)state;
	assert_non_null(w);
	mod = rec_writer__string(w, "/bin/app");
	solve = rec_writer__string(w, "solve");
	rsolve = rec_writer__frame(w, REC_FRAME_REGION, 0, solve, 0);
	rstep = rec_writer__frame(w, REC_FRAME_REGION, 0, rec_writer__string(w, "step"), 0);
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x10);
	assert_int_equal(rec_writer__frame(w, REC_FRAME_REGION, 0, solve, 0), rsolve);
	/* Same name, another kind: another frame. */
	assert_int_not_equal(rec_writer__frame(w, REC_FRAME_USER, 0, solve, 0), rsolve);
	frames[0] = rsolve;
	frames[1] = rstep;
	frames[2] = fmain;
	assert_int_equal(rec_writer__sample(w, 3, 4, 9, 0, frames, 3), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_frame(r, rsolve, REC_FRAME_REGION, "", "solve", 0);
	assert_frame(r, rstep, REC_FRAME_REGION, "", "step", 0);
	assert_frame(r, fmain, REC_FRAME_USER, "/bin/app", "main", 0x10);
	assert_int_equal(r->nsamples, 1);
	assert_sample(&r->samples[0], 3, 4, 9, 0, &fmain, 1);
	assert_int_equal(r->samples[0].nregions, 2);
	assert_string_equal(recording__string(r, r->samples[0].regions[0]), "solve");
	assert_string_equal(recording__string(r, r->samples[0].regions[1]), "step");
	recording__free(r);
}

/* A recording whose only sample has no stack at all (both stacks lost) loads with nothing to point
 * at: no pool is ever made (clang's UBSan in make fuzz once saw NULL + 0 here). */
static void sample_without_any_frame_loads(void **state)
{
	const char *path = tmp_path("noframes.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;

	(void)state;
	assert_non_null(w);
	assert_int_equal(rec_writer__sample(w, 1, 2, 3, REC_SAMPLE_USER_LOST, NULL, 0), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsamples, 1);
	assert_sample(&r->samples[0], 1, 2, 3, REC_SAMPLE_USER_LOST, NULL, 0);
	assert_int_equal(r->samples[0].nregions, 0);
	recording__free(r);
}

/* What a sample carries as regions is written as region frames at the root of its stack: the
 * bytes a writer of region frames wrote (format versions 2 and 3), so either loads the same. */
static void sample_regions_are_stored_as_region_frames(void **state)
{
	const char *path = tmp_path("rfield.data");
	struct rec_writer *w = rec_writer__open(path);
	struct recording *r = NULL;
	uint32_t mod, names[3], fmain, fwork, frames[2];
	struct rec_sample in = {.pid = 5, .tid = 6, .count = 3, .flags = REC_SAMPLE_TRUNCATED};

	(void)state;
	assert_non_null(w);
	mod = rec_writer__string(w, "/bin/app");
	names[0] = rec_writer__string(w, "solve");
	names[1] = rec_writer__string(w, "step");
	names[2] = names[0]; /* recursion: the same name twice */
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x10);
	fwork = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "work"), 0x20);
	frames[0] = fmain;
	frames[1] = fwork;
	in.regions = names;
	in.nregions = 3;
	in.frames = frames;
	in.nframes = 2;
	assert_int_equal(rec_writer__add_sample(w, &in), 0);
	names[1] = 0; /* a region named nothing: refused */
	assert_int_equal(rec_writer__add_sample(w, &in), -EINVAL);
	names[1] = 99;
	assert_int_equal(rec_writer__add_sample(w, &in), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nsamples, 1);
	assert_sample(&r->samples[0], 5, 6, 3, REC_SAMPLE_TRUNCATED, frames, 2);
	assert_int_equal(r->samples[0].nregions, 3);
	assert_string_equal(recording__string(r, r->samples[0].regions[0]), "solve");
	assert_string_equal(recording__string(r, r->samples[0].regions[1]), "step");
	assert_string_equal(recording__string(r, r->samples[0].regions[2]), "solve");
	/* On disk: two region frames, after the function frames that were defined first. */
	assert_int_equal(r->nframes, 4);
	assert_frame(r, 2, REC_FRAME_REGION, "", "solve", 0);
	assert_frame(r, 3, REC_FRAME_REGION, "", "step", 0);
	recording__free(r);
}

/* ---- version 4: the time axis ---- */

/* Strings 1 "/bin/app", 2 "main", 3 "work", 4 "leaf", 5 "solve"; frames 0 main, 1 work, 2 leaf. */
static void define_app(struct rec_writer *w)
{
	uint32_t app = rec_writer__string(w, "/bin/app");

	assert_int_equal(
		rec_writer__frame(w, REC_FRAME_USER, app, rec_writer__string(w, "main"), 0x10), 0);
	assert_int_equal(
		rec_writer__frame(w, REC_FRAME_USER, app, rec_writer__string(w, "work"), 0x20), 1);
	assert_int_equal(
		rec_writer__frame(w, REC_FRAME_USER, app, rec_writer__string(w, "leaf"), 0x30), 2);
	assert_int_equal(rec_writer__string(w, "solve"), 5);
}

static uint64_t window_total(const struct recording *r, uint32_t sample)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->nwindows; i++)
		for (uint32_t j = 0; j < r->windows[i].ncounts; j++)
			sum += r->windows[i].counts[j].sample == sample
				       ? r->windows[i].counts[j].count
				       : 0;
	return sum;
}

static void write_time_axis(const char *path)
{
	static const uint32_t ab[] = {0, 1}, abc[] = {0, 1, 2};
	static const uint32_t solve[] = {5};
	struct rec_sample s = {.pid = 9, .tid = 10, .count = 3, .nframes = 3, .frames = abc};
	struct rec_span begin = {9, 10, 1000, REC_SPAN_BEGIN, 5, 42};
	struct rec_span end = {9, 10, 1500, REC_SPAN_END, 5, 0};
	struct rec_writer *w = rec_writer__open(path);
	uint32_t key = 99;

	assert_non_null(w);
	define_app(w);
	assert_int_equal(rec_writer__add_sample(w, &s), 0);
	assert_int_equal(rec_writer__sample(w, 9, 11, 2, 0, ab, 2), 0);
	assert_int_equal(rec_writer__window(w, 1000, 2000), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	s.count = 4;
	s.nregions = 1;
	s.regions = solve;
	assert_int_equal(rec_writer__add_sample(w, &s), 0); /* a new key: same stack, in solve */
	s.nregions = 0;
	s.count = 5;
	assert_int_equal(rec_writer__add_sample(w, &s), 0);
	assert_int_equal(rec_writer__window(w, 2000, 3500), 0);
	assert_int_equal(rec_writer__window(w, 1000, 1100), -EINVAL); /* back in time */
	assert_int_equal(rec_writer__key(w, &s, &key), 0);
	assert_int_equal(key, 0);
	assert_int_equal(rec_writer__event(w, 2500, 1), 0);
	assert_int_equal(rec_writer__event(w, 2400, key), 0); /* a little out of order */
	assert_int_equal(rec_writer__event(w, 2600, 7), -EINVAL);
	assert_int_equal(rec_writer__span(w, &begin), 0);
	assert_int_equal(rec_writer__span(w, &end), 0);
	end.name = 0;
	assert_int_equal(rec_writer__span(w, &end), -EINVAL);
	assert_int_equal(rec_writer__module(w, 1, "00ff12"), 0);
	assert_int_equal(rec_writer__module(w, 1, "abcd"), 0); /* once per module */
	assert_int_equal(rec_writer__module(w, 77, "abcd"), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
}

/* GPU entries of every kind (a NOTE too), in two flushes (two GPU blocks, each starting its
 * time deltas from 0), with the compaction at close copying the blocks as they are. */
static void write_gpu(const char *path)
{
	struct rec_writer *w = rec_writer__open(path);
	uint32_t spin, note;
	struct rec_gpu k, api, copy, orphan, bad;

	assert_non_null(w);
	spin = rec_writer__string(w, "spin_a");
	note = rec_writer__string(w, "CUPTI is in use by Nsight Systems (error 39)");
	api = (struct rec_gpu){.kind = REC_GPU_API,
			       .start_ns = 5000000000ull,
			       .end_ns = 5000002000ull,
			       .detail = 211,
			       .correlation = 1,
			       .flags = REC_GPU_F_LAUNCH,
			       .pid = 40,
			       .tid = 41,
			       .launch_ns = 5000002000ull};
	k = (struct rec_gpu){.kind = REC_GPU_KERNEL,
			     .start_ns = 5000010000ull,
			     .end_ns = 5001010000ull,
			     .device = 1,
			     .stream = 7,
			     .bytes = 32,
			     .name = spin,
			     .correlation = 1,
			     .flags = REC_GPU_F_GRAPH,
			     .graph = 3,
			     .pid = 40,
			     .tid = 41,
			     .launch_ns = 5000002000ull};
	copy = (struct rec_gpu){.kind = REC_GPU_MEMCPY,
				.start_ns = 4999000000ull,
				.end_ns = 4999001800ull,
				.stream = 2,
				.bytes = 1 << 20,
				.detail = REC_GPU_COPY_HTOD,
				.correlation = 2,
				.pid = 40};
	orphan = (struct rec_gpu){.kind = REC_GPU_KERNEL,
				  .start_ns = 6000000000ull,
				  .end_ns = 6000000500ull,
				  .name = spin,
				  .correlation = 9,
				  .pid = 40};
	assert_int_equal(rec_writer__gpu(w, &api), 0);
	assert_int_equal(rec_writer__gpu(w, &k), 0);
	assert_int_equal(rec_writer__gpu(w, &copy), 0); /* earlier than the one before it */
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__gpu(w, &(struct rec_gpu){.kind = REC_GPU_NOTE, .name = note}),
			 0);
	assert_int_equal(rec_writer__gpu(w, &orphan), 0);
	bad = orphan;
	bad.kind = 7;
	assert_int_equal(rec_writer__gpu(w, &bad), -EINVAL);
	bad = orphan;
	bad.end_ns = bad.start_ns - 1;
	assert_int_equal(rec_writer__gpu(w, &bad), -EINVAL);
	bad = orphan;
	bad.name = 999;
	assert_int_equal(rec_writer__gpu(w, &bad), -EINVAL);
	assert_int_equal(rec_writer__gpu(w, &(struct rec_gpu){.kind = REC_GPU_NOTE}), -EINVAL);
	assert_int_equal(rec_writer__close(w), 0);
}

static void gpu_round_trips(void **state)
{
	const char *path = tmp_path("gpu.data");
	struct recording *r;
	const struct rec_gpu *g;

	(void)state;
	write_gpu(path);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->version, 4);
	assert_int_equal(r->ngpu, 4);
	assert_int_equal(r->ngpu_notes, 1);
	assert_string_equal(recording__string(r, r->gpu_notes[0]),
			    "CUPTI is in use by Nsight Systems (error 39)");
	g = &r->gpu[0];
	assert_int_equal(g->kind, REC_GPU_API);
	assert_int_equal(g->start_ns, 5000000000ull);
	assert_int_equal(g->end_ns, 5000002000ull);
	assert_int_equal(g->detail, 211);
	assert_int_equal(g->flags, REC_GPU_F_LAUNCH);
	assert_int_equal(g->tid, 41);
	g = &r->gpu[1];
	assert_int_equal(g->kind, REC_GPU_KERNEL);
	assert_string_equal(recording__string(r, g->name), "spin_a");
	assert_int_equal(g->start_ns, 5000010000ull);
	assert_int_equal(g->end_ns, 5001010000ull);
	assert_int_equal(g->device, 1);
	assert_int_equal(g->stream, 7);
	assert_int_equal(g->bytes, 32);
	assert_int_equal(g->correlation, 1);
	assert_int_equal(g->flags, REC_GPU_F_GRAPH);
	assert_int_equal(g->graph, 3);
	assert_int_equal(g->pid, 40);
	assert_int_equal(g->tid, 41);
	assert_int_equal(g->launch_ns, 5000002000ull);
	g = &r->gpu[2];
	assert_int_equal(g->kind, REC_GPU_MEMCPY);
	assert_int_equal(g->start_ns, 4999000000ull);
	assert_int_equal(g->end_ns - g->start_ns, 1800);
	assert_int_equal(g->bytes, 1 << 20);
	assert_int_equal(g->detail, REC_GPU_COPY_HTOD);
	assert_int_equal(g->tid, 0);
	assert_int_equal(g->launch_ns, 0);
	g = &r->gpu[3];
	assert_int_equal(g->start_ns, 6000000000ull);
	assert_int_equal(g->correlation, 9);
	assert_int_equal(g->tid, 0);
	recording__free(r);
}

/* A GPU entry of a kind from a later perch is skipped, the rest of its block kept; a damaged
 * GPU block drops only itself. */
/* A launch's stack (a key with no count, as perch record --gpu writes it from its uprobe) goes
 * in as a LAUNCH entry after the activities it explains, and loads as the launch_key of every
 * entry of its (pid, correlation): the API call and its kernel, not the copy of another id. A
 * LAUNCH entry naming no key is refused; LAUNCH entries load as no entry of their own. */
static void gpu_launch_entry_loads_as_launch_key(void **state)
{
	static const uint32_t abc[] = {0, 1, 2}, solve[] = {5};
	const char *path = tmp_path("launch.data");
	struct rec_writer *w = rec_writer__open(path);
	struct rec_sample s = {
		.pid = 40, .tid = 41, .nregions = 1, .regions = solve, .nframes = 3, .frames = abc};
	struct rec_gpu api = {.kind = REC_GPU_API,
			      .start_ns = 100,
			      .end_ns = 200,
			      .correlation = 1,
			      .flags = REC_GPU_F_LAUNCH,
			      .pid = 40,
			      .tid = 41,
			      .launch_ns = 200};
	struct rec_gpu k = {.kind = REC_GPU_KERNEL,
			    .start_ns = 300,
			    .end_ns = 1300,
			    .correlation = 1,
			    .pid = 40,
			    .tid = 41,
			    .launch_ns = 200};
	struct rec_gpu copy = {.kind = REC_GPU_MEMCPY,
			       .start_ns = 400,
			       .end_ns = 500,
			       .correlation = 2,
			       .pid = 40};
	struct rec_gpu launch = {.kind = REC_GPU_LAUNCH,
				 .start_ns = 200,
				 .end_ns = 200,
				 .correlation = 1,
				 .pid = 40,
				 .tid = 41,
				 .launch_ns = 200};
	struct recording *r;
	uint32_t key = 99;

	(void)state;
	assert_non_null(w);
	define_app(w);
	assert_int_equal(rec_writer__sample(w, 40, 41, 7, 0, abc, 2), 0); /* key 0: counted */
	assert_int_equal(rec_writer__key(w, &s, &key), 0);
	assert_int_equal(key, 1);
	assert_int_equal(rec_writer__window(w, 0, 1000), 0);
	assert_int_equal(rec_writer__gpu(w, &api), 0);
	assert_int_equal(rec_writer__gpu(w, &k), 0);
	assert_int_equal(rec_writer__gpu(w, &copy), 0);
	launch.detail = 2;
	assert_int_equal(rec_writer__gpu(w, &launch), -EINVAL); /* no key 2 */
	launch.detail = key;
	assert_int_equal(rec_writer__gpu(w, &launch), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->ngpu, 3);
	assert_int_equal(r->nsamples, 2);
	assert_int_equal(r->samples[1].count, 0);
	assert_int_equal(r->samples[1].nregions, 1);
	assert_int_equal(r->gpu[0].launch_key, 2); /* samples[1] */
	assert_int_equal(r->gpu[1].launch_key, 2);
	assert_int_equal(r->gpu[2].launch_key, 0);
	recording__free(r);
}

/* Attach mode's libcuda calls (perch record --gpu -p): CALL entries load into gpu_calls, not
 * gpu (which the CUPTI tables read), each with its fields and the launch_key of the key it names
 * (a key with no count); a CALL naming no key is refused. */
static void gpu_call_entry_loads_into_gpu_calls(void **state)
{
	static const uint32_t abc[] = {0, 1, 2}, io[] = {5};
	const char *path = tmp_path("calls.data");
	struct rec_writer *w = rec_writer__open(path);
	struct rec_sample s = {
		.pid = 40, .tid = 41, .nregions = 1, .regions = io, .nframes = 3, .frames = abc};
	struct rec_gpu launch = {.kind = REC_GPU_CALL,
				 .start_ns = 200,
				 .end_ns = 200,
				 .correlation = 2, /* the entry point's index */
				 .flags = REC_GPU_F_LAUNCH,
				 .bytes = 0x55aa00001230ull, /* the CUfunction handle */
				 .pid = 40,
				 .tid = 41,
				 .launch_ns = 200};
	struct rec_gpu copy = {.kind = REC_GPU_CALL,
			       .start_ns = 150,
			       .end_ns = 150,
			       .correlation = 10,
			       .flags = REC_GPU_F_COPY,
			       .stream = REC_GPU_COPY_DTOH,
			       .bytes = 12345,
			       .pid = 40,
			       .tid = 42,
			       .launch_ns = 150};
	struct recording *r;
	uint32_t key = 99;

	(void)state;
	assert_non_null(w);
	define_app(w);
	assert_int_equal(rec_writer__sample(w, 40, 41, 7, 0, abc, 2), 0); /* key 0: counted */
	assert_int_equal(rec_writer__key(w, &s, &key), 0);
	assert_int_equal(key, 1);
	assert_int_equal(rec_writer__window(w, 0, 1000), 0);
	launch.name = rec_writer__string(w, "kernel_a");
	launch.detail = 2;
	assert_int_equal(rec_writer__gpu(w, &launch), -EINVAL); /* no key 2 */
	launch.detail = copy.detail = key;
	assert_int_equal(rec_writer__gpu(w, &launch), 0);
	assert_int_equal(rec_writer__gpu(w, &copy), 0); /* earlier than the one before it */
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->ngpu, 0);
	assert_int_equal(r->ngpu_calls, 2);
	assert_int_equal(r->gpu_calls[0].launch_key, 2); /* samples[1] */
	assert_int_equal(r->samples[1].count, 0);
	assert_int_equal(r->gpu_calls[0].flags, REC_GPU_F_LAUNCH);
	assert_int_equal(r->gpu_calls[0].correlation, 2);
	assert_int_equal(r->gpu_calls[0].bytes, 0x55aa00001230ull);
	assert_string_equal(recording__string(r, r->gpu_calls[0].name), "kernel_a");
	assert_int_equal(r->gpu_calls[0].start_ns, 200);
	assert_int_equal(r->gpu_calls[1].launch_key, 2);
	assert_int_equal(r->gpu_calls[1].start_ns, 150);
	assert_int_equal(r->gpu_calls[1].flags, REC_GPU_F_COPY);
	assert_int_equal(r->gpu_calls[1].stream, REC_GPU_COPY_DTOH);
	assert_int_equal(r->gpu_calls[1].bytes, 12345);
	assert_int_equal(r->gpu_calls[1].tid, 42);
	recording__free(r);
}

static void gpu_unknown_kind_is_skipped_damage_is_ebadmsg(void **state)
{
	static const uint8_t later[14] = {42}; /* kind 42, then 13 zero varints */
	static const uint8_t sync[14] = {REC_GPU_SYNC, 10 /* sleb 5 */, 4 /* 4 ns */};
	struct recording *r;
	struct raw b, p = {.len = 0};

	(void)state;
	raw_header(&b, PERCH_FILE_VERSION);
	raw_strings_frames(&b);
	raw_u32(&p, 2);
	raw_bytes(&p, later, sizeof(later));
	raw_bytes(&p, sync, sizeof(sync));
	raw_block(&b, REC_GPU, &p);
	p.len = 0;
	raw_u32(&p, 1);
	raw_bytes(&p, sync, 5); /* cut short */
	raw_block(&b, REC_GPU, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->ngpu, 1);
	assert_int_equal(r->gpu[0].kind, REC_GPU_SYNC);
	assert_int_equal(r->gpu[0].start_ns, 5);
	assert_int_equal(r->gpu[0].end_ns, 9);
	recording__free(r);
}

static void assert_time_axis_samples(const struct recording *r)
{
	static const uint32_t abc[] = {0, 1, 2};

	assert_int_equal(r->version, 4);
	assert_int_equal(r->nsamples, 3); /* one per key */
	assert_sample(&r->samples[0], 9, 10, 3 + 5, 0, abc, 3);
	assert_int_equal(r->samples[1].tid, 11);
	assert_int_equal(r->samples[1].count, 2);
	assert_int_equal(r->samples[2].count, 4);
	assert_int_equal(r->samples[2].nregions, 1);
	assert_string_equal(recording__string(r, r->samples[2].regions[0]), "solve");
	assert_int_equal(r->samples[2].nframes, 3);
	for (uint32_t i = 0; i < r->nsamples; i++)
		assert_int_equal(window_total(r, i), r->samples[i].count);
}

static void time_axis_round_trips(void **state)
{
	const char *path = tmp_path("time.data");
	struct recording *r;

	(void)state;
	write_time_axis(path);
	assert_int_equal(recording__load(path, &r), 0);
	assert_time_axis_samples(r);
	assert_int_equal(r->nwindows, 2);
	assert_int_equal(r->windows[0].start_ns, 1000);
	assert_int_equal(r->windows[0].end_ns, 2000);
	assert_int_equal(r->windows[0].ncounts, 2);
	assert_int_equal(r->windows[0].counts[0].sample, 0);
	assert_int_equal(r->windows[0].counts[1].sample, 1);
	assert_int_equal(r->windows[1].start_ns, 2000);
	assert_int_equal(r->windows[1].end_ns, 3500);
	assert_int_equal(r->windows[1].ncounts, 2);
	assert_int_equal(r->windows[1].counts[0].count, 5);
	assert_int_equal(r->windows[1].counts[1].sample, 2);
	assert_int_equal(r->nevents, 2);
	assert_int_equal(r->events[0].time_ns, 2400);
	assert_int_equal(r->events[0].sample, 0);
	assert_int_equal(r->events[1].time_ns, 2500);
	assert_int_equal(r->events[1].sample, 1);
	assert_int_equal(r->nspans, 2);
	assert_int_equal(r->spans[0].pid, 9);
	assert_int_equal(r->spans[0].tid, 10);
	assert_int_equal(r->spans[0].time_ns, 1000);
	assert_int_equal(r->spans[0].kind, REC_SPAN_BEGIN);
	assert_string_equal(recording__string(r, r->spans[0].name), "solve");
	assert_int_equal(r->spans[0].size, 42);
	assert_int_equal(r->spans[1].time_ns, 1500);
	assert_int_equal(r->spans[1].kind, REC_SPAN_END);
	assert_int_equal(r->nmodules, 1);
	assert_string_equal(recording__string(r, r->modules[0].path), "/bin/app");
	assert_string_equal(recording__string(r, r->modules[0].build_id), "00ff12");
	recording__free(r);
}

/* a b^k c for k = 1..depth: one node a depth in STACKS, not a stack. */
static void recursion_of_varying_depth_stores_a_node_a_level(void **state)
{
	const char *path = tmp_path("deep.data");
	struct rec_writer *w = rec_writer__open(path);
	uint32_t stack[202];
	struct recording *r;
	struct layout l;
	uint8_t *data;
	size_t len;

	(void)state;
	assert_non_null(w);
	define_app(w);
	for (int round = 0; round < 3; round++) {
		for (uint32_t k = 1; k <= 200; k++) {
			stack[0] = 0;
			for (uint32_t i = 1; i <= k; i++)
				stack[i] = 1;
			stack[k + 1] = 2;
			assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, stack, k + 2), 0);
		}
		assert_int_equal(rec_writer__window(w, round * 100, round * 100 + 100), 0);
	}
	assert_int_equal(rec_writer__close(w), 0);
	data = read_bytes(path, &len);
	layout_of(data, len, &l);
	assert_int_equal(sum_n(&l, l.nblocks, REC_STACKS), 1 + 200 + 200);
	assert_int_equal(sum_n(&l, l.nblocks, REC_KEYS), 200);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->samples[199].nframes, 202);
	assert_int_equal(r->samples[199].frames[201], 2);
	assert_int_equal(r->samples[199].frames[200], 1);
	assert_int_equal(r->samples[199].count, 3);
	free(data);
	recording__free(r);
}

/* Windows past the budget merge pairwise: never more than the budget, the time axis whole and
 * every key's total exact. */
static void windows_merge_past_the_budget_keeping_totals(void **state)
{
	const char *path = tmp_path("merge.data");
	struct rec_writer *w = rec_writer__open(path);
	uint64_t want[3] = {0};
	struct recording *r;
	uint32_t f[] = {0, 1, 2};

	(void)state;
	assert_non_null(w);
	define_app(w);
	assert_int_equal(rec_writer__window_budget(w, 1), -EINVAL);
	assert_int_equal(rec_writer__window_budget(w, 8), 0);
	for (uint32_t i = 0; i < 101; i++) {
		for (uint32_t k = 0; k < 3; k++) {
			if ((i + k) % 3 == 0)
				continue;
			assert_int_equal(rec_writer__sample(w, 1, 1, i + k, 0, f, k + 1), 0);
			want[k] += i + k;
		}
		assert_int_equal(rec_writer__window(w, 1000 + i * 10, 1000 + i * 10 + 10), 0);
	}
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_true(r->nwindows >= 4 && r->nwindows <= 8);
	assert_int_equal(r->windows[0].start_ns, 1000);
	assert_int_equal(r->windows[r->nwindows - 1].end_ns, 1000 + 101 * 10);
	for (size_t i = 1; i < r->nwindows; i++)
		assert_int_equal(r->windows[i].start_ns, r->windows[i - 1].end_ns);
	/* full windows hold 16 drains (101 drains in at most 8 windows) */
	assert_int_equal(r->windows[0].end_ns - r->windows[0].start_ns, 160);
	assert_int_equal(r->nsamples, 3);
	for (uint32_t i = 0; i < 3; i++) { /* the keys in the order they came: k = 1, 2, 0 */
		uint32_t k = r->samples[i].nframes - 1;

		assert_int_equal(r->samples[i].count, want[k]);
		assert_int_equal(window_total(r, i), want[k]);
	}
	recording__free(r);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *data = read_bytes(from, &len);

	write_bytes(to, data, len);
	free(data);
}

/* One drain of the compaction test: many keys, so the tail passes 64 KiB now and then. */
static void drain_many_keys(struct rec_writer *w, uint32_t i, uint64_t *total)
{
	uint32_t f[] = {0, 1};
	struct rec_kv stats[] = {{.key = "drains", .value = i}};

	for (uint32_t tid = 0; tid < 400; tid++) {
		assert_int_equal(rec_writer__sample(w, 1, tid, 1 + (tid + i) % 7, 0, f, 2), 0);
		*total += 1 + (tid + i) % 7;
	}
	assert_int_equal(rec_writer__window(w, i * 100, i * 100 + 100), 0);
	assert_int_equal(rec_writer__flush(w), 0);
	assert_int_equal(rec_writer__stats(w, stats, 1), 0);
}

static uint64_t loaded_total(const struct recording *r)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		sum += r->samples[i].count;
	return sum;
}

/* A perch killed at any instant leaves a complete recording: copy the file after every flush
 * (what a kill would leave), load it, and find every count flushed so far. */
static void compaction_leaves_a_whole_recording_after_every_flush(void **state)
{
	const char *path = tmp_path("compact.data"), *kill = tmp_path("killed.data");
	struct rec_writer *w = open_named(path);
	uint64_t total = 0, max_size = 0, final_size;
	struct recording *r;
	struct stat st;

	(void)state;
	assert_non_null(w);
	define_app(w);
	assert_int_equal(rec_writer__window_budget(w, 16), 0);
	for (uint32_t i = 0; i < 300; i++) {
		drain_many_keys(w, i, &total);
		copy_file(path, kill);
		assert_int_equal(recording__load(kill, &r), 0);
		assert_int_equal(loaded_total(r), total);
		assert_int_equal(r->windows[r->nwindows - 1].end_ns, i * 100 + 100);
		recording__free(r);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal((uint64_t)st.st_size, rec_writer__size(w));
		max_size = st.st_size > (off_t)max_size ? (uint64_t)st.st_size : max_size;
	}
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	final_size = st.st_size;
	assert_int_not_equal(access(tmp_path("compact.data.tmp"), F_OK), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(loaded_total(r), total);
	assert_true(r->nwindows <= 16);
	assert_true(recording__stat(r, "drains", NULL));
	/* bounded: 300 drains of ~2.4 KB would be 700 KB appended */
	assert_true(final_size < 80 * 1024);
	assert_true(max_size < 3 * 80 * 1024);
	recording__free(r);
}

/* The cap drops events and spans (counted) and nothing else. */
static void timeline_cap_drops_and_counts(void **state)
{
	const char *path = tmp_path("cap.data");
	struct rec_writer *w = rec_writer__open(path);
	struct rec_span mark = {1, 1, 0, REC_SPAN_MARK, 5, 0};
	uint32_t f = 0, key;
	struct recording *r;
	int kept = 0, err;

	(void)state;
	assert_non_null(w);
	define_app(w);
	rec_writer__max_size(w, 64);
	assert_int_equal(rec_writer__sample(w, 1, 1, 1, 0, &f, 1), 0);
	assert_int_equal(
		rec_writer__key(
			w, &(struct rec_sample){.pid = 1, .tid = 1, .nframes = 1, .frames = &f},
			&key),
		0);
	for (int i = 0; i < 100; i++) {
		err = rec_writer__event(w, 1000 + i, key);
		assert_true(err == 0 || err == -ENOSPC);
		kept += !err;
	}
	assert_int_equal(rec_writer__span(w, &mark), -ENOSPC);
	assert_true(kept > 10 && kept < 64);
	assert_int_equal(rec_writer__events_dropped(w), 100 - kept);
	assert_int_equal(rec_writer__spans_dropped(w), 1);
	assert_int_equal(rec_writer__window(w, 0, 5000), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nevents, kept);
	assert_int_equal(r->nspans, 0);
	assert_int_equal(r->nwindows, 1);
	assert_int_equal(r->samples[0].count, 1);
	recording__free(r);
}

/* A FIFO or device is streamed: nothing is compacted (and nothing read back). */
static void stream_output_is_never_compacted(void **state)
{
	struct rec_writer *w = rec_writer__open("/dev/null");
	uint32_t f = 0;

	(void)state;
	assert_non_null(w);
	define_app(w);
	for (uint32_t i = 0; i < 3000; i++) {
		assert_int_equal(rec_writer__sample(w, 1, i, 1, 0, &f, 1), 0);
		assert_int_equal(rec_writer__window(w, i, i + 1), 0);
		assert_int_equal(rec_writer__flush(w), 0);
	}
	assert_true(rec_writer__size(w) > 64 * 1024);
	assert_int_equal(rec_writer__close(w), 0);
}

static void old_versions_in_the_corpus_still_load(void **state)
{
	static const char *const files[] = {"tests/corpus/shares.data",
					    "tests/corpus/recursion-dwarf.data",
					    "tests/corpus/regions-share.data"};
	struct recording *r;

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		assert_int_equal(recording__load(files[i], &r), 0);
		assert_true(r->version < 4);
		assert_true(r->nsamples > 0);
		assert_int_equal(r->nwindows + r->nevents + r->nspans + r->nmodules, 0);
		recording__free(r);
	}
}

/* STRINGS, FRAMES (raw_strings_frames), STACKS of one node, KEYS of one key on it. */
static void raw_v4_defs(struct raw *b)
{
	struct raw p = {.len = 0};

	raw_header(b, 4);
	raw_strings_frames(b);
	raw_u32(&p, 1);
	raw_u8(&p, 0); /* a root */
	raw_u8(&p, 0); /* frame 0 */
	raw_block(b, REC_STACKS, &p);
	p.len = 0;
	raw_u32(&p, 1);
	raw_u8(&p, 5);
	raw_u8(&p, 6);
	raw_u8(&p, 0);
	raw_u8(&p, 0);
	raw_u8(&p, 1); /* node 0 */
	raw_block(b, REC_KEYS, &p);
}

/* One window [start, start + 10) with the given key and count. */
static void raw_window(struct raw *b, uint8_t start, uint8_t key, uint8_t count)
{
	struct raw p = {.len = 0};

	raw_u32(&p, 1);
	raw_u8(&p, start);
	raw_u8(&p, 10);
	raw_u8(&p, 1);
	raw_u8(&p, key);
	raw_u8(&p, count);
	raw_block(b, REC_WINDOWS, &p);
}

static void load_bad_time_axis_blocks_are_ebadmsg_keeping_earlier_blocks(void **state)
{
	struct raw b, p = {.len = 0};
	struct recording *r;

	(void)state;
	raw_v4_defs(&b);
	raw_window(&b, 50, 0, 3);
	assert_int_equal(load_raw(&b, &r), 0);
	assert_int_equal(r->nsamples, 1);
	assert_int_equal(r->samples[0].pid, 5);
	assert_int_equal(r->samples[0].count, 3);
	assert_int_equal(r->windows[0].start_ns, 50);
	assert_int_equal(r->windows[0].end_ns, 60);
	recording__free(r);

	raw_window(&b, 0, 1, 4); /* key 1 undefined */
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nwindows, 1);
	assert_int_equal(r->samples[0].count, 3);
	recording__free(r);

	raw_v4_defs(&b);
	raw_u32(&p, 1);
	raw_u8(&p, 3); /* parent node 2: undefined */
	raw_u8(&p, 0);
	raw_block(&b, REC_STACKS, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nsamples, 1);
	assert_int_equal(r->samples[0].nframes, 1);
	recording__free(r);

	raw_v4_defs(&b);
	p.len = 0;
	raw_u32(&p, 1);
	raw_bytes(&p, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10); /* past 64 bits */
	raw_u8(&p, 0);
	raw_block(&b, REC_TIMELINE, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nevents, 0);
	recording__free(r);

	raw_v4_defs(&b);
	p.len = 0;
	raw_u32(&p, 1);
	raw_bytes(&p, "\x01\x01\x02\x07\x01\x00", 6); /* kind 7 */
	raw_block(&b, REC_SPANS, &p);
	assert_int_equal(load_raw(&b, &r), -EBADMSG);
	assert_int_equal(r->nspans, 0);
	recording__free(r);
}

/* A version 3 file with a block numbered like version 4's loads as version 3 did: skipped. */
static void version_3_skips_time_axis_block_numbers(void **state)
{
	struct raw b, p = {.len = 0};
	struct recording *r;

	(void)state;
	raw_header(&b, 3);
	raw_strings_frames(&b);
	raw_u32(&p, 1);
	raw_u8(&p, 9);
	raw_u8(&p, 9);
	raw_block(&b, REC_STACKS, &p);
	raw_sample_payload_v(&p, 3, 0, 1, 0);
	raw_block(&b, REC_SAMPLES, &p);
	assert_int_equal(load_raw(&b, &r), 0);
	assert_int_equal(r->nsamples, 1);
	recording__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip_keeps_every_block_type_exact),
		cmocka_unit_test(lines_round_trip_and_later_chain_replaces),
		cmocka_unit_test(load_lines_for_undefined_frame_is_ebadmsg),
		cmocka_unit_test(writer_size_counts_every_byte_written),
		cmocka_unit_test(writer_dedups_strings_and_frames),
		cmocka_unit_test(stats_blocks_hold_only_changed_counters),
		cmocka_unit_test(samples_carry_their_thread_name_and_version_2_still_loads),
		cmocka_unit_test(writer_dedups_many_strings_through_table_growth),
		cmocka_unit_test(writer_rejects_undefined_ids),
		cmocka_unit_test(load_keeps_last_thread_definition),
		cmocka_unit_test(flush_writes_blocks_in_dependency_order),
		cmocka_unit_test(writer_cuts_large_pending_data_into_blocks),
		cmocka_unit_test(load_cut_at_every_length_keeps_complete_blocks),
		cmocka_unit_test(load_flipped_payload_byte_is_ebadmsg_keeping_earlier_blocks),
		cmocka_unit_test(load_nonzero_reserved_field_is_ebadmsg),
		cmocka_unit_test(load_zero_filled_tail_is_ebadmsg_keeping_the_blocks_before),
		cmocka_unit_test(load_refuses_fifos_and_devices),
		cmocka_unit_test(load_wrong_magic_is_eproto),
		cmocka_unit_test(load_later_version_is_eprotonosupport),
		cmocka_unit_test(load_missing_file_is_enoent),
		cmocka_unit_test(load_sample_with_undefined_frame_is_ebadmsg),
		cmocka_unit_test(load_frame_with_undefined_string_leaves_nothing_of_its_block),
		cmocka_unit_test(load_bad_thread_block_leaves_earlier_threads_alone),
		cmocka_unit_test(load_huge_counts_are_ebadmsg),
		cmocka_unit_test(load_trailing_payload_bytes_are_ebadmsg),
		cmocka_unit_test(load_trailing_bytes_after_entries_drop_the_block),
		cmocka_unit_test(load_skips_unknown_block_type),
		cmocka_unit_test(gpu_round_trips),
		cmocka_unit_test(gpu_launch_entry_loads_as_launch_key),
		cmocka_unit_test(gpu_call_entry_loads_into_gpu_calls),
		cmocka_unit_test(gpu_unknown_kind_is_skipped_damage_is_ebadmsg),
		cmocka_unit_test(writer_reports_enospc_when_disk_is_full),
		cmocka_unit_test(writer_never_writes_through_a_symlink),
		cmocka_unit_test(writer_keeps_an_existing_recording_as_old),
		cmocka_unit_test(writer_touches_the_previous_recording_only_once_published),
		cmocka_unit_test(load_without_end_has_null_end),
		cmocka_unit_test(load_empty_end_block_still_marks_finished),
		cmocka_unit_test(lookups_answer_absent_keys_and_ids),
		cmocka_unit_test(regions_round_trip_and_later_thread_replaces),
		cmocka_unit_test(writer_rejects_bad_region_trees),
		cmocka_unit_test(load_bad_regions_block_is_ebadmsg_keeping_earlier_blocks),
		cmocka_unit_test(region_frames_round_trip),
		cmocka_unit_test(sample_regions_are_stored_as_region_frames),
		cmocka_unit_test(sample_without_any_frame_loads),
		cmocka_unit_test(time_axis_round_trips),
		cmocka_unit_test(recursion_of_varying_depth_stores_a_node_a_level),
		cmocka_unit_test(windows_merge_past_the_budget_keeping_totals),
		cmocka_unit_test(compaction_leaves_a_whole_recording_after_every_flush),
		cmocka_unit_test(timeline_cap_drops_and_counts),
		cmocka_unit_test(stream_output_is_never_compacted),
		cmocka_unit_test(old_versions_in_the_corpus_still_load),
		cmocka_unit_test(load_bad_time_axis_blocks_are_ebadmsg_keeping_earlier_blocks),
		cmocka_unit_test(version_3_skips_time_axis_block_numbers),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
