/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JIT symbol maps in perf's format (/tmp/perf-PID.map): one symbol a line, "START SIZE NAME",
 * START and SIZE in hex with or without 0x, NAME the rest of the line (spaces allowed).
 */
#ifndef PERCH_PERFMAP_H
#define PERCH_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap;

/* Read and index the map at path. Returns NULL and sets errno (ENOENT, EACCES, ENOMEM, ...). An
 * empty file is an empty map, not an error: a JIT may not have written anything yet. */
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

#endif /* PERCH_PERFMAP_H */
