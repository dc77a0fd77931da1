// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel's symbols, kept for the rest of the boot. Reading /proc/kallsyms costs tens of
 * milliseconds of kernel time (it formats a few hundred thousand lines); the addresses of the
 * kernel's text and of loaded modules do not change until a module is loaded or unloaded. So
 * the table goes to a root-only file under /run (gone at reboot), stamped with the boot id and a
 * hash of /proc/modules (module names, sizes and load addresses); a later perch of the same boot
 * with the same modules reads it back in well under a millisecond.
 *
 * The cache vouches only for the kernel's own text and the text of listed modules. Code that
 * comes and goes (BPF programs, ftrace and kprobe trampolines) is left out; an address outside
 * what the cache covers makes the caller read /proc/kallsyms after all (ksyms__covers()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hash.h"
#include "ksyms.h"
#include "ksyms_impl.h"
#include "lib/log.h"
#include "lib/safefile.h"
#include "lib/vec.h"

#define CACHE_MAGIC   "PERCHKS2"
#define MAX_MODULES   4096
#define MODULES_BYTES (1 << 20)

struct cache_hdr {
	char magic[8];
	char boot_id[40];
	uint64_t modules_hash;
	uint32_t nsyms, nranges;
	uint64_t strings;
};

#define NO_STR KSYM_NO_STR

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while (have < cap) {
		ssize_t n = read(fd, buf + have, cap - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	return (ssize_t)have;
}

/* This boot and these modules: what a cache must have been written under. */
struct stamp {
	char boot_id[40];
	uint64_t modules_hash;
	struct ksym_range ranges[MAX_MODULES];
	char names[MAX_MODULES][64];
	uint32_t nranges;
};

static int read_stamp(struct stamp *st, const char *modules_path, const char *boot_id_path)
{
	char *mods = malloc(MODULES_BYTES);
	ssize_t n;
	char *line, *save = NULL;

	if (!mods)
		return -ENOMEM;
	memset(st->boot_id, 0, sizeof(st->boot_id));
	if (read_small(boot_id_path, st->boot_id, sizeof(st->boot_id) - 1) <= 0) {
		free(mods);
		return -ENOENT;
	}
	n = read_small(modules_path, mods, MODULES_BYTES - 1);
	if (n < 0 && errno == ENOENT)
		n = 0; /* a kernel built without module support */
	if (n < 0 || n == MODULES_BYTES - 1) {
		free(mods);
		return -ENOENT;
	}
	mods[n] = '\0';
	st->modules_hash = fnv64_bytes(FNV64_OFFSET, mods, (size_t)n);
	st->nranges = 0;
	/* "name size refcount deps state address [taint]" */
	for (line = strtok_r(mods, "\n", &save); line && st->nranges < MAX_MODULES;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long size, addr;

		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", name, &size, &addr) != 3 || !addr)
			continue;
		st->ranges[st->nranges].lo = addr;
		st->ranges[st->nranges].hi = addr + size;
		memcpy(st->names[st->nranges], name, sizeof(name));
		st->nranges++;
	}
	free(mods);
	return 0;
}

/* A module symbol the cache may keep: one of a listed module, inside its range. */
static bool module_listed(const struct stamp *st, const struct ksym *s)
{
	for (uint32_t i = 0; i < st->nranges; i++) {
		if (!strcmp(st->names[i], s->module))
			return s->addr >= st->ranges[i].lo && s->addr < st->ranges[i].hi;
	}
	return false;
}

static uint32_t put_str(char **blob, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t off = (uint32_t)*len;

	if (vec_grow(blob, cap, *len + n, 1, 1 << 20))
		return NO_STR;
	memcpy(*blob + *len, s, n);
	*len += n;
	return off;
}

/* Write what the cache may hold of the full table k: the kernel's text, the listed modules'. */
static void write_cache(const struct ksyms *k, const struct stamp *st, const char *path)
{
	struct cache_hdr h = {.magic = CACHE_MAGIC, .modules_hash = st->modules_hash};
	struct ksym_range core = ksyms__core_range(k);
	struct ksym_stored *syms = calloc(ksyms__count(k) + 1, sizeof(*syms));
	struct ksym_range ranges[MAX_MODULES + 1];
	char *blob = NULL, tmp[4096];
	size_t len = 0, cap = 0, n = 0;
	const char *mod_last = NULL;
	uint32_t mod_off = NO_STR;
	int fd;

	if (!syms || !core.hi)
		goto out;
	memcpy(h.boot_id, st->boot_id, sizeof(h.boot_id));
	for (size_t i = 0; i < ksyms__count(k); i++) {
		const struct ksym *s = ksyms__at(k, i);
		bool keep =
			s->module ? module_listed(st, s) : s->addr >= core.lo && s->addr < core.hi;

		if (!keep)
			continue;
		syms[n].addr = s->addr;
		syms[n].name = s->name ? put_str(&blob, &len, &cap, s->name) : NO_STR;
		if (s->module && s->module != mod_last) {
			mod_off = put_str(&blob, &len, &cap, s->module);
			mod_last = s->module;
		}
		syms[n].module = s->module ? mod_off : NO_STR;
		if ((s->name && syms[n].name == NO_STR) || (s->module && mod_off == NO_STR))
			goto out;
		n++;
	}
	ranges[0] = core;
	memcpy(ranges + 1, st->ranges, st->nranges * sizeof(*ranges));
	h.nsyms = (uint32_t)n;
	h.nranges = st->nranges + 1;
	h.strings = len;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    write(fd, ranges, h.nranges * sizeof(*ranges)) !=
		    (ssize_t)(h.nranges * sizeof(*ranges)) ||
	    write(fd, syms, n * sizeof(*syms)) != (ssize_t)(n * sizeof(*syms)) ||
	    write(fd, blob, len) != (ssize_t)len || fsync(fd) || close(fd) || rename(tmp, path)) {
		unlink(tmp);
		goto out;
	}
out:
	free(syms);
	free(blob);
}

/* Whether the cache's header h fits the file (size bytes) and this stamp. */
static bool header_fits(const struct cache_hdr *h, const struct stamp *st, uint64_t size)
{
	if (memcmp(h->magic, CACHE_MAGIC, 8) ||
	    memcmp(h->boot_id, st->boot_id, sizeof(h->boot_id)) ||
	    h->modules_hash != st->modules_hash || !h->nranges || h->nranges > MAX_MODULES + 1 ||
	    !h->strings || h->strings > size || h->nsyms > size / sizeof(struct ksym_stored))
		return false;
	return size == sizeof(*h) + h->nranges * sizeof(struct ksym_range) +
			       h->nsyms * sizeof(struct ksym_stored) + h->strings;
}

/* Sorted, every name and module inside the strings, the strings' last byte NUL. */
static bool body_valid(const struct ksym_stored *syms, uint32_t n, const char *strings,
		       uint64_t len)
{
	if (strings[len - 1])
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if ((syms[i].name != NO_STR && syms[i].name >= len) ||
		    (syms[i].module != NO_STR && syms[i].module >= len) ||
		    (i && syms[i].addr < syms[i - 1].addr))
			return false;
	}
	return true;
}

/* The table from the cache at path, when it was written under this stamp; NULL otherwise. The
 * file is mapped, not read: a run looks up a few symbols of ~150,000. */
static struct ksyms *read_cache(const struct stamp *st, const char *path)
{
	const struct cache_hdr *h;
	const struct ksym_stored *syms;
	const struct ksym_range *ranges;
	struct ksyms *k = NULL;
	struct stat sb;
	char *map = MAP_FAILED;
	int fd = safefile__open(AT_FDCWD, path, O_RDONLY, 0);

	if (fd < 0)
		return NULL;
	/* Only a file this user wrote and no one else can change. */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 022) || (uint64_t)sb.st_size < sizeof(*h))
		goto out;
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	h = (const struct cache_hdr *)map;
	if (!header_fits(h, st, (uint64_t)sb.st_size))
		goto out;
	ranges = (const struct ksym_range *)(map + sizeof(*h));
	syms = (const struct ksym_stored *)(ranges + h->nranges);
	if (!body_valid(syms, h->nsyms, (const char *)(syms + h->nsyms), h->strings))
		goto out;
	k = ksyms__from_mapping(map, (size_t)sb.st_size, syms, h->nsyms,
				(const char *)(syms + h->nsyms), ranges, h->nranges);
out:
	if (!k && map != MAP_FAILED)
		munmap(map, (size_t)sb.st_size);
	close(fd);
	return k;
}

/* Write the cache at path, creating its directory, if that directory is this user's: a cache
 * never goes where another user could have put a FIFO or a symlink, or would find root's file. */
static void write_in_own_dir(const struct ksyms *k, const struct stamp *st, const char *path)
{
	char dir[4096], *slash;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return;
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	mkdir(dir, 0700); /* exists already, or cannot be: the check says which */
	if (!safefile__owned_dir(dir)) {
		log_debug("kallsyms cache: %s is not this user's directory: not written", dir);
		return;
	}
	write_cache(k, st, path);
}

struct ksyms *ksyms__load_cached(const char *kallsyms_path, const char *cache_path,
				 const char *modules_path, const char *boot_id_path)
{
	struct stamp *st = malloc(sizeof(*st));
	struct ksyms *k = NULL;

	bool stamped = st && cache_path &&
		       !read_stamp(st, modules_path ? modules_path : "/proc/modules",
				   boot_id_path ? boot_id_path : "/proc/sys/kernel/random/boot_id");

	if (stamped)
		k = read_cache(st, cache_path);
	if (k) {
		free(st);
		return k;
	}
	k = ksyms__load(kallsyms_path);
	if (k && stamped)
		write_in_own_dir(k, st, cache_path);
	free(st);
	return k;
}
