// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tree: the bounded path tree, perch's profile model (DESIGN.md, "Bounded path trees").
 *
 * Owns the nodes (node 0 is the virtual root), each node's list of children in creation order,
 * one open-addressing index from (parent, label) to child so that a step down costs O(1), and the
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

#define INDEX_MIN_SLOTS 64
#define LABELS_MIN	256
#define NODES_MIN	64

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

/*
 * nodes[0] is the virtual root; nr_nodes counts it. slots[] holds child node ids, 0 for an empty
 * slot (the root is nobody's child); nr_slots is a power of two, or 0 before the first child.
 */
struct tree {
	struct node *nodes;
	size_t nr_nodes;
	size_t nodes_cap;
	size_t *slots;
	size_t nr_slots;
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
	free(t->slots);
	free(t->labels);
	free(t);
}

/* Index of (parent, label) ----------------------------------------------------------------- */

static size_t slot_hash(size_t parent, uint32_t label)
{
	uint64_t h = ((uint64_t)parent * 0x9e3779b97f4a7c15ull) ^ label;

	h *= 0xff51afd7ed558ccdull;
	return (size_t)(h ^ (h >> 32));
}

static size_t find_child(const struct tree *t, size_t parent, uint32_t label)
{
	size_t mask = t->nr_slots - 1;

	if (!t->nr_slots)
		return 0;
	for (size_t i = slot_hash(parent, label) & mask;; i = (i + 1) & mask) {
		size_t id = t->slots[i];

		if (!id || (t->nodes[id].parent == parent && t->nodes[id].label == label))
			return id;
	}
}

static void index_put(size_t *slots, size_t nr_slots, const struct node *nodes, size_t id)
{
	size_t mask = nr_slots - 1;
	size_t i = slot_hash(nodes[id].parent, nodes[id].label) & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = id;
}

/* Keep the index at most half full, counting the node about to be added. */
static int index_reserve(struct tree *t)
{
	size_t nr = t->nr_slots ? t->nr_slots * 2 : INDEX_MIN_SLOTS;
	size_t *slots;

	if (t->nr_nodes * 2 <= t->nr_slots)
		return 0;
	while (t->nr_nodes * 2 > nr)
		nr *= 2;
	slots = calloc(nr, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t id = 1; id < t->nr_nodes; id++)
		index_put(slots, nr, t->nodes, id);
	free(t->slots);
	t->slots = slots;
	t->nr_slots = nr;
	return 0;
}

/* Nodes ------------------------------------------------------------------------------------ */

static int nodes_reserve(struct tree *t)
{
	size_t cap = t->nodes_cap * 2;
	struct node *nodes;

	if (t->nr_nodes < t->nodes_cap)
		return 0;
	nodes = reallocarray(t->nodes, cap, sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	t->nodes_cap = cap;
	return 0;
}

static int kids_reserve(struct node *n)
{
	size_t cap = n->kids_cap ? n->kids_cap * 2 : 4;
	size_t *kids;

	if (n->nr_kids < n->kids_cap)
		return 0;
	kids = reallocarray(n->kids, cap, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	n->kids = kids;
	n->kids_cap = cap;
	return 0;
}

/* Create child @label of @parent; returns its id, or 0 when out of memory. */
static size_t new_child(struct tree *t, size_t parent, uint32_t label)
{
	size_t id = t->nr_nodes;
	struct node *p;

	if (nodes_reserve(t) || index_reserve(t) || kids_reserve(&t->nodes[parent]))
		return 0;
	t->nodes[id] = (struct node){.parent = parent, .label = label};
	t->nr_nodes++;
	index_put(t->slots, t->nr_slots, t->nodes, id);
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
	uint32_t max = 0;
	size_t cap = t->labels_cap ? t->labels_cap * 2 : LABELS_MIN;
	struct label_stat *stats;

	for (size_t i = 0; i < n; i++)
		max = labels[i] > max ? labels[i] : max;
	/* tree__label_limit() could not say max + 1 */
	if (max == UINT32_MAX)
		return -ENOMEM;
	if (max < t->labels_cap)
		return 0;
	if (cap <= max)
		cap = (size_t)max + 1;
	stats = reallocarray(t->labels, cap, sizeof(*stats));
	if (!stats)
		return -ENOMEM;
	memset(stats + t->labels_cap, 0, (cap - t->labels_cap) * sizeof(*stats));
	t->labels = stats;
	t->labels_cap = cap;
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
