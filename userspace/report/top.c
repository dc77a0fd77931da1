// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch top`'s table: every drain's counts read from the recording writer as they stand
 * (format/writer_peek.h), aggregated per function (frames of one name are one function; an
 * unnamed frame is its module+offset), self from the leaf frame, total once per stack (as the
 * report's top-functions tables count it), in the current refresh interval and since the start.
 * Names are printed under lib/escape.h's terminal rule.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "format/writer_peek.h"
#include "lib/escape.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "top.h"

#define MAX_FRAMES 512		/* user and kernel frames of one stack */
#define NAMED	   (1ull << 63) /* name_tab keys: a string id, not a frame id */

struct top_fn {
	char *label;
	uint64_t self, total;	      /* the current interval */
	uint64_t self_all, total_all; /* since the start, without the current interval */
	uint64_t stamp;		      /* the last stack counted in total */
};

struct top_table {
	struct top_fn *fns;
	size_t nfns, cap_fns;
	struct u64map frame_tab; /* frame id -> fns index */
	struct u64map name_tab;	 /* NAMED | name string id (or frame id when unnamed) -> index */
	uint64_t samples, samples_all;
	uint64_t stamp;
	int err;
	const struct rec_writer *w; /* while adding */
	uint32_t frames[MAX_FRAMES];
	size_t *order; /* print's sort; reused */
	size_t cap_order;
};

struct top_table *top_table__new(void)
{
	return calloc(1, sizeof(struct top_table));
}

void top_table__free(struct top_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfns; i++)
		free(t->fns[i].label);
	free(t->fns);
	free(t->order);
	u64map__clear(&t->frame_tab);
	u64map__clear(&t->name_tab);
	free(t);
}

/* "name", or "module+0xoffset" (the module's last path component) for an unnamed frame. */
static char *frame_label(const struct rec_writer *w, const struct rec_frame *f)
{
	char name[512], module[512], *label = NULL;
	const char *base;

	if (f->name)
		return strdup(rec_writer__peek_string(w, f->name, name, sizeof(name)));
	rec_writer__peek_string(w, f->module, module, sizeof(module));
	base = strrchr(module, '/');
	if (asprintf(&label, "%s+0x%llx",
		     base	 ? base + 1
		     : module[0] ? module
				 : "?",
		     (unsigned long long)f->offset) < 0)
		return NULL;
	return label;
}

/* The function frame id belongs to, added when new; SIZE_MAX on ENOMEM. */
static size_t fn_of(struct top_table *t, uint32_t id)
{
	const struct rec_frame *f = rec_writer__peek_frame(t->w, id);
	uint64_t idx, name_key = f && f->name ? NAMED | f->name : id;

	if (u64map__get(&t->frame_tab, id, &idx))
		return idx;
	if (!u64map__get(&t->name_tab, name_key, &idx)) {
		char *label = f ? frame_label(t->w, f) : strdup("?");

		if (!label || vec_grow(&t->fns, &t->cap_fns, t->nfns + 1, sizeof(*t->fns), 64) ||
		    u64map__put(&t->name_tab, name_key, t->nfns)) {
			free(label);
			return SIZE_MAX;
		}
		t->fns[t->nfns] = (struct top_fn){.label = label};
		idx = t->nfns++;
	}
	return u64map__put(&t->frame_tab, id, idx) ? SIZE_MAX : idx;
}

static void add_key(void *ctx, uint32_t key, uint64_t count)
{
	struct top_table *t = ctx;
	uint32_t pid, tid, n = rec_writer__peek_key(t->w, key, &pid, &tid, t->frames, MAX_FRAMES);

	t->samples += count;
	t->stamp++;
	for (uint32_t i = 0; i < n; i++) {
		size_t fn = fn_of(t, t->frames[i]);

		if (fn == SIZE_MAX) {
			t->err = -ENOMEM;
			return;
		}
		if (!i)
			t->fns[fn].self += count;
		if (t->fns[fn].stamp != t->stamp) {
			t->fns[fn].stamp = t->stamp;
			t->fns[fn].total += count;
		}
	}
}

int top_table__add(struct top_table *t, const struct rec_writer *w)
{
	t->w = w;
	t->err = 0;
	rec_writer__peek_pending(w, add_key, t);
	t->w = NULL;
	return t->err;
}

void top_table__samples(const struct top_table *t, uint64_t *interval, uint64_t *all)
{
	*interval = t->samples;
	*all = t->samples_all + t->samples;
}

static int cmp_fn(const void *a, const void *b, void *ctx)
{
	const struct top_fn *fns = ctx, *x = &fns[*(const size_t *)a],
			    *y = &fns[*(const size_t *)b];

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->self_all + x->self != y->self_all + y->self)
		return x->self_all + x->self < y->self_all + y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->label, y->label);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void print_row(const struct top_table *t, const struct top_fn *f, unsigned int width,
		      FILE *out)
{
	uint64_t all = t->samples_all + t->samples;
	int cols = 52;		 /* the columns before the name */
	char label[4 * 512 + 1]; /* what the widest line shows, escaped */

	fprintf(out, "%6.1f%% %6.1f%%   %6.1f%% %6.1f%% %9llu  %.*s\n", pct(f->self, t->samples),
		pct(f->total, t->samples), pct(f->self_all + f->self, all),
		pct(f->total_all + f->total, all), (unsigned long long)(f->self_all + f->self),
		width > (unsigned int)cols + 8 ? (int)(width - cols) : 512,
		esc_term_buf(label, sizeof(label), f->label));
}

/* The interval's counts join the totals; a new interval starts. */
static void close_interval(struct top_table *t)
{
	for (size_t i = 0; i < t->nfns; i++) {
		t->fns[i].self_all += t->fns[i].self;
		t->fns[i].total_all += t->fns[i].total;
		t->fns[i].self = t->fns[i].total = 0;
	}
	t->samples_all += t->samples;
	t->samples = 0;
}

void top_table__print(struct top_table *t, const struct top_view *v, FILE *out)
{
	char last[32];
	size_t n = 0;

	if (!vec_grow(&t->order, &t->cap_order, t->nfns ? t->nfns : 1, sizeof(*t->order), 64)) {
		for (size_t i = 0; i < t->nfns; i++) {
			if (t->fns[i].self || t->fns[i].self_all || t->fns[i].total)
				t->order[n++] = i;
		}
	}
	if (n)
		qsort_r(t->order, n, sizeof(*t->order), cmp_fn, t->fns);
	snprintf(last, sizeof(last), "last %.1f s", v->interval_s);
	fprintf(out, "%-15s   %-15s\n", last, "since start");
	fprintf(out, "%7s %7s   %7s %7s %9s  %s\n", "self", "total", "self", "total", "self",
		"function");
	for (size_t i = 0; i < n && i < v->rows; i++)
		print_row(t, &t->fns[t->order[i]], v->width, out);
	close_interval(t);
}
