// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tree: the bounded path tree, perch's profile model (docs/DESIGN.md, "Bounded path trees").
 *
 * Owns the nodes (node 0 is the virtual root), each node's list of children in creation order,
 * an index from (parent, label) to child (lib/idxtab.h: the key is in the node) so that a step
 * down costs O(1), and the
 * per-label self/total weights, which are taken from the stacks as inserted because the folded
 * tree would count a recursive function more than once.
 *
 * tree__insert() allocates everything a new node needs before linking it, so -ENOMEM leaves a
 * valid tree: nodes created earlier in the same walk stay (with no weight), no weight is added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"
#include "lib/hash.h"
#include "lib/idxtab.h"
#include "lib/vec.h"

#define LABELS_MIN 256
#define NODES_MIN  64

struct node {
	size_t parent;
	size_t *kids; /* child ids in creation order */
	size_t nr_kids;
	size_t kids_cap;
	uint64_t self;
	uint64_t inclusive;
	uint32_t label;
};

struct label_stat {
	uint64_t self;
	uint64_t total;
	uint64_t seen; /* generation of the last stack that contained the label */
};

/* nodes[0] is the virtual root; nr_nodes counts it. Node ids fit 32 bits (index keys). */
struct tree {
	struct node *nodes;
	size_t nr_nodes;
	size_t nodes_cap;
	struct idxtab index; /* (parent, label) -> child, hashed as index_hash() */
	struct label_stat *labels;
	size_t labels_cap;
	uint32_t label_limit;
	uint64_t generation;
	uint64_t total_weight;
};

struct tree *tree__new(void)
{
	struct tree *t = calloc(1, sizeof(*t));

	if (!t)
		goto err_out;
	t->nodes = calloc(NODES_MIN, sizeof(*t->nodes));
	if (!t->nodes)
		goto err_out;
	t->nodes_cap = NODES_MIN;
	t->nr_nodes = 1;
	return t;

err_out:
	free(t);
	errno = ENOMEM;
	return NULL;
}

void tree__free(struct tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_nodes; i++)
		free(t->nodes[i].kids);
	free(t->nodes);
	idxtab__clear(&t->index);
	free(t->labels);
	free(t);
}

/* Index of (parent, label) ----------------------------------------------------------------- */

struct index_key {
	size_t parent;
	uint32_t label;
};

static uint32_t index_hash(size_t parent, uint32_t label)
{
	return hash32(mix64((uint64_t)parent << 32 ^ label));
}

static bool index_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct node *n = &((const struct tree *)ctx)->nodes[id];
	const struct index_key *k = key;

	return n->parent == k->parent && n->label == k->label;
}

/* The index slot of (parent, label): its child's, or the empty one where it goes. */
static struct idxtab_slot *find_slot(const struct tree *t, size_t parent, uint32_t label)
{
	struct index_key k = {parent, label};

	return idxtab__find(&t->index, index_hash(parent, label), index_eq, t, &k);
}

static size_t find_child(const struct tree *t, size_t parent, uint32_t label)
{
	uint32_t idx1 = t->index.slots ? find_slot(t, parent, label)->idx1 : 0;

	return idx1 ? idx1 - 1 : 0;
}

/* Nodes ------------------------------------------------------------------------------------ */

static int kids_reserve(struct node *n)
{
	return vec_grow(&n->kids, &n->kids_cap, n->nr_kids + 1, sizeof(*n->kids), 4);
}

/* Create child @label of @parent; returns its id, or 0 when out of memory. */
static size_t new_child(struct tree *t, size_t parent, uint32_t label)
{
	size_t id = t->nr_nodes;
	struct node *p;

	if (id >= UINT32_MAX ||
	    vec_grow(&t->nodes, &t->nodes_cap, id + 1, sizeof(*t->nodes), NODES_MIN) ||
	    kids_reserve(&t->nodes[parent]) || idxtab__reserve(&t->index))
		return 0;
	t->nodes[id] = (struct node){.parent = parent, .label = label};
	t->nr_nodes++;
	idxtab__set(&t->index, find_slot(t, parent, label), id, index_hash(parent, label));
	p = &t->nodes[parent];
	p->kids[p->nr_kids++] = id;
	return id;
}

/*
 * The Y node of the edge X->Y on the path from the root to @p (label X), or 0 when the edge is
 * not there. The step from the virtual root to the first frame is not a call, so it never
 * matches. The rule keeps each edge at most once per path, so the first match is the only one.
 */
static size_t find_on_path(const struct tree *t, size_t p, uint32_t y)
{
	uint32_t x = t->nodes[p].label;

	for (size_t q = p; q && t->nodes[q].parent; q = t->nodes[q].parent) {
		if (t->nodes[q].label == y && t->nodes[t->nodes[q].parent].label == x)
			return q;
	}
	return 0;
}

/* One step of the walk from @p to frame @y; returns the next node, or 0 when out of memory. */
static size_t step(struct tree *t, size_t p, uint32_t y)
{
	size_t next = find_child(t, p, y);

	if (!next && p)
		next = find_on_path(t, p, y);
	if (!next)
		next = new_child(t, p, y);
	return next;
}

static int walk(struct tree *t, const uint32_t *labels, size_t n, size_t *end)
{
	size_t p = 0;

	for (size_t i = 0; i < n; i++) {
		p = step(t, p, labels[i]);
		if (!p)
			return -ENOMEM;
	}
	*end = p;
	return 0;
}

/* Labels ----------------------------------------------------------------------------------- */

static int labels_reserve(struct tree *t, const uint32_t *labels, size_t n)
{
	size_t old = t->labels_cap;
	uint32_t max = 0;

	for (size_t i = 0; i < n; i++)
		max = labels[i] > max ? labels[i] : max;
	/* tree__label_limit() could not say max + 1 */
	if (max == UINT32_MAX)
		return -ENOMEM;
	if (max < t->labels_cap)
		return 0;
	if (vec_grow(&t->labels, &t->labels_cap, (size_t)max + 1, sizeof(*t->labels), LABELS_MIN))
		return -ENOMEM;
	memset(t->labels + old, 0, (t->labels_cap - old) * sizeof(*t->labels));
	return 0;
}

/* Self goes to the leaf; total once to each distinct label, however often it recurs. */
static void add_label_weight(struct tree *t, const uint32_t *labels, size_t n, uint64_t weight)
{
	uint64_t gen = ++t->generation;

	if (!n)
		return;
	t->labels[labels[n - 1]].self += weight;
	for (size_t i = 0; i < n; i++) {
		struct label_stat *s = &t->labels[labels[i]];

		if (labels[i] >= t->label_limit)
			t->label_limit = labels[i] + 1;
		if (s->seen == gen)
			continue;
		s->seen = gen;
		s->total += weight;
	}
}

static void add_node_weight(struct tree *t, size_t end, uint64_t weight)
{
	t->nodes[end].self += weight;
	for (size_t q = end;; q = t->nodes[q].parent) {
		t->nodes[q].inclusive += weight;
		if (!q)
			break;
	}
	t->total_weight += weight;
}

int tree__insert(struct tree *t, const uint32_t *labels, size_t n, uint64_t weight)
{
	size_t end;
	int err;

	err = labels_reserve(t, labels, n);
	if (err)
		return err;
	err = walk(t, labels, n, &end);
	if (err)
		return err;
	add_node_weight(t, end, weight);
	add_label_weight(t, labels, n, weight);
	return 0;
}

/* Queries ---------------------------------------------------------------------------------- */

size_t tree__node_count(const struct tree *t)
{
	return t->nr_nodes - 1;
}

uint64_t tree__total_weight(const struct tree *t)
{
	return t->total_weight;
}

uint64_t tree__label_self(const struct tree *t, uint32_t label)
{
	return label < t->labels_cap ? t->labels[label].self : 0;
}

uint64_t tree__label_total(const struct tree *t, uint32_t label)
{
	return label < t->labels_cap ? t->labels[label].total : 0;
}

uint32_t tree__label_limit(const struct tree *t)
{
	return t->label_limit;
}

/* Out-of-range nodes read as empty: label 0, parent 0, no weight, no children. */
uint32_t tree__node_label(const struct tree *t, size_t node)
{
	return node < t->nr_nodes ? t->nodes[node].label : 0;
}

size_t tree__node_parent(const struct tree *t, size_t node)
{
	return node < t->nr_nodes ? t->nodes[node].parent : 0;
}

uint64_t tree__node_self(const struct tree *t, size_t node)
{
	return node < t->nr_nodes ? t->nodes[node].self : 0;
}

uint64_t tree__node_inclusive(const struct tree *t, size_t node)
{
	return node < t->nr_nodes ? t->nodes[node].inclusive : 0;
}

size_t tree__node_children(const struct tree *t, size_t node, const size_t **out)
{
	if (node >= t->nr_nodes) {
		*out = NULL;
		return 0;
	}
	*out = t->nodes[node].kids;
	return t->nodes[node].nr_kids;
}
