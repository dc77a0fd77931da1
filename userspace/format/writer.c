// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording writer (recording.h): what the recorder feeds while it samples. It owns the
 * tables that deduplicate strings and frames and the pending data of the next flush; every block
 * leaves it in one write(), so a killed recorder leaves whole blocks only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "writer_impl.h"

static uint32_t hash_bytes(const char *s, size_t len)
{
	return hash32(fnv64_bytes(FNV64_OFFSET, s, len));
}

static uint32_t hash_frame(const struct rec_frame *f)
{
	uint64_t ids = (uint64_t)f->module << 32 | f->name;

	return mix64(mix64(ids ^ f->kind) ^ f->offset);
}

struct str_key {
	const char *s;
	size_t len;
};

int wr_write_all(int fd, const uint8_t *p, size_t len)
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
int wr_block_start(struct buf *b)
{
	b->len = 0;
	if (buf_reserve(b, BLOCK_HDR_SIZE + COUNT_SIZE))
		return -ENOMEM;
	b->len = BLOCK_HDR_SIZE + COUNT_SIZE;
	return 0;
}

/* Fill in the header and count of the block built in b and write it in one write(). */
int wr_write_block(struct rec_writer *w, uint32_t type, struct buf *b, size_t n)
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
	le32_put(b->data + 8, codec_crc(b->data + BLOCK_HDR_SIZE, plen));
	le32_put(b->data + 12, 0);
	err = wr_write_all(w->fd, b->data, b->len);
	if (err) {
		w->err = err;
		return err;
	}
	w->size += b->len;
	return 0;
}

/* Write entries [*done, total) with put, in blocks of about CHUNK bytes. */
int wr_write_range(struct rec_writer *w, uint32_t type, size_t *done, size_t total, put_fn put)
{
	while (*done < total) {
		size_t i = *done;
		int err = wr_block_start(&w->block);

		for (; !err && i < total && w->block.len < CHUNK; i++)
			err = put(w, i);
		if (!err)
			err = wr_write_block(w, type, &w->block, i - *done);
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
	put_u8(&w->block, f->kind & ~REC_FRAME_CALL);
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

/* LINES entries [lines_done, nlines), stored back to back from lines_done_off. */
static int write_lines(struct rec_writer *w)
{
	size_t len = w->lines.len - w->lines_done_off;
	int err;

	if (w->lines_done == w->nlines)
		return 0;
	err = wr_block_start(&w->block);
	if (!err && buf_reserve(&w->block, len))
		err = -ENOMEM;
	if (err)
		return err;
	put_bytes(&w->block, w->lines.data + w->lines_done_off, len);
	err = wr_write_block(w, REC_LINES, &w->block, w->nlines - w->lines_done);
	if (err)
		return err;
	w->lines_done = w->nlines;
	w->lines_done_off = w->lines.len;
	return 0;
}

/* The definitions (the blocks of writer_blocks.c's table before the time axis): what the file
 * has not got yet; their watermarks back to a new file's start (strings[0], "", is implicit) or
 * to everything written. */
static int flush_strings(struct rec_writer *w)
{
	return wr_write_range(w, REC_STRINGS, &w->strs_done, w->nstrs, put_string);
}

static void restart_strings(struct rec_writer *w, bool in_file)
{
	w->strs_done = in_file ? w->nstrs : 1;
}

static void free_strings(struct rec_writer *w)
{
	free(w->names.data);
	free(w->strs);
	idxtab__clear(&w->str_tab);
}

static int flush_frames(struct rec_writer *w)
{
	return wr_write_range(w, REC_FRAMES, &w->frames_done, w->nframes, put_frame);
}

static void restart_frames(struct rec_writer *w, bool in_file)
{
	w->frames_done = in_file ? w->nframes : 0;
}

static void free_frames(struct rec_writer *w)
{
	free(w->frames);
	idxtab__clear(&w->frame_tab);
}

static void restart_lines(struct rec_writer *w, bool in_file)
{
	w->lines_done = in_file ? w->nlines : 0;
	w->lines_done_off = in_file ? w->lines.len : 0;
}

static void free_lines(struct rec_writer *w)
{
	free(w->lines.data);
}

static int flush_threads(struct rec_writer *w)
{
	return wr_write_range(w, REC_THREADS, &w->threads_done, w->nthreads, put_thread);
}

static void restart_threads(struct rec_writer *w, bool in_file)
{
	w->threads_done = in_file ? w->nthreads : 0;
}

static void free_threads(struct rec_writer *w)
{
	free(w->threads);
}

const struct wr_block wr_strings_block = {REC_STRINGS, flush_strings, NULL, restart_strings,
					  free_strings};
const struct wr_block wr_frames_block = {REC_FRAMES, flush_frames, NULL, restart_frames,
					 free_frames};
const struct wr_block wr_lines_block = {REC_LINES, write_lines, NULL, restart_lines, free_lines};
const struct wr_block wr_threads_block = {REC_THREADS, flush_threads, NULL, restart_threads,
					  free_threads};

int rec_writer__flush(struct rec_writer *w)
{
	int err;

	if (!w)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = wr_time_pending_window(w);
	if (!err)
		err = wr_blocks_flush(w);
	if (!err)
		err = wr_maybe_compact(w);
	return err;
}

int wr_write_header(struct rec_writer *w)
{
	uint8_t hdr[FILE_HDR_SIZE];
	int err;

	memcpy(hdr, PERCH_FILE_MAGIC, 8);
	le32_put(hdr + 8, PERCH_FILE_VERSION);
	le32_put(hdr + 12, FILE_HDR_SIZE);
	err = wr_write_all(w->fd, hdr, sizeof(hdr));
	if (err)
		return err;
	w->size = sizeof(hdr);
	return 0;
}

/* Only a regular file is compacted (under its name of the moment); a FIFO or device is
 * streamed. */
static int keep_path(struct rec_writer *w)
{
	struct stat st;

	if (fstat(w->fd, &st))
		return -errno;
	if (S_ISREG(st.st_mode))
		w->path = safeout__name(&w->out);
	return 0;
}

static int writer_init(struct rec_writer *w, const char *path)
{
	int err;

	err = vec_grow(&w->strs, &w->cap_strs, 1, sizeof(*w->strs), 16);
	if (err)
		return err;
	w->strs[0] = (struct str_ref){0, 0};
	w->nstrs = w->strs_done = 1;
	w->budget = REC_WINDOW_BUDGET;
	/* Never write through what is at path: a symlink planted there (a perch.data in a sticky
	 * /tmp, say) would send the recording onto its target. A new file (0600) beside it, which
	 * takes path's name when published; what was there is kept as path.old (perf's way). */
	w->fd = safeout__open(&w->out, path, 0600, SAFEOUT_KEEP_OLD);
	if (w->fd < 0)
		return w->fd;
	err = keep_path(w);
	return err ? err : wr_write_header(w);
}

static void free_kv(struct rec_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(kv[i].key);
	free(kv);
}

static void writer_free(struct rec_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	safeout__discard(&w->out); /* removed unless published */
	free(w->block.data);
	free(w->rframes);
	wr_blocks_free(w);
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

int rec_writer__publish(struct rec_writer *w)
{
	int err = safeout__publish(&w->out);

	if (!err && w->path)
		w->path = safeout__name(&w->out);
	return err;
}

/* A regular file is compacted one last time: the finished recording is its bounded form. */
int rec_writer__close(struct rec_writer *w)
{
	int err, perr;

	if (!w)
		return 0;
	err = rec_writer__flush(w);
	if (!err && w->path)
		wr_compact(w);
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	perr = rec_writer__publish(w);
	if (perr) { /* what it holds is kept, under the name it has */
		log_warn("recording: cannot rename %s to %s: %s (the recording stays there)",
			 w->out.tmp, w->out.path, strerror(-perr));
		free(w->out.tmp);
		w->out.tmp = NULL;
	}
	writer_free(w);
	return err ? err : perr;
}

void rec_writer__discard(struct rec_writer *w)
{
	if (!w)
		return;
	if (w->out.tmp) {
		writer_free(w); /* the file too */
		return;
	}
	rec_writer__close(w);
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
	struct idxtab_slot *slot;

	if (!w || !key.len)
		return 0;
	if (key.len > MAX_STRING || w->nstrs >= UINT32_MAX) {
		errno = E2BIG;
		return 0;
	}
	if (idxtab__reserve(&w->str_tab))
		goto err_nomem;
	slot = idxtab__find(&w->str_tab, hash, str_eq, w, &key);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (vec_grow(&w->strs, &w->cap_strs, w->nstrs + 1, sizeof(*w->strs), 16) ||
	    buf_reserve(&w->names, key.len))
		goto err_nomem;
	w->strs[w->nstrs] = (struct str_ref){w->names.len, key.len};
	put_bytes(&w->names, key.s, key.len);
	idxtab__set(&w->str_tab, slot, w->nstrs, hash);
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
	struct idxtab_slot *slot;

	if (!w || (kind & ~REC_FRAME_CALL) > REC_FRAME_REGION || module >= w->nstrs ||
	    name >= w->nstrs) {
		errno = EINVAL;
		return UINT32_MAX;
	}
	if (w->nframes >= UINT32_MAX - 1 || idxtab__reserve(&w->frame_tab))
		goto err_nomem;
	slot = idxtab__find(&w->frame_tab, hash, frame_eq, w, &f);
	if (slot->idx1)
		return slot->idx1 - 1;
	if (vec_grow(&w->frames, &w->cap_frames, w->nframes + 1, sizeof(f), 16))
		goto err_nomem;
	w->frames[w->nframes] = f;
	idxtab__set(&w->frame_tab, slot, w->nframes, hash);
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
	if (b->len - w->lines_done_off >= CHUNK)
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
	if (vec_grow(&w->threads, &w->cap_threads, w->nthreads + 1, sizeof(*w->threads), 16))
		return -ENOMEM;
	w->threads[w->nthreads++] = (struct rec_thread){pid, tid, ppid, comm};
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

int wr_write_kv(struct rec_writer *w, uint32_t type, const struct rec_kv *kv, size_t n,
		bool with_str)
{
	int err;

	if (!w || (n && !kv))
		return -EINVAL;
	err = wr_block_start(&w->block);
	for (size_t i = 0; !err && i < n; i++)
		err = put_kv(&w->block, &kv[i], with_str);
	if (!err)
		err = wr_write_block(w, type, &w->block, n);
	return err;
}

/* The payload is kept: a compacted file opens with it. */
int rec_writer__meta(struct rec_writer *w, const struct rec_kv *kv, size_t n)
{
	size_t len;
	int err = rec_writer__flush(w);

	if (!err)
		err = wr_write_kv(w, REC_META, kv, n, true);
	if (err)
		return err;
	len = w->block.len - BLOCK_HDR_SIZE - COUNT_SIZE;
	w->meta.len = 0;
	if (buf_reserve(&w->meta, len))
		return -ENOMEM;
	put_bytes(&w->meta, w->block.data + BLOCK_HDR_SIZE + COUNT_SIZE, len);
	w->nmeta = n;
	return 0;
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
		err = rec_writer__flush(w);
	if (nchanged && !err)
		err = wr_write_kv(w, REC_STATS, changed, nchanged, false);
	for (size_t i = 0; !err && i < nchanged; i++)
		err = remember_stat(w, &changed[i]);
	free(changed);
	return err;
}

/* Kept (keys copied) for the compacted file. */
int rec_writer__end(struct rec_writer *w, const struct rec_kv *kv, size_t n)
{
	struct rec_kv *copy;
	int err = rec_writer__flush(w);

	if (!err)
		err = wr_write_kv(w, REC_END, kv, n, false);
	if (err)
		return err;
	copy = calloc(n ? n : 1, sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		copy[i].key = strdup(kv[i].key ? kv[i].key : "");
		copy[i].value = kv[i].value;
		if (!copy[i].key) {
			free_kv(copy, i);
			return -ENOMEM;
		}
	}
	free_kv(w->end, w->nend);
	w->end = copy;
	w->nend = n;
	return 0;
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

/* The thread's entry as written, replacing the one before: the compacted file has the latest. */
static int remember_rthread(struct rec_writer *w, const struct rec_region_thread *t)
{
	uint64_t key = (uint64_t)t->pid << 32 | t->tid, idx;
	struct buf *b;

	if (!u64map__get(&w->rthread_tab, key, &idx)) {
		if (vec_grow(&w->rthreads, &w->cap_rthreads, w->nrthreads + 1, sizeof(*w->rthreads),
			     16) ||
		    u64map__put(&w->rthread_tab, key, w->nrthreads))
			return -ENOMEM;
		idx = w->nrthreads++;
		w->rthreads[idx] = (struct wrthread){.tid_key = key};
	}
	b = &w->rthreads[idx].bytes;
	b->len = 0;
	if (buf_reserve(b, MIN_RTHREAD + (size_t)t->nnodes * RNODE_SIZE))
		return -ENOMEM;
	put_rthread(b, t);
	return 0;
}

/* Every thread's latest entry, in blocks of about CHUNK bytes (compaction). */
static int put_rthread_bytes(struct rec_writer *w, size_t i)
{
	const struct buf *b = &w->rthreads[i].bytes;

	if (buf_reserve(&w->block, b->len))
		return -ENOMEM;
	put_bytes(&w->block, b->data, b->len);
	return 0;
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
			if (!codec_rnode_ok(&t[i].nodes[j], j, w->nstrs))
				return -EINVAL;
		}
		bytes += MIN_RTHREAD + (size_t)t[i].nnodes * RNODE_SIZE;
	}
	if (bytes + 4 > MAX_BLOCK)
		return -EFBIG;
	err = rec_writer__flush(w);
	if (!err)
		err = wr_block_start(&w->block);
	if (!err && buf_reserve(&w->block, bytes))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < n; i++)
		put_rthread(&w->block, &t[i]);
	if (!err)
		err = wr_write_block(w, REC_REGIONS, &w->block, n);
	for (size_t i = 0; !err && i < n; i++)
		err = remember_rthread(w, &t[i]);
	return err;
}

uint64_t rec_writer__size(const struct rec_writer *w)
{
	return w ? w->size : 0;
}

/* The latest META, REGIONS, STATS and END again, for a compacted file. */
static int rewrite_meta(struct rec_writer *w, const struct wr_rewrite *rw)
{
	int err;

	(void)rw;
	if (!w->meta.len && !w->nmeta)
		return 0;
	err = wr_block_start(&w->block);
	if (!err && buf_reserve(&w->block, w->meta.len))
		err = -ENOMEM;
	if (err)
		return err;
	put_bytes(&w->block, w->meta.data, w->meta.len);
	return wr_write_block(w, REC_META, &w->block, w->nmeta);
}

static void free_meta(struct rec_writer *w)
{
	free(w->meta.data);
}

static int rewrite_rthreads(struct rec_writer *w, const struct wr_rewrite *rw)
{
	size_t done = 0;

	(void)rw;
	return wr_write_range(w, REC_REGIONS, &done, w->nrthreads, put_rthread_bytes);
}

static void free_rthreads(struct rec_writer *w)
{
	for (size_t i = 0; i < w->nrthreads; i++)
		free(w->rthreads[i].bytes.data);
	free(w->rthreads);
	u64map__clear(&w->rthread_tab);
}

static int rewrite_stats(struct rec_writer *w, const struct wr_rewrite *rw)
{
	(void)rw;
	return w->nstats ? wr_write_kv(w, REC_STATS, w->stats, w->nstats, false) : 0;
}

static void free_stats(struct rec_writer *w)
{
	free_kv(w->stats, w->nstats);
}

static int rewrite_end(struct rec_writer *w, const struct wr_rewrite *rw)
{
	(void)rw;
	return w->end ? wr_write_kv(w, REC_END, w->end, w->nend, false) : 0;
}

static void free_end(struct rec_writer *w)
{
	free_kv(w->end, w->nend);
}

const struct wr_block wr_meta_block = {REC_META, NULL, rewrite_meta, NULL, free_meta};
const struct wr_block wr_regions_block = {REC_REGIONS, NULL, rewrite_rthreads, NULL, free_rthreads};
const struct wr_block wr_stats_block = {REC_STATS, NULL, rewrite_stats, NULL, free_stats};
const struct wr_block wr_end_block = {REC_END, NULL, rewrite_end, NULL, free_end};
