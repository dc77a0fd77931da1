// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch diff`'s model (diff.h): the functions of two profiles matched by (kernel, module,
 * name), the two call trees merged by path breadth first, shares, z scores and the ranking.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"
#include "profile.h"
#include "tree.h"
#include "lib/vec.h"

struct diff {
	struct profile *p[2];
	uint64_t n[2];
	struct diff_row *funcs; /* build order: sorted by key */
	size_t nfuncs;
	size_t *func_rank;
	uint32_t *func_of[2]; /* a profile's function -> row of funcs */
	struct diff_row *nodes;
	size_t nnodes, cap_nodes;
	size_t *node_rank;
};

/* A function of one side, for the sort that matches them. */
struct fkey {
	const struct profile *p;
	uint32_t func;
	int side;
};

static int cmp_func(const struct fkey *a, const struct fkey *b)
{
	int c = (int)profile__func_kernel(a->p, a->func) - (int)profile__func_kernel(b->p, b->func);

	if (!c)
		c = strcmp(profile__func_module(a->p, a->func),
			   profile__func_module(b->p, b->func));
	return c ? c : strcmp(profile__func_name(a->p, a->func), profile__func_name(b->p, b->func));
}

static int cmp_fkey(const void *a, const void *b)
{
	int c = cmp_func(a, b);

	return c ? c : ((const struct fkey *)a)->side - ((const struct fkey *)b)->side;
}

static double share(uint64_t x, uint64_t n)
{
	return n ? (double)x / (double)n : 0;
}

/* The two-proportion z score of x0 of n0 against x1 of n1 (diff.h); 0 where undefined. */
static double z_score(uint64_t x0, uint64_t n0, uint64_t x1, uint64_t n1)
{
	double p, se;

	if (!n0 || !n1)
		return 0;
	p = (double)(x0 + x1) / (double)(n0 + n1);
	se = sqrt(p * (1 - p) * (1.0 / (double)n0 + 1.0 / (double)n1));
	return se > 0 ? (share(x1, n1) - share(x0, n0)) / se : 0;
}

static void finish_row(const struct diff *d, struct diff_row *r)
{
	for (int s = 0; s < 2; s++) {
		r->self_share[s] = share(r->self[s], d->n[s]);
		r->total_share[s] = share(r->total[s], d->n[s]);
	}
	r->d_self = r->self_share[1] - r->self_share[0];
	r->d_total = r->total_share[1] - r->total_share[0];
	r->z_self = z_score(r->self[0], d->n[0], r->self[1], d->n[1]);
	r->z_total = z_score(r->total[0], d->n[0], r->total[1], d->n[1]);
	r->significant =
		fabs(r->z_self) >= DIFF_Z_SIGNIFICANT || fabs(r->z_total) >= DIFF_Z_SIGNIFICANT;
}

/* Every function with samples on either side, once, into d->funcs; d->func_of maps them. */
static int match_funcs(struct diff *d)
{
	uint32_t nf[2] = {profile__nfuncs(d->p[0]), profile__nfuncs(d->p[1])};
	struct fkey *k = calloc((size_t)nf[0] + nf[1] + 1, sizeof(*k));
	size_t n = 0;

	d->funcs = calloc((size_t)nf[0] + nf[1] + 1, sizeof(*d->funcs));
	d->func_of[0] = calloc((size_t)nf[0] + 1, sizeof(uint32_t));
	d->func_of[1] = calloc((size_t)nf[1] + 1, sizeof(uint32_t));
	if (!k || !d->funcs || !d->func_of[0] || !d->func_of[1]) {
		free(k);
		return -ENOMEM;
	}
	for (int s = 0; s < 2; s++) {
		for (uint32_t f = 0; f < nf[s]; f++)
			k[n++] = (struct fkey){d->p[s], f, s};
	}
	if (n)
		qsort(k, n, sizeof(*k), cmp_fkey);
	for (size_t i = 0; i < n; i++) {
		const struct tree *t = profile__tree(k[i].p);
		struct diff_row *r;

		if (!i || cmp_func(&k[i - 1], &k[i])) {
			r = &d->funcs[d->nfuncs++];
			r->name = profile__func_name(k[i].p, k[i].func);
			r->module = profile__func_module(k[i].p, k[i].func);
			r->kernel = profile__func_kernel(k[i].p, k[i].func);
		}
		r = &d->funcs[d->nfuncs - 1];
		r->self[k[i].side] += tree__label_self(t, k[i].func);
		r->total[k[i].side] += tree__label_total(t, k[i].func);
		d->func_of[k[i].side][k[i].func] = (uint32_t)(d->nfuncs - 1);
	}
	for (size_t i = 0; i < d->nfuncs; i++)
		finish_row(d, &d->funcs[i]);
	free(k);
	return 0;
}

/* A node of the merged tree: its row and the node of each side (SIZE_MAX: none). */
struct mnode {
	size_t node[2];
};

static int add_node(struct diff *d, struct mnode **m, uint32_t parent, uint32_t func)
{
	struct diff_row *r;

	if (vec_grow(&d->nodes, &d->cap_nodes, d->nnodes + 1, sizeof(*d->nodes), 256) ||
	    !(*m = realloc(*m, d->cap_nodes * sizeof(**m))))
		return -ENOMEM;
	r = &d->nodes[d->nnodes];
	*r = (struct diff_row){.parent = parent};
	if (d->nnodes) {
		r->name = d->funcs[func].name;
		r->module = d->funcs[func].module;
		r->kernel = d->funcs[func].kernel;
		r->depth = d->nodes[parent].depth + 1;
	} else {
		r->name = r->module = "";
	}
	(*m)[d->nnodes] = (struct mnode){{SIZE_MAX, SIZE_MAX}};
	d->nnodes++;
	return 0;
}

/* The child of merged node m for function func among [first, end), or end. */
static size_t find_child(const struct diff *d, size_t first, size_t end, uint32_t func)
{
	for (size_t c = first; c < end; c++) {
		if (!strcmp(d->nodes[c].name, d->funcs[func].name) &&
		    !strcmp(d->nodes[c].module, d->funcs[func].module) &&
		    d->nodes[c].kernel == d->funcs[func].kernel)
			return c;
	}
	return end;
}

/* The children of merged node i: side s's children, matched with those already added. */
static int add_children(struct diff *d, struct mnode **m, size_t i, int s, size_t first)
{
	const struct tree *t = profile__tree(d->p[s]);
	size_t node = (*m)[i].node[s];
	const size_t *kids;
	size_t nk;

	if (node == SIZE_MAX)
		return 0;
	nk = tree__node_children(t, node, &kids);
	for (size_t k = 0; k < nk; k++) {
		uint32_t func = d->func_of[s][tree__node_label(t, kids[k])];
		size_t c = find_child(d, first, d->nnodes, func);

		if (c == d->nnodes && add_node(d, m, (uint32_t)i, func))
			return -ENOMEM;
		(*m)[c].node[s] = kids[k];
		d->nodes[c].self[s] = tree__node_self(t, kids[k]);
		d->nodes[c].total[s] = tree__node_inclusive(t, kids[k]);
	}
	return 0;
}

/* Both trees merged by path, breadth first: a node's children follow one another. */
static int merge_trees(struct diff *d)
{
	struct mnode *m = NULL;
	int err = add_node(d, &m, 0, 0);

	for (int s = 0; s < 2 && !err; s++) {
		m[0].node[s] = 0;
		d->nodes[0].self[s] = tree__node_self(profile__tree(d->p[s]), 0);
		d->nodes[0].total[s] = d->n[s];
	}
	for (size_t i = 0; i < d->nnodes && !err; i++) {
		size_t first = d->nnodes;

		err = add_children(d, &m, i, 0, first);
		if (!err)
			err = add_children(d, &m, i, 1, first);
	}
	free(m);
	for (size_t i = 0; i < d->nnodes && !err; i++)
		finish_row(d, &d->nodes[i]);
	return err;
}

static double change(const struct diff_row *r)
{
	return fmax(fabs(r->d_self), fabs(r->d_total));
}

/* Significant first, then the larger change, then the name. */
static int cmp_rows(const struct diff_row *a, const struct diff_row *b)
{
	double ca = change(a), cb = change(b);

	if (a->significant != b->significant)
		return a->significant ? -1 : 1;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int cmp_rank(const void *a, const void *b, void *rows)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = cmp_rows((struct diff_row *)rows + i, (struct diff_row *)rows + j);

	return c ? c : (i > j) - (i < j);
}

/* Indices first..n-1 of rows, ranked. */
static size_t *rank(const struct diff_row *rows, size_t first, size_t n)
{
	size_t *v = calloc(n + 1, sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = first; i < n; i++)
		v[i - first] = i;
	if (n > first)
		qsort_r(v, n - first, sizeof(*v), cmp_rank, (void *)rows);
	return v;
}

struct diff *diff__build(const struct recording *base, const struct recording *new,
			 const struct diff_opts *o)
{
	struct profile_opts po = {0};
	struct diff *d = calloc(1, sizeof(*d));
	int err = -ENOMEM;

	if (!d)
		goto err_out;
	if (o) {
		po.lines = o->lines;
		po.no_demangle = o->no_demangle;
		po.region = o->region;
	}
	d->p[0] = profile__build(base, &po);
	d->p[1] = d->p[0] ? profile__build(new, &po) : NULL;
	if (!d->p[1])
		goto err_out;
	for (int s = 0; s < 2; s++)
		d->n[s] = tree__total_weight(profile__tree(d->p[s]));
	err = match_funcs(d);
	if (!err)
		err = merge_trees(d);
	if (err)
		goto err_out;
	d->func_rank = rank(d->funcs, 0, d->nfuncs);
	d->node_rank = rank(d->nodes, 1, d->nnodes);
	if (d->func_rank && d->node_rank)
		return d;
	err = -ENOMEM;
err_out:
	diff__free(d);
	errno = -err;
	return NULL;
}

void diff__free(struct diff *d)
{
	if (!d)
		return;
	profile__free(d->p[0]);
	profile__free(d->p[1]);
	free(d->funcs);
	free(d->func_rank);
	free(d->func_of[0]);
	free(d->func_of[1]);
	free(d->nodes);
	free(d->node_rank);
	free(d);
}

uint64_t diff__samples(const struct diff *d, enum diff_side side)
{
	return d->n[side];
}

size_t diff__nfuncs(const struct diff *d)
{
	return d->nfuncs;
}

const struct diff_row *diff__func(const struct diff *d, size_t rank)
{
	return &d->funcs[d->func_rank[rank]];
}

size_t diff__nnodes(const struct diff *d)
{
	return d->nnodes;
}

const struct diff_row *diff__node(const struct diff *d, size_t node)
{
	return &d->nodes[node];
}

size_t diff__node_ranked(const struct diff *d, size_t rank)
{
	return d->node_rank[rank];
}
