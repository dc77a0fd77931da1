// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for userspace/model/tree.c, the bounded path tree: the examples of docs/DESIGN.md
 * and of seeds/fble-profiling-notes.txt, the per-label views, and random stacks checked against a
 * naive reference implementation of the same insertion rule.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/tree.h"

#define MAX_STACK 2048

/* Helpers ---------------------------------------------------------------------------------- */

static struct tree *new_tree(void)
{
	struct tree *t = tree__new();

	assert_non_null(t);
	return t;
}

/* Insert a stack written as space-separated one-character frames; the label is the character. */
static void insert(struct tree *t, const char *stack, uint64_t weight)
{
	uint32_t labels[MAX_STACK];
	size_t n = 0;

	for (const char *c = stack; *c; c++) {
		if (*c == ' ')
			continue;
		assert_true(n < MAX_STACK);
		labels[n++] = (unsigned char)*c;
	}
	assert_int_equal(tree__insert(t, labels, n, weight), 0);
}

struct text {
	char s[1024];
	size_t len;
};

static void put(struct text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct text *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	assert_true(r >= 0 && (size_t)r < sizeof(b->s) - b->len);
	b->len += (size_t)r;
}

/* "a(b(a,c))": each node's label, optionally ":self", then its children in creation order. */
static void render_node(const struct tree *t, size_t node, bool weights, struct text *b)
{
	const size_t *kids;
	size_t nr = tree__node_children(t, node, &kids);

	if (node) {
		put(b, "%c", (char)tree__node_label(t, node));
		if (weights)
			put(b, ":%llu", (unsigned long long)tree__node_self(t, node));
		if (nr)
			put(b, "(");
	}
	for (size_t i = 0; i < nr; i++) {
		assert_int_equal(tree__node_parent(t, kids[i]), node);
		if (i)
			put(b, ",");
		render_node(t, kids[i], weights, b);
	}
	if (node && nr)
		put(b, ")");
}

static void assert_shape(const struct tree *t, bool weights, const char *want)
{
	struct text b = {.len = 0};

	render_node(t, 0, weights, &b);
	assert_string_equal(b.s, want);
}

struct want_node {
	char label;
	size_t parent;
};

/* Node ids 1..n, in creation order, with their labels and parents. */
static void assert_nodes(const struct tree *t, const struct want_node *want, size_t n)
{
	assert_int_equal(tree__node_count(t), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(tree__node_label(t, i + 1), (unsigned char)want[i].label);
		assert_int_equal(tree__node_parent(t, i + 1), want[i].parent);
	}
}

/* No caller->callee pair occurs twice on any root-to-node path (the root step is no call). */
static void assert_paths_never_repeat_an_edge(const struct tree *t)
{
	for (size_t n = 1; n <= tree__node_count(t); n++) {
		for (size_t a = n; tree__node_parent(t, a); a = tree__node_parent(t, a)) {
			size_t pa = tree__node_parent(t, a);

			for (size_t b = pa; tree__node_parent(t, b); b = tree__node_parent(t, b)) {
				size_t pb = tree__node_parent(t, b);
				bool same = tree__node_label(t, a) == tree__node_label(t, b) &&
					    tree__node_label(t, pa) == tree__node_label(t, pb);

				assert_false(same);
			}
		}
	}
}

/* Basics ----------------------------------------------------------------------------------- */

static void tree_free_accepts_null(void **state)
{
	(void)state;
	tree__free(NULL);
}

static void tree_new_is_empty(void **state)
{
	struct tree *t = new_tree();
	const size_t *kids;

	(void)state;
	assert_int_equal(tree__node_count(t), 0);
	assert_int_equal(tree__total_weight(t), 0);
	assert_int_equal(tree__label_limit(t), 0);
	assert_int_equal(tree__node_children(t, 0, &kids), 0);
	assert_int_equal(tree__node_inclusive(t, 0), 0);
	assert_int_equal(tree__label_total(t, 0), 0);
	tree__free(t);
}

static void tree_empty_stack_weights_virtual_root(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	assert_int_equal(tree__insert(t, NULL, 0, 4), 0);
	assert_int_equal(tree__node_count(t), 0);
	assert_int_equal(tree__node_self(t, 0), 4);
	assert_int_equal(tree__node_inclusive(t, 0), 4);
	assert_int_equal(tree__total_weight(t), 4);
	assert_int_equal(tree__label_limit(t), 0);
	insert(t, "a", 1);
	assert_int_equal(tree__node_self(t, 0), 4);
	assert_int_equal(tree__node_inclusive(t, 0), 5);
	assert_int_equal(tree__label_total(t, 'a'), 1);
	tree__free(t);
}

static void tree_node_queries_out_of_range_read_empty(void **state)
{
	static const size_t stale;
	struct tree *t = new_tree();
	const size_t *kids = &stale;

	(void)state;
	insert(t, "a b", 3);
	assert_int_equal(tree__node_label(t, 3), 0);
	assert_int_equal(tree__node_parent(t, 3), 0);
	assert_int_equal(tree__node_self(t, 3), 0);
	assert_int_equal(tree__node_inclusive(t, 99), 0);
	assert_int_equal(tree__node_children(t, 3, &kids), 0);
	assert_null(kids);
	assert_int_equal(tree__label_self(t, 'z'), 0);
	assert_int_equal(tree__label_total(t, UINT32_MAX), 0);
	tree__free(t);
}

/* Shape: docs/DESIGN.md -------------------------------------------------------------------- */

static void tree_folds_self_recursion_a_b_b_b_c(void **state)
{
	static const struct want_node want[] = {{'a', 0}, {'b', 1}, {'b', 2}, {'c', 3}};
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b b b c", 1);
	assert_nodes(t, want, 4);
	assert_shape(t, false, "a(b(b(c)))");
	assert_int_equal(tree__node_self(t, 4), 1);
	tree__free(t);
}

static void tree_jumps_back_on_repeated_edge_a_b_a_b_c(void **state)
{
	static const struct want_node want[] = {{'a', 0}, {'b', 1}, {'a', 2}, {'c', 2}};
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b a b c", 1);
	assert_nodes(t, want, 4);
	assert_shape(t, false, "a(b(a,c))");
	assert_int_equal(tree__node_self(t, 4), 1);
	tree__free(t);
}

/* With label 0 on the root's child: a root wrongly read as label 0 would fold "0 0" to one node. */
static void tree_root_step_is_not_a_call_edge(void **state)
{
	static const uint32_t zeros[] = {0, 0, 0};
	struct tree *t = new_tree();

	(void)state;
	assert_int_equal(tree__insert(t, zeros, 2, 1), 0);
	assert_int_equal(tree__node_count(t), 2);
	assert_int_equal(tree__node_parent(t, 2), 1);
	assert_int_equal(tree__insert(t, zeros, 3, 1), 0);
	assert_int_equal(tree__node_count(t), 2);
	assert_int_equal(tree__node_self(t, 2), 2);
	tree__free(t);
}

static void tree_lists_children_in_creation_order(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a c", 1);
	insert(t, "a b", 1);
	insert(t, "d", 1);
	insert(t, "a d", 1);
	insert(t, "a b", 1);
	assert_shape(t, true, "a:0(c:1,b:2,d:1),d:1");
	tree__free(t);
}

/* Shape: seeds/fble-profiling-notes.txt ---------------------------------------------------- */

/* "a 1 -> b 1 -> b 1 -> b 1 -> c 1" is kept as "a 1 -> b 1 -> b 2 -> c 1". */
static void tree_fble_counts_entry_and_self_calls_of_b_apart(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a", 1);
	insert(t, "a b", 1);
	insert(t, "a b b", 1);
	insert(t, "a b b b", 1);
	insert(t, "a b b b c", 1);
	assert_shape(t, true, "a:1(b:1(b:2(c:1)))");
	tree__free(t);
}

/* "-> a -> b -> a -> b -> c" is abstracted as "-> a -> b -> a" and "-> b -> c". */
static void tree_fble_abstracts_repeated_a_b(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b a", 2);
	insert(t, "a b a b c", 3);
	assert_shape(t, true, "a:0(b:0(a:2,c:3))");
	tree__free(t);
}

/* "a -> b -> c" and "e -> b -> c -> d" must not suggest a path from a to d. */
static void tree_fble_keeps_paths_through_shared_callee_apart(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b c", 1);
	insert(t, "e b c d", 1);
	assert_shape(t, false, "a(b(c)),e(b(c(d)))");
	tree__free(t);
}

/* Dispatch: "a -> Call -> b" and "c -> Call -> d" must not say a calls d. */
static void tree_fble_keeps_dispatch_callers_apart(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a C b", 1);
	insert(t, "c C d", 1);
	insert(t, "a b c", 1);
	insert(t, "d b e", 1);
	assert_shape(t, false, "a(C(b),b(c)),c(C(d)),d(b(e))");
	tree__free(t);
}

/* The notes' test tree: <root> -> 1 -> 2 -> 3, 2 -> 4, 1 -> 3 from samples 10: 1, 20: 1,2, ... */
static void tree_fble_builds_test_tree_from_samples(void **state)
{
	static const struct want_node want[] = {{'1', 0}, {'2', 1}, {'3', 2}, {'4', 2}, {'3', 1}};
	struct tree *t = new_tree();

	(void)state;
	insert(t, "1", 10);
	insert(t, "1 2", 20);
	insert(t, "1 2 3", 30);
	insert(t, "1 2 4", 40);
	insert(t, "1 3", 31);
	assert_nodes(t, want, 5);
	assert_shape(t, true, "1:10(2:20(3:30,4:40),3:31)");
	assert_int_equal(tree__node_inclusive(t, 1), 131);
	assert_int_equal(tree__node_inclusive(t, 2), 90);
	assert_int_equal(tree__node_inclusive(t, 5), 31);
	assert_int_equal(tree__label_self(t, '3'), 61);
	assert_int_equal(tree__label_total(t, '2'), 90);
	assert_int_equal(tree__label_total(t, '1'), 131);
	tree__free(t);
}

/* Weights ---------------------------------------------------------------------------------- */

static void tree_label_self_and_total_follow_stacks(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b c", 3);
	insert(t, "a b", 2);
	insert(t, "a c", 7);
	assert_int_equal(tree__total_weight(t), 12);
	assert_int_equal(tree__label_self(t, 'a'), 0);
	assert_int_equal(tree__label_total(t, 'a'), 12);
	assert_int_equal(tree__label_self(t, 'b'), 2);
	assert_int_equal(tree__label_total(t, 'b'), 5);
	assert_int_equal(tree__label_self(t, 'c'), 10);
	assert_int_equal(tree__label_total(t, 'c'), 10);
	assert_int_equal(tree__label_limit(t), 'c' + 1);
	tree__free(t);
}

static void tree_total_never_double_counts_recursion(void **state)
{
	struct tree *t = new_tree();

	(void)state;
	insert(t, "a b b b", 5);
	assert_int_equal(tree__label_total(t, 'b'), 5);
	assert_int_equal(tree__label_self(t, 'b'), 5);
	assert_int_equal(tree__label_total(t, 'a'), 5);
	assert_int_equal(tree__label_self(t, 'a'), 0);
	insert(t, "a b a b a", 2);
	assert_int_equal(tree__label_total(t, 'a'), 7);
	assert_int_equal(tree__label_self(t, 'a'), 2);
	assert_int_equal(tree__label_total(t, 'b'), 7);
	assert_int_equal(tree__node_inclusive(t, 0), 7);
	assert_int_equal(tree__total_weight(t), 7);
	tree__free(t);
}

static void tree_handles_large_label_ids(void **state)
{
	static const uint32_t stack[] = {5000000, 3000000, 5000000, 7};
	struct tree *t = new_tree();

	(void)state;
	assert_int_equal(tree__insert(t, stack, 4, 9), 0);
	assert_int_equal(tree__insert(t, stack, 2, 1), 0);
	assert_int_equal(tree__label_limit(t), 5000001);
	assert_int_equal(tree__label_total(t, 5000000), 10);
	assert_int_equal(tree__label_self(t, 5000000), 0);
	assert_int_equal(tree__label_self(t, 3000000), 1);
	assert_int_equal(tree__label_total(t, 3000000), 10);
	assert_int_equal(tree__label_self(t, 7), 9);
	assert_int_equal(tree__label_total(t, 4999999), 0);
	assert_int_equal(tree__node_label(t, 1), 5000000);
	assert_int_equal(tree__node_count(t), 4);
	tree__free(t);
}

/* A label of UINT32_MAX has no label limit to report; it is refused without changing anything. */
static void tree_refuses_label_without_limit(void **state)
{
	static const uint32_t stack[] = {1, UINT32_MAX};
	struct tree *t = new_tree();

	(void)state;
	assert_int_equal(tree__insert(t, stack, 2, 1), -ENOMEM);
	assert_int_equal(tree__node_count(t), 0);
	assert_int_equal(tree__total_weight(t), 0);
	assert_int_equal(tree__label_limit(t), 0);
	tree__free(t);
}

/* Bounds ----------------------------------------------------------------------------------- */

/* a b c b c b c ...: the node count after depth 10 stays the same up to depth 1000. */
static void tree_folds_mutual_recursion(void **state)
{
	static uint32_t stack[1000];
	struct tree *t = new_tree();
	size_t nodes = 0;

	(void)state;
	stack[0] = 'a';
	for (size_t i = 1; i < 1000; i++)
		stack[i] = i % 2 ? 'b' : 'c';
	for (size_t depth = 10; depth <= 1000; depth++) {
		assert_int_equal(tree__insert(t, stack, depth, 1), 0);
		if (depth == 10)
			nodes = tree__node_count(t);
		assert_int_equal(tree__node_count(t), nodes);
	}
	assert_shape(t, false, "a(b(c(b)))");
	assert_int_equal(tree__label_total(t, 'b'), 991);
	assert_int_equal(tree__label_total(t, 'c'), 991);
	tree__free(t);
}

/* Reference: the same rule, written the slow and obvious way -------------------------------- */

#define REF_LABELS 8

struct ref_node {
	uint32_t label;
	size_t parent;
	uint64_t self;
};

struct ref {
	struct ref_node *nodes; /* nodes[0] is the root */
	size_t nr;
	size_t cap;
	uint64_t label_self[REF_LABELS];
	uint64_t label_total[REF_LABELS];
	uint32_t label_limit;
	uint64_t total;
};

static void ref_init(struct ref *r)
{
	*r = (struct ref){.cap = 1024, .nr = 1};
	r->nodes = calloc(r->cap, sizeof(*r->nodes));
	assert_non_null(r->nodes);
}

/* First child of @p labelled @y; nodes are numbered in creation order. */
static size_t ref_child(const struct ref *r, size_t p, uint32_t y)
{
	for (size_t id = 1; id < r->nr; id++) {
		if (r->nodes[id].parent == p && r->nodes[id].label == y)
			return id;
	}
	return 0;
}

/* Spell out the root-to-@p path, then look for the pair (label of p, y) along it. */
static size_t ref_jump(const struct ref *r, size_t p, uint32_t y)
{
	size_t path[MAX_STACK + 1];
	size_t len = 0;

	for (size_t q = p; q; q = r->nodes[q].parent)
		path[len++] = q;
	for (size_t i = len - 1; i > 0; i--) {
		if (r->nodes[path[i]].label == r->nodes[p].label &&
		    r->nodes[path[i - 1]].label == y)
			return path[i - 1];
	}
	return 0;
}

static size_t ref_step(struct ref *r, size_t p, uint32_t y)
{
	size_t next = ref_child(r, p, y);

	if (!next && p)
		next = ref_jump(r, p, y);
	if (next)
		return next;
	if (r->nr == r->cap) {
		r->cap *= 2;
		r->nodes = realloc(r->nodes, r->cap * sizeof(*r->nodes));
		assert_non_null(r->nodes);
	}
	r->nodes[r->nr] = (struct ref_node){.label = y, .parent = p};
	return r->nr++;
}

static void ref_insert(struct ref *r, const uint32_t *labels, size_t n, uint64_t w)
{
	size_t p = 0;

	for (size_t i = 0; i < n; i++)
		p = ref_step(r, p, labels[i]);
	r->nodes[p].self += w;
	r->total += w;
	if (n)
		r->label_self[labels[n - 1]] += w;
	for (uint32_t l = 0; l < REF_LABELS; l++) {
		bool in = false;

		for (size_t i = 0; i < n; i++)
			in |= labels[i] == l;
		r->label_total[l] += in ? w : 0;
		if (in && l + 1 > r->label_limit)
			r->label_limit = l + 1;
	}
}

static uint64_t ref_inclusive(const struct ref *r, size_t node)
{
	uint64_t sum = 0;

	for (size_t m = 0; m < r->nr; m++) {
		for (size_t q = m;; q = r->nodes[q].parent) {
			if (q == node) {
				sum += r->nodes[m].self;
				break;
			}
			if (!q)
				break;
		}
	}
	return sum;
}

static void assert_children_match(const struct tree *t, const struct ref *r, size_t node)
{
	const size_t *kids;
	size_t nr = tree__node_children(t, node, &kids);
	size_t i = 0;

	for (size_t id = 1; id < r->nr; id++) {
		if (r->nodes[id].parent != node)
			continue;
		assert_true(i < nr);
		assert_int_equal(kids[i++], id);
	}
	assert_int_equal(i, nr);
}

static void assert_matches_ref(const struct tree *t, const struct ref *r)
{
	assert_int_equal(tree__node_count(t), r->nr - 1);
	assert_int_equal(tree__total_weight(t), r->total);
	assert_int_equal(tree__label_limit(t), r->label_limit);
	for (uint32_t l = 0; l < REF_LABELS; l++) {
		assert_int_equal(tree__label_self(t, l), r->label_self[l]);
		assert_int_equal(tree__label_total(t, l), r->label_total[l]);
	}
	for (size_t id = 0; id < r->nr; id++) {
		assert_int_equal(tree__node_label(t, id), r->nodes[id].label);
		assert_int_equal(tree__node_parent(t, id), r->nodes[id].parent);
		assert_int_equal(tree__node_self(t, id), r->nodes[id].self);
		assert_int_equal(tree__node_inclusive(t, id), ref_inclusive(r, id));
		assert_children_match(t, r, id);
	}
}

/* Random stacks ---------------------------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* Like a sampled program: the next stack pops some frames of the last one and pushes others. */
static size_t next_stack(uint64_t *seed, uint32_t *stack, size_t n, uint32_t nr_labels)
{
	size_t pop = rnd(seed) % (n + 1);
	size_t push = rnd(seed) % 7;

	n -= pop;
	for (size_t i = 0; i < push && n < 60; i++)
		stack[n++] = rnd(seed) % nr_labels;
	return n;
}

static void run_random(uint64_t seed, uint32_t nr_labels, size_t nr_stacks)
{
	struct tree *t = new_tree();
	uint32_t stack[64];
	struct ref r;
	size_t n = 0;

	ref_init(&r);
	for (size_t i = 1; i <= nr_stacks; i++) {
		uint64_t w = rnd(&seed) % 100;

		n = next_stack(&seed, stack, n, nr_labels);
		ref_insert(&r, stack, n, w);
		assert_int_equal(tree__insert(t, stack, n, w), 0);
		if (i % 500 == 0 || i == nr_stacks)
			assert_matches_ref(t, &r);
	}
	assert_paths_never_repeat_an_edge(t);
	free(r.nodes);
	tree__free(t);
}

static void tree_matches_reference_on_random_stacks(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 8; seed++)
		run_random(seed * 0x9e3779b97f4a7c15ull, 2 + seed % 5, 3000);
}

static void tree_inclusive_equals_subtree_self_sum(void **state)
{
	struct tree *t = new_tree();
	uint64_t seed = 42;
	uint32_t stack[64];
	size_t n = 0;

	(void)state;
	for (size_t i = 0; i < 5000; i++) {
		n = next_stack(&seed, stack, n, REF_LABELS);
		assert_int_equal(tree__insert(t, stack, n, 1 + i % 13), 0);
	}
	for (size_t node = 0; node <= tree__node_count(t); node++) {
		const size_t *kids;
		size_t nr = tree__node_children(t, node, &kids);
		uint64_t sum = tree__node_self(t, node);

		for (size_t i = 0; i < nr; i++)
			sum += tree__node_inclusive(t, kids[i]);
		assert_int_equal(tree__node_inclusive(t, node), sum);
	}
	assert_int_equal(tree__node_inclusive(t, 0), tree__total_weight(t));
	tree__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_free_accepts_null),
		cmocka_unit_test(tree_new_is_empty),
		cmocka_unit_test(tree_empty_stack_weights_virtual_root),
		cmocka_unit_test(tree_node_queries_out_of_range_read_empty),
		cmocka_unit_test(tree_folds_self_recursion_a_b_b_b_c),
		cmocka_unit_test(tree_jumps_back_on_repeated_edge_a_b_a_b_c),
		cmocka_unit_test(tree_root_step_is_not_a_call_edge),
		cmocka_unit_test(tree_lists_children_in_creation_order),
		cmocka_unit_test(tree_fble_counts_entry_and_self_calls_of_b_apart),
		cmocka_unit_test(tree_fble_abstracts_repeated_a_b),
		cmocka_unit_test(tree_fble_keeps_paths_through_shared_callee_apart),
		cmocka_unit_test(tree_fble_keeps_dispatch_callers_apart),
		cmocka_unit_test(tree_fble_builds_test_tree_from_samples),
		cmocka_unit_test(tree_label_self_and_total_follow_stacks),
		cmocka_unit_test(tree_total_never_double_counts_recursion),
		cmocka_unit_test(tree_handles_large_label_ids),
		cmocka_unit_test(tree_refuses_label_without_limit),
		cmocka_unit_test(tree_folds_mutual_recursion),
		cmocka_unit_test(tree_matches_reference_on_random_stacks),
		cmocka_unit_test(tree_inclusive_equals_subtree_self_sum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
