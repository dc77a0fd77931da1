// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests for userspace/model/query.c: fble's queries on small hand-built sample sets, the
 * cases of seeds/fble-profiling-notes.txt among them (a->b->a->b->c; a dispatcher Call reached
 * from two callers; recursion with children outside the loop). Every expected number is derived
 * by hand in the comment beside it. Totals are read from a bounded path tree (model/tree.c) fed
 * the transformed stacks, as the profile does.
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

#include "model/query.h"
#include "model/tree.h"

/* The functions: ids are indices. */
static const char *const names[] = {"a", "b",	 "c",	    "Call",
				    "d", "f",	 "g",	    "h",
				    "x", "main", "foo,bar", "Pair<int,long>::operator,(int)"};
#define NFUNCS	  (sizeof(names) / sizeof(names[0]))
#define MAX_STACK 32

struct sample {
	const char *stack; /* space-separated names, root first */
	uint64_t w;
};

static const char *name_of(const void *ctx, uint32_t f)
{
	(void)ctx;
	return names[f];
}

static uint32_t id(const char *name)
{
	for (uint32_t i = 0; i < NFUNCS; i++) {
		if (!strcmp(names[i], name))
			return i;
	}
	fail_msg("no test function %s", name);
	return 0;
}

static size_t parse(const char *stack, uint32_t *out)
{
	char buf[256], *save = NULL;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		assert_true(n < MAX_STACK);
		out[n++] = id(t);
	}
	return n;
}

/* A query of "kind=arg" steps (kinds: s, e, f, C, E), bound to the test's functions. */
static struct query *query_of(const char *const *steps)
{
	struct query *q = query__new();

	assert_non_null(q);
	for (; *steps; steps++) {
		const char *s = *steps;
		enum query_kind k = s[0] == 's'	  ? QUERY_SELECT
				    : s[0] == 'e' ? QUERY_EXCLUDE
				    : s[0] == 'f' ? QUERY_FOLD
				    : s[0] == 'C' ? QUERY_CALLERS
						  : QUERY_CALLEES;

		assert_int_equal(query__add(q, k, s + 2), 0);
	}
	assert_int_equal(query__bind(q, NFUNCS, name_of, NULL), 0);
	return q;
}

/* The samples through q into a tree (and into q's focus table when it has one). */
static struct tree *run(const struct query *q, const struct sample *s, size_t n,
			struct query_table **table)
{
	struct tree *t = tree__new();

	assert_non_null(t);
	if (table) {
		*table = query_table__new(q);
		assert_non_null(*table);
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t stack[MAX_STACK];
		size_t len = parse(s[i].stack, stack);

		if (!query__apply(q, stack, &len))
			continue;
		assert_int_equal(tree__insert(t, stack, len, s[i].w), 0);
		if (table)
			assert_int_equal(query_table__add(*table, stack, len, s[i].w), 0);
	}
	return t;
}

static uint64_t total(const struct tree *t, const char *f)
{
	return tree__label_total(t, id(f));
}

static uint64_t self(const struct tree *t, const char *f)
{
	return tree__label_self(t, id(f));
}

/* The table's count of row func (a function's name, "[root]" or "[self]"); 0 when absent. */
static uint64_t row(struct query_table *tab, const char *func)
{
	const struct query_row *rows;
	uint64_t tot, sf, all;
	size_t n = query_table__rows(tab, &rows, &tot, &sf, &all);
	uint32_t want = !strcmp(func, "[root]")	  ? QUERY_ROOT
			: !strcmp(func, "[self]") ? QUERY_SELF
						  : id(func);

	for (size_t i = 0; i < n; i++) {
		if (rows[i].func == want)
			return rows[i].count;
	}
	return 0;
}

static size_t nrows(struct query_table *tab, uint64_t *tot, uint64_t *sf, uint64_t *all)
{
	const struct query_row *rows;

	return query_table__rows(tab, &rows, tot, sf, all);
}

/* fble: a->b->a->b->c, the repeated edges counted once per sample. */
static const struct sample abab[] = {{"a b a b c", 1}, {"a b", 2}};

static void query_callers_count_repeated_edge_once(void **state)
{
	const char *steps[] = {"C=b", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, abab, 2, &tab);
	uint64_t tot, sf, all;

	(void)state;
	/* b's callers: a->b appears twice in the first sample and once in the second: 1 + 2 = 3,
	 * not 4. b is in both samples once each: total 3; leaf of the second: self 2. */
	assert_int_equal(row(tab, "a"), 3);
	assert_int_equal(nrows(tab, &tot, &sf, &all), 1);
	assert_int_equal(tot, 3);
	assert_int_equal(sf, 2);
	assert_int_equal(all, 3);
	assert_int_equal(total(t, "b"), 3);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

static void query_callees_sum_past_total_under_recursion(void **state)
{
	const char *steps[] = {"E=b", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, abab, 2, &tab);
	uint64_t tot, sf, all;

	(void)state;
	/* b's callees: b->a (first sample, once: 1), b->c (first: 1), [self] (second: 2). Rows sum
	 * to 4 while b's total is 3: the first sample holds b by two callees. */
	assert_int_equal(row(tab, "a"), 1);
	assert_int_equal(row(tab, "c"), 1);
	assert_int_equal(row(tab, "[self]"), 2);
	assert_int_equal(nrows(tab, &tot, &sf, &all), 3);
	assert_int_equal(tot, 3);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

static void query_callers_root_row(void **state)
{
	const char *steps[] = {"C=a", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, abab, 2, &tab);

	(void)state;
	/* a is the root of both samples: [root] 1 + 2 = 3; b->a only in the first: 1. */
	assert_int_equal(row(tab, "[root]"), 3);
	assert_int_equal(row(tab, "b"), 1);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

/* fble: a dispatcher Call reached from two callers, each calling a different function. */
static const struct sample dispatch[] = {{"main a Call b", 3}, {"main c Call d", 5}};

static void query_select_disentangles_dispatcher(void **state)
{
	const char *all_steps[] = {"E=Call", NULL}, *sel_steps[] = {"s=a", "E=Call", NULL};
	struct query *q = query_of(all_steps), *qs = query_of(sel_steps);
	struct query_table *tab, *tabs;
	struct tree *t = run(q, dispatch, 2, &tab), *ts = run(qs, dispatch, 2, &tabs);

	(void)state;
	/* All samples: Call's callees are b (3) and d (5), which makes it look as if a could reach
	 * d. Selecting a keeps the first sample only: Call -> b 3, and d is gone (0). */
	assert_int_equal(row(tab, "b"), 3);
	assert_int_equal(row(tab, "d"), 5);
	assert_int_equal(row(tabs, "b"), 3);
	assert_int_equal(row(tabs, "d"), 0);
	assert_int_equal(tree__total_weight(ts), 3);
	assert_int_equal(total(ts, "d"), 0);
	query_table__free(tab);
	query_table__free(tabs);
	tree__free(t);
	tree__free(ts);
	query__free(q);
	query__free(qs);
}

static void query_fold_dispatcher_gives_direct_callers(void **state)
{
	const char *steps[] = {"f=Call", "C=d", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, dispatch, 2, &tab);

	(void)state;
	/* Folding Call: main a b (3), main c d (5); d's only caller is now c (5). Call is gone
	 * from every stack (total 0); nothing else changes weight (8 in all). */
	assert_int_equal(row(tab, "c"), 5);
	assert_int_equal(row(tab, "Call"), 0);
	assert_int_equal(total(t, "Call"), 0);
	assert_int_equal(tree__total_weight(t), 8);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

static void query_select_needs_every_listed_function(void **state)
{
	const char *both[] = {"s=a,d", NULL}, *one[] = {"s=a,b", NULL};
	struct query *q = query_of(both), *q1 = query_of(one);
	struct tree *t = run(q, dispatch, 2, NULL), *t1 = run(q1, dispatch, 2, NULL);

	(void)state;
	/* No sample holds both a and d: 0 kept. a and b share the first: 3. */
	assert_int_equal(tree__total_weight(t), 0);
	assert_int_equal(tree__total_weight(t1), 3);
	tree__free(t);
	tree__free(t1);
	query__free(q);
	query__free(q1);
}

/* fble: recursion (f <-> g) with children outside the loop (h under the recursion, x beside). */
static const struct sample recur[] = {{"f g f g h", 2}, {"f g f", 1}, {"f x", 4}};

static void query_recursion_totals_once(void **state)
{
	const char *steps[] = {"E=f", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, recur, 3, &tab);
	uint64_t tot, sf, all;

	(void)state;
	/* f is in every sample: total 2 + 1 + 4 = 7 (not 2*2 + 2*1 + 4). f's callees: g in the
	 * first two (2 + 1 = 3, once each), x in the third (4), [self] the second (1): 8 > 7. */
	assert_int_equal(total(t, "f"), 7);
	assert_int_equal(total(t, "g"), 3);
	assert_int_equal(self(t, "f"), 1);
	assert_int_equal(row(tab, "g"), 3);
	assert_int_equal(row(tab, "x"), 4);
	assert_int_equal(row(tab, "[self]"), 1);
	nrows(tab, &tot, &sf, &all);
	assert_int_equal(tot, 7);
	assert_int_equal(sf, 1);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

static void query_fold_recursion_moves_self_to_caller(void **state)
{
	const char *steps[] = {"f=g", "C=f", NULL};
	struct query *q = query_of(steps);
	struct query_table *tab;
	struct tree *t = run(q, recur, 3, &tab);

	(void)state;
	/* Folding g: f f h (2), f f (1), f x (4). g was never a leaf, so selves stay: f 1 (the
	 * second sample), h 2, x 4. f's callers: [root] 7, and f -> f in the first two: 2 + 1 = 3. */
	assert_int_equal(total(t, "f"), 7);
	assert_int_equal(total(t, "g"), 0);
	assert_int_equal(self(t, "f"), 1);
	assert_int_equal(self(t, "h"), 2);
	assert_int_equal(row(tab, "[root]"), 7);
	assert_int_equal(row(tab, "f"), 3);
	query_table__free(tab);
	tree__free(t);
	query__free(q);
}

static void query_fold_leaf_gives_self_to_caller(void **state)
{
	const char *steps[] = {"f=h,x", NULL};
	struct query *q = query_of(steps);
	struct tree *t = run(q, recur, 3, NULL);

	(void)state;
	/* Folding the leaves h and x: f g f g (2), f g f (1), f (4): g's self 2, f's 1 + 4 = 5. */
	assert_int_equal(self(t, "g"), 2);
	assert_int_equal(self(t, "f"), 5);
	assert_int_equal(tree__total_weight(t), 7);
	tree__free(t);
	query__free(q);
}

static void query_exclude_drops_any_listed(void **state)
{
	const char *steps[] = {"e=h,x", NULL};
	struct query *q = query_of(steps);
	struct tree *t = run(q, recur, 3, NULL);

	(void)state;
	/* Only "f g f" (1) holds neither h nor x. */
	assert_int_equal(tree__total_weight(t), 1);
	assert_int_equal(total(t, "f"), 1);
	tree__free(t);
	query__free(q);
}

static void query_modifiers_apply_in_order(void **state)
{
	const char *fold_first[] = {"f=g", "s=g", NULL}, *select_first[] = {"s=g", "f=g", NULL};
	struct query *q1 = query_of(fold_first), *q2 = query_of(select_first);
	struct tree *t1 = run(q1, recur, 3, NULL), *t2 = run(q2, recur, 3, NULL);

	(void)state;
	/* Folding g first leaves no stack holding g: the select keeps 0. Selecting g first keeps
	 * the first two samples (2 + 1 = 3), then g is folded out of them. */
	assert_int_equal(tree__total_weight(t1), 0);
	assert_int_equal(tree__total_weight(t2), 3);
	assert_int_equal(total(t2, "g"), 0);
	assert_int_equal(total(t2, "h"), 2);
	tree__free(t1);
	tree__free(t2);
	query__free(q1);
	query__free(q2);
}

static void query_fold_everything_keeps_empty_stack(void **state)
{
	const char *steps[] = {"f=/./", NULL};
	struct query *q = query_of(steps);
	uint32_t stack[MAX_STACK];
	size_t n = parse("f g h", stack);

	(void)state;
	/* Every name has a character: all folded, the sample kept with no frame ("[folded]"). */
	assert_true(query__apply(q, stack, &n));
	assert_int_equal(n, 0);
	query__free(q);
}

static void query_regex_matches_anywhere(void **state)
{
	const char *steps[] = {"e=/al/", NULL}, *anchored[] = {"e=/^a$/", NULL};
	struct query *q = query_of(steps), *qa = query_of(anchored);
	const struct sample s[] = {{"main a", 1}, {"c Call d", 2}, {"c d", 4}};
	struct tree *t = run(q, s, 3, NULL), *ta = run(qa, s, 3, NULL);

	(void)state;
	/* /al/ is in "Call" only (not "main": m-a-i-n): drops the second sample, keeps 1 + 4. /^a$/
	 * is a alone: drops the first, keeps 2 + 4. */
	assert_int_equal(tree__total_weight(t), 5);
	assert_int_equal(tree__total_weight(ta), 6);
	tree__free(t);
	tree__free(ta);
	query__free(q);
	query__free(qa);
}

static void query_comma_in_name_needs_regex(void **state)
{
	const char *steps[] = {"s=/foo,bar/,a", NULL};
	struct query *q = query_of(steps);
	const struct sample s[] = {{"a foo,bar", 1}, {"a b", 2}};
	struct tree *t = run(q, s, 2, NULL);

	(void)state;
	/* The regex holds the comma; with a it selects the first sample only. */
	assert_int_equal(tree__total_weight(t), 1);
	tree__free(t);
	query__free(q);
}

/* A list splits at the commas outside brackets: C++ names (templates, argument lists, operator
 * names, lambdas, decltype) are one item each; a backslash makes the next comma, bracket, slash
 * or backslash plain; a /REGEX/ keeps its text. Items are joined with " | " to compare. */
static void query_list_splits_outside_brackets(void **state)
{
	static const char *const cases[][2] = {
		{"a,b", "a | b"},
		{"a,,b", "a |  | b"},
		{"bitmap_set_bit(bitmap_head*, int)", "bitmap_set_bit(bitmap_head*, int)"},
		{"std::map<int, int>::find(int const&),main",
		 "std::map<int, int>::find(int const&) | main"},
		{"q::operator,(q::Acc&, int),x", "q::operator,(q::Acc&, int) | x"},
		{"operator,,x", "operator, | x"},
		{"bool q::operator<(A const&, B const&),x",
		 "bool q::operator<(A const&, B const&) | x"},
		{"q::Acc::operator()(int, int) const,x", "q::Acc::operator()(int, int) const | x"},
		{"std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*),x",
		 "std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char const*) | x"},
		{"A::operator->(),x", "A::operator->() | x"},
		{"my_operator<int, int>,v", "my_operator<int, int> | v"},
		{"main::{lambda(int, int)#1}::operator()(int, int) const,w",
		 "main::{lambda(int, int)#1}::operator()(int, int) const | w"},
		{"g<(1>2), int>(decltype (a->f(b, c))),z",
		 "g<(1>2), int>(decltype (a->f(b, c))) | z"},
		{"f(int) [clone .constprop.0, 1],y", "f(int) [clone .constprop.0, 1] | y"},
		{"foo\\,bar,c", "foo,bar | c"},
		{"foo\\\\,bar", "foo\\ | bar"},
		{"f\\(,g", "f( | g"},
		{"a\\b,c", "a\\b | c"},
		{"/x(,y/,z", "/x(,y/ | z"},
		{"\\/x/,z", "/x/ | z"},
		{"f(int, int", "f(int, int"},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char got[256] = "";
		size_t used = 0;

		for (const char *s = cases[c][0];; s++) {
			size_t len = query_item_len(s);
			bool regex = len >= 2 && s[0] == '/' && s[len - 1] == '/';
			char *item = regex ? strndup(s, len) : query_item_name(s, len);

			assert_non_null(item);
			used += (size_t)snprintf(got + used, sizeof(got) - used, "%s%s",
						 used ? " | " : "", item);
			free(item);
			s += len;
			if (!*s)
				break;
		}
		if (strcmp(got, cases[c][1]))
			fail_msg("split '%s': got '%s', want '%s'", cases[c][0], got, cases[c][1]);
	}
}

/* Names with commas, exact: a C++ one as printed (the stacks here split at spaces), "foo,bar" with its comma escaped. */
static void query_comma_names_match_exactly(void **state)
{
	const char *steps[] = {"s=Pair<int,long>::operator,(int),a", "e=foo\\,bar", NULL};
	struct query *q = query_of(steps);
	const struct sample s[] = {{"a Pair<int,long>::operator,(int)", 1},
				   {"a Pair<int,long>::operator,(int) foo,bar", 2},
				   {"a b", 4}};
	struct tree *t = run(q, s, 3, NULL);

	(void)state;
	/* the select keeps samples 1 and 2 (each holds both items), the exclude drops 2 */
	assert_int_equal(tree__total_weight(t), 1);
	assert_string_equal(query__describe(q),
			    "--select=Pair<int,long>::operator,(int),a --exclude=foo\\,bar");
	tree__free(t);
	query__free(q);
}

static void query_bad_patterns_say_why(void **state)
{
	struct query *q = query__new();

	(void)state;
	assert_non_null(q);
	assert_int_equal(query__add(q, QUERY_SELECT, "/a[/"), -EINVAL);
	assert_non_null(strstr(query__error(q), "bad regex /a[/"));
	assert_int_equal(query__add(q, QUERY_FOLD, "a,,b"), -EINVAL);
	assert_non_null(strstr(query__error(q), "empty function pattern"));
	assert_int_equal(query__add(q, QUERY_FOLD, "//"), -EINVAL);
	assert_int_equal(query__add(q, QUERY_CALLERS, "a"), 0);
	assert_int_equal(query__add(q, QUERY_CALLEES, "b"), -EINVAL);
	query__free(q);
}

static void query_unknown_name_names_closest(void **state)
{
	struct query *q = query__new();

	(void)state;
	assert_non_null(q);
	assert_int_equal(query__add(q, QUERY_EXCLUDE, "cal"), 0);
	assert_int_equal(query__bind(q, NFUNCS, name_of, NULL), -ENOENT);
	assert_string_equal(query__error(q), "no function 'cal' in the profile (closest: 'Call')");
	query__free(q);
	q = query__new();
	assert_non_null(q);
	assert_int_equal(query__add(q, QUERY_SELECT, "/^zz/"), 0);
	assert_int_equal(query__bind(q, NFUNCS, name_of, NULL), -ENOENT);
	assert_string_equal(query__error(q), "no function matching /^zz/ in the profile");
	query__free(q);
}

static void query_describe_spells_command_line(void **state)
{
	const char *steps[] = {"f=g", "s=/^a/", "C=b", NULL};
	struct query *q = query_of(steps);

	(void)state;
	assert_true(query__active(q));
	assert_string_equal(query__describe(q), "--fold=g --select=/^a/");
	assert_string_equal(query__focus_text(q), "b");
	query__free(q);
}

static void query_chains_merge_dominant_child(void **state)
{
	const char *steps[] = {NULL};
	struct query *q = query_of(steps);
	const struct sample s[] = {{"main a b c", 96}, {"main a d", 4}};
	struct tree *t = run(q, s, 2, NULL);
	size_t main_node = 1, a, b, c;

	(void)state;
	/* Nodes in creation order: main 1, a 2, b 3, c 4, d 5. main -> a holds 100 of 100; a -> b
	 * 96 of 100 (>= 95, < 97); b -> c 96 of 96; c has no child. */
	assert_int_equal(tree__node_label(t, main_node), id("main"));
	a = query_chain_next(t, main_node, 95);
	assert_int_equal(tree__node_label(t, a), id("a"));
	b = query_chain_next(t, a, 95);
	assert_int_equal(tree__node_label(t, b), id("b"));
	c = query_chain_next(t, b, 95);
	assert_int_equal(tree__node_label(t, c), id("c"));
	assert_int_equal(query_chain_next(t, c, 95), 0);
	assert_int_equal(query_chain_next(t, a, 97), 0);
	assert_int_equal(query_chain_next(t, 0, 1), 0); /* the virtual root is no row */
	tree__free(t);
	query__free(q);
}

static void query_empty_applies_nothing(void **state)
{
	const char *steps[] = {NULL};
	struct query *q = query_of(steps);
	uint32_t stack[MAX_STACK];
	size_t n = parse("a b c", stack);

	(void)state;
	assert_false(query__active(q));
	assert_false(query__has_focus(q, NULL));
	assert_true(query__apply(q, stack, &n));
	assert_int_equal(n, 3);
	assert_true(query__apply(NULL, stack, &n));
	query__free(q);
	query__free(NULL);
}

/* --pid/--tid/--comm: each filter keeps its listed threads; filters given together must all
 * pass; repeated ones add to their list; the description names them in order. */
static void query_thread_filters_keep_listed_threads(void **state)
{
	struct query *q = query__new();

	(void)state;
	assert_non_null(q);
	assert_true(query__keeps_thread(q, 1, 2, "x"));
	assert_int_equal(query__add_thread(q, QUERY_PID, "10,20"), 0);
	assert_true(query__active(q));
	assert_true(query__keeps_thread(q, 10, 11, "w"));
	assert_true(query__keeps_thread(q, 20, 21, "w"));
	assert_false(query__keeps_thread(q, 30, 10, "w"));
	assert_int_equal(query__add_thread(q, QUERY_COMM, "share-1"), 0);
	assert_int_equal(query__add_thread(q, QUERY_COMM, "share-2"), 0);
	assert_true(query__keeps_thread(q, 10, 11, "share-2"));
	assert_false(query__keeps_thread(q, 10, 11, "share"));
	assert_false(query__keeps_thread(q, 30, 31, "share-1"));
	assert_int_equal(query__add_thread(q, QUERY_TID, "11"), 0);
	assert_true(query__keeps_thread(q, 10, 11, "share-1"));
	assert_false(query__keeps_thread(q, 10, 12, "share-1"));
	assert_string_equal(query__describe(q),
			    "--pid=10,20 --comm=share-1 --comm=share-2 --tid=11");
	query__free(q);
}

static void query_thread_filter_bad_items_say_why(void **state)
{
	struct query *q = query__new();

	(void)state;
	assert_int_equal(query__add_thread(q, QUERY_TID, "12x"), -EINVAL);
	assert_string_equal(query__error(q), "bad item '12x' (a list of decimal numbers)");
	assert_int_equal(query__add_thread(q, QUERY_PID, "1,,2"), -EINVAL);
	assert_string_equal(query__error(q), "empty item '' (a list of decimal numbers)");
	assert_int_equal(query__add_thread(q, QUERY_PID, "-1"), -EINVAL);
	assert_int_equal(query__add_thread(q, QUERY_PID, "4294967296"), -EINVAL);
	assert_int_equal(query__add_thread(q, QUERY_COMM, ""), -EINVAL);
	assert_string_equal(query__error(q), "empty item '' (a list of thread names)");
	assert_int_equal(query__add_thread(q, QUERY_THREAD_NR, "1"), -EINVAL);
	query__free(q);
}

struct thread_row {
	uint32_t pid, tid;
	const char *comm;
};

static void thread_of(const void *ctx, size_t i, uint32_t *pid, uint32_t *tid, const char **comm)
{
	const struct thread_row *t = (const struct thread_row *)ctx + i;

	*pid = t->pid;
	*tid = t->tid;
	*comm = t->comm;
}

/* An item no sample has is an error naming it, as a function no frame has is. */
static void query_thread_filter_unknown_item_is_named(void **state)
{
	static const struct thread_row rows[] = {{10, 10, "main"}, {10, 11, "worker"}};
	struct query *q = query__new();

	(void)state;
	assert_int_equal(query__add_thread(q, QUERY_TID, "11,10"), 0);
	assert_int_equal(query__add_thread(q, QUERY_COMM, "worker"), 0);
	assert_int_equal(query__bind_threads(q, 2, thread_of, rows), 0);
	assert_int_equal(query__add_thread(q, QUERY_PID, "10,12"), 0);
	assert_int_equal(query__bind_threads(q, 2, thread_of, rows), -ENOENT);
	assert_string_equal(query__error(q), "no thread with --pid=12 in the profile (perch report "
					     "--sort=comm,pid,tid lists them)");
	query__free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(query_callers_count_repeated_edge_once),
		cmocka_unit_test(query_callees_sum_past_total_under_recursion),
		cmocka_unit_test(query_callers_root_row),
		cmocka_unit_test(query_select_disentangles_dispatcher),
		cmocka_unit_test(query_fold_dispatcher_gives_direct_callers),
		cmocka_unit_test(query_select_needs_every_listed_function),
		cmocka_unit_test(query_recursion_totals_once),
		cmocka_unit_test(query_fold_recursion_moves_self_to_caller),
		cmocka_unit_test(query_fold_leaf_gives_self_to_caller),
		cmocka_unit_test(query_exclude_drops_any_listed),
		cmocka_unit_test(query_modifiers_apply_in_order),
		cmocka_unit_test(query_fold_everything_keeps_empty_stack),
		cmocka_unit_test(query_regex_matches_anywhere),
		cmocka_unit_test(query_comma_in_name_needs_regex),
		cmocka_unit_test(query_list_splits_outside_brackets),
		cmocka_unit_test(query_comma_names_match_exactly),
		cmocka_unit_test(query_bad_patterns_say_why),
		cmocka_unit_test(query_unknown_name_names_closest),
		cmocka_unit_test(query_describe_spells_command_line),
		cmocka_unit_test(query_chains_merge_dominant_child),
		cmocka_unit_test(query_empty_applies_nothing),
		cmocka_unit_test(query_thread_filters_keep_listed_threads),
		cmocka_unit_test(query_thread_filter_bad_items_say_why),
		cmocka_unit_test(query_thread_filter_unknown_item_is_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
