// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unwind tables in the kernel (see unwinder.h), a listener on the process table (procs.h):
 * a module's table lives in its module slot, so a library that many processes map is built and
 * copied once (one batch update of the rows array per table); a process's list of mappings with
 * tables lives in its process slot. Rows are never taken back: the array holds every table
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
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/elfinit.h"
#include "lib/log.h"
#include "bpf/perch_bpf.h"
#include "unwind/unwind_table.h"
#include "procs.h"
#include "unwinder.h"

_Static_assert(sizeof(struct perch_row_pair) == 2 * sizeof(struct unwind_row),
	       "row pairs have no padding: a table's rows are copied in as they are");

/* A module's table, in the module's unwinder slot (procs.h) once it was tried. */
struct module {
	struct unwind_table *t; /* NULL: no table (none, unreadable, or no room) */
	uint32_t first_row;
};

/* A process's list of mappings with tables, in its unwinder slot, as the sampler has it. */
struct uproc {
	struct perch_proc_unwind v;
};

struct unwinder {
	int rows_fd, procs_fd, early_fd;
	struct procs *ps;  /* borrowed */
	int id;		   /* this listener's slots */
	uint32_t next_row; /* even: tables start on a pair */
	uint32_t max_rows; /* the rows array's size (PERCH_UNWIND_ROWS, more with -a) */
	uint64_t stats[UNWINDER_STAT_MAX];
};

static const struct module *get_module(struct unwinder *u, uint32_t pid, const struct proc_map *m,
				       struct procs_module *pm);

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
			get_module(u, getpid(), m, procs__module_of(u->ps, m));
	}
	proc_maps__free(maps);
}

static const struct procs_listener listener;

/* Rows the kernel's array holds: two an element, as the sampler sized it. */
static uint32_t rows_capacity(int rows_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(rows_fd, &info, &len) || !info.max_entries)
		return PERCH_UNWIND_ROWS;
	return info.max_entries * 2;
}

struct unwinder *unwinder__new(int rows_fd, int procs_fd, int early_fd, struct procs *ps)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	struct procs_listener l = listener;

	if (!u)
		return NULL;
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->early_fd = early_fd;
	u->ps = ps;
	u->max_rows = rows_capacity(rows_fd);
	l.ctx = u;
	u->id = procs__listen(ps, &l);
	if (u->id < 0) {
		errno = -u->id;
		free(u);
		return NULL;
	}
	preload(u);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	free(u);
}

static void drop_module(void *ctx, void *slot)
{
	struct module *mod = slot;

	(void)ctx;
	unwind_table__free(mod->t);
	free(mod);
}

static void drop_proc(void *ctx, void *slot)
{
	(void)ctx;
	free(slot);
}

uint64_t unwinder__stat(const struct unwinder *u, enum unwinder_stat which)
{
	return which < UNWINDER_STAT_MAX ? u->stats[which] : 0;
}

/* The vDSO the kernel maps into every process is the one it maps into perch: read our own. */
static struct unwind_table *build_vdso(void)
{
	struct unwind_table *t = NULL;
	size_t size;
	const void *img = proc_vdso_image(&size);
	void *copy;
	Elf *elf;

	if (!img || perch_elf_init())
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
	/* a table past PERCH_UNWIND_ROWS: more than the sampler's search halves down to one */
	if (nr > u->max_rows - u->next_row || nr > PERCH_UNWIND_ROWS) {
		if (!u->stats[UNWINDER_ROWS_FULL])
			log_warn("unwinder: unwind rows full (%u): more modules walk with frame "
				 "pointers",
				 u->max_rows);
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

/* The module a mapping shows, its table built and loaded the first time; NULL when it has no
 * table (anonymous memory, special mappings other than the vDSO, no CFI). */
static const struct module *get_module(struct unwinder *u, uint32_t pid, const struct proc_map *m,
				       struct procs_module *pm)
{
	bool vdso = !strcmp(m->path, "[vdso]");
	struct module **slot, *mod;

	if (!pm || (!vdso && m->path[0] != '/'))
		return NULL;
	slot = (struct module **)procs__module_slot(pm, u->id);
	if (*slot)
		return (*slot)->t ? *slot : NULL;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	*slot = mod;
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

static void preload_file(struct unwinder *u, const char *path)
{
	struct stat st;
	struct proc_map m = {.path = (char *)path};

	if (stat(path, &st))
		return;
	m.dev_major = major(st.st_dev);
	m.dev_minor = minor(st.st_dev);
	m.inode = st.st_ino;
	get_module(u, getpid(), &m, procs__module_of(u->ps, &m));
}

/* pid's list, made empty if none; NULL only out of memory. */
static struct uproc *get_proc(struct unwinder *u, struct procs_proc *p)
{
	struct uproc **slot = (struct uproc **)procs__slot(p, u->id);

	if (!*slot)
		*slot = calloc(1, sizeof(**slot));
	return *slot;
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

static void publish(struct unwinder *u, uint32_t pid, const struct uproc *up)
{
	if (bpf_map_update_elem(u->procs_fd, &pid, &up->v, BPF_ANY)) {
		if (!u->stats[UNWINDER_PROCS_FULL])
			log_warn("unwinder: list tables of process %u: %s", pid, strerror(errno));
		u->stats[UNWINDER_PROCS_FULL]++;
	}
}

static void add_map(struct unwinder *u, struct uproc *up, uint32_t pid, const struct proc_map *m,
		    struct procs_module *pm)
{
	const struct module *mod = get_module(u, pid, m, pm);
	struct perch_unwind_map e;
	size_t nrows;
	uint64_t bias;

	if (!mod || unwind_table__load_bias(mod->t, m->start, m->end, m->pgoff, &bias)) {
		place(&up->v, m->start, m->end, NULL, &u->stats[UNWINDER_MAPS_FULL]);
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
	place(&up->v, m->start, m->end, &e, &u->stats[UNWINDER_MAPS_FULL]);
}

/*
 * A process in its early window (the sampler's early_until has it: it exec'd as a target) whose
 * new module's table is about to be built: its ticks that stop short keep being copied while the
 * build lasts (a 30 MB binary takes hundreds of milliseconds, seconds on a loaded machine or under
 * the sanitizers, longer than PERCH_EARLY_NS from the exec) and for PERCH_EARLY_NS after it is
 * listed (early_release). False, nothing changed, for any other process.
 */
static bool early_hold(struct unwinder *u, uint32_t pid, uint64_t *was)
{
	uint64_t open = UINT64_MAX;

	if (u->early_fd < 0 || bpf_map_lookup_elem(u->early_fd, &pid, was))
		return false;
	return !bpf_map_update_elem(u->early_fd, &pid, &open, BPF_EXIST);
}

static void early_release(struct unwinder *u, uint32_t pid, uint64_t was)
{
	struct timespec ts;
	uint64_t until;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns's clock */
	until = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + PERCH_EARLY_NS;
	if (was > until)
		until = was;
	/* BPF_EXIST: gone meanwhile (its exit) stays gone */
	bpf_map_update_elem(u->early_fd, &pid, &until, BPF_EXIST);
}

static void proc_mapped(void *ctx, struct procs_proc *p, const struct proc_map *m,
			struct procs_module *pm)
{
	struct unwinder *u = ctx;
	struct uproc *up = get_proc(u, p);
	uint64_t was = 0;
	bool held;

	if (!up)
		return;
	held = pm && !*procs__module_slot(pm, u->id) && early_hold(u, p->pid, &was);
	add_map(u, up, p->pid, m, pm);
	publish(u, p->pid, up);
	if (held)
		early_release(u, p->pid, was);
}

/* Attached: list every executable mapping /proc shows. Launched: its mappings are perch's until
 * the exec; build the table of what it will exec now, so the sampler has it from its first
 * tick. */
static int proc_started(void *ctx, struct procs_proc *p, const struct proc_maps *maps,
			const char *exe)
{
	struct unwinder *u = ctx;
	struct uproc *up;

	if (exe) {
		preload_file(u, exe);
		return 0;
	}
	up = maps ? get_proc(u, p) : NULL;
	if (!up)
		return 0;
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		add_map(u, up, p->pid, m, procs__module_of(u->ps, m));
	}
	publish(u, p->pid, up);
	return 0;
}

/* The sampler dropped its copy at the exec; the new image's mmaps publish a new one. */
static void proc_execd(void *ctx, struct procs_proc *p)
{
	struct unwinder *u = ctx;
	struct uproc *up = *procs__slot(p, u->id);

	if (up)
		up->v.n = 0;
	bpf_map_delete_elem(u->procs_fd, &p->pid);
}

/* The child starts with the parent's list (the sampler copied it). */
static void proc_forked(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct unwinder *u = ctx;
	struct uproc *pp = *procs__slot(parent, u->id), *c;

	if (!pp)
		return;
	c = get_proc(u, child);
	if (c && c != pp)
		c->v = pp->v;
}

/* Forget its list, here and in the kernel. */
static void proc_exited(void *ctx, struct procs_proc *p)
{
	struct unwinder *u = ctx;
	void **slot = procs__slot(p, u->id);

	free(*slot);
	*slot = NULL;
	bpf_map_delete_elem(u->procs_fd, &p->pid);
}

static const struct procs_listener listener = {
	.name = "unwinder",
	.start = proc_started,
	.fork = proc_forked,
	.exec = proc_execd,
	.mmap = proc_mapped,
	.exit = proc_exited,
	.drop = drop_proc,
	.drop_module = drop_module,
};
