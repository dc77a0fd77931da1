// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording file (see recording.h for the format): the writer the recorder feeds while it
 * samples, and the loader `perch report` reads it back with.
 *
 * The writer owns the tables that deduplicate strings and frames and the pending data of the next
 * flush; every block leaves it in one write(), so a killed recorder leaves whole blocks only.
 * The loader owns everything a loaded recording points to. It trusts no byte of the file: every
 * length, count and id is checked against what the file has defined so far, and a block that
 * fails a check leaves nothing of itself behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "recording.h"
#include "lib/hash.h"
#include "lib/vec.h"

/*
 * The loader refuses blocks over MAX_BLOCK, so a damaged length can't make it allocate gigabytes;
 * the writer cuts pending data into blocks of about CHUNK bytes, far below it.
 */
#define FILE_HDR_SIZE  16
#define BLOCK_HDR_SIZE 16
#define COUNT_SIZE     4
#define MAX_BLOCK      (256u << 20)
#define CHUNK	       (4u << 20)
#define MAX_STRING     (1u << 20)
#define MAX_STACK      (1u << 16)
#define ARENA_CHUNK    (64u << 10)

/* Smallest encoding of one entry of each payload, to bound a count before trusting it. */
#define MIN_STR	    4
#define MIN_FRAME   (1 + 4 + 4 + 8)
#define MIN_THREAD  (4 * 4)
#define MIN_SAMPLE  (4 + 4 + 8 + 4 + 4 + 4) /* version 3; 4 bytes less before (no comm) */
#define MIN_LINES   (4 + 4)
#define MIN_RTHREAD (4 + 4 + 8 + 4)
#define RNODE_SIZE  (4 + 4 + 7 * 8 + 4 + 8)
#define LINE_SIZE   (4 * 3)
#define MAX_LINES   256
#define MIN_KV_STR  (4 + 4)
#define MIN_KV_U64  (4 + 8)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- little-endian encoding, growable buffers ---- */

static void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static uint32_t le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64_get(const uint8_t *p)
{
	return (uint64_t)le32_get(p) | (uint64_t)le32_get(p + 4) << 32;
}

static uint32_t crc_of(const uint8_t *p, size_t len)
{
	return crc32(crc32(0L, Z_NULL, 0), p, len);
}

/* Make room for need elements of elem bytes in *arr, whose capacity is *cap elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	p = reallocarray(*arr, n, elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

struct buf {
	uint8_t *data;
	size_t len, cap;
};

static int buf_reserve(struct buf *b, size_t more)
{
	if (more > SIZE_MAX - b->len)
		return -ENOMEM;
	return grow((void **)&b->data, &b->cap, b->len + more, 1);
}

/* The put_* helpers write into room made by buf_reserve(). */
static void put_bytes(struct buf *b, const void *p, size_t len)
{
	if (len)
		memcpy(b->data + b->len, p, len);
	b->len += len;
}

static void put_u8(struct buf *b, uint8_t v)
{
	b->data[b->len++] = v;
}

static void put_u32(struct buf *b, uint32_t v)
{
	le32_put(b->data + b->len, v);
	b->len += 4;
}

static void put_u64(struct buf *b, uint64_t v)
{
	le64_put(b->data + b->len, v);
	b->len += 8;
}

static int put_str(struct buf *b, const char *s, size_t len)
{
	int err;

	if (len > UINT32_MAX)
		return -E2BIG;
	err = buf_reserve(b, 4 + len);
	if (err)
		return err;
	put_u32(b, len);
	put_bytes(b, s, len);
	return 0;
}

/* ---- hash table of indices into an array the caller owns ---- */

struct slot {
	uint32_t idx1; /* index + 1; 0 marks an empty slot */
	uint32_t hash;
};

struct idx_table {
	struct slot *slots;
	size_t mask;
	size_t count;
};

/* Is element idx of ctx's array equal to key? */
typedef bool (*eq_fn)(const void *ctx, uint32_t idx, const void *key);

static int tab_reserve(struct idx_table *t)
{
	size_t size = t->slots ? (t->mask + 1) * 2 : 64;
	struct slot *slots;

	if (t->slots && (t->count + 1) * 4 <= (t->mask + 1) * 3)
		return 0;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		size_t j = t->slots[i].hash & (size - 1);

		if (!t->slots[i].idx1)
			continue;
		while (slots[j].idx1)
			j = (j + 1) & (size - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

/* The slot holding key, or the empty slot where it belongs. Call tab_reserve() first. */
static struct slot *tab_find(const struct idx_table *t, uint32_t hash, eq_fn eq, const void *ctx,
			     const void *key)
{
	for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
		struct slot *s = &t->slots[i];

		if (!s->idx1 || (s->hash == hash && eq(ctx, s->idx1 - 1, key)))
			return s;
	}
}

static void tab_set(struct idx_table *t, struct slot *s, uint32_t idx, uint32_t hash)
{
	s->idx1 = idx + 1;
	s->hash = hash;
	t->count++;
}

static void tab_free(struct idx_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->count = 0;
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static uint32_t hash_frame(const struct rec_frame *f)
{
	uint64_t ids = (uint64_t)f->module << 32 | f->name;

	return mix64(mix64(ids ^ f->kind) ^ f->offset);
}

static uint32_t hash_thread(uint32_t pid, uint32_t tid)
{
	return mix64((uint64_t)pid << 32 | tid);
}

/* ---- writer ---- */

struct str_ref {
	size_t off; /* in rec_writer.names */
	size_t len;
};

struct str_key {
	const char *s;
	size_t len;
};

struct rec_writer {
	int fd;
	int err; /* the first write error, returned by every call after it */
	uint64_t size;
	struct buf names;     /* the bytes of every string, back to back */
	struct str_ref *strs; /* by id; strs[0] is "" */
	size_t nstrs, cap_strs, strs_done;
	struct rec_frame *frames; /* by id */
	size_t nframes, cap_frames, frames_done;
	struct rec_thread *threads; /* pending */
	size_t nthreads, cap_threads;
	struct buf samples; /* the pending SAMPLES block, header and count included */
	uint32_t nsamples;
	struct buf lines; /* the pending LINES block, header and count included */
	uint32_t nlines;
	struct buf block; /* the block being built; reused */
	struct idx_table str_tab, frame_tab;
	struct rec_kv *stats; /* every counter as the last STATS blocks wrote it (keys copied) */
	size_t nstats, cap_stats;
};

typedef int (*put_fn)(struct rec_writer *w, size_t i);

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Empty b and leave room for the block header and the entry count. */
static int block_start(struct buf *b)
{
	b->len = 0;
	if (buf_reserve(b, BLOCK_HDR_SIZE + COUNT_SIZE))
		return -ENOMEM;
	b->len = BLOCK_HDR_SIZE + COUNT_SIZE;
	return 0;
}

/* Fill in the header and count of the block built in b and write it in one write(). */
static int write_block(struct rec_writer *w, uint32_t type, struct buf *b, size_t n)
{
	size_t plen = b->len - BLOCK_HDR_SIZE;
	int err;

	if (w->err)
		return w->err;
	if (plen > MAX_BLOCK || n > UINT32_MAX)
		return -E2BIG;
	le32_put(b->data + BLOCK_HDR_SIZE, n);
	le32_put(b->data, type);
	le32_put(b->data + 4, plen);
	le32_put(b->data + 8, crc_of(b->data + BLOCK_HDR_SIZE, plen));
	le32_put(b->data + 12, 0);
	err = write_all(w->fd, b->data, b->len);
	if (err) {
		w->err = err;
		return err;
	}
	w->size += b->len;
	return 0;
}

/* Write entries [*done, total) with put, in blocks of about CHUNK bytes. */
static int write_range(struct rec_writer *w, uint32_t type, size_t *done, size_t total, put_fn put)
{
	while (*done < total) {
		size_t i = *done;
		int err = block_start(&w->block);

		for (; !err && i < total && w->block.len < CHUNK; i++)
			err = put(w, i);
		if (!err)
			err = write_block(w, type, &w->block, i - *done);
		if (err)
			return err;
		*done = i;
	}
	return 0;
}

static int put_string(struct rec_writer *w, size_t i)
{
	const struct str_ref *s = &w->strs[i];

	return put_str(&w->block, (const char *)w->names.data + s->off, s->len);
}

static int put_frame(struct rec_writer *w, size_t i)
{
	const struct rec_frame *f = &w->frames[i];

	if (buf_reserve(&w->block, MIN_FRAME))
		return -ENOMEM;
	put_u8(&w->block, f->kind);
	put_u32(&w->block, f->module);
	put_u32(&w->block, f->name);
	put_u64(&w->block, f->offset);
	return 0;
}

static int put_thread(struct rec_writer *w, size_t i)
{
	const struct rec_thread *t = &w->threads[i];

	if (buf_reserve(&w->block, MIN_THREAD))
		return -ENOMEM;
	put_u32(&w->block, t->pid);
	put_u32(&w->block, t->tid);
	put_u32(&w->block, t->ppid);
	put_u32(&w->block, t->comm);
	return 0;
}

static int write_threads(struct rec_writer *w)
{
	size_t done = 0;
	int err;

	err = write_range(w, REC_THREADS, &done, w->nthreads, put_thread);
	if (err)
		return err;
	w->nthreads = 0;
	return 0;
}

static int write_lines(struct rec_writer *w)
{
	int err;

	if (!w->nlines)
		return 0;
	err = write_block(w, REC_LINES, &w->lines, w->nlines);
	if (err)
		return err;
	w->lines.len = 0;
	w->nlines = 0;
	return 0;
}

static int write_samples(struct rec_writer *w)
{
	int err;

	if (!w->nsamples)
		return 0;
	err = write_block(w, REC_SAMPLES, &w->samples, w->nsamples);
	if (err)
		return err;
	w->samples.len = 0;
	w->nsamples = 0;
	return 0;
}

int rec_writer__flush(struct rec_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = write_range(w, REC_STRINGS, &w->strs_done, w->nstrs, put_string);
	if (!err)
		err = write_range(w, REC_FRAMES, &w->frames_done, w->nframes, put_frame);
	if (!err)
		err = write_lines(w);
	if (!err)
		err = write_threads(w);
	if (!err)
		err = write_samples(w);
	return err;
}

/* Move path to path.old. 0 or -errno. */
static int keep_old(const char *path)
{
	size_t len = strlen(path);
	char *old = malloc(len + sizeof(".old"));
	int err = 0;

	if (!old)
		return -ENOMEM;
	memcpy(old, path, len);
	memcpy(old + len, ".old", sizeof(".old"));
	if (rename(path, old))
		err = -errno;
	free(old);
	return err;
}

/* A device or FIFO that is already there (/dev/full, a pipe to a reader) is written as it is,
 * but never a file reached by a race after the lstat(). */
static int open_existing(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return fd;
	close(fd);
	return -EEXIST;
}

/*
 * Never write through what is at path: a symlink planted there (a perch.data in a sticky /tmp,
 * say) would send the recording onto its target. A file or link already there is kept as
 * path.old (perf's way) and the recording is a new file, 0600. Returns the descriptor or -errno.
 */
static int open_new(const char *path)
{
	struct stat st;
	int fd;

	if (!lstat(path, &st)) {
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
			return open_existing(path);
		fd = keep_old(path);
		if (fd)
			return fd;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static int writer_init(struct rec_writer *w, const char *path)
{
	uint8_t hdr[FILE_HDR_SIZE];
	int err;

	err = grow((void **)&w->strs, &w->cap_strs, 1, sizeof(*w->strs));
	if (err)
		return err;
	w->strs[0] = (struct str_ref){0, 0};
	w->nstrs = w->strs_done = 1;
	w->fd = open_new(path);
	if (w->fd < 0)
		return w->fd;
	memcpy(hdr, PERCH_FILE_MAGIC, 8);
	le32_put(hdr + 8, PERCH_FILE_VERSION);
	le32_put(hdr + 12, FILE_HDR_SIZE);
	err = write_all(w->fd, hdr, sizeof(hdr));
	if (err)
		return err;
	w->size = sizeof(hdr);
	return 0;
}

static void writer_free(struct rec_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->names.data);
	free(w->strs);
	free(w->frames);
	free(w->threads);
	free(w->samples.data);
	free(w->lines.data);
	free(w->block.data);
	tab_free(&w->str_tab);
	tab_free(&w->frame_tab);
	for (size_t i = 0; i < w->nstats; i++)
		free(w->stats[i].key);
	free(w->stats);
	free(w);
}

struct rec_writer *rec_writer__open(const char *path)
{
	struct rec_writer *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	err = writer_init(w, path);
	if (err)
		goto err_out;
	return w;
err_out:
	writer_free(w);
	errno = -err;
	return NULL;
}

int rec_writer__close(struct rec_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = rec_writer__flush(w);
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	writer_free(w);
	return err;
}

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rec_writer *w = ctx;
	const struct str_key *k = key;
	const struct str_ref *s = &w->strs[idx];

	return s->len == k->len && !memcmp(w->names.data + s->off, k->s, k->len);
}

/* Also 0 (errno E2BIG) for a string over MAX_STRING: no symbol name comes near it. */
uint32_t rec_writer__string(struct rec_writer *w, const char *s)
{
	struct str_key key = {s, s ? strlen(s) : 0};
	uint32_t hash = hash_bytes(key.s, key.len);
	struct slot *slot;

	if (!w || !key.len)
		return 0;
	if (key.len > MAX_STRING || w->nstrs >= UINT32_MAX) {
		errno = E2BIG;
		return 0;
	}
	if (tab_reserve(&w->str_tab))
		goto err_nomem;
	slot = tab_find(&w->str_tab, hash, str_eq, w, &key);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (grow((void **)&w->strs, &w->cap_strs, w->nstrs + 1, sizeof(*w->strs)) ||
	    buf_reserve(&w->names, key.len))
		goto err_nomem;
	w->strs[w->nstrs] = (struct str_ref){w->names.len, key.len};
	put_bytes(&w->names, key.s, key.len);
	tab_set(&w->str_tab, slot, w->nstrs, hash);
	return w->nstrs++;
err_nomem:
	errno = ENOMEM;
	return 0;
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rec_frame *a = &((const struct rec_writer *)ctx)->frames[idx];
	const struct rec_frame *b = key;

	return a->kind == b->kind && a->module == b->module && a->name == b->name &&
	       a->offset == b->offset;
}

/* Also UINT32_MAX (errno EINVAL) for an unknown kind or an undefined string id. */
uint32_t rec_writer__frame(struct rec_writer *w, uint8_t kind, uint32_t module, uint32_t name,
			   uint64_t offset)
{
	struct rec_frame f = {.kind = kind, .module = module, .name = name, .offset = offset};
	uint32_t hash = hash_frame(&f);
	struct slot *slot;

	if (!w || kind > REC_FRAME_REGION || module >= w->nstrs || name >= w->nstrs) {
		errno = EINVAL;
		return UINT32_MAX;
	}
	if (w->nframes >= UINT32_MAX - 1 || tab_reserve(&w->frame_tab))
		goto err_nomem;
	slot = tab_find(&w->frame_tab, hash, frame_eq, w, &f);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (grow((void **)&w->frames, &w->cap_frames, w->nframes + 1, sizeof(f)))
		goto err_nomem;
	w->frames[w->nframes] = f;
	tab_set(&w->frame_tab, slot, w->nframes, hash);
	return w->nframes++;
err_nomem:
	errno = ENOMEM;
	return UINT32_MAX;
}

int rec_writer__lines(struct rec_writer *w, uint32_t frame, const struct rec_line *lines,
		      uint32_t n)
{
	struct buf *b = w ? &w->lines : NULL;

	if (!w || frame >= w->nframes || n > MAX_LINES || (n && !lines))
		return -EINVAL;
	if (w->err)
		return w->err;
	for (uint32_t i = 0; i < n; i++) {
		if (lines[i].function >= w->nstrs || lines[i].file >= w->nstrs)
			return -EINVAL;
	}
	if (!b->len && block_start(b))
		return -ENOMEM;
	if (buf_reserve(b, MIN_LINES + (size_t)n * LINE_SIZE))
		return -ENOMEM;
	put_u32(b, frame);
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		put_u32(b, lines[i].function);
		put_u32(b, lines[i].file);
		put_u32(b, lines[i].line);
	}
	w->nlines++;
	if (b->len >= CHUNK)
		return rec_writer__flush(w);
	return 0;
}

int rec_writer__thread(struct rec_writer *w, uint32_t pid, uint32_t tid, uint32_t ppid,
		       uint32_t comm)
{
	if (!w || comm >= w->nstrs)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (grow((void **)&w->threads, &w->cap_threads, w->nthreads + 1, sizeof(*w->threads)))
		return -ENOMEM;
	w->threads[w->nthreads++] = (struct rec_thread){pid, tid, ppid, comm};
	return 0;
}

static int check_stack(const struct rec_writer *w, const uint32_t *frames, uint32_t nframes)
{
	if (nframes > MAX_STACK || (nframes && !frames))
		return -EINVAL;
	for (uint32_t i = 0; i < nframes; i++) {
		if (frames[i] >= w->nframes)
			return -EINVAL;
	}
	return 0;
}

int rec_writer__sample(struct rec_writer *w, uint32_t pid, uint32_t tid, uint64_t count,
		       uint32_t flags, const uint32_t *frames, uint32_t nframes)
{
	return rec_writer__sample_named(w, pid, tid, 0, count, flags, frames, nframes);
}

int rec_writer__sample_named(struct rec_writer *w, uint32_t pid, uint32_t tid, uint32_t comm,
			     uint64_t count, uint32_t flags, const uint32_t *frames,
			     uint32_t nframes)
{
	struct buf *b = w ? &w->samples : NULL;
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (comm >= w->nstrs)
		return -EINVAL;
	err = check_stack(w, frames, nframes);
	if (err)
		return err;
	if (!b->len && block_start(b))
		return -ENOMEM;
	if (buf_reserve(b, MIN_SAMPLE + (size_t)nframes * 4))
		return -ENOMEM;
	put_u32(b, pid);
	put_u32(b, tid);
	put_u64(b, count);
	put_u32(b, flags);
	put_u32(b, comm);
	put_u32(b, nframes);
	for (uint32_t i = 0; i < nframes; i++)
		put_u32(b, frames[i]);
	w->nsamples++;
	if (b->len >= CHUNK)
		return rec_writer__flush(w);
	return 0;
}

static int put_kv(struct buf *b, const struct rec_kv *kv, bool with_str)
{
	const char *key = kv->key ? kv->key : "";
	const char *str = kv->str ? kv->str : "";
	int err;

	err = put_str(b, key, strlen(key));
	if (err)
		return err;
	if (with_str)
		return put_str(b, str, strlen(str));
	if (buf_reserve(b, 8))
		return -ENOMEM;
	put_u64(b, kv->value);
	return 0;
}

static int write_kv(struct rec_writer *w, uint32_t type, const struct rec_kv *kv, size_t n,
		    bool with_str)
{
	int err;

	if (!w || (n && !kv))
		return -EINVAL;
	err = rec_writer__flush(w);
	if (!err)
		err = block_start(&w->block);
	for (size_t i = 0; !err && i < n; i++)
		err = put_kv(&w->block, &kv[i], with_str);
	if (!err)
		err = write_block(w, type, &w->block, n);
	return err;
}

int rec_writer__meta(struct rec_writer *w, const struct rec_kv *kv, size_t n)
{
	return write_kv(w, REC_META, kv, n, true);
}

/* The counter named key as the last STATS block wrote it, or NULL. */
static struct rec_kv *written_stat(struct rec_writer *w, const char *key)
{
	for (size_t i = 0; i < w->nstats; i++)
		if (!strcmp(w->stats[i].key, key))
			return &w->stats[i];
	return NULL;
}

static int remember_stat(struct rec_writer *w, const struct rec_kv *kv)
{
	struct rec_kv *old = written_stat(w, kv->key);
	char *key;

	if (old) {
		old->value = kv->value;
		return 0;
	}
	key = strdup(kv->key);
	if (!key || vec_grow(&w->stats, &w->cap_stats, w->nstats + 1, sizeof(*w->stats), 32)) {
		free(key);
		return -ENOMEM;
	}
	w->stats[w->nstats++] = (struct rec_kv){.key = key, .value = kv->value};
	return 0;
}

/* Only the counters that changed since the last STATS block, and no block when none did, so an
 * idle recording stays small; the loader keeps each counter's last value. */
int rec_writer__stats(struct rec_writer *w, const struct rec_kv *kv, size_t n)
{
	struct rec_kv *changed;
	size_t nchanged = 0;
	int err = 0;

	if (!w || (n && !kv))
		return -EINVAL;
	changed = calloc(n ? n : 1, sizeof(*changed));
	if (!changed)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct rec_kv *old = written_stat(w, kv[i].key);

		if (!old || old->value != kv[i].value)
			changed[nchanged++] = kv[i];
	}
	if (nchanged)
		err = write_kv(w, REC_STATS, changed, nchanged, false);
	for (size_t i = 0; !err && i < nchanged; i++)
		err = remember_stat(w, &changed[i]);
	free(changed);
	return err;
}

int rec_writer__end(struct rec_writer *w, const struct rec_kv *kv, size_t n)
{
	return write_kv(w, REC_END, kv, n, false);
}

/* The rules REGIONS payloads follow (the loader checks them the same way). */
static bool rnode_ok(const struct rec_region_node *n, uint32_t idx, size_t nstrings)
{
	if (!idx)
		return !n->name && !n->parent;
	return n->name && n->name < nstrings && n->parent < idx;
}

static void put_rthread(struct buf *b, const struct rec_region_thread *t)
{
	put_u32(b, t->pid);
	put_u32(b, t->tid);
	put_u64(b, t->mismatches);
	put_u32(b, t->nnodes);
	for (uint32_t i = 0; i < t->nnodes; i++) {
		const struct rec_region_node *n = &t->nodes[i];

		put_u32(b, n->name);
		put_u32(b, n->parent);
		put_u64(b, n->calls);
		put_u64(b, n->total_ns);
		put_u64(b, n->self_ns);
		put_u64(b, n->min_ns);
		put_u64(b, n->max_ns);
		put_u64(b, n->size_sum);
		put_u64(b, n->untimed);
		put_u32(b, n->open);
		put_u64(b, n->sum_ns);
	}
}

int rec_writer__regions(struct rec_writer *w, const struct rec_region_thread *t, size_t n)
{
	size_t bytes = 0;
	int err;

	if (!w || (n && !t) || n > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!t[i].nnodes || !t[i].nodes || t[i].nnodes > (MAX_BLOCK / RNODE_SIZE))
			return -EINVAL;
		for (uint32_t j = 0; j < t[i].nnodes; j++) {
			if (!rnode_ok(&t[i].nodes[j], j, w->nstrs))
				return -EINVAL;
		}
		bytes += MIN_RTHREAD + (size_t)t[i].nnodes * RNODE_SIZE;
	}
	if (bytes + 4 > MAX_BLOCK)
		return -EFBIG;
	err = rec_writer__flush(w);
	if (!err)
		err = block_start(&w->block);
	if (!err && buf_reserve(&w->block, bytes))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		put_rthread(&w->block, &t[i]);
	if (!err)
		err = write_block(w, REC_REGIONS, &w->block, n);
	return err;
}

uint64_t rec_writer__size(const struct rec_writer *w)
{
	return w ? w->size : 0;
}

/* ---- loader ---- */

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

/* A loaded recording and what only the loader needs; recording__free() gets back here. */
struct loaded {
	/* First member, so that a struct recording * is a struct loaded *. */
	struct recording r;
	struct arena_chunk *arena; /* every string, key and META value */
	uint32_t *pool;		   /* the frame ids of every sample, back to back */
	size_t npool, cap_pool;
	struct rec_line *lines; /* every frame's inline chain, back to back */
	size_t nlines, cap_lines;
	size_t *line_off; /* per frame: where its chain starts in lines (with rec_frame.nlines) */
	size_t cap_line_off;
	size_t cap_strings, cap_frames, cap_threads, cap_samples, cap_rthreads;
	struct idx_table thread_tab; /* (pid, tid) -> index in r.threads, while loading */
};

/* What a block may have appended; a block that fails is cut back to it. */
struct mark {
	size_t nstrings, nframes, nsamples, npool;
};

/* The unread rest of a payload. */
struct cur {
	const uint8_t *p;
	size_t left;
};

static bool cur_take(struct cur *c, size_t n, const uint8_t **p)
{
	if (c->left < n)
		return false;
	*p = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

static bool cur_u8(struct cur *c, uint8_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 1, &p))
		return false;
	*v = *p;
	return true;
}

static bool cur_u32(struct cur *c, uint32_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 4, &p))
		return false;
	*v = le32_get(p);
	return true;
}

static bool cur_u64(struct cur *c, uint64_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 8, &p))
		return false;
	*v = le64_get(p);
	return true;
}

static bool cur_str(struct cur *c, const uint8_t **s, uint32_t *len)
{
	return cur_u32(c, len) && cur_take(c, *len, s);
}

/* The entry count opening a payload; false when n entries of min bytes can't be there. */
static bool cur_count(struct cur *c, size_t min, uint32_t *n)
{
	return cur_u32(c, n) && *n <= c->left / min;
}

static char *arena_strndup(struct loaded *L, const uint8_t *s, size_t len)
{
	struct arena_chunk *c = L->arena;
	char *p;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = L->arena;
		L->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

static int parse_strings(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	const uint8_t *s;
	uint32_t n, len;

	if (!cur_count(c, MIN_STR, &n) || n > UINT32_MAX - r->nstrings)
		return -EBADMSG;
	if (grow((void **)&r->strings, &L->cap_strings, r->nstrings + n, sizeof(char *)))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_str(c, &s, &len))
			return -EBADMSG;
		r->strings[r->nstrings] = arena_strndup(L, s, len);
		if (!r->strings[r->nstrings])
			return -ENOMEM;
		r->nstrings++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_frame(struct cur *c, const struct recording *r, struct rec_frame *f)
{
	f->lines = NULL;
	f->nlines = 0;
	return cur_u8(c, &f->kind) && cur_u32(c, &f->module) && cur_u32(c, &f->name) &&
	       cur_u64(c, &f->offset) && f->kind <= REC_FRAME_REGION && f->module < r->nstrings &&
	       f->name < r->nstrings;
}

static int parse_frames(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n;

	if (!cur_count(c, MIN_FRAME, &n) || n > UINT32_MAX - r->nframes)
		return -EBADMSG;
	if (grow((void **)&r->frames, &L->cap_frames, r->nframes + n, sizeof(*r->frames)))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_frame(c, r, &r->frames[r->nframes]))
			return -EBADMSG;
		r->nframes++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_thread(struct cur *c, const struct recording *r, struct rec_thread *t)
{
	return cur_u32(c, &t->pid) && cur_u32(c, &t->tid) && cur_u32(c, &t->ppid) &&
	       cur_u32(c, &t->comm) && t->comm < r->nstrings;
}

static bool thread_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct rec_thread *a = &((const struct recording *)ctx)->threads[idx];
	const struct rec_thread *b = key;

	return a->pid == b->pid && a->tid == b->tid;
}

/* Add t, or replace the thread with its pid and tid: the last definition wins. */
static int add_thread(struct loaded *L, const struct rec_thread *t)
{
	struct recording *r = &L->r;
	uint32_t hash = hash_thread(t->pid, t->tid);
	struct slot *slot;

	if (tab_reserve(&L->thread_tab))
		return -ENOMEM;
	slot = tab_find(&L->thread_tab, hash, thread_eq, r, t);
	if (slot->idx1) {
		r->threads[slot->idx1 - 1] = *t;
		return 0;
	}
	if (grow((void **)&r->threads, &L->cap_threads, r->nthreads + 1, sizeof(*t)))
		return -ENOMEM;
	r->threads[r->nthreads] = *t;
	tab_set(&L->thread_tab, slot, r->nthreads++, hash);
	return 0;
}

/* Checked whole before any thread changes, as a replaced thread could not be put back. */
static int parse_threads(struct loaded *L, struct cur *c)
{
	struct rec_thread t;
	struct cur check;
	uint32_t n;
	int err = 0;

	if (!cur_count(c, MIN_THREAD, &n))
		return -EBADMSG;
	check = *c;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_thread(&check, &L->r, &t))
			return -EBADMSG;
	}
	if (check.left)
		return -EBADMSG;
	for (uint32_t i = 0; !err && i < n; i++) {
		read_thread(c, &L->r, &t);
		err = add_thread(L, &t);
	}
	return err;
}

static int read_stack(struct loaded *L, struct cur *c, uint32_t nframes)
{
	uint32_t id;

	if (nframes > c->left / 4)
		return -EBADMSG;
	if (grow((void **)&L->pool, &L->cap_pool, L->npool + nframes, sizeof(*L->pool)))
		return -ENOMEM;
	for (uint32_t i = 0; i < nframes; i++) {
		if (!cur_u32(c, &id) || id >= L->r.nframes)
			return -EBADMSG;
		L->pool[L->npool++] = id;
	}
	return 0;
}

/* Sample frames point into the pool only once it stops moving: see finish(). */
static int parse_samples(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_sample *s;
	uint32_t n;
	int err;

	bool named = r->version >= 3;

	if (!cur_count(c, named ? MIN_SAMPLE : MIN_SAMPLE - 4, &n))
		return -EBADMSG;
	if (grow((void **)&r->samples, &L->cap_samples, r->nsamples + n, sizeof(*s)))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		s = &r->samples[r->nsamples];
		s->frames = NULL;
		s->comm = 0;
		if (!cur_u32(c, &s->pid) || !cur_u32(c, &s->tid) || !cur_u64(c, &s->count) ||
		    !cur_u32(c, &s->flags) || (named && !cur_u32(c, &s->comm)) ||
		    s->comm >= r->nstrings || !cur_u32(c, &s->nframes))
			return -EBADMSG;
		err = read_stack(L, c, s->nframes);
		if (err)
			return err;
		r->nsamples++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_line_entry(struct cur *c, const struct recording *r, struct rec_line *l)
{
	return cur_u32(c, &l->function) && cur_u32(c, &l->file) && cur_u32(c, &l->line) &&
	       l->function < r->nstrings && l->file < r->nstrings;
}

/* Checked whole before anything changes, as a replaced chain could not be put back. */
static int check_lines(const struct recording *r, struct cur c, uint32_t n, size_t *total)
{
	struct rec_line l;
	uint32_t frame, k;

	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_u32(&c, &frame) || !cur_u32(&c, &k) || frame >= r->nframes ||
		    k > MAX_LINES || k > c.left / LINE_SIZE)
			return -EBADMSG;
		for (uint32_t j = 0; j < k; j++) {
			if (!read_line_entry(&c, r, &l))
				return -EBADMSG;
		}
		*total += k;
	}
	return c.left ? -EBADMSG : 0;
}

/* Frame chains point into the lines pool only once it stops moving: see finish(). */
static int parse_lines(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n, frame, k;
	size_t total;
	int err;

	if (!cur_count(c, MIN_LINES, &n))
		return -EBADMSG;
	err = check_lines(r, *c, n, &total);
	if (err)
		return err;
	if (grow((void **)&L->lines, &L->cap_lines, L->nlines + total, sizeof(*L->lines)) ||
	    grow((void **)&L->line_off, &L->cap_line_off, r->nframes, sizeof(*L->line_off)))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		cur_u32(c, &frame);
		cur_u32(c, &k);
		L->line_off[frame] = L->nlines;
		r->frames[frame].nlines = k;
		for (uint32_t j = 0; j < k; j++)
			read_line_entry(c, r, &L->lines[L->nlines++]);
	}
	return 0;
}

static int read_kv(struct loaded *L, struct cur *c, struct rec_kv *kv, bool with_str)
{
	const uint8_t *s;
	uint32_t len;

	if (!cur_str(c, &s, &len))
		return -EBADMSG;
	kv->key = arena_strndup(L, s, len);
	if (!kv->key)
		return -ENOMEM;
	if (!with_str)
		return cur_u64(c, &kv->value) ? 0 : -EBADMSG;
	if (!cur_str(c, &s, &len))
		return -EBADMSG;
	kv->str = arena_strndup(L, s, len);
	return kv->str ? 0 : -ENOMEM;
}

/* Replace *arr with the block's pairs; never NULL after, so an empty END still reads as ended. */
static int parse_kv(struct loaded *L, struct cur *c, struct rec_kv **arr, size_t *narr,
		    bool with_str)
{
	struct rec_kv *kv;
	uint32_t n;
	int err = 0;

	if (!cur_count(c, with_str ? MIN_KV_STR : MIN_KV_U64, &n))
		return -EBADMSG;
	kv = calloc(n ? n : 1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (uint32_t i = 0; !err && i < n; i++)
		err = read_kv(L, c, &kv[i], with_str);
	if (!err && c->left)
		err = -EBADMSG;
	if (err) {
		free(kv);
		return err;
	}
	free(*arr);
	*arr = kv;
	*narr = n;
	return 0;
}

static int parse_meta(struct loaded *L, struct cur *c)
{
	return parse_kv(L, c, &L->r.meta, &L->r.nmeta, true);
}

/* A STATS block holds the counters that changed since the one before it (every counter, in files
 * of perch before that): each counter keeps its last value. */
static int parse_stats(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_kv *add = NULL, *t;
	size_t nadd = 0, k;
	int err = parse_kv(L, c, &add, &nadd, false);

	if (err)
		return err;
	t = realloc(r->stats, (r->nstats + nadd + 1) * sizeof(*t));
	if (!t) {
		free(add);
		return -ENOMEM;
	}
	r->stats = t;
	for (size_t i = 0; i < nadd; i++) {
		for (k = 0; k < r->nstats && strcmp(t[k].key, add[i].key); k++)
			;
		t[k] = add[i];
		if (k == r->nstats)
			r->nstats++;
	}
	free(add);
	return 0;
}

static int parse_end(struct loaded *L, struct cur *c)
{
	return parse_kv(L, c, &L->r.end, &L->r.nend, false);
}

static bool read_rnode(struct cur *c, struct rec_region_node *n)
{
	return cur_u32(c, &n->name) && cur_u32(c, &n->parent) && cur_u64(c, &n->calls) &&
	       cur_u64(c, &n->total_ns) && cur_u64(c, &n->self_ns) && cur_u64(c, &n->min_ns) &&
	       cur_u64(c, &n->max_ns) && cur_u64(c, &n->size_sum) && cur_u64(c, &n->untimed) &&
	       cur_u32(c, &n->open) && cur_u64(c, &n->sum_ns);
}

/* One region thread into t (nodes allocated); -EBADMSG when it breaks the rules. */
static int read_rthread(struct cur *c, const struct recording *r, struct rec_region_thread *t)
{
	if (!cur_u32(c, &t->pid) || !cur_u32(c, &t->tid) || !cur_u64(c, &t->mismatches) ||
	    !cur_u32(c, &t->nnodes) || !t->nnodes || t->nnodes > c->left / RNODE_SIZE)
		return -EBADMSG;
	t->nodes = malloc(t->nnodes * sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (!read_rnode(c, &t->nodes[i]) || !rnode_ok(&t->nodes[i], i, r->nstrings)) {
			free(t->nodes);
			t->nodes = NULL;
			return -EBADMSG;
		}
	}
	return 0;
}

/* Replace the region thread with t's pid and tid, or add t. */
static int add_rthread(struct loaded *L, struct rec_region_thread *t)
{
	struct recording *r = &L->r;

	for (size_t i = r->nrthreads; i-- > 0;) {
		if (r->rthreads[i].pid == t->pid && r->rthreads[i].tid == t->tid) {
			free(r->rthreads[i].nodes);
			r->rthreads[i] = *t;
			return 0;
		}
	}
	if (grow((void **)&r->rthreads, &L->cap_rthreads, r->nrthreads + 1, sizeof(*t)))
		return -ENOMEM;
	r->rthreads[r->nrthreads++] = *t;
	return 0;
}

/* Read whole before anything changes: a replaced thread could not be put back. */
static int parse_regions(struct loaded *L, struct cur *c)
{
	struct rec_region_thread *v;
	uint32_t n, i;
	int err = 0;

	if (!cur_count(c, MIN_RTHREAD, &n))
		return -EBADMSG;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; !err && i < n; i++)
		err = read_rthread(c, &L->r, &v[i]);
	if (!err && c->left)
		err = -EBADMSG;
	for (uint32_t j = 0; j < n; j++) {
		if (!err)
			err = add_rthread(L, &v[j]);
		else
			free(v[j].nodes); /* not added (add_rthread failing adds nothing) */
	}
	free(v);
	return err;
}

typedef int (*parse_fn)(struct loaded *L, struct cur *c);

static const parse_fn parsers[] = {
	[REC_META] = parse_meta,       [REC_STRINGS] = parse_strings, [REC_FRAMES] = parse_frames,
	[REC_THREADS] = parse_threads, [REC_SAMPLES] = parse_samples, [REC_STATS] = parse_stats,
	[REC_END] = parse_end,	       [REC_LINES] = parse_lines,     [REC_REGIONS] = parse_regions,
};

static int load_payload(struct loaded *L, uint32_t type, const uint8_t *p, size_t len)
{
	struct mark m = {L->r.nstrings, L->r.nframes, L->r.nsamples, L->npool};
	struct cur c = {p, len};
	int err;

	if (type >= ARRAY_SIZE(parsers) || !parsers[type])
		return 0; /* a block type from a later perch: skipped */
	err = parsers[type](L, &c);
	if (err) {
		L->r.nstrings = m.nstrings;
		L->r.nframes = m.nframes;
		L->r.nsamples = m.nsamples;
		L->npool = m.npool;
	}
	return err;
}

/* The file being loaded, read a block at a time: memory follows what the blocks define, not the
 * file's size (a sparse file, a zero-filled tail). */
struct src {
	int fd;
	uint32_t version;
	uint64_t size, pos; /* size when opened: a file still being written ends there */
	struct buf payload; /* the current block's, reused */
};

/* len bytes at the current position; -ENODATA when the file ends first. */
static int read_exact(struct src *s, void *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(s->fd, (uint8_t *)p + done, len - done);

		if (n == 0)
			return -ENODATA;
		if (n < 0 && errno != EINTR)
			return -errno;
		done += n > 0 ? (size_t)n : 0;
	}
	s->pos += len;
	return 0;
}

/*
 * The next block's header and payload (in s->payload). -ENODATA: the file ends inside it;
 * -EBADMSG: it can't be a block. Type 0 is none: a zero-filled tail (a file extended and never
 * written, or a disk that lost the last writes) is damage, not millions of empty blocks.
 */
static int read_block(struct src *s, uint32_t *type)
{
	uint8_t h[BLOCK_HDR_SIZE];
	uint32_t plen;
	int err;

	if (s->size - s->pos < BLOCK_HDR_SIZE)
		return -ENODATA;
	err = read_exact(s, h, sizeof(h));
	if (err)
		return err;
	*type = le32_get(h);
	plen = le32_get(h + 4);
	if (!*type || !plen || plen > MAX_BLOCK || le32_get(h + 12))
		return -EBADMSG;
	if (s->size - s->pos < plen)
		return -ENODATA;
	s->payload.len = 0;
	if (buf_reserve(&s->payload, plen))
		return -ENOMEM;
	err = read_exact(s, s->payload.data, plen);
	if (err)
		return err;
	s->payload.len = plen;
	return crc_of(s->payload.data, plen) == le32_get(h + 8) ? 0 : -EBADMSG;
}

static int load_blocks(struct loaded *L, struct src *s)
{
	while (s->pos < s->size) {
		uint32_t type;
		int err = read_block(s, &type);

		if (!err)
			err = load_payload(L, type, s->payload.data, s->payload.len);
		if (err)
			return err;
		L->r.nblocks++;
		L->r.good_size = s->pos;
	}
	return 0;
}

/* Point every sample at its frames, now that the pool has its final address. */
static void finish(struct loaded *L)
{
	size_t off = 0;

	for (size_t i = 0; i < L->r.nsamples; i++) {
		L->r.samples[i].frames = L->pool ? L->pool + off : NULL;
		off += L->r.samples[i].nframes;
	}
	for (size_t i = 0; i < L->r.nframes; i++)
		L->r.frames[i].lines = L->r.frames[i].nlines ? L->lines + L->line_off[i] : NULL;
	tab_free(&L->thread_tab);
}

/*
 * Open path for reading as s, and check its header; s->pos is where the blocks start. Only a
 * regular file: a FIFO or a device (/dev/zero) has no end to stop at (-EINVAL; opened without
 * blocking, so a FIFO with no writer can't hang us either).
 */
static int open_src(const char *path, struct src *s)
{
	uint8_t hdr[FILE_HDR_SIZE];
	struct stat st;
	uint32_t start;
	int err;

	s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	if (fstat(s->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	s->size = (uint64_t)st.st_size;
	err = s->size < FILE_HDR_SIZE ? -EPROTO : read_exact(s, hdr, sizeof(hdr));
	if (err)
		return err;
	if (memcmp(hdr, PERCH_FILE_MAGIC, 8))
		return -EPROTO;
	s->version = le32_get(hdr + 8);
	if (s->version < 1 || s->version > PERCH_FILE_VERSION)
		return -EPROTONOSUPPORT;
	start = le32_get(hdr + 12);
	if (start < FILE_HDR_SIZE || start > s->size)
		return -EPROTO;
	if (start > FILE_HDR_SIZE && lseek(s->fd, start, SEEK_SET) < 0)
		return -errno;
	s->pos = start;
	return 0;
}

static struct loaded *loaded_new(size_t start)
{
	struct loaded *L = calloc(1, sizeof(*L));

	if (!L)
		return NULL;
	L->r.good_size = start;
	if (grow((void **)&L->r.strings, &L->cap_strings, 1, sizeof(char *)))
		goto err_out;
	L->r.strings[0] = arena_strndup(L, (const uint8_t *)"", 0);
	if (!L->r.strings[0])
		goto err_out;
	L->r.nstrings = 1;
	return L;
err_out:
	recording__free(&L->r);
	errno = ENOMEM;
	return NULL;
}

int recording__load(const char *path, struct recording **out)
{
	struct src s = {.fd = -1};
	struct loaded *L = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = open_src(path, &s);
	if (err)
		goto cleanup;
	L = loaded_new(s.pos);
	if (!L) {
		err = -ENOMEM;
		goto cleanup;
	}
	L->r.version = s.version;
	err = load_blocks(L, &s);
	finish(L);
	if (!err || err == -EBADMSG || err == -ENODATA) {
		*out = &L->r;
		L = NULL;
	}
cleanup:
	if (L)
		recording__free(&L->r);
	if (s.fd >= 0)
		close(s.fd);
	free(s.payload.data);
	return err;
}

void recording__free(struct recording *r)
{
	struct loaded *L = (struct loaded *)r;
	struct arena_chunk *c, *next;

	if (!r)
		return;
	for (c = L->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(r->meta);
	free(r->strings);
	free(r->frames);
	free(r->threads);
	free(r->samples);
	free(r->stats);
	free(r->end);
	for (size_t i = 0; i < r->nrthreads; i++)
		free(r->rthreads[i].nodes);
	free(r->rthreads);
	free(L->pool);
	free(L->lines);
	free(L->line_off);
	tab_free(&L->thread_tab);
	free(L);
}

static const struct rec_kv *kv_find(const struct rec_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; kv && key && i < n; i++) {
		if (!strcmp(kv[i].key, key))
			return &kv[i];
	}
	return NULL;
}

const char *recording__meta(const struct recording *r, const char *key)
{
	const struct rec_kv *kv = r ? kv_find(r->meta, r->nmeta, key) : NULL;

	return kv ? kv->str : NULL;
}

static bool kv_value(const struct rec_kv *kv, size_t n, const char *key, uint64_t *value)
{
	const struct rec_kv *found = kv_find(kv, n, key);

	if (found && value)
		*value = found->value;
	return found;
}

bool recording__stat(const struct recording *r, const char *key, uint64_t *value)
{
	return r && kv_value(r->stats, r->nstats, key, value);
}

bool recording__end(const struct recording *r, const char *key, uint64_t *value)
{
	return r && kv_value(r->end, r->nend, key, value);
}

const char *recording__string(const struct recording *r, uint32_t id)
{
	return r && id < r->nstrings ? r->strings[id] : "";
}
