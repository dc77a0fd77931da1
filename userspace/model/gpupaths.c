// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* GPU time by launching call path (gpupaths.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "lib/hash.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpupaths.h"

static bool device_work(const struct rec_gpu *g)
{
	return g->kind == REC_GPU_KERNEL || g->kind == REC_GPU_MEMCPY || g->kind == REC_GPU_MEMSET;
}

/* The index + 1 of g's launch stack in recording.samples, 0 when it has none. */
static uint32_t launch_stack(const struct recording *r, const struct rec_gpu *g)
{
	return g->launch_key <= r->nsamples ? g->launch_key : 0;
}

/* A frame of perch's injection library (its probe, its callback): not the program's path. */
static bool perch_frame(const struct recording *r, uint32_t frame)
{
	const char *mod = frame < r->nframes ? recording__string(r, r->frames[frame].module) : "";
	size_t n = strlen(mod), k = strlen("libperch_cuda.so");

	return n >= k && !strcmp(mod + n - k, "libperch_cuda.so") &&
	       (n == k || mod[n - k - 1] == '/');
}

uint32_t gpu_paths__program_frames(const struct recording *r, const struct rec_sample *s)
{
	uint32_t n = s->nframes;

	while (n > 0 && perch_frame(r, s->frames[n - 1]))
		n--;
	return n;
}

uint64_t *gpu_paths__sample_ns(const struct recording *r)
{
	uint64_t *ns = calloc(r->nsamples + 1, sizeof(*ns));

	if (!ns)
		return NULL;
	for (size_t i = 0; i < r->ngpu; i++) {
		const struct rec_gpu *g = &r->gpu[i];
		uint32_t k = launch_stack(r, g);

		if (k && device_work(g))
			ns[k - 1] += g->end_ns - g->start_ns;
	}
	return ns;
}

/* A frame by its function (name and module), not its address: call sites in one function are
 * one path. */
static uint64_t frame_fn(const struct recording *r, uint32_t f)
{
	return f < r->nframes ? (uint64_t)r->frames[f].module << 32 | r->frames[f].name
			      : UINT64_MAX;
}

static uint64_t path_hash(const struct recording *r, const struct rec_sample *s)
{
	uint64_t h = FNV64_OFFSET;

	for (uint32_t i = 0; i < s->nframes; i++) {
		uint64_t fn = frame_fn(r, s->frames[i]);

		h = fnv64_bytes(h, &fn, sizeof(fn));
	}
	return h;
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

/* The row of sample's call path: a hash collision goes on to the next slot of the hash. */
static int row_of(struct gpu_paths *p, size_t *cap, struct u64map *by_hash,
		  const struct recording *r, uint32_t sample, size_t *out)
{
	const struct rec_sample *s = &r->samples[sample];
	uint64_t h = path_hash(r, s), i;

	for (;; h++) {
		if (!u64map__get(by_hash, h, &i))
			break;
		if (same_path(r, &r->samples[p->rows[i].sample], s)) {
			*out = i;
			return 0;
		}
	}
	if (vec_grow(&p->rows, cap, p->nrows + 1, sizeof(*p->rows), 16) ||
	    u64map__put(by_hash, h, p->nrows))
		return -ENOMEM;
	p->rows[p->nrows] = (struct gpu_path_row){.sample = sample};
	*out = p->nrows++;
	return 0;
}

static int by_gpu_desc(const void *a, const void *b)
{
	const struct gpu_path_row *x = a, *y = b;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	return x->sample < y->sample ? -1 : x->sample > y->sample;
}

static int fill(struct gpu_paths *p, const struct recording *r)
{
	struct u64map by_hash = {0};
	size_t cap = 0, row;
	int err = 0;

	for (size_t i = 0; i < r->ngpu && !err; i++) {
		const struct rec_gpu *g = &r->gpu[i];
		bool known = launch_stack(r, g);

		if (g->kind == REC_GPU_API && (g->flags & REC_GPU_F_LAUNCH)) {
			p->launches++;
			p->launches_no_stack += !known;
		}
		if (!device_work(g))
			continue;
		if (!known) {
			p->activities_no_stack++;
			p->gpu_ns_no_stack += g->end_ns - g->start_ns;
			continue;
		}
		err = row_of(p, &cap, &by_hash, r, g->launch_key - 1, &row);
		if (!err) {
			p->rows[row].gpu_ns += g->end_ns - g->start_ns;
			p->rows[row].activities++;
			p->gpu_ns += g->end_ns - g->start_ns;
		}
	}
	u64map__clear(&by_hash);
	return err;
}

struct gpu_paths *gpu_paths__new(const struct recording *r)
{
	struct gpu_paths *p = calloc(1, sizeof(*p));
	int err = p ? fill(p, r) : -ENOMEM;

	if (err) {
		gpu_paths__free(p);
		errno = -err;
		return NULL;
	}
	if (p->nrows) /* rows is NULL when no launch had a stack */
		qsort(p->rows, p->nrows, sizeof(*p->rows), by_gpu_desc);
	return p;
}

void gpu_paths__free(struct gpu_paths *p)
{
	if (!p)
		return;
	free(p->rows);
	free(p);
}
