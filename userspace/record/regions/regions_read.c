// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: reading the trees (see regions_impl.h). Every thread block of a process's
 * runtime is read out of its memory into the recording's region nodes, and written as a REGIONS
 * block. Everything read from the target is untrusted: counts are bounded, parents checked,
 * walks capped. Times come as TSC ticks (x86) and are converted with a ratio perch measures
 * against CLOCK_MONOTONIC over the whole recording.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "regions_impl.h"

#define CALIBRATE_NS 50000000ull /* the least TSC-vs-clock interval perch converts with */

/* The header part of struct perch_abi_thread (everything before the nodes). */
#define THREAD_HEAD offsetof(struct perch_abi_thread, nodes)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

void regions_clock_start(struct regions *rg)
{
	rg->tsc0 = tsc();
	rg->ns0 = mono_ns();
}

void regions_free_threads(struct rec_region_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].nodes);
	free(t);
}

void regions_clock_now(uint64_t *tsc_out, uint64_t *ns_out)
{
	uint64_t best = UINT64_MAX;

	/* The tightest of a few tries: a read interrupted between its clocks is far off. */
	for (int i = 0; i < 4; i++) {
		uint64_t t0 = tsc(), ns = mono_ns(), t1 = tsc();

		if (t1 - t0 < best) {
			best = t1 - t0;
			*tsc_out = t0 + (t1 - t0) / 2;
			*ns_out = ns;
		}
	}
}

double regions_ns_per_tick(const struct regions *rg, const struct rproc *p)
{
	uint64_t dns, dt;

	if (p->reg.tick_unit == PERCH_TICKS_NS)
		return 1.0;
	/* The TSC against the clock, over at least CALIBRATE_NS (waited for once, if need be). */
	dns = mono_ns() - rg->ns0;
	if (dns < CALIBRATE_NS) {
		struct timespec ts = {0, (long)(CALIBRATE_NS - dns)};

		nanosleep(&ts, NULL);
	}
	dt = tsc() - rg->tsc0;
	dns = mono_ns() - rg->ns0;
	return dt ? (double)dns / (double)dt : 1.0;
}

int regions_read_names(struct rproc *p)
{
	uint32_t n = p->reg.nnames < PERCH_MAX_NAMES ? p->reg.nnames : PERCH_MAX_NAMES;
	char(*v)[PERCH_NAME_LEN];
	uint32_t *f;

	if (n <= p->nnames)
		return 0;
	if (vec_grow(&p->names, &p->capnames, n, sizeof(*p->names), 16) ||
	    vec_grow(&p->name_strs, &p->capstrs, (size_t)n + 2, sizeof(*p->name_strs), 16))
		return -1;
	v = p->names;
	f = p->name_strs;
	memset(f + (p->nnames ? p->nnames + 2 : 0), 0,
	       ((size_t)n + 2 - (p->nnames ? p->nnames + 2 : 0)) * sizeof(*f));
	if (regions_peek(p->pid, p->reg.names + (uint64_t)p->nnames * PERCH_NAME_LEN, v[p->nnames],
			 (size_t)(n - p->nnames) * PERCH_NAME_LEN))
		return -1;
	for (uint32_t i = p->nnames; i < n; i++)
		v[i][PERCH_NAME_LEN - 1] = '\0';
	p->nnames = n;
	return 0;
}

const char *regions_name_of(const struct rproc *p, uint32_t id)
{
	if (id == PERCH_NAME_TOO_MANY)
		return "[region names beyond the runtime's table]";
	if (id == PERCH_NAME_OTHER)
		return "[more regions than the runtime keeps]";
	if (!id || id > p->nnames)
		return "[unknown region]";
	return p->names[id - 1][0] ? p->names[id - 1] : REGIONS_EMPTY_NAME;
}

uint64_t regions_ticks_ns(uint64_t ticks, uint64_t tsc_at, uint64_t ns, double scale)
{
	double t = (double)ns + (double)(int64_t)(ticks - tsc_at) * scale;

	return t >= 0 && t < 9.2e18 ? (uint64_t)t : UINT64_MAX;
}

bool regions_time_in_run(const struct regions *rg, uint64_t t, uint64_t now)
{
	return t + REGIONS_RUN_BEFORE_NS >= rg->ns0 && t <= now + REGIONS_RUN_AFTER_NS;
}

static void count_limits(struct limits *lim, const struct perch_abi_thread *head,
			 const struct perch_abi_node *nodes, uint32_t n,
			 const struct perch_abi_node *other)
{
	for (uint32_t i = 1; i < n; i++) {
		if (nodes[i].name == PERCH_NAME_TOO_MANY)
			lim->names_over += nodes[i].calls;
	}
	lim->tree_full += other->calls;
	lim->too_deep += head->too_deep;
}

struct name_ctx {
	struct regions *rg;
	const struct rproc *p;
};

static uint32_t node_name(void *ctx, uint32_t id)
{
	struct name_ctx *nc = ctx;

	return rec_writer__string(nc->rg->w, regions_name_of(nc->p, id));
}

static int peek_proc(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return regions_peek(((const struct rproc *)ctx)->pid, addr, buf, len);
}

/* A block in use by a thread of this epoch, with a tree (else it is free, stale, or not one). */
static bool block_live(const struct rproc *p, const struct perch_abi_thread *head)
{
	return !head->exited && head->epoch == p->reg.epoch && head->nnodes &&
	       head->nnodes <= PERCH_NODE_OTHER;
}

/* The thread block at addr (its head already read, live) into t, its limits added to lim; false
 * when unreadable or malformed. The nodes are read into the scratch kept between drains. */
static bool read_thread(struct regions *rg, struct rproc *p, uint64_t addr,
			const struct perch_abi_thread *head, struct rec_region_thread *t,
			double scale, struct limits *lim)
{
	struct perch_abi_node *nodes = rg->nodes, other;
	struct name_ctx nc = {rg, p};
	uint32_t n = head->nnodes;

	t->nodes = calloc(n + 1, sizeof(*t->nodes));
	if (!t->nodes || regions_peek(p->pid, addr + THREAD_HEAD, nodes, n * sizeof(*nodes)) ||
	    regions_peek(p->pid, addr + THREAD_HEAD + PERCH_NODE_OTHER * sizeof(other), &other,
			 sizeof(other)) ||
	    !regions_parse_tree(nodes, n, &other, scale, node_name, &nc, t)) {
		free(t->nodes);
		t->nodes = NULL;
		return false; /* not what the runtime writes: leave the thread out */
	}
	t->pid = p->pid;
	t->tid = head->tid;
	t->mismatches = head->mismatches;
	count_limits(lim, head, nodes, n, &other);
	return true;
}

/* What reading a live block of n nodes costs perch: its nodes read, its tree kept. */
static size_t tree_cost(uint32_t n)
{
	return (size_t)n * sizeof(struct perch_abi_node) + sizeof(struct rec_region_thread) +
	       ((size_t)n + 1) * sizeof(struct rec_region_node);
}

/* And its cost models: their slots read, the models kept. */
static size_t sizes_cost(const struct rec_size_thread *t)
{
	size_t c = sizeof(*t);

	for (uint32_t k = 0; k < t->nmodels; k++)
		c += sizeof(struct perch_abi_model) + sizeof(t->models[k]) +
		     PERCH_MODEL_BUCKETS * sizeof(*t->models[k].buckets) +
		     ((size_t)t->models[k].npoints + 1) * sizeof(*t->models[k].points);
	return c;
}

/* The cost-model data of the thread just read (v's last) onto *sv, when it has any. */
static bool collect_sizes(struct regions *rg, struct rproc *p, uint64_t addr, double scale,
			  struct rec_size_thread **sv, size_t *n, size_t *cap)
{
	const struct perch_abi_thread *head = rg->head;
	struct rec_size_thread t = {.pid = p->pid, .tid = head->tid};

	if (regions_read_sizes(rg, p, addr, scale, &t) || (!t.nmodels && !t.over))
		goto drop;
	if (vec_grow(sv, cap, *n + 1, sizeof(**sv), 8))
		goto drop;
	(*sv)[(*n)++] = t;
	return true;
drop:
	for (uint32_t k = 0; k < t.nmodels; k++) {
		free(t.models[k].buckets);
		free(t.models[k].points);
	}
	free(t.models); /* a thread block whose slots could not be read: no model data from it */
	return false;
}

/* The blocks of p's thread list, each once (a list that comes back on itself or runs past its
 * bound is counted). */
static void walk_blocks(struct regions *rg, struct rproc *p)
{
	int r = regions_walk(&p->walk, p->reg.threads, peek_proc, p);

	if (r)
		rg->stats[REGIONS_THREAD_CYCLES]++;
}

/* Read every thread's tree of p into p->threads, within what one process may cost a read
 * (REGIONS_PROC_BUDGET: bytes read and kept; the blocks past it are refused, counted); false
 * (the last good read kept) when the process could not be read. */
bool regions_collect_proc(struct regions *rg, struct rproc *p)
{
	struct perch_abi_thread *head = rg->head;
	struct rec_region_thread *v = NULL;
	struct rec_size_thread *sv = NULL;
	double scale = regions_ns_per_tick(rg, p);
	struct limits lim = {0};
	size_t n = 0, cap = 0, ns = 0, capns = 0, cost = 0;

	if (regions_read_registry(p) || regions_read_names(p))
		return false;
	walk_blocks(rg, p);
	for (size_t k = 0; k < p->walk.nblocks; k++) {
		uint64_t addr = p->walk.blocks[k];
		struct rec_region_thread t = {0};

		cost += THREAD_HEAD;
		if (cost > REGIONS_PROC_BUDGET) {
			rg->stats[REGIONS_THREADS_REFUSED] += p->walk.nblocks - k;
			break;
		}
		if (regions_peek(p->pid, addr, head, THREAD_HEAD))
			break;
		if (!block_live(p, head))
			continue;
		cost += tree_cost(head->nnodes);
		if (cost > REGIONS_PROC_BUDGET ||
		    !read_thread(rg, p, addr, head, &t, scale, &lim)) {
			rg->stats[REGIONS_THREADS_REFUSED] += cost > REGIONS_PROC_BUDGET;
			continue;
		}
		if (vec_grow(&v, &cap, n + 1, sizeof(*v), 8)) {
			free(t.nodes);
			break;
		}
		v[n++] = t;
		if (collect_sizes(rg, p, addr, scale, &sv, &ns, &capns))
			cost += sizes_cost(&sv[ns - 1]);
	}
	regions_free_threads(p->threads, p->nthreads);
	p->threads = v;
	p->nthreads = n;
	regions_free_sizes(p->sthreads, p->nsthreads);
	p->sthreads = sv;
	p->nsthreads = ns;
	p->lim = lim;
	regions_read_spans(rg, p);
	return true;
}

/* Write p's last read as a REGIONS block (the last one for each thread wins when loading). */
void regions_write_proc(struct regions *rg, struct rproc *p)
{
	int err;

	rg->stats[REGIONS_NAMES_OVER] += p->lim.names_over;
	rg->stats[REGIONS_TREE_FULL] += p->lim.tree_full;
	rg->stats[REGIONS_TOO_DEEP] += p->lim.too_deep;
	if (!p->nthreads)
		return;
	err = rec_writer__regions(rg->w, p->threads, p->nthreads);
	if (!err && p->nsthreads)
		err = rec_writer__sizes(rg->w, p->sthreads, p->nsthreads);
	if (err)
		log_debug("regions: process %u: %s", p->pid, strerror(-err));
}
