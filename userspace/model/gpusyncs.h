/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Syncs and who waited: the SYNCHRONIZATION records of a recording's GPU block, each joined at
 * record time to its API call's thread by (pid, correlation id) (cuda/gpu_join.c), summed per
 * thread: how many of each type, the time waited in all and the longest wait. Syncs whose API
 * call never came (tid 0) are one row of their own (pid 0, tid 0), never dropped.
 */
#ifndef PERCH_MODEL_GPUSYNCS_H
#define PERCH_MODEL_GPUSYNCS_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

/* CUPTI's CUpti_ActivitySynchronizationType, as rec_gpu.detail holds it; others count as 0. */
enum gpu_sync_type {
	GPU_SYNC_UNKNOWN = 0,
	GPU_SYNC_EVENT = 1,	  /* cudaEventSynchronize */
	GPU_SYNC_STREAM_WAIT = 2, /* cudaStreamWaitEvent */
	GPU_SYNC_STREAM = 3,	  /* cudaStreamSynchronize */
	GPU_SYNC_CONTEXT = 4,	  /* cudaDeviceSynchronize, cuCtxSynchronize */
	GPU_SYNC_NR
};

struct gpu_sync_row {
	uint32_t pid, tid; /* the waiting thread; 0, 0: syncs with no API call known */
	uint32_t comm;	   /* string id of its name (0: unknown) */
	uint64_t by_type[GPU_SYNC_NR];
	uint64_t count, total_ns, max_ns;
};

struct gpu_syncs {
	struct gpu_sync_row *rows; /* total_ns descending, then pid, tid */
	size_t nrows;
	uint64_t count, total_ns;
};

/* NULL + errno (ENOMEM). Empty for a recording without syncs. */
struct gpu_syncs *gpu_syncs__new(const struct recording *r);
void gpu_syncs__free(struct gpu_syncs *s);

/* The type's short name ("event", "stream-wait", "stream", "context", "other"). */
const char *gpu_syncs__type_name(uint32_t type);

#endif /* PERCH_MODEL_GPUSYNCS_H */
