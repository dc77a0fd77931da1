/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A read-only look into a writer while it records (format/writer_peek.c): the counts added since
 * the last window, each key's thread and stack, and the frames and strings they name. For
 * `perch top`, which aggregates what a drain brought without reading a file back.
 */
#ifndef PERCH_FORMAT_WRITER_PEEK_H
#define PERCH_FORMAT_WRITER_PEEK_H

#include <stddef.h>
#include <stdint.h>
#include "recording.h"

/* fn(ctx, key, count) for every key counted since the last rec_writer__window(), in the order
 * they were first counted; call it before rec_writer__window() takes them. */
typedef void (*rec_peek_fn)(void *ctx, uint32_t key, uint64_t count);
void rec_writer__peek_pending(const struct rec_writer *w, rec_peek_fn fn, void *ctx);

/* Key key's thread into *pid, *tid and its function frames (region frames left out) into
 * frames[0..max), leaf first; returns how many (at most max: the leaf end is kept). 0 for a
 * key that is not defined. */
uint32_t rec_writer__peek_key(const struct rec_writer *w, uint32_t key, uint32_t *pid,
			      uint32_t *tid, uint32_t *frames, uint32_t max);

/* Frame id's definition, or NULL; valid until the writer defines another frame. */
const struct rec_frame *rec_writer__peek_frame(const struct rec_writer *w, uint32_t id);

/* String id into buf (len > 0: always terminated, cut to fit); "" for an undefined id. */
const char *rec_writer__peek_string(const struct rec_writer *w, uint32_t id, char *buf, size_t len);

/* META key's value as the writer wrote it into buf (len > 0: always terminated, cut to fit); ""
 * when it has none. */
const char *rec_writer__peek_meta(const struct rec_writer *w, const char *key, char *buf,
				  size_t len);

#endif /* PERCH_FORMAT_WRITER_PEEK_H */
