// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording's process and module tables, and the fan-out of process events to listeners
 * (see procs.h). Entries are allocated one by one, so the pointers listeners hold stay valid;
 * pids are found through a u64map, modules by (device, inode) through an idxtab over mods.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/sysmacros.h>
#include "lib/hash.h"
#include "lib/idxtab.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "procs.h"

struct entry {
	struct procs_proc pub;
	void *slot[PROCS_MAX_LISTENERS];
	uint64_t exited_ns; /* CLOCK_MONOTONIC of procs__flush() delivering its exit */
};

struct module {
	struct procs_module pub;
	void *slot[PROCS_MAX_LISTENERS];
};

struct procs {
	struct procs_listener l[PROCS_MAX_LISTENERS];
	int nl;
	struct entry **procs;
	size_t nprocs, capprocs;
	struct u64map pid_index; /* pid -> index in procs */
	struct module **mods;
	size_t nmods, capmods;
	struct idxtab mod_index; /* mods by (dev, inode) */
	uint32_t *exited;	 /* exits to deliver at procs__flush() */
	size_t nexited, capexited;
};

/* Every listener that has the hook, in registration order. */
#define for_each_listener(ps, l, hook)                                        \
	for (struct procs_listener *l = (ps)->l; l < (ps)->l + (ps)->nl; l++) \
		if (l->hook)

struct procs *procs__new(void)
{
	return calloc(1, sizeof(struct procs));
}

void procs__free(struct procs *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->nprocs; i++) {
		for (int id = 0; id < ps->nl; id++)
			if (ps->procs[i]->slot[id] && ps->l[id].drop)
				ps->l[id].drop(ps->l[id].ctx, ps->procs[i]->slot[id]);
		free(ps->procs[i]);
	}
	for (size_t i = 0; i < ps->nmods; i++) {
		for (int id = 0; id < ps->nl; id++)
			if (ps->mods[i]->slot[id] && ps->l[id].drop_module)
				ps->l[id].drop_module(ps->l[id].ctx, ps->mods[i]->slot[id]);
		free(ps->mods[i]);
	}
	free(ps->procs);
	free(ps->mods);
	free(ps->exited);
	u64map__clear(&ps->pid_index);
	idxtab__clear(&ps->mod_index);
	free(ps);
}

int procs__listen(struct procs *ps, const struct procs_listener *l)
{
	if (ps->nl == PROCS_MAX_LISTENERS)
		return -ENOSPC;
	ps->l[ps->nl] = *l;
	return ps->nl++;
}

struct procs_proc *procs__find(const struct procs *ps, uint32_t pid)
{
	uint64_t idx;

	return u64map__get(&ps->pid_index, pid, &idx) ? &ps->procs[idx]->pub : NULL;
}

struct procs_proc *procs__get(struct procs *ps, uint32_t pid)
{
	struct procs_proc *p = procs__find(ps, pid);
	struct entry *e;

	if (p)
		return p;
	if (vec_grow(&ps->procs, &ps->capprocs, ps->nprocs + 1, sizeof(*ps->procs), 16))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e || u64map__put(&ps->pid_index, pid, ps->nprocs)) {
		free(e);
		return NULL;
	}
	e->pub.pid = pid;
	ps->procs[ps->nprocs++] = e;
	return &e->pub;
}

size_t procs__count(const struct procs *ps)
{
	return ps->nprocs;
}

struct procs_proc *procs__at(const struct procs *ps, size_t i)
{
	return i < ps->nprocs ? &ps->procs[i]->pub : NULL;
}

static bool module_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct procs_module *m = &((const struct procs *)ctx)->mods[idx]->pub;
	const struct procs_module *k = key;

	return m->dev == k->dev && m->inode == k->inode;
}

struct procs_module *procs__module(struct procs *ps, uint64_t dev, uint64_t inode)
{
	struct procs_module key = {dev, inode};
	uint32_t h = hash32(mix64(dev ^ mix64(inode)));
	struct idxtab_slot *slot;
	struct module *m;

	if (ps->nmods >= UINT32_MAX - 1 || idxtab__reserve(&ps->mod_index))
		return NULL;
	slot = idxtab__find(&ps->mod_index, h, module_eq, ps, &key);
	if (slot->idx1)
		return &ps->mods[slot->idx1 - 1]->pub;
	if (vec_grow(&ps->mods, &ps->capmods, ps->nmods + 1, sizeof(*ps->mods), 32))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->pub = key;
	idxtab__set(&ps->mod_index, slot, (uint32_t)ps->nmods, h);
	ps->mods[ps->nmods++] = m;
	return &m->pub;
}

void **procs__slot(struct procs_proc *p, int id)
{
	return &((struct entry *)p)->slot[id];
}

void **procs__module_slot(struct procs_module *m, int id)
{
	return &((struct module *)m)->slot[id];
}

struct procs_module *procs__module_of(struct procs *ps, const struct proc_map *m)
{
	if (m->path && !strcmp(m->path, "[vdso]"))
		return procs__module(ps, 0, 0);
	if (!m->inode)
		return NULL;
	return procs__module(ps, makedev(m->dev_major, m->dev_minor), m->inode);
}

int procs__snapshot(struct procs *ps, uint32_t pid, const char *exe)
{
	struct procs_proc *p = procs__get(ps, pid);
	struct proc_maps *maps;
	int ret = 0, err;

	if (!p)
		return -ENOMEM;
	maps = proc_maps__read((pid_t)pid);
	for_each_listener(ps, l, start)
	{
		err = l->start(l->ctx, p, maps, exe);
		if (err && !ret)
			ret = err;
	}
	proc_maps__free(maps);
	return ret;
}

void procs__comm(struct procs *ps, uint32_t pid, const char *comm)
{
	struct procs_proc *p = procs__get(ps, pid);

	if (!p)
		return;
	memcpy(p->comm, comm, PROCS_COMM_LEN);
	p->comm[PROCS_COMM_LEN] = '\0';
}

void procs__fork(struct procs *ps, uint32_t parent, uint32_t parent_gen, uint32_t child)
{
	struct procs_proc *pp = procs__get(ps, parent), *c = procs__get(ps, child);

	if (!pp || !c)
		return;
	c->ppid = parent;
	c->parent_gen = parent_gen;
	c->forked = true;
	c->exited = false; /* a pid the kernel reused: alive again */
	((struct entry *)c)->exited_ns = 0;
	for_each_listener(ps, l, fork) l->fork(l->ctx, pp, c);
}

void procs__exec(struct procs *ps, uint32_t pid)
{
	struct procs_proc *p = procs__get(ps, pid);

	if (!p)
		return;
	p->gen++;
	for_each_listener(ps, l, exec) l->exec(l->ctx, p);
}

void procs__mmap(struct procs *ps, uint32_t pid, const struct proc_map *m)
{
	struct procs_proc *p = procs__get(ps, pid);
	struct procs_module *mod = procs__module_of(ps, m);

	if (!p)
		return;
	for_each_listener(ps, l, mmap) l->mmap(l->ctx, p, m, mod);
}

void procs__exit(struct procs *ps, uint32_t pid)
{
	/* Out of memory, the exit is not delivered: the entry stays as if alive, harmlessly. */
	if (vec_grow(&ps->exited, &ps->capexited, ps->nexited + 1, sizeof(*ps->exited), 64))
		return;
	ps->exited[ps->nexited++] = pid;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void procs__flush(struct procs *ps)
{
	uint64_t now = ps->nexited ? mono_ns() : 0;

	for (size_t i = 0; i < ps->nexited; i++) {
		struct procs_proc *p = procs__get(ps, ps->exited[i]);

		if (!p)
			continue;
		for_each_listener(ps, l, exit) l->exit(l->ctx, p);
		p->exited = true;
		((struct entry *)p)->exited_ns = now;
	}
	ps->nexited = 0;
}

/* e's listeners' state dropped and e freed (no longer in the index). */
static void forget(struct procs *ps, struct entry *e)
{
	for (int id = 0; id < ps->nl; id++) {
		if (ps->l[id].forget)
			ps->l[id].forget(ps->l[id].ctx, &e->pub);
		if (e->slot[id] && ps->l[id].drop)
			ps->l[id].drop(ps->l[id].ctx, e->slot[id]);
	}
	free(e);
}

size_t procs__sweep(struct procs *ps, uint64_t before_ns)
{
	struct u64map parents = {0};
	size_t kept = 0, gone = 0;

	/* A forked child resolves through its parent's image (collect.c): a parent stays while
	 * any child entry does. */
	for (size_t i = 0; i < ps->nprocs; i++) {
		const struct procs_proc *p = &ps->procs[i]->pub;

		if (p->forked && p->ppid && u64map__put(&parents, p->ppid, 1)) {
			u64map__clear(&parents);
			return 0; /* out of memory: nothing forgotten this time */
		}
	}
	for (size_t i = 0; i < ps->nprocs; i++) {
		struct entry *e = ps->procs[i];
		uint64_t unused;

		if (e->pub.exited && e->exited_ns && e->exited_ns < before_ns &&
		    !u64map__get(&parents, e->pub.pid, &unused)) {
			u64map__del(&ps->pid_index, e->pub.pid);
			forget(ps, e);
			gone++;
			continue;
		}
		if (kept != i) {
			ps->procs[kept] = e;
			u64map__put(&ps->pid_index, e->pub.pid, kept); /* replaces: no growth */
		}
		kept++;
	}
	ps->nprocs = kept;
	u64map__clear(&parents);
	return gone;
}
