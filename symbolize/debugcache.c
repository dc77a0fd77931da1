// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Decompressed copies of debug files (see debugcache.h). A copy is the file itself with each
 * compressed .debug_* section that the DWARF index reads inflated (elf_compress(scn, 0, 0)) and
 * laid out again by libelf: the same sections, headers and contents.
 * Named DIR/BUILDID.debug.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "debuginfo.h"
#include "dwarf_index.h"
#include "lib/log.h"
#include "lib/safefile.h"

/* Larger debug files (compressed, and all they inflate to) are read as they are. */
#define MAX_SOURCE (1ull << 30)
#define MAX_PLAIN  (4ull << 30)

/* The section after scn (NULL: the first) that is a compressed .debug_* section the DWARF index
 * reads; NULL at the end. The others (locations, macros: 14 % of libc's) stay compressed. */
static Elf_Scn *next_compressed(Elf *elf, size_t shstrndx, Elf_Scn *scn)
{
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (sh.sh_flags & SHF_COMPRESSED) &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strncmp(name, ".debug_", 7) == 0 && !dwarf_index__unused_section(name))
			return scn;
	}
	return NULL;
}

/* The bytes the compressed DWARF sections inflate to (0: none is compressed); UINT64_MAX when
 * a compressed header does not read. */
static uint64_t plain_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t total = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = next_compressed(elf, shstrndx, scn))) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch))
			return UINT64_MAX;
		total += ch.ch_size;
	}
	return total;
}

/* Whether a copy elsewhere still finds everything the file names: a dwz alt file named by a
 * relative path (.gnu_debugaltlink) is looked for next to the file. */
static bool movable(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = debuginfo__section(elf, ".gnu_debugaltlink", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	return !scn || (d && d->d_size > 0 && ((const char *)d->d_buf)[0] == '/');
}

static bool same_build_id(Elf *elf, const uint8_t *id, size_t len)
{
	const void *have;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &have);

	return n > 0 && (size_t)n == len && memcmp(have, id, len) == 0;
}

/* The copy at path, if it is one to trust: an fd, else -errno. */
static int open_copy(const char *path, const uint8_t *id, size_t len)
{
	struct stat sb;
	Elf *elf = NULL;
	int fd = safefile__open(AT_FDCWD, path, O_RDONLY, 0), err = -EINVAL;

	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) || sb.st_uid != geteuid() || (sb.st_mode & 022))
		goto out;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && same_build_id(elf, id, len) && !plain_bytes(elf))
		err = 0;
out:
	elf_end(elf);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int copy_bytes(int from, int to, uint64_t size)
{
	char buf[1 << 16];
	uint64_t off = 0;

	while (off < size) {
		ssize_t n = pread(from, buf, sizeof(buf), (off_t)off), w;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO; /* shorter than it was a moment ago */
		for (ssize_t done = 0; done < n; done += w) {
			w = write(to, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				return -errno;
		}
		off += (uint64_t)n;
	}
	return 0;
}

/* tmp (a copy of the file's bytes) with its compressed DWARF inflated in place. */
static int inflate_sections(int tmp)
{
	Elf *elf = elf_begin(tmp, ELF_C_RDWR, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err = -EINVAL;

	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = next_compressed(elf, shstrndx, scn))) {
		if (elf_compress(scn, 0, 0) < 0)
			goto out;
	}
	/* libelf lays the grown sections out again and writes the whole file. */
	if (elf_update(elf, ELF_C_WRITE) < 0)
		goto out;
	err = 0;
out:
	elf_end(elf);
	return err;
}

static int make_copy(const char *dir, const char *path, int fd, uint64_t size)
{
	char *tmp = NULL;
	int t, err;

	if (asprintf(&tmp, "%s/.new-XXXXXX", dir) < 0)
		return -ENOMEM;
	t = mkstemp(tmp); /* mode 0600 */
	if (t < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	err = copy_bytes(fd, t, size);
	if (!err)
		err = inflate_sections(t);
	if (close(t) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

int debugcache__open(const char *dir, int fd, const uint8_t *build_id, size_t build_id_len,
		     char **path)
{
	char *name = NULL, *p;
	struct stat sb;
	uint64_t plain;
	Elf *elf;
	int out, err;

	*path = NULL;
	if (!dir || !build_id || !build_id_len || build_id_len > 64)
		return -ENOENT;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size > MAX_SOURCE)
		return -ENOENT;
	if (!safefile__owned_dir(dir)) {
		log_debug("debug cache: %s is not this user's directory: not used", dir);
		return -EPERM;
	}
	/* A debug file without the build-id (found by .gnu_debuglink) would never match its copy;
	 * one whose dwz alt file is named relative to it would lose it. */
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	plain = elf && elf_kind(elf) == ELF_K_ELF && same_build_id(elf, build_id, build_id_len) &&
				movable(elf)
			? plain_bytes(elf)
			: 0;
	elf_end(elf);
	if (!plain || plain > MAX_PLAIN)
		return -ENOENT;

	name = malloc(strlen(dir) + 2 * build_id_len + sizeof("/.debug"));
	if (!name)
		return -ENOMEM;
	p = name + sprintf(name, "%s/", dir);
	for (size_t i = 0; i < build_id_len; i++)
		p += sprintf(p, "%02x", build_id[i]);
	strcpy(p, ".debug");

	out = open_copy(name, build_id, build_id_len);
	if (out < 0) {
		/* None yet, or one not to trust (replaced: the name is ours to write). */
		err = make_copy(dir, name, fd, (uint64_t)sb.st_size);
		out = err ? err : open_copy(name, build_id, build_id_len);
	}
	if (out < 0) {
		free(name);
		return out;
	}
	*path = name;
	return out;
}
