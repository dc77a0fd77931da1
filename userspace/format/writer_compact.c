// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compaction (recording.h): a regular recording file is rewritten in its bounded form, the
 * definitions, the latest META, REGIONS, STATS and END, the windows as merged so far and the
 * timeline's blocks, into PATH.tmp, which rename() puts in PATH's place: at any instant PATH is
 * either the file before or the file after, both complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/vec.h"
#include "writer_impl.h"

/* Compacting a tail smaller than this costs more than the bytes it saves. */
#define MIN_TAIL (64u << 10)

/* What compaction changes in the writer, to put back when it fails. */
struct saved {
	int fd;
	uint64_t size, file_last_end;
};

static char *tmp_path(const char *path)
{
	size_t len = strlen(path);
	char *tmp = malloc(len + sizeof(".tmp"));

	if (tmp) {
		memcpy(tmp, path, len);
		memcpy(tmp + len, ".tmp", sizeof(".tmp"));
	}
	return tmp;
}

/* A leftover PATH.tmp (a perch killed while compacting) is replaced, never written through. */
static int open_tmp(const char *tmp)
{
	int fd;

	if (unlink(tmp) && errno != ENOENT)
		return -errno;
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static int write_meta(struct rec_writer *w)
{
	int err;

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

/* The timeline's blocks, copied from the old file as they are; new offsets in off[]. */
static int copy_extents(struct rec_writer *w, int from, uint64_t *off)
{
	for (size_t i = 0; i < w->nextents; i++) {
		const struct wextent *e = &w->extents[i];
		ssize_t n;
		int err;

		w->block.len = 0;
		if (buf_reserve(&w->block, e->len))
			return -ENOMEM;
		n = pread(from, w->block.data, e->len, (off_t)e->off);
		if (n != (ssize_t)e->len)
			return n < 0 ? -errno : -EIO;
		err = wr_write_all(w->fd, w->block.data, e->len);
		if (err)
			return err;
		off[i] = w->size;
		w->size += e->len;
	}
	return 0;
}

/* Everything, from the start, into w->fd (the new file); the writer's "done" marks restart. */
static int rewrite(struct rec_writer *w, int from, uint64_t *off)
{
	int err;

	w->strs_done = 1;
	w->frames_done = w->threads_done = 0;
	w->lines_done = 0;
	w->lines_done_off = 0;
	w->nodes_done = w->keys_done = w->modules_done = w->origins_done = 0;
	err = wr_write_header(w);
	if (!err)
		err = write_meta(w);
	if (!err)
		err = wr_flush_defs(w);
	if (!err)
		err = wr_time_flush(w); /* nothing pending: the definitions of the time axis */
	if (!err)
		err = copy_extents(w, from, off);
	if (!err)
		err = wr_time_windows(w);
	if (!err)
		err = wr_offcpu_all(w);
	if (!err)
		err = wr_write_rthreads(w);
	if (!err)
		err = wr_write_sizes(w);
	if (!err)
		err = wr_write_metrics(w);
	if (!err)
		err = wr_write_steps(w);
	if (!err && w->nstats)
		err = wr_write_kv(w, REC_STATS, w->stats, w->nstats, false);
	if (!err && w->end)
		err = wr_write_kv(w, REC_END, w->end, w->nend, false);
	return err;
}

/* Back to the old file after a failed rewrite: everything was in it. */
static void restore(struct rec_writer *w, const struct saved *s)
{
	w->fd = s->fd;
	w->size = s->size;
	w->file_last_end = s->file_last_end;
	w->err = 0;
	w->strs_done = w->nstrs;
	w->frames_done = w->nframes;
	w->threads_done = w->nthreads;
	w->lines_done = w->nlines;
	w->lines_done_off = w->lines.len;
	w->nodes_done = w->nnodes;
	w->keys_done = w->nkeys;
	w->modules_done = w->nmodules;
	w->origins_done = w->norigins;
}

static int compact_into(struct rec_writer *w, const char *tmp, uint64_t *off)
{
	struct saved s = {w->fd, w->size, w->file_last_end};
	int fd = open_tmp(tmp), err;

	if (fd < 0)
		return fd;
	w->fd = fd;
	err = rewrite(w, s.fd, off);
	if (!err && rename(tmp, w->path))
		err = -errno;
	if (err) {
		close(fd);
		unlink(tmp);
		restore(w, &s);
		return err;
	}
	close(s.fd);
	for (size_t i = 0; i < w->nextents; i++)
		w->extents[i].off = off[i];
	return 0;
}

/* Needs everything flushed. A failure leaves the file as it was (complete) and is only logged:
 * the recording goes on appending, and the next try comes when the tail has doubled again. */
int wr_compact(struct rec_writer *w)
{
	uint64_t *off = NULL;
	char *tmp = NULL;
	int err = -ENOMEM;

	if (!w->path || w->err)
		return 0;
	tmp = tmp_path(w->path);
	off = calloc(w->nextents ? w->nextents : 1, sizeof(*off));
	if (tmp && off)
		err = compact_into(w, tmp, off);
	if (err)
		log_warn("recording: compacting %s: %s (the file stays as written)", w->path,
			 strerror(-err));
	w->compacted = w->size;
	free(tmp);
	free(off);
	return err;
}

int wr_maybe_compact(struct rec_writer *w)
{
	uint64_t tail = w->size - w->compacted;

	if (!w->path || tail <= MIN_TAIL || tail <= w->compacted)
		return 0;
	wr_compact(w);
	return 0;
}
