// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Builds the profile model from a loaded recording: maps every frame to a function (same module
 * and name: one function) and inserts every sample's stack into a bounded path tree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"
#include "u64map.h"

struct func {
	char *name;
	const char *module;
	bool kernel;
};

struct profile {
	struct tree *tree;
	struct func *funcs;
	uint32_t nfuncs;
	uint32_t *frame_func; /* frame id -> function */
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int add_func(struct profile *p, const struct recording *r, const struct rec_frame *f)
{
	const char *module = base_name(recording__string(r, f->module));
	struct func *fn = &p->funcs[p->nfuncs];
	int len;

	fn->module = module;
	fn->kernel = f->kind == REC_FRAME_KERNEL;
	if (f->name) {
		fn->name = strdup(recording__string(r, f->name));
		len = fn->name ? 0 : -1;
	} else {
		len = asprintf(&fn->name, "%s+0x%llx", module, (unsigned long long)f->offset);
	}
	if (len < 0) {
		fn->name = NULL;
		return -ENOMEM;
	}
	return (int)p->nfuncs++;
}

/* One function per (module, name) of named frames; one per frame of unnamed ones. */
static int map_frames(struct profile *p, const struct recording *r)
{
	struct u64map by_name = {0};
	int err = 0;

	p->funcs = calloc(r->nframes + 1, sizeof(*p->funcs));
	p->frame_func = calloc(r->nframes + 1, sizeof(*p->frame_func));
	if (!p->funcs || !p->frame_func)
		return -ENOMEM;
	for (size_t i = 0; i < r->nframes && !err; i++) {
		const struct rec_frame *f = &r->frames[i];
		uint64_t key = (uint64_t)f->module << 32 | f->name, id;
		int nid;

		if (f->name && u64map__get(&by_name, key, &id)) {
			p->frame_func[i] = id;
			continue;
		}
		nid = add_func(p, r, f);
		if (nid < 0) {
			err = nid;
			break;
		}
		p->frame_func[i] = nid;
		if (f->name && u64map__put(&by_name, key, nid))
			err = -ENOMEM;
	}
	u64map__clear(&by_name);
	return err;
}

static int insert_samples(struct profile *p, const struct recording *r)
{
	uint32_t *labels = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < r->nsamples && !err; i++) {
		const struct rec_sample *s = &r->samples[i];

		if (s->nframes > cap) {
			uint32_t *t = realloc(labels, s->nframes * sizeof(*t));

			if (!t) {
				err = -ENOMEM;
				break;
			}
			labels = t;
			cap = s->nframes;
		}
		for (uint32_t j = 0; j < s->nframes; j++)
			labels[j] = p->frame_func[s->frames[j]];
		err = tree__insert(p->tree, labels, s->nframes, s->count);
	}
	free(labels);
	return err;
}

struct profile *profile__build(const struct recording *r)
{
	struct profile *p = calloc(1, sizeof(*p));
	int err = -ENOMEM;

	if (!p)
		goto err_out;
	p->tree = tree__new();
	if (!p->tree)
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
	free(p->frame_func);
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

uint32_t profile__frame_func(const struct profile *p, uint32_t frame)
{
	return p->frame_func[frame];
}
