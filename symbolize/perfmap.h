/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JIT symbol maps in perf's format (/tmp/perf-PID.map): one symbol a line, "START SIZE NAME",
 * START and SIZE in hex with or without 0x, NAME the rest of the line (spaces allowed).
 */
#ifndef PERCH_PERFMAP_H
#define PERCH_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A map is read up to this many bytes (a JIT's map is a few MiB at most); see perfmap__unread. */
#define PERFMAP_MAX_BYTES (64u << 20)
#define PERFMAP_ANY_OWNER ((uid_t)-1)

struct perfmap;

/*
 * Read and index the map at path, resolved inside root_fd (a process's /proc/PID/root, so a
 * containerized JIT's /tmp is found) without following any symlink; AT_FDCWD: path as it is, a
 * symlink as its last component refused. Only a regular file owned by owner or by root
 * (PERFMAP_ANY_OWNER: anyone) is read, and only its first PERFMAP_MAX_BYTES. Returns NULL and
 * sets errno: ENOENT, EACCES, ELOOP (a symlink), EINVAL (not a regular file: a FIFO would block
 * the reader), EPERM (another owner), ENOMEM. An empty file is an empty map, not an error: a JIT
 * may not have written anything yet.
 */
struct perfmap *perfmap__load_at(int root_fd, const char *path, uid_t owner);
/* perfmap__load_at(AT_FDCWD, path, PERFMAP_ANY_OWNER). */
struct perfmap *perfmap__load(const char *path);
void perfmap__free(struct perfmap *m);

/* The name of the symbol covering addr ([start, start + size)), or NULL; when found and start is
 * not NULL, *start is set to the symbol's start. When symbols overlap, the one later in the file
 * wins: JITs reuse code memory and append the new symbol. The name lives as long as the map. */
const char *perfmap__find(const struct perfmap *m, uint64_t addr, uint64_t *start);

/* Lines read as symbols (size-0 ones included, though they cover nothing). */
size_t perfmap__count(const struct perfmap *m);
/* Blank and malformed lines, skipped. */
size_t perfmap__skipped(const struct perfmap *m);
/* Bytes of the file past PERFMAP_MAX_BYTES, left unread (at least 1 when it grew past the cap
 * while being read); 0 when the whole file was read. */
uint64_t perfmap__unread(const struct perfmap *m);

#endif /* PERCH_PERFMAP_H */
