// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-thread and per-module views (`perch report --sort=comm,pid,tid,function`, `--per-thread`,
 * `--sort=dso`): the text's top tables with one row per (keys, function), per (keys, module)
 * with dso, or per keys alone when the sort names neither, as perf's --sort prints them. The call tree gets the keys from the profile model
 * (profile_opts.keys: its roots), folded its stacks' leading frames (report/folded.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/u64map.h"
#include "lib/vec.h"

/* One row: a group (the keys' values) and a function (UINT32_MAX: the keys alone). */
struct krow {
	uint32_t group, func;
	uint64_t self, total;
	size_t stamp; /* the sample that last counted it, + 1 */
};

struct ktable {
	const struct profile *p;
	uint32_t nkeys;
	uint32_t *module_of; /* --sort=dso: a function -> its module's first function; else NULL */
	uint32_t *groups;    /* nkeys key functions a group */
	size_t ngroups, cap_groups;
	struct u64map group_of, row_of; /* packed keys -> group + 1; (group, func) -> row + 1 */
	struct krow *rows;
	size_t nrows, cap_rows;
};

/* The group of the keys (interned pairwise: the first key, then (group, next key)). */
static int group_id(struct ktable *t, const uint32_t *keys, uint32_t *group)
{
	uint64_t g = 0, v;

	for (uint32_t k = 0; k < t->nkeys; k++) {
		uint64_t packed = g << 32 | keys[k];

		if (!u64map__get(&t->group_of, packed | (uint64_t)k << 62, &v)) {
			if (vec_grow(&t->groups, &t->cap_groups, (t->ngroups + 1) * t->nkeys,
				     sizeof(*t->groups), 16))
				return -ENOMEM;
			memcpy(t->groups + t->ngroups * t->nkeys, keys, t->nkeys * sizeof(*keys));
			v = ++t->ngroups;
			if (u64map__put(&t->group_of, packed | (uint64_t)k << 62, v))
				return -ENOMEM;
		}
		g = v;
	}
	*group = (uint32_t)(g - 1);
	return 0;
}

/* The row of (group, func), created on first use. */
static struct krow *row_of(struct ktable *t, uint32_t group, uint32_t func)
{
	uint64_t key = (uint64_t)group << 32 | func, v;

	if (u64map__get(&t->row_of, key, &v))
		return &t->rows[v - 1];
	if (vec_grow(&t->rows, &t->cap_rows, t->nrows + 1, sizeof(*t->rows), 64) ||
	    u64map__put(&t->row_of, key, t->nrows + 1))
		return NULL;
	t->rows[t->nrows] = (struct krow){.group = group, .func = func};
	return &t->rows[t->nrows++];
}

/* Count w into row (group, func) once for sample i; self too when leaf. */
static int count(struct ktable *t, size_t i, uint32_t group, uint32_t func, uint64_t w, bool leaf)
{
	struct krow *row = row_of(t, group, func);

	if (!row)
		return -ENOMEM;
	if (row->stamp != i + 1)
		row->total += w;
	row->stamp = i + 1;
	row->self += leaf ? w : 0;
	return 0;
}

/* Sample i into the table: its group, and with by_function (or by module) each function (or
 * module) of its stack. */
static int add_sample(struct ktable *t, const struct recording *r, size_t i, bool by_function,
		      uint32_t **buf, size_t *cap)
{
	uint64_t w = r->samples[i].count;
	const uint32_t *keys;
	uint32_t group;
	int n, err;

	if (!profile__sample_kept(t->p, i) || profile__sample_keys(t->p, i, &keys) != t->nkeys ||
	    !w)
		return 0;
	err = group_id(t, keys, &group);
	if (err || !(by_function || t->module_of))
		return err ? err : count(t, i, group, UINT32_MAX, w, true);
	n = profile__sample_stack(t->p, r, i, buf, cap);
	for (int j = 0; j < n && !err; j++) {
		uint32_t f = (*buf)[j];

		err = count(t, i, group, t->module_of ? t->module_of[f] : f, w, j == n - 1);
	}
	return n < 0 ? n : err;
}

static int by_module_name(const void *a, const void *b, void *p)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(profile__func_module(p, x), profile__func_module(p, y));

	return c ? c : (x > y) - (x < y);
}

/* --sort=dso: each function's module, as the first function (by id) of the same module name. */
static int map_modules(struct ktable *t)
{
	uint32_t n = profile__nfuncs(t->p), *order = malloc((n + 1) * sizeof(*order));

	t->module_of = malloc((n + 1) * sizeof(*t->module_of));
	if (!order || !t->module_of) {
		free(order);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_module_name, (void *)t->p);
	for (uint32_t i = 0; i < n; i++)
		t->module_of[order[i]] = i && !strcmp(profile__func_module(t->p, order[i - 1]),
						      profile__func_module(t->p, order[i]))
						 ? t->module_of[order[i - 1]]
						 : order[i];
	free(order);
	return 0;
}

/* Ties: the order rows were made in (samples' order), so the output is the same every run. */
static int by_first(const struct krow *x, const struct krow *y)
{
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

static int by_self_desc(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return by_first(x, y);
}

static int by_total_desc(const void *a, const void *b)
{
	const struct krow *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return by_first(x, y);
}

/* Rows of keys alone: neither function nor module (--sort=comm,pid without either). */
static bool keys_alone(const struct ktable *t, const struct report_opts *o)
{
	return !o->by_function && !t->module_of;
}

static void print_head(const struct ktable *t, const struct report_opts *o, bool by_self, FILE *out)
{
	static const char *const heads[PROFILE_KEY_NR] = {"comm", "pid", "tid"};
	static const int width[PROFILE_KEY_NR] = {16, 8, 8};
	bool alone = keys_alone(t, o);
	const char *rows = o->by_function ? "functions" : "modules";

	if (alone)
		fprintf(out, "\nTop thread keys by samples\n");
	else
		fprintf(out, "\nTop %s%s by %s\n", rows, t->nkeys ? " per thread key" : "",
			by_self ? "self" : "total");
	fprintf(out, "  %7s %8s %7s %8s ", "self%", "self", "total%", "total");
	for (uint32_t k = 0; k < t->nkeys; k++) /* no padding at a line's end */
		fprintf(out, " %-*s", alone && k + 1 == t->nkeys ? 0 : width[o->keys[k]],
			heads[o->keys[k]]);
	if (o->by_function)
		fprintf(out, "  %-40s %s\n", "function", "module");
	else
		fputs(alone ? "\n" : t->nkeys ? "  module\n" : " module\n", out);
}

static void print_row(const struct ktable *t, const struct report_opts *o, const struct krow *row,
		      uint64_t all, FILE *out)
{
	static const int width[PROFILE_KEY_NR] = {16, 8, 8};
	const uint32_t *keys = t->groups + (size_t)row->group * t->nkeys;
	bool alone = keys_alone(t, o);

	fprintf(out, "  %6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 " ", report_pct(row->self, all),
		row->self, report_pct(row->total, all), row->total);
	for (uint32_t k = 0; k < t->nkeys; k++) /* "pid N", "tid N": the number */
		fprintf(out, " %-*s", alone && k + 1 == t->nkeys ? 0 : width[o->keys[k]],
			profile__func_name(t->p, keys[k]) + (o->keys[k] ? 4 : 0));
	if (o->by_function)
		fprintf(out, "  %-40s %s%s", profile__func_name(t->p, row->func),
			profile__func_module(t->p, row->func),
			profile__func_kernel(t->p, row->func) ? " [k]" : "");
	else if (!alone)
		fprintf(out, " %s%s", t->nkeys ? " " : "", profile__func_module(t->p, row->func));
	fputc('\n', out);
}

static void print_rows(const struct ktable *t, const struct report_opts *o, bool by_self,
		       uint64_t all, FILE *out)
{
	print_head(t, o, by_self, out);
	for (size_t i = 0; i < t->nrows && i < o->top; i++) {
		const struct krow *row = &t->rows[i];

		if (!(by_self ? row->self : row->total))
			break;
		print_row(t, o, row, all, out);
	}
}

static int fill(struct ktable *t, const struct recording *r, bool by_function)
{
	uint32_t *buf = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < r->nsamples && !err; i++)
		err = add_sample(t, r, i, by_function, &buf, &cap);
	free(buf);
	return err;
}

int report_print_keyed_top(const struct recording *r, const struct profile *p,
			   const struct report_opts *o, FILE *out)
{
	struct ktable t = {.p = p, .nkeys = o->nkeys};
	uint64_t all = tree__total_weight(profile__tree(p));
	int err = o->by_module && !o->by_function ? map_modules(&t) : 0;
	bool alone = keys_alone(&t, o);

	if (!err)
		err = fill(&t, r, o->by_function);
	/* keys alone: self and total are the same, one table whatever the sort */
	if (!err && t.nrows && (o->sort != REPORT_SORT_TOTAL || alone)) {
		qsort(t.rows, t.nrows, sizeof(*t.rows), by_self_desc);
		print_rows(&t, o, true, all, out);
	}
	if (!err && t.nrows && o->sort != REPORT_SORT_SELF && !alone) {
		qsort(t.rows, t.nrows, sizeof(*t.rows), by_total_desc);
		print_rows(&t, o, false, all, out);
	}
	free(t.module_of);
	free(t.groups);
	free(t.rows);
	u64map__clear(&t.group_of);
	u64map__clear(&t.row_of);
	return err;
}
