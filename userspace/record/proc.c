// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process facts from /proc. This part owns the snapshot of a process's executable mappings
 * (parsed from /proc/PID/maps, each file-backed one with the /proc/PID/map_files path that keeps
 * it openable even after the file was deleted or replaced) and reads thread names.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/search.h"
#include "lib/vec.h"
#include "proc.h"

#define MAPS_LINE "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %" SCNx64 ":%" SCNx64 " %" SCNu64 "%n"
#define MAP_FILES "/proc/%d/map_files/%" PRIx64 "-%" PRIx64

struct proc_maps {
	struct proc_map *maps; /* sorted by start: the kernel prints mappings in address order */
	size_t nr;
	size_t cap;
};

/* The kernel reports a pid that went away as a missing /proc entry (or ESRCH mid-read). */
static int proc_errno(int err)
{
	return err == ENOENT ? ESRCH : err;
}

static int push_map(struct proc_maps *m, const struct proc_map *map)
{
	if (vec_grow(&m->maps, &m->cap, m->nr + 1, sizeof(*m->maps), 32))
		return -ENOMEM;
	m->maps[m->nr++] = *map;
	return 0;
}

/*
 * One line of maps: "START-END PERMS PGOFF MAJ:MIN INODE    PATH". The path is everything after
 * the padding, spaces and a " (deleted)" suffix included. Non-executable lines are skipped.
 */
static int parse_line(struct proc_maps *m, pid_t pid, char *line)
{
	struct proc_map map = {0};
	char perms[5];
	char *path;
	size_t len;
	int pos = 0, err;

	if (sscanf(line, MAPS_LINE, &map.start, &map.end, perms, &map.pgoff, &map.dev_major,
		   &map.dev_minor, &map.inode, &pos) != 7)
		return -EINVAL;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return 0;
	path = line + pos;
	while (*path == ' ' || *path == '\t')
		path++;
	len = strlen(path);
	if (len && path[len - 1] == '\n')
		path[--len] = '\0';

	map.path = strdup(path);
	if (!map.path)
		return -ENOMEM;
	/* Only file-backed mappings have a map_files entry; [vdso], [heap] and anonymous ones not. */
	if (path[0] == '/') {
		if (asprintf(&map.open_path, MAP_FILES, (int)pid, map.start, map.end) < 0) {
			map.open_path = NULL;
			err = -ENOMEM;
			goto err_out;
		}
	} else if (proc_vdso_path(path)) {
		map.open_path = strdup(proc_vdso_path(path));
		if (!map.open_path) {
			err = -ENOMEM;
			goto err_out;
		}
	}
	err = push_map(m, &map);
	if (err)
		goto err_out;
	return 0;
err_out:
	free(map.path);
	free(map.open_path);
	return err;
}

struct proc_maps *proc_maps__read(pid_t pid)
{
	char path[64], *line = NULL;
	struct proc_maps *m;
	size_t line_cap = 0;
	FILE *f = NULL;
	int err = 0;

	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f) {
		err = -proc_errno(errno);
		goto err_out;
	}
	errno = 0;
	while (getline(&line, &line_cap, f) >= 0) {
		err = parse_line(m, pid, line);
		if (err)
			goto err_out;
		errno = 0;
	}
	if (ferror(f)) {
		err = -proc_errno(errno ? errno : EIO);
		goto err_out;
	}
	free(line);
	fclose(f);
	return m;
err_out:
	free(line);
	if (f)
		fclose(f);
	proc_maps__free(m);
	errno = -err;
	return NULL;
}

struct proc_maps *proc_maps__new(void)
{
	return calloc(1, sizeof(struct proc_maps));
}

struct proc_maps *proc_maps__copy(const struct proc_maps *m)
{
	struct proc_maps *c = proc_maps__new();

	for (size_t i = 0; c && i < m->nr; i++) {
		struct proc_map map = m->maps[i];

		map.path = strdup(map.path);
		map.open_path = map.open_path ? strdup(map.open_path) : NULL;
		if (!map.path || (m->maps[i].open_path && !map.open_path) || push_map(c, &map)) {
			free(map.path);
			free(map.open_path);
			proc_maps__free(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	return c;
}

/* Cut [start, end) out of every mapping: drop the ones inside it, trim the ones that stick out on
 * one side, split one that covers it. */
static int punch_hole(struct proc_maps *m, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < m->nr; i++) {
		struct proc_map *o = &m->maps[i];

		if (o->end <= start || o->start >= end)
			continue;
		if (o->start < start && o->end > end) {
			struct proc_map tail = *o;

			tail.pgoff += end - o->start;
			tail.start = end;
			tail.path = strdup(o->path);
			tail.open_path = o->open_path ? strdup(o->open_path) : NULL;
			if (!tail.path || (o->open_path && !tail.open_path) || push_map(m, &tail)) {
				free(tail.path);
				free(tail.open_path);
				return -ENOMEM;
			}
			m->maps[i].end = start; /* push_map may have moved the array */
			continue;
		}
		if (o->start < start) {
			o->end = start;
		} else if (o->end > end) {
			o->pgoff += end - o->start;
			o->start = end;
		} else {
			free(o->path);
			free(o->open_path);
			m->maps[i--] = m->maps[--m->nr];
		}
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int proc_maps__add(struct proc_maps *m, const struct proc_map *map)
{
	struct proc_map copy = *map;
	int err = punch_hole(m, map->start, map->end);

	if (err)
		return err;
	copy.path = strdup(map->path ? map->path : "");
	copy.open_path = map->open_path ? strdup(map->open_path) : NULL;
	if (!copy.path || (map->open_path && !copy.open_path) || push_map(m, &copy)) {
		free(copy.path);
		free(copy.open_path);
		return -ENOMEM;
	}
	qsort(m->maps, m->nr, sizeof(*m->maps), by_start);
	return 0;
}

void proc_maps__free(struct proc_maps *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nr; i++) {
		free(m->maps[i].path);
		free(m->maps[i].open_path);
	}
	free(m->maps);
	free(m);
}

const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo;

	if (!m)
		return NULL;
	lo = search_last_le(m->maps, m->nr, start, addr);
	if (!lo || addr >= m->maps[lo - 1].end)
		return NULL;
	return &m->maps[lo - 1];
}

size_t proc_maps__count(const struct proc_maps *m)
{
	return m ? m->nr : 0;
}

const struct proc_map *proc_maps__get(const struct proc_maps *m, size_t i)
{
	if (!m || i >= m->nr)
		return NULL;
	return &m->maps[i];
}

int proc_read_uint(const char *path, unsigned int *out)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%u", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* A small /proc file's bytes into buf (NUL-terminated, cut at len - 1): how many, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -proc_errno(errno);
	do {
		n = read(fd, buf, len - 1);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -proc_errno(errno);
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

int proc_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[64], comm[64];
	ssize_t n;

	if (!buf || !len)
		return -EINVAL;
	/* tid <= 0: the process's own name (its main thread). */
	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	n = read_small(path, comm, sizeof(comm));
	if (n < 0)
		return (int)n;
	comm[strcspn(comm, "\n")] = '\0';
	proc_cmdline_text(comm, strlen(comm));
	snprintf(buf, len, "%s", comm);
	return 0;
}

size_t proc_cmdline_text(char *buf, size_t n)
{
	while (n && (!buf[n - 1] || isspace((unsigned char)buf[n - 1])))
		n--;
	for (size_t i = 0; i < n; i++)
		buf[i] = buf[i] ? buf[i] : ' ';
	buf[n] = '\0';
	return n;
}

int proc_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (!buf || !len)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = read_small(path, buf, len);
	if (n < 0)
		return (int)n;
	proc_cmdline_text(buf, (size_t)n);
	return 0;
}

int proc_start_time(pid_t pid, uint64_t *start)
{
	char path[64], stat[1024], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = read_small(path, stat, sizeof(stat));
	if (n < 0)
		return (int)n;
	/* Field 22; the name (field 2) may hold spaces and parentheses, so count from its end. */
	p = strrchr(stat, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%" SCNu64, start) != 1)
		return -EPROTO;
	return 0;
}

const void *proc_vdso_image(size_t *size)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const void *)img;

	if (!img || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* The section headers come last in the image. */
	*size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return *size <= (1u << 20) ? img : NULL;
}

/* A memfd holding perch's own vDSO, made once: the file the symbolizer opens for any process's
 * [vdso] mapping (the kernel maps the same image into every 64-bit process). */
static int vdso_fd(void)
{
	static int fd = -2;
	const void *img;
	size_t size;

	if (fd != -2)
		return fd;
	fd = -1;
	img = proc_vdso_image(&size);
	if (!img)
		return fd;
	fd = memfd_create("perch-vdso", MFD_CLOEXEC);
	if (fd >= 0 && write(fd, img, size) != (ssize_t)size) {
		close(fd);
		fd = -1;
	}
	return fd;
}

const char *proc_vdso_path(const char *map_path)
{
	static char path[32];
	int fd;

	if (strcmp(map_path, "[vdso]"))
		return NULL;
	if (!path[0] && (fd = vdso_fd()) >= 0)
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path[0] ? path : NULL;
}

/* The last number of a "Key:\tN\tN..." line of /proc/PID/status (field < 0), or field n. */
static bool status_field(const char *line, const char *key, int field, unsigned long *out)
{
	size_t klen = strlen(key);
	const char *p = line + klen;
	char *end;
	bool got = false;

	if (strncmp(line, key, klen))
		return false;
	for (int i = 0; field < 0 || i <= field; i++) {
		unsigned long v = strtoul(p, &end, 10);

		if (end == p)
			break;
		*out = v;
		got = true;
		p = end;
	}
	return got;
}

int proc_ns_ids(pid_t pid, uint32_t *nspid, uid_t *euid)
{
	char path[64], line[256];
	unsigned long v;
	bool have_uid = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -proc_errno(errno);
	*nspid = (uint32_t)pid; /* kernels before 4.1 print no NSpid: no pid namespaces to see */
	while (fgets(line, sizeof(line), f)) {
		if (status_field(line, "NSpid:", -1, &v))
			*nspid = (uint32_t)v;
		else if (status_field(line, "Uid:", 1, &v))
			have_uid = true, *euid = (uid_t)v;
	}
	fclose(f);
	return have_uid ? 0 : -ESRCH;
}

ssize_t proc_read_cgroup(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n = 0, got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -proc_errno(errno);
	while ((size_t)n < size - 1 && (got = read(fd, buf + n, size - 1 - (size_t)n)) > 0)
		n += got;
	close(fd);
	buf[n] = '\0';
	return n;
}
