/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Source lines and inline chains already resolved, kept across runs per build-id (like perf's
 * build-id cache): the next recording of the same binaries needs no DWARF at all for the
 * addresses seen before. One append-only file per build-id under the cache directory; a file
 * another user could have written, or a malformed record, is never trusted (reading stops there).
 */
#ifndef PERCH_LINECACHE_H
#define PERCH_LINECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/symbolizer.h"

struct linecache;

/* A build-id's file in the cache directory: DIR/BUILDID.nNAMING, so a chain named under other
 * rules (symbolize/symbolizer.h's SYMBOLIZER_NAMING) is never read. */
#define LINECACHE_FILE "%s/%s.n" SYMBOLIZER_NAMING

/* dir NULL: $XDG_CACHE_HOME/perch/lines, or ~/.cache/perch/lines. NULL + errno when there is no
 * directory to use (perch then resolves everything from DWARF). */
struct linecache *linecache__new(const char *dir);
/* Write what was added, then free. */
void linecache__free(struct linecache *lc);

/* The chain cached for (build_id, file offset looked up): true with *frames (valid until
 * linecache__free) and *n (0: DWARF had nothing there); false when not cached. */
bool linecache__get(struct linecache *lc, const char *build_id, uint64_t offset,
		    const struct sym_frame **frames, size_t *n);
/* Remember a chain (n may be 0); written at linecache__free(). */
void linecache__put(struct linecache *lc, const char *build_id, uint64_t offset,
		    const struct sym_frame *frames, size_t n);

#endif /* PERCH_LINECACHE_H */
