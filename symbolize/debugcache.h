/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Decompressed copies of separate debug files, kept per build-id. Debian compresses the DWARF
 * sections of its debug files (SHF_COMPRESSED, zlib); libdw inflates every one of them when it
 * opens a file, tens of milliseconds for libc's, in every run that needs a line not yet in the
 * line cache. A plain copy is mapped instead: a lookup then reads only the pages it touches.
 * Internal to symbolize/.
 */
#ifndef PERCH_DEBUGCACHE_H
#define PERCH_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The plain copy of the debug file open at fd (whose build-id is build_id), made in dir when
 * there is none yet. Returns an open fd of the copy and sets *path (malloc'd) to it; the caller
 * keeps fd either way. -ENOENT when fd has no compressed DWARF (nothing to gain), does not carry
 * build_id, or names its dwz alt file by a path relative to itself (a copy would lose it); -EPERM
 * when dir is not a directory this user owns (nothing is read from it or written to it); another
 * -errno when no copy can be had. The caller then reads the file at fd as it is.
 *
 * A copy is used only when it is a regular file this user owns that no one else can write, and
 * its build-id note matches; it is written to a temporary name and renamed into place, so a
 * reader never sees half of one.
 */
int debugcache__open(const char *dir, int fd, const uint8_t *build_id, size_t build_id_len,
		     char **path);

#endif /* PERCH_DEBUGCACHE_H */
