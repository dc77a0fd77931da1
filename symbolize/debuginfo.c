// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Separate debug file lookup (see debuginfo.h). This part owns no state: it opens candidates,
 * checks that they belong to the module (same build-id, or the CRC .gnu_debuglink records) and
 * that they hold DWARF, and hands back the first that does.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "debuginfo.h"

Elf_Scn *debuginfo__section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && sh->sh_type != SHT_NOBITS && sh->sh_size &&
		    (n = elf_strptr(elf, shstrndx, sh->sh_name)) && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

bool debuginfo__has_dwarf(Elf *elf)
{
	GElf_Shdr sh;

	return debuginfo__section(elf, ".debug_info", &sh) ||
	       debuginfo__section(elf, ".zdebug_info", &sh);
}

/* Open path if it is a regular file other than the module itself. */
static int open_candidate(const char *path, const struct debuginfo_query *q)
{
	struct stat st, self;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (fstat(q->fd, &self) == 0 && self.st_dev == st.st_dev && self.st_ino == st.st_ino)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* Does the ELF file in fd hold DWARF (and, with build_id, carry that build-id)? */
static bool usable(int fd, const uint8_t *build_id, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id;
	ssize_t n;
	bool ok;

	if (!elf)
		return false;
	ok = elf_kind(elf) == ELF_K_ELF && debuginfo__has_dwarf(elf);
	if (ok && build_id) {
		n = dwelf_elf_gnu_build_id(elf, &id);
		ok = n > 0 && (size_t)n == len && memcmp(id, build_id, len) == 0;
	}
	elf_end(elf);
	return ok;
}

/* CRC-32 of the whole file, as .gnu_debuglink records it (zlib's polynomial). */
static bool crc_matches(int fd, GElf_Word want)
{
	unsigned char buf[64 * 1024];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t pos = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), pos)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		crc = crc32(crc, buf, (uInt)n);
		pos += n;
	}
	return (GElf_Word)crc == want;
}

static int try_build_id(const struct debuginfo_query *q, char *path, size_t len)
{
	size_t i, off;
	int n, fd;

	if (!q->build_id || q->build_id_len < 2 || !q->root)
		return -ENOENT;
	n = snprintf(path, len, "%s/.build-id/%02x/", q->root, q->build_id[0]);
	if (n < 0 || (size_t)n >= len)
		return -ENOENT;
	off = (size_t)n;
	for (i = 1; i < q->build_id_len && off + 3 < len; i++, off += 2)
		snprintf(path + off, len - off, "%02x", q->build_id[i]);
	n = snprintf(path + off, len - off, ".debug");
	if (i < q->build_id_len || n < 0 || (size_t)n >= len - off)
		return -ENOENT;
	fd = open_candidate(path, q);
	if (fd < 0)
		return fd;
	if (!usable(fd, q->build_id, q->build_id_len)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* PREFIX DIR/ SUB NAME, if its CRC is the one .gnu_debuglink records and it holds DWARF. */
static int try_debuglink_at(const struct debuginfo_query *q, char *path, size_t len,
			    const char *prefix, const char *dir, const char *sub, const char *name,
			    GElf_Word crc)
{
	int n = snprintf(path, len, "%s%s/%s%s", prefix, dir, sub, name);
	int fd;

	if (n < 0 || (size_t)n >= len)
		return -ENOENT;
	fd = open_candidate(path, q);
	if (fd < 0)
		return fd;
	/* CRC first: it is what ties the file to this build of the module. */
	if (!crc_matches(fd, crc) || !usable(fd, NULL, 0)) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

/* GDB's order: next to the module, in .debug/ next to it, under the global root. */
static int try_debuglink(const struct debuginfo_query *q, char *path, size_t len)
{
	GElf_Word crc;
	const char *name = dwelf_elf_gnu_debuglink(q->elf, &crc);
	size_t d;
	int fd;

	if (!name || !*name || strchr(name, '/'))
		return -ENOENT;
	for (d = 0; q->dirs && q->dirs[d]; d++) {
		fd = try_debuglink_at(q, path, len, "", q->dirs[d], "", name, crc);
		if (fd < 0)
			fd = try_debuglink_at(q, path, len, "", q->dirs[d], ".debug/", name, crc);
		if (fd < 0 && q->root)
			fd = try_debuglink_at(q, path, len, q->root, q->dirs[d], "", name, crc);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

int debuginfo__open(const struct debuginfo_query *q, char **path)
{
	char buf[PATH_MAX];
	int fd;

	*path = NULL;
	fd = try_build_id(q, buf, sizeof(buf));
	if (fd < 0)
		fd = try_debuglink(q, buf, sizeof(buf));
	if (fd < 0)
		return -ENOENT;
	*path = strdup(buf);
	if (!*path) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}
