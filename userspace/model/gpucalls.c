// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The GPU tables of an attach-mode recording (gpucalls.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpucalls.h"

struct build {
	struct gpu_calls *t;
	const struct recording *r;
	struct u64map kernel_of; /* name id, or a handle's key -> index in kernels */
	struct u64map region_of; /* region string id -> index in regions */
	struct u64map path_of;	 /* a call path's hash -> index in paths (collisions: the next) */
	size_t cap_kernels, cap_regions, cap_paths;
};

static uint64_t kernel_key(const struct rec_gpu *g)
{
	return g->name ? g->name : 1ull << 63 | (mix64(g->pid) ^ g->bytes) >> 1;
}

static int add_kernel(struct build *b, const struct rec_gpu *g)
{
	struct gpu_calls *t = b->t;
	uint64_t i;

	if (!u64map__get(&b->kernel_of, kernel_key(g), &i)) {
		i = t->nkernels;
		if (vec_grow(&t->kernels, &b->cap_kernels, i + 1, sizeof(*t->kernels), 16) ||
		    u64map__put(&b->kernel_of, kernel_key(g), i))
			return -ENOMEM;
		t->kernels[t->nkernels++] = (struct gpu_call_kernel){g->name, g->pid, g->bytes, 0};
	}
	t->kernels[i].launches++;
	t->launches++;
	t->unnamed += !g->name;
	return 0;
}

static void count_in(struct gpu_call_row *row, const struct rec_gpu *g)
{
	row->launches += !!(g->flags & REC_GPU_F_LAUNCH);
	row->copies += !!(g->flags & REC_GPU_F_COPY);
	row->memsets += !!(g->flags & REC_GPU_F_SET);
	row->bytes += g->flags & REC_GPU_F_LAUNCH ? 0 : g->bytes;
}

/* A frame by its function (module and name), so that call sites in one function are one path;
 * an unnamed frame by its address, as the report names it (module+0xoffset). */
static uint64_t frame_fn(const struct recording *r, uint32_t f)
{
	const struct rec_frame *fr = f < r->nframes ? &r->frames[f] : NULL;

	if (!fr)
		return UINT64_MAX;
	return fr->name ? (uint64_t)fr->module << 32 | fr->name
			: mix64(fr->offset ^ (uint64_t)fr->module << 48) | 1ull << 63;
}

static bool same_path(const struct recording *r, const struct rec_sample *a,
		      const struct rec_sample *b)
{
	if (a->nframes != b->nframes)
		return false;
	for (uint32_t i = 0; i < a->nframes; i++) {
		if (frame_fn(r, a->frames[i]) != frame_fn(r, b->frames[i]))
			return false;
	}
	return true;
}

static int add_path(struct build *b, const struct rec_gpu *g)
{
	const struct rec_sample *s = &b->r->samples[g->launch_key - 1];
	struct gpu_calls *t = b->t;
	uint64_t h = FNV64_OFFSET, i;

	for (uint32_t k = 0; k < s->nframes; k++) {
		uint64_t fn = frame_fn(b->r, s->frames[k]);

		h = fnv64_bytes(h, &fn, sizeof(fn));
	}
	for (; u64map__get(&b->path_of, h, &i); h++) {
		if (same_path(b->r, &b->r->samples[t->paths[i].id], s)) {
			count_in(&t->paths[i], g);
			return 0;
		}
	}
	if (vec_grow(&t->paths, &b->cap_paths, t->npaths + 1, sizeof(*t->paths), 16) ||
	    u64map__put(&b->path_of, h, t->npaths))
		return -ENOMEM;
	t->paths[t->npaths] = (struct gpu_call_row){.id = g->launch_key - 1};
	count_in(&t->paths[t->npaths++], g);
	return 0;
}

static int add_region(struct build *b, uint32_t name, const struct rec_gpu *g)
{
	struct gpu_calls *t = b->t;
	uint64_t i;

	if (!u64map__get(&b->region_of, name, &i)) {
		i = t->nregions;
		if (vec_grow(&t->regions, &b->cap_regions, i + 1, sizeof(*t->regions), 16) ||
		    u64map__put(&b->region_of, name, i))
			return -ENOMEM;
		t->regions[t->nregions++] = (struct gpu_call_row){.id = name};
	}
	count_in(&t->regions[i], g);
	return 0;
}

/* Each region on the call's region stack once, however often recursion put it there. */
static int add_regions(struct build *b, const struct rec_sample *s, const struct rec_gpu *g)
{
	int err = 0;

	for (uint32_t i = 0; i < s->nregions && !err; i++) {
		bool seen = false;

		for (uint32_t j = 0; j < i && !seen; j++)
			seen = s->regions[j] == s->regions[i];
		if (!seen)
			err = add_region(b, s->regions[i], g);
	}
	return err;
}

static int add_call(struct build *b, const struct rec_gpu *g)
{
	struct gpu_calls *t = b->t;
	bool stack = g->launch_key && g->launch_key <= b->r->nsamples;
	int err = 0;

	t->calls++;
	if (g->correlation < REC_GPU_NENTRIES)
		t->entries[g->correlation]++;
	if (g->flags & REC_GPU_F_LAUNCH) {
		err = add_kernel(b, g);
	} else if (g->flags & REC_GPU_F_COPY) {
		t->copies[g->stream < REC_GPU_COPY_NR ? g->stream : 0].count++;
		t->copies[g->stream < REC_GPU_COPY_NR ? g->stream : 0].bytes += g->bytes;
	} else if (g->flags & REC_GPU_F_SET) {
		t->memsets.count++;
		t->memsets.bytes += g->bytes;
	}
	if (!err && stack)
		err = add_path(b, g);
	if (!err && stack)
		err = add_regions(b, &b->r->samples[g->launch_key - 1], g);
	return err;
}

static int by_launches(const void *a, const void *b)
{
	const struct gpu_call_kernel *x = a, *y = b;

	if (x->launches != y->launches)
		return x->launches < y->launches ? 1 : -1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->handle > y->handle) - (x->handle < y->handle);
}

static int by_calls(const void *a, const void *b)
{
	const struct gpu_call_row *x = a, *y = b;
	uint64_t cx = x->launches + x->copies + x->memsets,
		 cy = y->launches + y->copies + y->memsets;

	if (x->launches != y->launches)
		return x->launches < y->launches ? 1 : -1;
	if (cx != cy)
		return cx < cy ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

struct gpu_calls *gpu_calls__new(const struct recording *r)
{
	struct build b = {.r = r, .t = calloc(1, sizeof(*b.t))};
	int err = b.t ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->ngpu_calls; i++)
		err = add_call(&b, &r->gpu_calls[i]);
	u64map__clear(&b.kernel_of);
	u64map__clear(&b.region_of);
	u64map__clear(&b.path_of);
	if (err) {
		gpu_calls__free(b.t);
		errno = -err;
		return NULL;
	}
	if (b.t->nkernels)
		qsort(b.t->kernels, b.t->nkernels, sizeof(*b.t->kernels), by_launches);
	if (b.t->npaths)
		qsort(b.t->paths, b.t->npaths, sizeof(*b.t->paths), by_calls);
	if (b.t->nregions)
		qsort(b.t->regions, b.t->nregions, sizeof(*b.t->regions), by_calls);
	return b.t;
}

void gpu_calls__free(struct gpu_calls *t)
{
	if (!t)
		return;
	free(t->kernels);
	free(t->paths);
	free(t->regions);
	free(t);
}
