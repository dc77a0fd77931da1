// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers, the profiler's side (see regions.h and include/perch_abi.h): the listener on
 * the process table (procs.h) and the API of regions.h. What a file holds (the registry's place)
 * lives in its module slot (regions_find.c), the state of a process's runtime in its process
 * slot: found on a mapping, switched on (regions_switch.c), its trees read (regions_read.c) every
 * drain, at its exit handshake and at the end, written and forgotten when it execs or exits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "regions_impl.h"

_Static_assert(PERCH_REGION_DEPTH == PERCH_MAX_DEPTH, "sampler and runtime disagree on depth");
_Static_assert(PERCH_REGISTRY_TLS_OFFSET == offsetof(struct perch_abi_registry, tls_offset),
	       "sampler and runtime disagree on the registry");

static const struct procs_listener listener;

struct regions *regions__new(struct rec_writer *w, int procs_fd, int stacks_fd, struct procs *ps)
{
	struct regions *rg = calloc(1, sizeof(*rg));
	struct procs_listener l = listener;

	if (!rg)
		return NULL;
	rg->w = w;
	rg->procs_fd = procs_fd;
	rg->stacks_fd = stacks_fd;
	rg->ps = ps;
	/* Scratch reused by every read, whatever a process's memory says. */
	rg->head = malloc(sizeof(*rg->head));
	rg->nodes = malloc(PERCH_MAX_NODES * sizeof(*rg->nodes));
	rg->ring = malloc(PERCH_RING_ENTRIES * sizeof(*rg->ring));
	l.ctx = rg;
	rg->id = rg->head && rg->nodes && rg->ring ? procs__listen(ps, &l) : -ENOMEM;
	if (rg->id < 0) {
		errno = -rg->id;
		free(rg->head);
		free(rg->nodes);
		free(rg->ring);
		free(rg);
		return NULL;
	}
	rg->me = (uint32_t)getpid();
	proc_start_time((pid_t)rg->me, &rg->me_start);
	regions_clock_start(rg);
	return rg;
}

static void proc_clear(struct rproc *p)
{
	regions_free_rings(p);
	regions_walk_free(&p->walk);
	regions_free_threads(p->threads, p->nthreads);
	regions_free_sizes(p->sthreads, p->nsthreads);
	free(p->names);
	free(p->name_strs);
	memset(p, 0, sizeof(*p));
}

static void drop_proc(void *ctx, void *slot)
{
	(void)ctx;
	proc_clear(slot);
	free(slot);
}

static void drop_module(void *ctx, void *slot)
{
	(void)ctx;
	free(slot);
}

void regions__free(struct regions *rg)
{
	if (!rg)
		return;
	free(rg->stacks);
	free(rg->head);
	free(rg->nodes);
	free(rg->ring);
	u64map__clear(&rg->stack_index);
	free(rg->live);
	free(rg);
}

void regions__set_timeline(struct regions *rg, bool on)
{
	rg->timeline = on;
}

void regions__spans_until(struct regions *rg, uint64_t until_ns)
{
	if (rg)
		rg->spans_until = until_ns;
}

uint64_t regions__stat(const struct regions *rg, enum regions_stat which)
{
	return rg && which < REGIONS_STAT_MAX ? rg->stats[which] : 0;
}

void regions__count_lost(struct regions *rg, uint64_t samples)
{
	if (rg)
		rg->stats[REGIONS_STACKS_LOST] += samples;
}

static struct rproc *slot_of(const struct regions *rg, struct procs_proc *pp)
{
	return pp ? *procs__slot(pp, rg->id) : NULL;
}

struct rproc *regions_find_proc(const struct regions *rg, uint32_t pid)
{
	return slot_of(rg, procs__find(rg->ps, pid));
}

/* The i-th process of the table, when it has a runtime (else NULL). */
static struct rproc *proc_at(const struct regions *rg, size_t i)
{
	return slot_of(rg, procs__at(rg->ps, i));
}

static struct rproc *add_proc(struct regions *rg, struct procs_proc *pp, uint64_t addr)
{
	struct rproc **slot = (struct rproc **)procs__slot(pp, rg->id), *p = *slot;
	bool listed = false;

	if (p) {
		/* Known already; or left to the perch that owns it, until it is gone or exec'd. */
		if (p->state != P_DONE || p->owner)
			return NULL;
		/* A new image (after exec, even of the same program): start over. */
		listed = p->listed;
		proc_clear(p);
	} else {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		*slot = p;
	}
	p->pid = pp->pid;
	p->addr = addr;
	p->listed = listed;
	if (!p->listed && vec_grow(&rg->live, &rg->caplive, rg->nlive + 1, sizeof(*rg->live), 16)) {
		p->state = P_DONE; /* never visited: as if it had no runtime */
		return NULL;
	}
	if (!p->listed)
		rg->live[rg->nlive++] = p;
	p->listed = true;
	p->state = P_PENDING;
	return p;
}

/* A target mapped an executable file: look for the runtime in it. */
static void proc_mapped(void *ctx, struct procs_proc *pp, const struct proc_map *m,
			struct procs_module *pm)
{
	struct regions *rg = ctx;
	uint32_t pid = pp->pid;
	struct perch_region_proc rp;
	struct rproc *p;
	uint64_t addr;

	if (!m->inode || !pm)
		return;
	if (!regions_find(rg, pid, m, pm, &addr))
		return;
	p = add_proc(rg, pp, addr);
	if (!p)
		return;
	/* The sampler follows the registry from now on, before the runtime is even initialized. */
	rp.registry = addr;
	if (bpf_map_update_elem(rg->procs_fd, &pid, &rp, BPF_ANY))
		log_debug("regions: region_procs: %s", strerror(errno));
	regions_switch_on(rg, p);
}

/* Look through the process's current mappings (attached; a launched command's are perch's until
 * its exec). -EBUSY when another live perch owns its runtime. */
static int proc_started(void *ctx, struct procs_proc *pp, const struct proc_maps *maps,
			const char *exe)
{
	struct regions *rg = ctx;

	if (exe)
		return 0;
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		proc_mapped(rg, pp, m, procs__module_of(rg->ps, m));
	}
	return regions__owner(rg, pp->pid) ? -EBUSY : 0;
}

uint32_t regions__owner(const struct regions *rg, uint32_t pid)
{
	const struct rproc *p = rg ? regions_find_proc(rg, pid) : NULL;

	return p ? p->owner : 0;
}

/* The child has the runtime at the same address; its constructor ran in the parent. */
static void proc_forked(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct regions *rg = ctx;
	struct rproc *pp = slot_of(rg, parent);
	struct rproc *c;

	if (!pp || pp->state == P_DONE)
		return;
	c = add_proc(rg, child, pp->addr);
	if (c) {
		c->forked = true;
		regions_switch_on(rg, c);
	}
}

/* Whether p is still pending or on; the live list drops it when not. */
static bool still_live(struct rproc *p)
{
	p->listed = p->state == P_PENDING || p->state == P_ON;
	return p->listed;
}

static void poll_proc(struct regions *rg, struct rproc *p)
{
	uint32_t exiting;

	if (p->state == P_PENDING) {
		regions_switch_on(rg, p);
		return;
	}
	if (p->state != P_ON)
		return;
	regions_read_log(rg, p); /* --steps ends at the last step's end: seen at once */
	if (regions_peek(p->pid, p->addr + REG_FIELD(exiting), &exiting, sizeof(exiting)) ||
	    !exiting)
		return;
	/* The exit handshake: the runtime waits in its destructor for this (its last read: done
	 * first, so that every span is taken). */
	p->state = P_DONE;
	if (regions_collect_proc(rg, p))
		regions_write_proc(rg, p);
	regions_read_log(rg, p);
	regions_ctl_gone(rg, p);
	regions_poke_u32(p, REG_FIELD(collector), PERCH_COLLECTED);
}

void regions__poll(struct regions *rg)
{
	size_t n = 0;

	for (size_t i = 0; rg && i < rg->nlive; i++) {
		struct rproc *p = rg->live[i];

		poll_proc(rg, p);
		if (still_live(p))
			rg->live[n++] = p;
	}
	if (rg)
		rg->nlive = n;
}

void regions__collect(struct regions *rg)
{
	for (size_t i = 0; rg && i < rg->nlive; i++) {
		struct rproc *p = rg->live[i];

		if (p->state == P_ON) {
			regions_collect_proc(rg, p);
			regions_read_log(rg, p);
		}
	}
}

/* The process exec'd or exited: write what was last read of it and forget it. */
static void proc_gone(void *ctx, struct procs_proc *pp)
{
	struct regions *rg = ctx;
	struct rproc *p = slot_of(rg, pp);
	uint32_t pid = pp->pid;

	if (p)
		p->owner = 0; /* a new image is another perch's no longer */
	if (!p || p->state == P_DONE)
		return;
	if (p->state == P_ON) {
		rg->stats[REGIONS_NO_HANDSHAKE]++;
		regions_write_proc(rg, p);
		regions_ctl_gone(rg, p);
	}
	p->state = P_DONE;
	bpf_map_delete_elem(rg->procs_fd, &pid);
}

/* pp is forgotten (procs__sweep()): out of the live list. */
static void proc_forget(void *ctx, struct procs_proc *pp)
{
	struct regions *rg = ctx;
	struct rproc *p = slot_of(rg, pp);
	size_t kept = 0;

	if (!p || !p->listed)
		return;
	for (size_t i = 0; i < rg->nlive; i++)
		if (rg->live[i] != p)
			rg->live[kept++] = rg->live[i];
	rg->nlive = kept;
}

static const struct procs_listener listener = {
	.name = "regions",
	.start = proc_started,
	.fork = proc_forked,
	.exec = proc_gone,
	.mmap = proc_mapped,
	.exit = proc_gone,
	.forget = proc_forget,
	.drop = drop_proc,
	.drop_module = drop_module,
};

void regions__finish(struct regions *rg)
{
	for (size_t i = 0; rg && i < procs__count(rg->ps); i++) {
		struct rproc *p = proc_at(rg, i);

		if (!p || p->state != P_ON)
			continue;
		regions_collect_proc(rg, p);
		regions_write_proc(rg, p);
		regions_read_log(rg, p);
		regions_release(rg, p);
		p->state = P_DONE;
	}
}
