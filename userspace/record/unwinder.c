// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unwind tables in the kernel (see unwinder.h). Modules are cached by (device, inode), as
 * the symbolizer does, so a library that many processes map is built and copied once (one batch
 * update of the rows array per table). Rows are never taken back: the array holds every table
 * loaded during the recording (PERCH_UNWIND_ROWS rows, enough for a few hundred typical
 * modules); when it is full, further modules are walked with frame pointers and counted.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/log.h"
#include "bpf/perch_bpf.h"
#include "lib/u64map.h"
#include "unwind/unwind_table.h"
#include "unwinder.h"

_Static_assert(sizeof(struct perch_row_pair) == 2 * sizeof(struct unwind_row),
	       "row pairs have no padding: a table's rows are copied in as they are");

struct module {
	uint64_t dev, ino;	/* 0, 0: the vDSO */
	struct unwind_table *t; /* NULL: no table (none, unreadable, or no room) */
	uint32_t first_row;
};

struct uproc {
	uint32_t pid;
	struct perch_proc_unwind v;
};

struct unwinder {
	int rows_fd, procs_fd;
	uint32_t next_row; /* even: tables start on a pair */
	struct module *mods;
	size_t nmods, capmods;
	struct uproc **procs;
	size_t nprocs, capprocs;
	struct u64map pid_index; /* pid -> index in procs */
	uint64_t stats[UNWINDER_STAT_MAX];
};

static const struct module *get_module(struct unwinder *u, uint32_t pid, const struct proc_map *m);

/*
 * Build the tables of the modules nearly every target maps (the C library, the dynamic loader,
 * the vDSO) from perch's own mappings now: the first ticks of a launched command come within
 * milliseconds of its libraries being mapped, sooner than a table could be built then.
 */
static void preload(struct unwinder *u)
{
	struct proc_maps *maps = proc_maps__read(getpid());

	for (size_t i = 0; maps && i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);
		const char *base = strrchr(m->path, '/');

		if (!strcmp(m->path, "[vdso]") ||
		    (base && (!strncmp(base, "/libc.so", 8) || !strncmp(base, "/ld-linux", 9))))
			get_module(u, getpid(), m);
	}
	proc_maps__free(maps);
}

struct unwinder *unwinder__new(int rows_fd, int procs_fd)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	preload(u);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nmods; i++)
		unwind_table__free(u->mods[i].t);
	for (size_t i = 0; i < u->nprocs; i++)
		free(u->procs[i]);
	free(u->mods);
	free(u->procs);
	u64map__clear(&u->pid_index);
	free(u);
}

uint64_t unwinder__stat(const struct unwinder *u, enum unwinder_stat which)
{
	return which < UNWINDER_STAT_MAX ? u->stats[which] : 0;
}

/* ---- modules -------------------------------------------------------------------------------- */

/* The vDSO the kernel maps into every process is the one it maps into perch: read our own. */
static struct unwind_table *build_vdso(void)
{
	struct unwind_table *t = NULL;
	size_t size;
	const void *img = proc_vdso_image(&size);
	void *copy;
	Elf *elf;

	if (!img || elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	copy = malloc(size);
	if (!copy)
		return NULL;
	memcpy(copy, img, size);
	elf = elf_memory(copy, size);
	if (elf)
		t = unwind_table__build_elf(elf, NULL);
	elf_end(elf);
	free(copy);
	return t;
}

/* What perch can open for a mapping now: the path itself when it still names the mapped file,
 * else /proc/PID/map_files (another mount namespace, a deleted or replaced file). */
static struct unwind_table *build_file(uint32_t pid, const struct proc_map *m)
{
	struct unwind_table *t;
	char *path = NULL;
	struct stat st;

	if (stat(m->path, &st) == 0 && st.st_ino == m->inode && major(st.st_dev) == m->dev_major &&
	    minor(st.st_dev) == m->dev_minor)
		return unwind_table__build(m->path);
	if (kill(pid, 0) || asprintf(&path, "/proc/%u/map_files/%llx-%llx", pid,
				     (unsigned long long)m->start, (unsigned long long)m->end) < 0)
		return NULL;
	t = unwind_table__build(path);
	free(path);
	return t;
}

/* Copy the rows [first, first + n) of a table, pair by pair, into the kernel's array from element
 * first / 2 on (first is even); an odd last row is paired with an empty one. */
static int write_rows(struct unwinder *u, const struct unwind_row *rows, size_t n, uint32_t first)
{
	size_t npairs = (n + 1) / 2;
	__u32 *keys = calloc(npairs, sizeof(*keys)), count = npairs;
	struct perch_row_pair *last = NULL;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < npairs; i++)
		keys[i] = first / 2 + i;
	if (n % 2) {
		/* The batch reads whole pairs: the last one from a padded copy. */
		last = calloc(1, sizeof(*last));
		if (!last) {
			free(keys);
			return -ENOMEM;
		}
		last->row[0] = rows[n - 1];
		count = npairs - 1;
	}
	if (count && bpf_map_update_batch(u->rows_fd, keys, rows, &count, NULL))
		err = -errno;
	if (!err && last && bpf_map_update_elem(u->rows_fd, &keys[npairs - 1], last, BPF_ANY))
		err = -errno;
	free(last);
	free(keys);
	return err;
}

/* Load t's rows into the kernel's array; false when they do not fit. */
static bool load_rows(struct unwinder *u, struct module *mod)
{
	const struct unwind_row *rows;
	size_t nr;
	int err;

	rows = unwind_table__rows(mod->t, &nr);
	if (nr > PERCH_UNWIND_ROWS - u->next_row) {
		if (!u->stats[UNWINDER_ROWS_FULL])
			log_warn("unwinder: unwind rows full (%u): more modules walk with frame "
				 "pointers",
				 PERCH_UNWIND_ROWS);
		u->stats[UNWINDER_ROWS_FULL]++;
		return false;
	}
	err = write_rows(u, rows, nr, u->next_row);
	if (err) {
		log_warn("unwinder: load unwind rows: %s", strerror(-err));
		return false;
	}
	mod->first_row = u->next_row;
	u->next_row += (nr + 1) & ~(size_t)1;
	u->stats[UNWINDER_TABLES]++;
	u->stats[UNWINDER_ROWS] += nr;
	return true;
}

static struct module *find_module(struct unwinder *u, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < u->nmods; i++)
		if (u->mods[i].dev == dev && u->mods[i].ino == ino)
			return &u->mods[i];
	return NULL;
}

/* The module a mapping shows, its table built and loaded the first time; NULL when it has no
 * table (anonymous memory, special mappings other than the vDSO, no CFI). */
static const struct module *get_module(struct unwinder *u, uint32_t pid, const struct proc_map *m)
{
	bool vdso = !strcmp(m->path, "[vdso]");
	uint64_t dev = vdso ? 0 : makedev(m->dev_major, m->dev_minor), ino = vdso ? 0 : m->inode;
	struct module *mod;

	if (!vdso && (m->path[0] != '/' || !m->inode))
		return NULL;
	mod = find_module(u, dev, ino);
	if (mod)
		return mod->t ? mod : NULL;
	if (u->nmods == u->capmods) {
		size_t cap = u->capmods ? 2 * u->capmods : 32;
		struct module *v = realloc(u->mods, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->mods = v;
		u->capmods = cap;
	}
	mod = &u->mods[u->nmods++];
	*mod = (struct module){.dev = dev, .ino = ino};
	mod->t = vdso ? build_vdso() : build_file(pid, m);
	if (mod->t && !load_rows(u, mod)) {
		unwind_table__free(mod->t);
		mod->t = NULL;
	}
	if (!mod->t && errno == EBADMSG) {
		u->stats[UNWINDER_CFI_DAMAGED]++;
		log_warn(
			"unwinder: %s: its CFI (.eh_frame) is damaged: stacks through it are walked "
			"by frame pointers and may stop early or go astray",
			m->path);
		return NULL;
	}
	if (!mod->t) {
		u->stats[UNWINDER_NO_TABLE]++;
		log_debug("unwinder: %s: no unwind table: %s", m->path, strerror(errno));
		return NULL;
	}
	log_debug("unwinder: %s: %zu rows", m->path, unwind_table__stats(mod->t)->rows);
	return mod;
}

void unwinder__preload(struct unwinder *u, const char *path)
{
	struct stat st;
	struct proc_map m = {.path = (char *)path};

	if (stat(path, &st))
		return;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	m.inode = st.st_ino;
	get_module(u, getpid(), &m);
}

/* ---- processes ------------------------------------------------------------------------------ */

static struct uproc *find_proc(struct unwinder *u, uint32_t pid)
{
	uint64_t idx;

	return u64map__get(&u->pid_index, pid, &idx) ? u->procs[idx] : NULL;
}

static struct uproc *get_proc(struct unwinder *u, uint32_t pid)
{
	struct uproc *p = find_proc(u, pid);

	if (p)
		return p;
	if (u->nprocs == u->capprocs) {
		size_t cap = u->capprocs ? 2 * u->capprocs : 16;
		struct uproc **v = realloc(u->procs, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->procs = v;
		u->capprocs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p || u64map__put(&u->pid_index, pid, u->nprocs)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	u->procs[u->nprocs++] = p;
	return p;
}

static void drop_proc(struct unwinder *u, uint32_t pid)
{
	uint64_t idx;

	if (!u64map__get(&u->pid_index, pid, &idx))
		return;
	free(u->procs[idx]);
	u->procs[idx] = u->procs[--u->nprocs];
	/* u64map has no delete: rebuild the index (exits are rare next to samples). */
	u64map__clear(&u->pid_index);
	for (size_t i = 0; i < u->nprocs; i++)
		u64map__put(&u->pid_index, u->procs[i]->pid, i);
}

static void push_map(struct perch_proc_unwind *out, const struct perch_unwind_map *m,
		     uint64_t *dropped)
{
	if (m->start >= m->end)
		return;
	if (out->n == PERCH_UNWIND_MAPS) {
		(*dropped)++;
		return;
	}
	out->map[out->n++] = *m;
}

/*
 * Put [start, end) into v as mmap(MAP_FIXED) does: what it overlaps is cut away, and the new
 * mapping (when add is not NULL) takes its place in address order.
 */
static void place(struct perch_proc_unwind *v, uint64_t start, uint64_t end,
		  const struct perch_unwind_map *add, uint64_t *dropped)
{
	struct perch_proc_unwind out = {0};
	bool added = !add;

	for (uint32_t i = 0; i < v->n; i++) {
		struct perch_unwind_map lo = v->map[i], hi = v->map[i];

		if (!added && add->start < lo.start) {
			push_map(&out, add, dropped);
			added = true;
		}
		if (lo.end <= start || lo.start >= end) {
			push_map(&out, &lo, dropped);
			continue;
		}
		/* The parts below and above the new range survive (base is absolute). */
		lo.end = start;
		push_map(&out, &lo, dropped);
		if (!added && add->start < end) {
			push_map(&out, add, dropped);
			added = true;
		}
		hi.start = end;
		push_map(&out, &hi, dropped);
	}
	if (!added)
		push_map(&out, add, dropped);
	*v = out;
}

static void publish(struct unwinder *u, const struct uproc *p)
{
	if (bpf_map_update_elem(u->procs_fd, &p->pid, &p->v, BPF_ANY)) {
		if (!u->stats[UNWINDER_PROCS_FULL])
			log_warn("unwinder: list tables of process %u: %s", p->pid,
				 strerror(errno));
		u->stats[UNWINDER_PROCS_FULL]++;
	}
}

static void add_map(struct unwinder *u, struct uproc *p, uint32_t pid, const struct proc_map *m)
{
	const struct module *mod = get_module(u, pid, m);
	struct perch_unwind_map e;
	size_t nrows;
	uint64_t bias;

	if (!mod || unwind_table__load_bias(mod->t, m->start, m->end, m->pgoff, &bias)) {
		place(&p->v, m->start, m->end, NULL, &u->stats[UNWINDER_MAPS_FULL]);
		return;
	}
	unwind_table__rows(mod->t, &nrows);
	e = (struct perch_unwind_map){
		.start = m->start,
		.end = m->end,
		.base = unwind_table__base(mod->t) + bias,
		.first_row = mod->first_row,
		.nrows = (uint32_t)nrows,
	};
	place(&p->v, m->start, m->end, &e, &u->stats[UNWINDER_MAPS_FULL]);
}

void unwinder__mmap(struct unwinder *u, uint32_t pid, const struct proc_map *m)
{
	struct uproc *p = get_proc(u, pid);

	if (!p)
		return;
	add_map(u, p, pid, m);
	publish(u, p);
}

void unwinder__snapshot(struct unwinder *u, uint32_t pid)
{
	struct proc_maps *maps = proc_maps__read(pid);
	struct uproc *p = get_proc(u, pid);

	if (!maps || !p) {
		proc_maps__free(maps);
		return;
	}
	for (size_t i = 0; i < proc_maps__count(maps); i++)
		add_map(u, p, pid, proc_maps__get(maps, i));
	publish(u, p);
	proc_maps__free(maps);
}

void unwinder__exec(struct unwinder *u, uint32_t pid)
{
	struct uproc *p = find_proc(u, pid);

	if (p)
		p->v.n = 0;
	/* The sampler dropped its copy at the exec; the new image's mmaps publish a new one. */
	bpf_map_delete_elem(u->procs_fd, &pid);
}

void unwinder__fork(struct unwinder *u, uint32_t parent, uint32_t child)
{
	struct uproc *pp = find_proc(u, parent), *c;

	if (!pp)
		return;
	c = get_proc(u, child);
	if (c && c != pp)
		c->v = pp->v;
}

void unwinder__exit(struct unwinder *u, uint32_t pid)
{
	drop_proc(u, pid);
	bpf_map_delete_elem(u->procs_fd, &pid);
}
