// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Builds the profile model from a loaded recording: maps every frame to the functions it stands
 * for (its inline chain, outermost first; same module and display name: one function) and
 * inserts every sample's expanded stack into a bounded path tree. With a region filter only the
 * samples whose region stack (rec_sample.regions) holds the name go into the tree; with a query
 * (model/query.h) each stack goes through it, and the frames' functions every output reads
 * (profile__frame_funcs) leave out what it folds, so all outputs see the same samples.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/demangle.h"
#include "lib/hash.h"
#include "lib/idxtab.h"
#include "profile.h"
#include "lib/vec.h"

enum { SAMPLE_DROPPED, SAMPLE_KEPT, SAMPLE_FOLDED /* kept; every frame folded away */ };

/* Every frame's functions as the outputs see them; aliases the profile's own without folds. */
struct frame_view {
	uint32_t *labels, *lines, *count;
	size_t *off;
	bool owned;
};

struct func {
	char *name;
	const char *module;
	bool kernel;
};

struct profile {
	struct profile_opts o;
	struct tree *tree;
	struct func *funcs;
	uint32_t nfuncs;
	size_t cap_funcs;
	struct idxtab func_tab; /* funcs by (module, name, kernel) */
	uint32_t *labels;	/* every frame's functions, back to back */
	uint32_t *label_line;	/* label -> its line's index in rec_frame.lines */
	size_t nlabels, cap_labels, cap_label_line;
	size_t *frame_off;	/* frame id -> first label */
	uint32_t *frame_count;	/* frame id -> number of labels (0: a region frame, no function) */
	struct frame_view view; /* what the outputs read: the above less the query's folds */
	bool *region_match;	/* string id -> the name the region filter asks for */
	uint8_t *kept;		/* sample -> SAMPLE_DROPPED, SAMPLE_KEPT or SAMPLE_FOLDED */
	uint32_t folded_func;	/* "[folded]", UINT32_MAX until a sample needs it */
	uint32_t *sample_keys;	/* sample -> its nkeys key functions (opts.keys) */
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return (fnv64_str(h, s) ^ 0xff) * FNV64_PRIME;
}

struct func_key {
	const char *module, *name;
	bool kernel;
};

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct func *f = &((const struct profile *)ctx)->funcs[idx];
	const struct func_key *k = key;

	return f->kernel == k->kernel && !strcmp(f->name, k->name) && !strcmp(f->module, k->module);
}

/* The function called name in module (taking ownership of name), created on first use. */
static int intern(struct profile *p, const char *module, char *name, bool kernel)
{
	struct func_key key = {module, name, kernel};
	uint32_t h = hash32(hash_str(hash_str(FNV64_OFFSET, module), name));
	struct idxtab_slot *slot;

	if (p->nfuncs >= INT32_MAX || idxtab__reserve(&p->func_tab))
		goto nomem;
	slot = idxtab__find(&p->func_tab, h, func_eq, p, &key);
	if (slot->idx1) {
		free(name);
		return (int)(slot->idx1 - 1);
	}
	if (vec_grow(&p->funcs, &p->cap_funcs, p->nfuncs + 1, sizeof(*p->funcs), 256))
		goto nomem;
	p->funcs[p->nfuncs] = (struct func){name, module, kernel};
	idxtab__set(&p->func_tab, slot, p->nfuncs, h);
	return (int)p->nfuncs++;
nomem:
	free(name);
	return -ENOMEM;
}

static char *display_name(const struct profile *p, const char *raw)
{
	char *d = p->o.no_demangle ? NULL : demangle__name(raw);

	return d ? d : strdup(raw);
}

/* One level of an inline chain as a function name: "name" or, with --lines, "name (file:line)". */
static char *line_name(const struct profile *p, const struct recording *r,
		       const struct rec_frame *f, const struct rec_line *l)
{
	const char *raw = recording__string(r, l->function ? l->function : f->name);
	char *name = *raw ? display_name(p, raw) : NULL, *full = NULL;

	if (!name && asprintf(&name, "%s+0x%llx", base_name(recording__string(r, f->module)),
			      (unsigned long long)f->offset) < 0)
		return NULL;
	if (!p->o.lines || !l->file)
		return name;
	if (asprintf(&full, "%s (%s:%u)", name, base_name(recording__string(r, l->file)), l->line) <
	    0)
		full = NULL;
	free(name);
	return full;
}

static int push_label(struct profile *p, int func, uint32_t line)
{
	if (func < 0)
		return func;
	if (vec_grow(&p->labels, &p->cap_labels, p->nlabels + 1, sizeof(*p->labels), 1024) ||
	    vec_grow(&p->label_line, &p->cap_label_line, p->nlabels + 1, sizeof(*p->label_line),
		     1024))
		return -ENOMEM;
	p->label_line[p->nlabels] = line;
	p->labels[p->nlabels++] = (uint32_t)func;
	return 0;
}

static int map_frame(struct profile *p, const struct recording *r, uint32_t i)
{
	const struct rec_frame *f = &r->frames[i];
	const char *module = base_name(recording__string(r, f->module));
	bool kernel = f->kind == REC_FRAME_KERNEL;
	struct rec_line only = {.function = f->name};
	const struct rec_line *lines = f->nlines ? f->lines : &only;
	uint32_t n = f->nlines ? f->nlines : 1;
	int err = 0;

	p->frame_off[i] = p->nlabels;
	if (f->kind == REC_FRAME_REGION)
		return 0; /* only in the file: samples carry their regions apart (recording.h) */
	/* Stored innermost first; the tree wants the out-of-line function first. --no-inline:
	 * that one alone. */
	for (uint32_t k = n; k-- > (p->o.no_inline ? n - 1 : 0) && !err;) {
		char *name = line_name(p, r, f, &lines[k]);

		err = name ? push_label(p, intern(p, module, name, kernel), k) : -ENOMEM;
	}
	p->frame_count[i] = p->o.no_inline ? 1 : n;
	return err;
}

const char *profile__sample_comm(const struct recording *r, const struct rec_sample *s)
{
	const char *thread = NULL;

	if (s->comm)
		return recording__string(r, s->comm);
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].pid != s->pid)
			continue;
		if (r->threads[i].tid == s->pid)
			return recording__string(r, r->threads[i].comm);
		if (r->threads[i].tid == s->tid)
			thread = recording__string(r, r->threads[i].comm);
	}
	return thread && *thread ? thread : "?";
}

/* Whether the thread filters and the region filter keep the sample: for the regions, no filter,
 * or a region of it has the name. */
static bool keep_sample(const struct profile *p, const struct recording *r,
			const struct rec_sample *s)
{
	if (!query__keeps_thread(p->o.query, s->pid, s->tid, profile__sample_comm(r, s)))
		return false;
	if (!p->o.region)
		return true;
	for (uint32_t j = 0; j < s->nregions; j++) {
		if (p->region_match[s->regions[j]])
			return true;
	}
	return false;
}

static int match_regions(struct profile *p, const struct recording *r)
{
	if (!p->o.region)
		return 0;
	p->region_match = calloc(r->nstrings + 1, sizeof(*p->region_match));
	if (!p->region_match)
		return -ENOMEM;
	for (size_t i = 0; i < r->nstrings; i++)
		p->region_match[i] = !strcmp(recording__string(r, i), p->o.region);
	return 0;
}

/* The sample's frames' functions (view's), root first, into *labels; the count or -ENOMEM. */
static int stack_of(const struct frame_view *v, const struct rec_sample *s, uint32_t **labels,
		    size_t *cap)
{
	size_t n = 0;

	for (uint32_t j = 0; j < s->nframes; j++)
		n += v->count[s->frames[j]];
	if (vec_grow(labels, cap, n + 1, sizeof(**labels), 64))
		return -ENOMEM;
	n = 0;
	for (uint32_t j = 0; j < s->nframes; j++) {
		uint32_t fr = s->frames[j];

		memcpy(*labels + n, v->labels + v->off[fr], v->count[fr] * sizeof(**labels));
		n += v->count[fr];
	}
	return (int)n;
}

static int folded_func(struct profile *p)
{
	char *name;
	int f;

	if (p->folded_func != UINT32_MAX)
		return (int)p->folded_func;
	name = strdup("[folded]");
	f = name ? intern(p, "", name, false) : -ENOMEM;
	if (f >= 0)
		p->folded_func = (uint32_t)f;
	return f;
}

/* The function standing for key k of sample s: "NAME", "pid N" or "tid N". */
static int key_func(struct profile *p, const struct recording *r, const struct rec_sample *s,
		    enum profile_key k)
{
	char *name = NULL;
	int len;

	if (k == PROFILE_KEY_COMM)
		name = strdup(profile__sample_comm(r, s));
	else if ((len = asprintf(&name, "%s %u", k == PROFILE_KEY_PID ? "pid" : "tid",
				 k == PROFILE_KEY_PID ? s->pid : s->tid)) < 0)
		name = NULL;
	return name ? intern(p, "", name, false) : -ENOMEM;
}

/* The kept sample i's stack labels[0..n) into the tree under its keys (labels grown to hold
 * them). */
static int insert_keyed(struct profile *p, const struct recording *r, size_t i, uint32_t **labels,
			size_t n, size_t *cap)
{
	const struct rec_sample *s = &r->samples[i];
	uint32_t nk = p->o.nkeys, *keys = p->sample_keys + i * nk;

	if (vec_grow(labels, cap, n + nk + 1, sizeof(**labels), 64))
		return -ENOMEM;
	memmove(*labels + nk, *labels, n * sizeof(**labels));
	for (uint32_t k = 0; k < nk; k++) {
		int f = key_func(p, r, s, p->o.keys[k]);

		if (f < 0)
			return f;
		(*labels)[k] = keys[k] = (uint32_t)f;
	}
	return tree__insert(p->tree, *labels, n + nk, s->count);
}

/* Sample i through the thread and region filters and the query into the tree. */
static int insert_sample(struct profile *p, const struct recording *r, size_t i, uint32_t **labels,
			 size_t *cap)
{
	const struct rec_sample *s = &r->samples[i];
	struct frame_view raw = {p->labels, p->label_line, p->frame_count, p->frame_off, false};
	int len, f;
	size_t n;

	if (!keep_sample(p, r, s))
		return 0;
	len = stack_of(&raw, s, labels, cap);
	if (len < 0)
		return len;
	n = (size_t)len;
	if (!query__apply(p->o.query, *labels, &n))
		return 0;
	p->kept[i] = SAMPLE_KEPT;
	if (!n && len) {
		f = folded_func(p);
		if (f < 0)
			return f;
		(*labels)[n++] = (uint32_t)f;
		p->kept[i] = SAMPLE_FOLDED;
	}
	return p->o.nkeys ? insert_keyed(p, r, i, labels, n, cap)
			  : tree__insert(p->tree, *labels, n, s->count);
}

static int insert_samples(struct profile *p, const struct recording *r)
{
	uint32_t *labels = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < r->nsamples && !err; i++)
		err = insert_sample(p, r, i, &labels, &cap);
	free(labels);
	return err;
}

static const char *func_name_cb(const void *p, uint32_t func)
{
	return profile__func_name(p, func);
}

/* The frames' functions less those the query folds (the profile's own when it folds none). */
static int make_view(struct profile *p, const struct recording *r)
{
	struct frame_view *v = &p->view;
	bool folds = false;
	size_t n = 0;

	for (uint32_t f = 0; p->o.query && f < p->nfuncs && !folds; f++)
		folds = query__folds(p->o.query, f);
	*v = (struct frame_view){p->labels, p->label_line, p->frame_count, p->frame_off, false};
	if (!folds)
		return 0;
	*v = (struct frame_view){.owned = true};
	v->labels = malloc((p->nlabels + 1) * sizeof(*v->labels));
	v->lines = malloc((p->nlabels + 1) * sizeof(*v->lines));
	v->count = calloc(r->nframes + 1, sizeof(*v->count));
	v->off = calloc(r->nframes + 1, sizeof(*v->off));
	if (!v->labels || !v->lines || !v->count || !v->off)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nframes; i++) {
		v->off[i] = n;
		for (size_t k = p->frame_off[i]; k < p->frame_off[i] + p->frame_count[i]; k++) {
			if (query__folds(p->o.query, p->labels[k]))
				continue;
			v->labels[n] = p->labels[k];
			v->lines[n++] = p->label_line[k];
		}
		v->count[i] = (uint32_t)(n - v->off[i]);
	}
	return 0;
}

static void thread_cb(const void *ctx, size_t i, uint32_t *pid, uint32_t *tid, const char **comm)
{
	const struct recording *r = ctx;

	*pid = r->samples[i].pid;
	*tid = r->samples[i].tid;
	*comm = profile__sample_comm(r, &r->samples[i]);
}

/* The functions of every frame, the query bound to them and the outputs' view of them. */
static int map_frames(struct profile *p, const struct recording *r)
{
	int err = match_regions(p, r);

	for (uint32_t i = 0; i < r->nframes && !err; i++)
		err = map_frame(p, r, i);
	if (!err && p->o.query)
		err = query__bind_threads(p->o.query, r->nsamples, thread_cb, r);
	if (!err && p->o.query)
		err = query__bind(p->o.query, p->nfuncs, func_name_cb, p);
	return err ? err : make_view(p, r);
}

static struct profile *new_profile(const struct recording *r, const struct profile_opts *opts)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (opts)
		p->o = *opts;
	p->folded_func = UINT32_MAX;
	p->tree = tree__new();
	p->frame_off = calloc(r->nframes + 1, sizeof(*p->frame_off));
	p->frame_count = calloc(r->nframes + 1, sizeof(*p->frame_count));
	p->kept = calloc(r->nsamples + 1, sizeof(*p->kept));
	if (p->o.nkeys > PROFILE_KEYS_MAX)
		p->o.nkeys = PROFILE_KEYS_MAX;
	p->sample_keys = calloc(r->nsamples * p->o.nkeys + 1, sizeof(*p->sample_keys));
	if (!p->tree || !p->frame_off || !p->frame_count || !p->kept || !p->sample_keys) {
		profile__free(p);
		return NULL;
	}
	return p;
}

int profile__check_query(const struct recording *r, const struct profile_opts *opts)
{
	struct profile *p = new_profile(r, opts);
	int err = p ? map_frames(p, r) : -ENOMEM;

	profile__free(p);
	return err;
}

struct profile *profile__build(const struct recording *r, const struct profile_opts *opts)
{
	struct profile *p = new_profile(r, opts);
	int err = -ENOMEM;

	if (!p)
		goto err_out;
	err = map_frames(p, r);
	if (!err)
		err = insert_samples(p, r);
	if (err)
		goto err_out;
	return p;
err_out:
	profile__free(p);
	errno = -err;
	return NULL;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nfuncs; i++)
		free(p->funcs[i].name);
	free(p->funcs);
	idxtab__clear(&p->func_tab);
	if (p->view.owned) {
		free(p->view.labels);
		free(p->view.lines);
		free(p->view.count);
		free(p->view.off);
	}
	free(p->labels);
	free(p->label_line);
	free(p->frame_off);
	free(p->frame_count);
	free(p->region_match);
	free(p->kept);
	free(p->sample_keys);
	tree__free(p->tree);
	free(p);
}

const struct tree *profile__tree(const struct profile *p)
{
	return p->tree;
}

uint32_t profile__nfuncs(const struct profile *p)
{
	return p->nfuncs;
}

const char *profile__func_name(const struct profile *p, uint32_t func)
{
	return func < p->nfuncs ? p->funcs[func].name : "?";
}

const char *profile__func_module(const struct profile *p, uint32_t func)
{
	return func < p->nfuncs ? p->funcs[func].module : "?";
}

bool profile__func_kernel(const struct profile *p, uint32_t func)
{
	return func < p->nfuncs && p->funcs[func].kernel;
}

uint32_t profile__frame_funcs(const struct profile *p, uint32_t frame, const uint32_t **funcs)
{
	*funcs = p->view.labels + p->view.off[frame];
	return p->view.count[frame];
}

const uint32_t *profile__frame_lines(const struct profile *p, uint32_t frame)
{
	return p->view.lines + p->view.off[frame];
}

bool profile__sample_kept(const struct profile *p, size_t sample)
{
	return p->kept[sample] != SAMPLE_DROPPED;
}

uint32_t profile__sample_keys(const struct profile *p, size_t sample, const uint32_t **keys)
{
	*keys = p->sample_keys + sample * p->o.nkeys;
	return p->kept[sample] != SAMPLE_DROPPED ? p->o.nkeys : 0;
}

bool profile__sample_folded(const struct profile *p, size_t sample)
{
	return p->kept[sample] == SAMPLE_FOLDED;
}

uint32_t profile__folded_func(const struct profile *p)
{
	return p->folded_func;
}

int profile__sample_stack(const struct profile *p, const struct recording *r, size_t sample,
			  uint32_t **buf, size_t *cap)
{
	int n = stack_of(&p->view, &r->samples[sample], buf, cap);

	if (n == 0 && p->kept[sample] == SAMPLE_FOLDED)
		(*buf)[n++] = p->folded_func;
	return n;
}
