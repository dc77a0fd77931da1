// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Sums the recording's per-thread region trees by region name (per thread, then over threads),
 * merges the trees by name path from the root, and counts the samples inside each region.
 *
 * A name's total leaves out the nodes that have an ancestor of the same name in their thread's
 * tree: a recursion's inner activations ran inside the outer one, whose total already holds them.
 * The merged tree keeps every node's own total (a tree shows inclusive time at each node).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "regiontab.h"
#include "lib/u64map.h"
#include "lib/vec.h"

#define NONE	 UINT32_MAX
#define DFS_EXIT (1u << 31)

struct regiontab {
	uint32_t nregions;
	const char **names;		 /* by region (report order) */
	struct region_stat *all;	 /* by region */
	struct region_thread_stat *rows; /* grouped by region, then by tid and pid */
	size_t *row_off;		 /* region -> its first row; [nregions] = number of rows */
	struct region_node *nodes;
	uint32_t nnodes;
	uint32_t *kids; /* every node's children, back to back */
	uint64_t mismatches;
	bool has_gpu;
};

struct row {
	uint32_t region;
	struct region_thread_stat ts;
};

struct mnode {
	uint32_t region, parent;
	uint64_t calls, total_ns, self_ns;
};

/* What building needs and the table does not keep. Regions are numbered in name order until
 * finish() puts them in report order. */
struct build {
	const struct recording *r;
	struct regiontab *t;
	uint32_t *reg_of_str;	/* string id -> region, NONE */
	struct u64map threads;	/* pid << 32 | tid -> thread number */
	struct u64map rowmap;	/* thread number << 32 | region -> row */
	struct u64map children; /* merged node << 32 | region -> merged node */
	uint32_t nthreads;
	struct row *rows;
	size_t nrows, cap_rows;
	struct mnode *mn;
	size_t nmn, cap_mn;
	uint32_t *onpath; /* region -> activations of it on the current tree path */
	bool (*keep)(const void *ctx, size_t sample); /* samples counted (NULL: all) */
	const void *keep_ctx;
};

static int by_string(const void *a, const void *b, void *r)
{
	return strcmp(recording__string(r, *(const uint32_t *)a),
		      recording__string(r, *(const uint32_t *)b));
}

static void note_name(struct build *b, uint32_t *ids, size_t *n, uint32_t id)
{
	if (id && b->reg_of_str[id] == NONE) {
		b->reg_of_str[id] = 0;
		ids[(*n)++] = id;
	}
}

/* Number the names regions carry (tree nodes; the recording's region names, which every
 * sample's regions are among) in name order, equal text once. */
static int number_names(struct build *b)
{
	const struct recording *r = b->r;
	struct regiontab *t = b->t;
	size_t n = 0, cap = r->nregion_names + 1;
	uint32_t *ids;

	for (size_t k = 0; k < r->nrthreads; k++)
		cap += r->rthreads[k].nnodes;
	ids = malloc(cap * sizeof(*ids));
	t->names = malloc(cap * sizeof(*t->names));
	if (!ids || !t->names) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t k = 0; k < r->nrthreads; k++) {
		for (uint32_t j = 1; j < r->rthreads[k].nnodes; j++)
			note_name(b, ids, &n, r->rthreads[k].nodes[j].name);
	}
	for (size_t i = 0; i < r->nregion_names; i++)
		note_name(b, ids, &n, r->region_names[i]);
	qsort_r(ids, n, sizeof(*ids), by_string, (void *)r);
	for (size_t i = 0; i < n; i++) {
		const char *s = recording__string(r, ids[i]);

		if (!t->nregions || strcmp(t->names[t->nregions - 1], s))
			t->names[t->nregions++] = s;
		b->reg_of_str[ids[i]] = t->nregions - 1;
	}
	free(ids);
	return 0;
}

/* The statistics of region in thread (pid, tid), created empty on first use; NULL on ENOMEM. */
static struct region_stat *row_of(struct build *b, uint32_t pid, uint32_t tid, uint32_t region)
{
	uint64_t key = (uint64_t)pid << 32 | tid, th, row;

	if (!u64map__get(&b->threads, key, &th)) {
		th = b->nthreads++;
		if (u64map__put(&b->threads, key, th))
			return NULL;
	}
	if (u64map__get(&b->rowmap, th << 32 | region, &row))
		return &b->rows[row].ts.s;
	if (vec_grow(&b->rows, &b->cap_rows, b->nrows + 1, sizeof(*b->rows), 64) ||
	    u64map__put(&b->rowmap, th << 32 | region, b->nrows))
		return NULL;
	b->rows[b->nrows] = (struct row){.region = region, .ts = {.pid = pid, .tid = tid}};
	return &b->rows[b->nrows++].ts.s;
}

/* Add one tree node (or a whole row, for the all-threads sums: with_total) to s. */
static void add_stat(struct region_stat *s, const struct region_stat *n, bool with_total)
{
	s->calls += n->calls;
	s->untimed += n->untimed;
	if (with_total)
		s->total_ns += n->total_ns;
	s->self_ns += n->self_ns;
	/* min_ns 0: no timed call (only untimed ends, or marks) */
	if (n->calls && n->min_ns && (!s->min_ns || n->min_ns < s->min_ns))
		s->min_ns = n->min_ns;
	if (n->max_ns > s->max_ns)
		s->max_ns = n->max_ns;
	s->size_sum += n->size_sum;
	s->sum_ns += n->sum_ns;
	s->open += n->open;
	s->samples += n->samples;
	s->gpu_ns += n->gpu_ns;
}

/* dup[j]: node j has an ancestor with its name (depth first, counting names on the path). */
static int find_dups(struct build *b, const struct rec_region_thread *th, bool *dup)
{
	uint32_t n = th->nnodes, sp = 0;
	uint32_t *first = calloc(n + 1, sizeof(*first)), *kids = malloc(n * sizeof(*kids));
	uint32_t *stack = malloc(2 * (size_t)n * sizeof(*stack));
	int err = -ENOMEM;

	if (!first || !kids || !stack || n >= DFS_EXIT)
		goto cleanup;
	for (uint32_t j = 1; j < n; j++)
		first[th->nodes[j].parent + 1]++;
	for (uint32_t j = 0; j < n; j++)
		first[j + 1] += first[j];
	for (uint32_t j = 1; j < n; j++) /* first[p] ends past p's kids; moved back below */
		kids[first[th->nodes[j].parent]++] = j;
	for (uint32_t j = n; j > 0; j--)
		first[j] = first[j - 1];
	first[0] = 0;
	stack[sp++] = 0;
	while (sp) {
		uint32_t v = stack[--sp], reg;

		if (v & DFS_EXIT) {
			b->onpath[b->reg_of_str[th->nodes[v & ~DFS_EXIT].name]]--;
			continue;
		}
		if (v) {
			reg = b->reg_of_str[th->nodes[v].name];
			dup[v] = b->onpath[reg]++ > 0;
			stack[sp++] = v | DFS_EXIT;
		}
		for (uint32_t k = first[v]; k < first[v + 1]; k++)
			stack[sp++] = kids[k];
	}
	err = 0;
cleanup:
	free(first);
	free(kids);
	free(stack);
	return err;
}

/* The merged node under parent for region, created on first use; NONE on ENOMEM. */
static uint32_t merged_child(struct build *b, uint32_t parent, uint32_t region)
{
	uint64_t key = (uint64_t)parent << 32 | region, node;

	if (u64map__get(&b->children, key, &node))
		return (uint32_t)node;
	if (b->nmn >= NONE || vec_grow(&b->mn, &b->cap_mn, b->nmn + 1, sizeof(*b->mn), 64) ||
	    u64map__put(&b->children, key, b->nmn))
		return NONE;
	b->mn[b->nmn] = (struct mnode){.region = region, .parent = parent};
	return (uint32_t)b->nmn++;
}

static struct region_stat node_stat(const struct rec_region_node *n)
{
	return (struct region_stat){
		.calls = n->calls,
		.untimed = n->untimed,
		.total_ns = n->total_ns,
		.self_ns = n->self_ns,
		.min_ns = n->min_ns,
		.max_ns = n->max_ns,
		.size_sum = n->size_sum,
		.open = n->open,
		.sum_ns = n->sum_ns,
	};
}

static int add_tree(struct build *b, const struct rec_region_thread *th)
{
	bool *dup = calloc(th->nnodes, sizeof(*dup));
	uint32_t *merged = calloc(th->nnodes, sizeof(*merged));
	int err = -ENOMEM;

	if (!dup || !merged || find_dups(b, th, dup))
		goto cleanup;
	b->t->mismatches += th->mismatches;
	for (uint32_t j = 1; j < th->nnodes; j++) {
		const struct rec_region_node *n = &th->nodes[j];
		uint32_t reg = b->reg_of_str[n->name];
		struct region_stat *s = row_of(b, th->pid, th->tid, reg), node = node_stat(n);
		struct mnode *m;

		merged[j] = merged_child(b, merged[n->parent], reg);
		if (!s || merged[j] == NONE)
			goto cleanup;
		add_stat(s, &node, !dup[j]);
		m = &b->mn[merged[j]];
		m->calls += n->calls;
		m->total_ns += n->total_ns;
		m->self_ns += n->self_ns;
	}
	err = 0;
cleanup:
	free(dup);
	free(merged);
	return err;
}

/* Add v to the samples (or, gpu, the gpu_ns) of each name on s's region stack, once however
 * often it is there: stamp[reg] == mark says the item at hand already counted for reg. */
static int add_per_region(struct build *b, const struct rec_sample *s, size_t *stamp, size_t mark,
			  uint64_t v, bool gpu)
{
	for (uint32_t j = 0; j < s->nregions; j++) {
		uint32_t reg = b->reg_of_str[s->regions[j]];
		struct region_stat *st;

		if (stamp[reg] == mark)
			continue;
		stamp[reg] = mark;
		st = row_of(b, s->pid, s->tid, reg);
		if (!st)
			return -ENOMEM;
		*(gpu ? &st->gpu_ns : &st->samples) += v;
	}
	return 0;
}

/* Each sample counts once for every name on its region stack. */
static int add_samples(struct build *b)
{
	const struct recording *r = b->r;
	size_t *stamp = calloc(b->t->nregions + 1, sizeof(*stamp));
	int err = stamp ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->nsamples; i++) {
		if (!b->keep || b->keep(b->keep_ctx, i))
			err = add_per_region(b, &r->samples[i], stamp, i + 1, r->samples[i].count,
					     false);
	}
	free(stamp);
	return err;
}

/* GPU time on the device: a kernel, copy or memset (a sync or API call is not). */
static uint64_t device_ns(const struct rec_gpu *g)
{
	bool work =
		g->kind == REC_GPU_KERNEL || g->kind == REC_GPU_MEMCPY || g->kind == REC_GPU_MEMSET;

	return work ? g->end_ns - g->start_ns : 0;
}

/* Each activity's time counts once for every name on its launch's region stack. */
static int add_gpu(struct build *b)
{
	const struct recording *r = b->r;
	size_t *stamp = calloc(b->t->nregions + 1, sizeof(*stamp));
	int err = stamp ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->ngpu; i++) {
		const struct rec_gpu *g = &r->gpu[i];

		if (!g->launch_key || g->launch_key > r->nsamples || g->kind == REC_GPU_API)
			continue;
		b->t->has_gpu = true;
		err = add_per_region(b, &r->samples[g->launch_key - 1], stamp, i + 1, device_ns(g),
				     true);
	}
	free(stamp);
	return err;
}

static int by_report_order(const void *a, const void *b, void *t)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct region_stat *x = &((const struct regiontab *)t)->all[i];
	const struct region_stat *y = &((const struct regiontab *)t)->all[j];

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return i < j ? -1 : i > j; /* name order, which the numbering followed */
}

static int by_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->region != y->region)
		return x->region < y->region ? -1 : 1;
	if (x->ts.tid != y->ts.tid)
		return x->ts.tid < y->ts.tid ? -1 : 1;
	return x->ts.pid < y->ts.pid ? -1 : x->ts.pid > y->ts.pid;
}

static int by_node_total(const void *a, const void *b, void *mn)
{
	const struct mnode *x = &((const struct mnode *)mn)[*(const uint32_t *)a];
	const struct mnode *y = &((const struct mnode *)mn)[*(const uint32_t *)b];

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->region < y->region ? -1 : x->region > y->region;
}

/* Sum the rows over threads and put the regions in report order; rank: old number -> new. */
static int order_regions(struct build *b, uint32_t *rank)
{
	struct regiontab *t = b->t;
	uint32_t nr = t->nregions, *order = malloc((nr + 1) * sizeof(*order));
	const char **names = malloc((nr + 1) * sizeof(*names));
	struct region_stat *all = calloc(nr + 1, sizeof(*all));
	int err = -ENOMEM;

	t->all = calloc(nr + 1, sizeof(*t->all));
	if (!order || !names || !all || !t->all)
		goto cleanup;
	for (size_t i = 0; i < b->nrows; i++)
		add_stat(&t->all[b->rows[i].region], &b->rows[i].ts.s, true);
	for (uint32_t i = 0; i < nr; i++)
		order[i] = i;
	qsort_r(order, nr, sizeof(*order), by_report_order, t);
	for (uint32_t i = 0; i < nr; i++) {
		rank[order[i]] = i;
		names[i] = t->names[order[i]];
		all[i] = t->all[order[i]];
	}
	memcpy(t->names, names, nr * sizeof(*names));
	memcpy(t->all, all, nr * sizeof(*all));
	err = 0;
cleanup:
	free(order);
	free(names);
	free(all);
	return err;
}

/* The rows grouped by region in report order, each region's by tid and pid. */
static int lay_out_rows(struct build *b, const uint32_t *rank)
{
	struct regiontab *t = b->t;

	t->row_off = calloc(t->nregions + 1, sizeof(*t->row_off));
	t->rows = malloc((b->nrows + 1) * sizeof(*t->rows));
	if (!t->row_off || !t->rows)
		return -ENOMEM;
	for (size_t i = 0; i < b->nrows; i++)
		b->rows[i].region = rank[b->rows[i].region];
	if (b->nrows)
		qsort(b->rows, b->nrows, sizeof(*b->rows), by_row);
	for (size_t i = 0; i < b->nrows; i++) {
		t->rows[i] = b->rows[i].ts;
		t->row_off[b->rows[i].region + 1]++;
	}
	for (uint32_t i = 0; i < t->nregions; i++)
		t->row_off[i + 1] += t->row_off[i];
	return 0;
}

/* The merged tree with each node's children back to back in t->kids, by total descending. */
static int lay_out_tree(struct build *b, const uint32_t *rank)
{
	struct regiontab *t = b->t;
	size_t off = 0;

	t->nodes = calloc(b->nmn, sizeof(*t->nodes));
	t->kids = malloc(b->nmn * sizeof(*t->kids));
	if (!t->nodes || !t->kids)
		return -ENOMEM;
	for (size_t k = 1; k < b->nmn; k++) {
		b->mn[k].region = rank[b->mn[k].region];
		t->nodes[b->mn[k].parent].nkids++;
	}
	for (size_t k = 0; k < b->nmn; k++) {
		t->nodes[k].kids = t->kids + off;
		off += t->nodes[k].nkids;
		t->nodes[k].nkids = 0;
	}
	for (size_t k = 1; k < b->nmn; k++) {
		struct region_node *p = &t->nodes[b->mn[k].parent];

		t->kids[(p->kids - t->kids) + p->nkids++] = (uint32_t)k;
	}
	for (size_t k = 0; k < b->nmn; k++) {
		struct region_node *n = &t->nodes[k];

		n->region = b->mn[k].region;
		n->calls = b->mn[k].calls;
		n->total_ns = b->mn[k].total_ns;
		n->self_ns = b->mn[k].self_ns;
		qsort_r(t->kids + (n->kids - t->kids), n->nkids, sizeof(*n->kids), by_node_total,
			b->mn);
	}
	t->nnodes = (uint32_t)b->nmn;
	return 0;
}

/* Put regions in report order and lay out the rows and the merged tree for reading. */
static int finish(struct build *b)
{
	uint32_t *rank = malloc((b->t->nregions + 1) * sizeof(*rank));
	int err = rank ? order_regions(b, rank) : -ENOMEM;

	if (!err)
		err = lay_out_rows(b, rank);
	if (!err)
		err = lay_out_tree(b, rank);
	free(rank);
	return err;
}

struct regiontab *regiontab__new(const struct recording *r)
{
	return regiontab__new_kept(r, NULL, NULL);
}

struct regiontab *regiontab__new_kept(const struct recording *r,
				      bool (*keep)(const void *ctx, size_t sample), const void *ctx)
{
	struct regiontab *t = calloc(1, sizeof(*t));
	struct build b = {.r = r, .t = t, .keep = keep, .keep_ctx = ctx};
	int err = -ENOMEM;

	if (!t)
		goto err_out;
	b.reg_of_str = malloc((r->nstrings + 1) * sizeof(*b.reg_of_str));
	if (!b.reg_of_str || merged_child(&b, 0, NONE) == NONE) /* node 0: the root */
		goto err_out;
	memset(b.reg_of_str, 0xff, (r->nstrings + 1) * sizeof(*b.reg_of_str));
	err = number_names(&b);
	if (!err) {
		b.onpath = calloc(t->nregions + 1, sizeof(*b.onpath));
		err = b.onpath ? 0 : -ENOMEM;
	}
	for (size_t k = 0; k < r->nrthreads && !err; k++)
		err = add_tree(&b, &r->rthreads[k]);
	if (!err)
		err = add_samples(&b);
	if (!err)
		err = add_gpu(&b);
	if (!err)
		err = finish(&b);
err_out:
	free(b.reg_of_str);
	free(b.onpath);
	free(b.rows);
	free(b.mn);
	u64map__clear(&b.threads);
	u64map__clear(&b.rowmap);
	u64map__clear(&b.children);
	if (err) {
		regiontab__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void regiontab__free(struct regiontab *t)
{
	if (!t)
		return;
	free(t->names);
	free(t->all);
	free(t->rows);
	free(t->row_off);
	free(t->nodes);
	free(t->kids);
	free(t);
}

uint32_t regiontab__count(const struct regiontab *t)
{
	return t->nregions;
}

const char *regiontab__name(const struct regiontab *t, uint32_t region)
{
	return region < t->nregions ? t->names[region] : "?";
}

const struct region_stat *regiontab__all(const struct regiontab *t, uint32_t region)
{
	return &t->all[region];
}

uint32_t regiontab__threads(const struct regiontab *t, uint32_t region,
			    const struct region_thread_stat **rows)
{
	*rows = t->rows + t->row_off[region];
	return (uint32_t)(t->row_off[region + 1] - t->row_off[region]);
}

int regiontab__find(const struct regiontab *t, const char *name)
{
	for (uint32_t i = 0; i < t->nregions; i++) {
		if (!strcmp(t->names[i], name))
			return (int)i;
	}
	return -1;
}

uint32_t regiontab__node_count(const struct regiontab *t)
{
	return t->nnodes;
}

const struct region_node *regiontab__node(const struct regiontab *t, uint32_t node)
{
	return &t->nodes[node];
}

uint64_t regiontab__mismatches(const struct regiontab *t)
{
	return t->mismatches;
}

bool regiontab__has_gpu(const struct regiontab *t)
{
	return t->has_gpu;
}

uint64_t region_stat__timed(const struct region_stat *s)
{
	if (!s->max_ns || s->untimed >= s->calls)
		return 0;
	return s->calls - s->untimed;
}
