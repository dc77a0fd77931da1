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

#define MAX_THREADS  65536	 /* thread blocks walked per process */
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

static uint64_t to_ns(uint64_t ticks, double scale)
{
	return (uint64_t)((double)ticks * scale + 0.5);
}

static void convert_node(struct rec_region_node *out, const struct perch_abi_node *in, double scale)
{
	out->calls = in->calls;
	out->total_ns = to_ns(in->total_ticks, scale);
	out->self_ns = to_ns(in->self_ticks, scale);
	out->min_ns = to_ns(in->min_ticks, scale);
	out->max_ns = to_ns(in->max_ticks, scale);
	out->size_sum = in->size_sum;
	out->untimed = in->unmatched;
	out->open = in->open;
	out->sum_ns = to_ns(in->sum_ticks, scale);
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

/* The thread block at addr (its head already read) into t, its limits added to lim; false when
 * it is free, of another epoch, unreadable or malformed. */
static bool read_thread(struct regions *rg, struct rproc *p, uint64_t addr,
			const struct perch_abi_thread *head, struct rec_region_thread *t,
			double scale, struct limits *lim)
{
	struct perch_abi_node *nodes = NULL, other;
	uint32_t n = head->nnodes;
	bool ok = false;

	if (head->exited || head->epoch != p->reg.epoch || !n || n > PERCH_NODE_OTHER)
		return false; /* free (its figures are in the tid 0 block), stale, or not a tree */
	nodes = malloc(n * sizeof(*nodes));
	t->nodes = calloc(n + 1, sizeof(*t->nodes));
	if (!nodes || !t->nodes ||
	    regions_peek(p->pid, addr + THREAD_HEAD, nodes, n * sizeof(*nodes)) ||
	    regions_peek(p->pid, addr + THREAD_HEAD + PERCH_NODE_OTHER * sizeof(other), &other,
			 sizeof(other)))
		goto out;
	t->pid = p->pid;
	t->tid = head->tid;
	t->mismatches = head->mismatches;
	t->nnodes = n;
	for (uint32_t i = 1; i < n; i++) {
		if (nodes[i].parent >= i || !nodes[i].name)
			goto out; /* not what the runtime writes: leave the thread out */
		t->nodes[i].name = rec_writer__string(rg->w, regions_name_of(p, nodes[i].name));
		t->nodes[i].parent = nodes[i].parent;
		convert_node(&t->nodes[i], &nodes[i], scale);
	}
	if (other.calls || other.open) {
		t->nodes[n].name = rec_writer__string(rg->w, regions_name_of(p, PERCH_NAME_OTHER));
		t->nodes[n].parent = 0;
		convert_node(&t->nodes[n], &other, scale);
		t->nnodes++;
	}
	count_limits(lim, head, nodes, n, &other);
	ok = true;
out:
	free(nodes);
	if (!ok) {
		free(t->nodes);
		t->nodes = NULL;
	}
	return ok;
}

/* The cost-model data of the thread just read (v's last) onto *sv, when it has any. */
static void collect_sizes(struct regions *rg, struct rproc *p, uint64_t addr, double scale,
			  struct rec_size_thread **sv, size_t *n, size_t *cap)
{
	const struct perch_abi_thread *head = rg->head;
	struct rec_size_thread t = {.pid = p->pid, .tid = head->tid};

	if (regions_read_sizes(rg, p, addr, scale, &t) || (!t.nmodels && !t.over))
		goto drop;
	if (vec_grow(sv, cap, *n + 1, sizeof(**sv), 8))
		goto drop;
	(*sv)[(*n)++] = t;
	return;
drop:
	for (uint32_t k = 0; k < t.nmodels; k++) {
		free(t.models[k].buckets);
		free(t.models[k].points);
	}
	free(t.models); /* a thread block whose slots could not be read: no model data from it */
}

/* Read every thread's tree of p into p->threads; false (the last good read kept) when the
 * process could not be read. */
bool regions_collect_proc(struct regions *rg, struct rproc *p)
{
	struct perch_abi_thread *head = rg->head;
	struct rec_region_thread *v = NULL;
	struct rec_size_thread *sv = NULL;
	double scale = regions_ns_per_tick(rg, p);
	struct limits lim = {0};
	uint64_t addr;
	size_t n = 0, cap = 0, ns = 0, capns = 0;

	if (regions_read_registry(p) || regions_read_names(p))
		return false;
	addr = p->reg.threads;
	for (size_t k = 0; addr && k < MAX_THREADS; k++) {
		struct rec_region_thread t = {0};

		if (regions_peek(p->pid, addr, head, THREAD_HEAD))
			break;
		if (read_thread(rg, p, addr, head, &t, scale, &lim)) {
			if (vec_grow(&v, &cap, n + 1, sizeof(*v), 8)) {
				free(t.nodes);
				break;
			}
			v[n++] = t;
			collect_sizes(rg, p, addr, scale, &sv, &ns, &capns);
		}
		addr = head->next;
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
