/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profile model: a bounded path tree (docs/DESIGN.md, "Bounded path trees").
 *
 * A stack is a sequence of labels, root first. Labels are small dense integers chosen by the
 * caller (perch uses string-table ids of function names). On any root-to-node path a
 * caller->callee pair X->Y appears at most once: inserting a stack walks from the root; to step
 * from node P (label X) to label Y, go to P's child Y if there is one, else if the edge X->Y
 * already occurs on the path from the root to P jump back to the Y node of that occurrence, else
 * create the child. The sample's weight goes to the node where the walk ends. The tree's size is
 * bounded by the program's call graph, not by how long it ran.
 *
 * Node 0 is a virtual root with no label; the first frame of a stack is a child of it.
 */
#ifndef PERCH_TREE_H
#define PERCH_TREE_H

#include <stddef.h>
#include <stdint.h>

struct tree;

struct tree *tree__new(void);
void tree__free(struct tree *t);

/* Insert one stack (labels[0] is the outermost frame). n == 0 adds weight to the virtual root.
 * Returns 0 or -ENOMEM. */
int tree__insert(struct tree *t, const uint32_t *labels, size_t n, uint64_t weight);

/* Number of nodes, not counting the virtual root. */
size_t tree__node_count(const struct tree *t);

/* Sum of all inserted weights. */
uint64_t tree__total_weight(const struct tree *t);

/* Per-function views, computed from the stacks as they were inserted (never from the folded
 * tree, so recursion is not double counted):
 *   self:  weight of stacks whose leaf (last label) is this label;
 *   total: weight of stacks in which this label appears at least once. */
uint64_t tree__label_self(const struct tree *t, uint32_t label);
uint64_t tree__label_total(const struct tree *t, uint32_t label);
/* One more than the largest label ever inserted (labels below it may have zero weight). */
uint32_t tree__label_limit(const struct tree *t);

/* Node access; node ids are 0 (virtual root) .. tree__node_count(). */
uint32_t tree__node_label(const struct tree *t, size_t node);
size_t tree__node_parent(const struct tree *t, size_t node); /* 0 for children of the root */
uint64_t tree__node_self(const struct tree *t, size_t node);
/* Self weight of the node plus that of every node below it in the tree (each node counted once). */
uint64_t tree__node_inclusive(const struct tree *t, size_t node);
/* Children of a node in creation order; *out points into the tree and stays valid until the next
 * tree__insert(). Returns the number of children. */
size_t tree__node_children(const struct tree *t, size_t node, const size_t **out);

#endif /* PERCH_TREE_H */
