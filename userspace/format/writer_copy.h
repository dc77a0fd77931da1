/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a live writer counted since its last window, copied into another writer
 * (format/writer_copy.c): each pending key's thread, thread name, flags and whole stack (function
 * and region frames, the modules' build-ids), its process's control group, with its count, and
 * the live writer's META. For `perch agent`, which builds one recording of each interval from the
 * drains that fall in it while the run's own writer goes on; the copy reads the live writer and
 * never changes it.
 */
#ifndef PERCH_FORMAT_WRITER_COPY_H
#define PERCH_FORMAT_WRITER_COPY_H

#include <stddef.h>
#include <stdint.h>
#include "recording.h"

struct rec_copy;

struct rec_copy *rec_copy__new(void);
void rec_copy__free(struct rec_copy *c); /* NULL-safe */
/* A new destination: the ids copied so far belong to the last one. */
void rec_copy__reset(struct rec_copy *c);
/* Every key from counted since its last rec_writer__window(), with its count, into to (as
 * samples: to's next window takes them). 0, or the first error of to (-errno). */
int rec_copy__pending(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to);
/* from's META into to, each key of over[0..n) (a META key) taking over's value instead. */
int rec_copy__meta(const struct rec_writer *from, struct rec_writer *to, const struct rec_kv *over,
		   size_t n);

#endif /* PERCH_FORMAT_WRITER_COPY_H */
