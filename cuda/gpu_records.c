/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CUPTI activity records to perch's channel records, clock conversion and kernel names
 * (gpu_records.h; gpu_stream.c reads the channel back). The record structs are CUDA 13's current
 * versions (CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2, API): CUPTI writes the
 * version of the library the program loaded, which is the toolkit's we build against
 * (libcupti.so.13).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpu_records.h"

int64_t gpu_clock_measure(gpu_clock_read_fn *read, void *ctx, int tries)
{
	uint64_t best_width = UINT64_MAX;
	int64_t best = 0;

	for (int i = 0; i < tries; i++) {
		uint64_t m1, real, m2;

		read(ctx, &m1, &real, &m2);
		if (m2 < m1 || m2 - m1 >= best_width)
			continue;
		best_width = m2 - m1;
		best = (int64_t)(real - (m1 + (m2 - m1) / 2));
	}
	return best;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void gpu_clock_read_system(void *ctx, uint64_t *mono1, uint64_t *real, uint64_t *mono2)
{
	(void)ctx;
	*mono1 = clock_ns(CLOCK_MONOTONIC);
	*real = clock_ns(CLOCK_REALTIME);
	*mono2 = clock_ns(CLOCK_MONOTONIC);
}

uint64_t gpu_clock_to_mono(const struct gpu_clock *c, uint64_t t)
{
	if (t == 0 || c->mode != PERCH_CUDA_CLOCK_OFFSET)
		return t;
	if (c->offset_ns > 0 && t <= (uint64_t)c->offset_ns)
		return 0;
	return t - (uint64_t)c->offset_ns;
}

struct gpu_names {
	struct u64map by_ptr; /* CUPTI's name pointer -> index in copies */
	char **copies;	      /* copies[i] is name id i + 1 */
	size_t len, cap;
};

struct gpu_names *gpu_names__new(void)
{
	return calloc(1, sizeof(struct gpu_names));
}

void gpu_names__free(struct gpu_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->len; i++)
		free(n->copies[i]);
	free(n->copies);
	u64map__clear(&n->by_ptr);
	free(n);
}

uint32_t gpu_names__intern(struct gpu_names *n, const char *name, bool *is_new)
{
	uint64_t idx;
	char *copy;

	*is_new = false;
	/* CUPTI shares one pointer among a kernel's records; a module unloaded and another loaded
	 * may reuse it for a different name, so the copy decides. */
	if (u64map__get(&n->by_ptr, (uintptr_t)name, &idx) && strcmp(n->copies[idx], name) == 0)
		return (uint32_t)idx + 1;
	if (vec_grow(&n->copies, &n->cap, n->len + 1, sizeof(*n->copies), 64))
		goto nomem;
	copy = strdup(name);
	if (!copy)
		goto nomem;
	if (u64map__put(&n->by_ptr, (uintptr_t)name, n->len)) {
		free(copy);
		goto nomem;
	}
	n->copies[n->len++] = copy;
	*is_new = true;
	return (uint32_t)n->len;
nomem:
	errno = ENOMEM;
	return 0;
}

static uint32_t copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return PERCH_CUDA_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return PERCH_CUDA_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
		return PERCH_CUDA_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return PERCH_CUDA_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return PERCH_CUDA_COPY_PTOP;
	default:
		return PERCH_CUDA_COPY_OTHER;
	}
}

static uint64_t dim3_product(int32_t x, int32_t y, int32_t z)
{
	if (x <= 0 || y <= 0 || z <= 0)
		return 0;
	return (uint64_t)x * (uint64_t)y * (uint64_t)z;
}

/* The fields every timed GPU activity record has, by the same names in each CUPTI struct. */
#define DECODE_SPAN(out, r, KIND)                           \
	do {                                                \
		(out)->kind = (KIND);                       \
		(out)->correlation_id = (r)->correlationId; \
		(out)->start_ns = (r)->start;               \
		(out)->end_ns = (r)->end;                   \
		(out)->context = (r)->contextId;            \
		(out)->stream = (r)->streamId;              \
	} while (0)

/* ... and those of the ones a device runs, which may belong to a graph. */
#define DECODE_DEVICE(out, r)                                         \
	do {                                                          \
		(out)->device = (r)->deviceId;                        \
		(out)->graph_id = (r)->graphId;                       \
		(out)->flags = (r)->graphId ? PERCH_CUDA_F_GRAPH : 0; \
	} while (0)

static void decode_kernel(const CUpti_ActivityKernel10 *k, struct perch_cuda_rec *out,
			  const char **name)
{
	DECODE_SPAN(out, k, PERCH_CUDA_KERNEL);
	DECODE_DEVICE(out, k);
	out->bytes = dim3_product(k->gridX, k->gridY, k->gridZ) *
		     dim3_product(k->blockX, k->blockY, k->blockZ);
	*name = k->name;
}

static void decode_memcpy(const CUpti_ActivityMemcpy6 *m, struct perch_cuda_rec *out)
{
	DECODE_SPAN(out, m, PERCH_CUDA_MEMCPY);
	DECODE_DEVICE(out, m);
	out->bytes = m->bytes;
	out->detail = copy_kind(m->copyKind);
}

static void decode_memset(const CUpti_ActivityMemset4 *m, struct perch_cuda_rec *out)
{
	DECODE_SPAN(out, m, PERCH_CUDA_MEMSET);
	DECODE_DEVICE(out, m);
	out->bytes = m->bytes;
	out->detail = m->value;
}

static void decode_sync(const CUpti_ActivitySynchronization2 *s, struct perch_cuda_rec *out)
{
	DECODE_SPAN(out, s, PERCH_CUDA_SYNC);
	out->detail = (uint32_t)s->type;
}

static void decode_api(const CUpti_ActivityAPI *a, struct perch_cuda_rec *out)
{
	bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;

	out->kind = PERCH_CUDA_API;
	out->correlation_id = a->correlationId;
	out->start_ns = a->start;
	out->end_ns = a->end;
	out->tid = a->threadId;
	out->detail = a->cbid;
	out->flags = (runtime ? PERCH_CUDA_F_RUNTIME : 0) |
		     (gpu_is_launch_cbid(runtime, a->cbid) ? PERCH_CUDA_F_LAUNCH : 0);
}

int gpu_decode(const void *cupti_record, const struct gpu_clock *c, uint32_t pid,
	       struct perch_cuda_rec *out, const char **name)
{
	const CUpti_Activity *a = cupti_record;

	memset(out, 0, sizeof(*out));
	*name = NULL;
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		decode_kernel(cupti_record, out, name);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		decode_memcpy(cupti_record, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		decode_memset(cupti_record, out);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		decode_sync(cupti_record, out);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		decode_api(cupti_record, out);
		break;
	default:
		return 0;
	}
	out->pid = pid;
	out->start_ns = gpu_clock_to_mono(c, out->start_ns);
	out->end_ns = gpu_clock_to_mono(c, out->end_ns);
	return 1;
}

/* The calls whose exit perch's probe marks: kernels (plain, cooperative, extended) and graphs. */
static const uint32_t runtime_launches[] = {
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
	CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

static const uint32_t driver_launches[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

const uint32_t *gpu_launch_cbids(bool runtime, size_t *n)
{
	*n = runtime ? ARRAY_LEN(runtime_launches) : ARRAY_LEN(driver_launches);
	return runtime ? runtime_launches : driver_launches;
}

bool gpu_is_launch_cbid(bool runtime, uint32_t cbid)
{
	size_t n;
	const uint32_t *ids = gpu_launch_cbids(runtime, &n);

	for (size_t i = 0; i < n; i++)
		if (ids[i] == cbid)
			return true;
	return false;
}
