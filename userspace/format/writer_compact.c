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

/* Everything, from the start, into w->fd (the new file): the header, then every block from its
 * file's start. */
static int rewrite(struct rec_writer *w, int from, uint64_t *off)
{
	int err = wr_write_header(w);

	return err ? err : wr_blocks_rewrite(w, &(const struct wr_rewrite){from, off});
}

/* Back to the old file after a failed rewrite: everything was in it. */
static void restore(struct rec_writer *w, const struct saved *s)
{
	w->fd = s->fd;
	w->size = s->size;
	w->file_last_end = s->file_last_end;
	w->err = 0;
	wr_blocks_restart(w, true);
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
