// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The GPU tables of a recording (gputab.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gputab.h"

/* One interval of GPU work, for busy time. */
struct span {
	uint32_t device, stream;
	uint64_t start, end;
};

const char *gputab__copy_name(uint32_t kind)
{
	static const char *const names[REC_GPU_COPY_NR] = {
		[REC_GPU_COPY_OTHER] = "other", [REC_GPU_COPY_HTOD] = "HtoD",
		[REC_GPU_COPY_DTOH] = "DtoH",	[REC_GPU_COPY_DTOD] = "DtoD",
		[REC_GPU_COPY_HTOH] = "HtoH",	[REC_GPU_COPY_PTOP] = "PtoP",
	};

	return kind < REC_GPU_COPY_NR ? names[kind] : "other";
}

static int add_kernel(struct gputab *t, size_t *cap, struct u64map *by_name,
		      const struct rec_gpu *g)
{
	uint64_t dur = g->end_ns - g->start_ns, i;
	struct gpu_kernel_row *k;

	if (!u64map__get(by_name, g->name, &i)) {
		i = t->nkernels;
		if (vec_grow(&t->kernels, cap, i + 1, sizeof(*t->kernels), 16) ||
		    u64map__put(by_name, g->name, i))
			return -ENOMEM;
		t->kernels[t->nkernels++] = (struct gpu_kernel_row){g->name, 0, 0, UINT64_MAX, 0};
	}
	k = &t->kernels[i];
	k->calls++;
	k->total_ns += dur;
	k->min_ns = dur < k->min_ns ? dur : k->min_ns;
	k->max_ns = dur > k->max_ns ? dur : k->max_ns;
	t->kernels_run++;
	return 0;
}

static void add_other(struct gputab *t, const struct rec_gpu *g)
{
	uint64_t dur = g->end_ns - g->start_ns;

	switch (g->kind) {
	case REC_GPU_MEMCPY: {
		struct gpu_copy_row *c = &t->copies[g->detail < REC_GPU_COPY_NR ? g->detail : 0];

		c->count++;
		c->bytes += g->bytes;
		c->total_ns += dur;
		break;
	}
	case REC_GPU_MEMSET:
		t->memsets++;
		t->memset_bytes += g->bytes;
		break;
	case REC_GPU_SYNC:
		t->syncs++;
		t->sync_ns += dur;
		break;
	case REC_GPU_API:
		t->api_calls++;
		t->launches += !!(g->flags & REC_GPU_F_LAUNCH);
		break;
	default:
		break;
	}
}

static int by_lane_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

static int by_device_start(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return (x->start > y->start) - (x->start < y->start);
}

/* The union of sorted spans per group (same device, and same stream when by_stream): one row
 * each, appended to *rows. */
static int sweep(const struct span *s, size_t n, bool by_stream, struct gpu_lane_row **rows,
		 size_t *nrows)
{
	size_t cap = 0;

	for (size_t i = 0; i < n;) {
		struct gpu_lane_row row = {.device = s[i].device,
					   .stream = by_stream ? s[i].stream : 0,
					   .first_ns = s[i].start};
		uint64_t start = s[i].start, end = s[i].end;

		for (; i < n && s[i].device == row.device &&
		       (!by_stream || s[i].stream == row.stream);
		     i++) {
			row.activities++;
			if (s[i].start > end) {
				row.busy_ns += end - start;
				start = s[i].start;
			}
			end = s[i].end > end ? s[i].end : end;
		}
		row.busy_ns += end - start;
		row.last_ns = end;
		row.idle_ns = row.last_ns - row.first_ns - row.busy_ns;
		if (vec_grow(rows, &cap, *nrows + 1, sizeof(**rows), 8))
			return -ENOMEM;
		(*rows)[(*nrows)++] = row;
	}
	return 0;
}

static int busy(struct gputab *t, struct span *s, size_t n)
{
	int err;

	qsort(s, n, sizeof(*s), by_lane_start);
	err = sweep(s, n, true, &t->lanes, &t->nlanes);
	if (err)
		return err;
	qsort(s, n, sizeof(*s), by_device_start);
	err = sweep(s, n, false, &t->devices, &t->ndevices);
	for (size_t i = 0; !err && i < t->ndevices; i++)
		t->busy_ns += t->devices[i].busy_ns;
	return err;
}

static int by_total_desc(const void *a, const void *b)
{
	const struct gpu_kernel_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

static int fill(struct gputab *t, const struct recording *r, struct span *spans, size_t *nspans)
{
	struct u64map by_name = {0};
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; !err && i < r->ngpu; i++) {
		const struct rec_gpu *g = &r->gpu[i];

		if (g->kind == REC_GPU_KERNEL)
			err = add_kernel(t, &cap, &by_name, g);
		else
			add_other(t, g);
		if (g->kind != REC_GPU_KERNEL && g->kind != REC_GPU_MEMCPY &&
		    g->kind != REC_GPU_MEMSET)
			continue;
		spans[(*nspans)++] = (struct span){g->device, g->stream, g->start_ns, g->end_ns};
		t->first_ns = !t->first_ns || g->start_ns < t->first_ns ? g->start_ns : t->first_ns;
		t->last_ns = g->end_ns > t->last_ns ? g->end_ns : t->last_ns;
	}
	u64map__clear(&by_name);
	return err;
}

struct gputab *gputab__new(const struct recording *r)
{
	struct gputab *t = calloc(1, sizeof(*t));
	struct span *spans = calloc(r->ngpu ? r->ngpu : 1, sizeof(*spans));
	size_t nspans = 0;
	int err = -ENOMEM;

	if (t && spans)
		err = fill(t, r, spans, &nspans);
	if (!err)
		err = busy(t, spans, nspans);
	free(spans);
	if (err) {
		gputab__free(t);
		errno = -err;
		return NULL;
	}
	if (t->nkernels) /* kernels is NULL when none ran */
		qsort(t->kernels, t->nkernels, sizeof(*t->kernels), by_total_desc);
	return t;
}

void gputab__free(struct gputab *t)
{
	if (!t)
		return;
	free(t->kernels);
	free(t->lanes);
	free(t->devices);
	free(t);
}
