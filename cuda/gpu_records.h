/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CUPTI activity records turned into perch's channel records (cuda/perch_cuda.h), the clock they
 * are converted on, kernel names interned, and the channel stream read back. Pure: it reads
 * CUPTI's record structs (their headers) but calls nothing in libcupti, so perch and the unit
 * tests use it where no GPU and no driver exist; the injection library uses it inside the
 * user's program.
 */
#ifndef PERCH_GPU_RECORDS_H
#define PERCH_GPU_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "perch_cuda.h"

/* How CUPTI's times become CLOCK_MONOTONIC: unchanged (our timestamp callback is CUPTI's clock),
 * or CUPTI's CLOCK_REALTIME minus offset_ns (realtime - monotonic, measured). */
struct gpu_clock {
	uint32_t mode; /* enum perch_cuda_clock */
	int64_t offset_ns;
};

/* One reading of both clocks, the realtime one between two monotonic ones. */
typedef void gpu_clock_read_fn(void *ctx, uint64_t *mono1, uint64_t *real, uint64_t *mono2);

/* realtime - monotonic from the tightest of tries readings (the one whose monotonic bracket is
 * shortest: the realtime read sits in it to within its width). */
int64_t gpu_clock_measure(gpu_clock_read_fn *read, void *ctx, int tries);
/* The system clocks (clock_gettime), for gpu_clock_measure. */
void gpu_clock_read_system(void *ctx, uint64_t *mono1, uint64_t *real, uint64_t *mono2);
/* A CUPTI time on CLOCK_MONOTONIC; 0 (CUPTI's "unknown") stays 0, a time before the epoch too. */
uint64_t gpu_clock_to_mono(const struct gpu_clock *c, uint64_t t);

/* Kernel names by CUPTI's pointer (shared by all records of a kernel), each given an id once. */
struct gpu_names;
struct gpu_names *gpu_names__new(void);
void gpu_names__free(struct gpu_names *n);
/* The id of name (from 1); *is_new when this call gave it. 0 and errno on failure. */
uint32_t gpu_names__intern(struct gpu_names *n, const char *name, bool *is_new);

/* Decode one CUPTI activity record (a CUpti_Activity * from cuptiActivityGetNextRecord) into
 * *out, times converted by c; *name is the kernel's name (borrowed from CUPTI: valid while its
 * module is loaded) or NULL. 1: decoded; 0: a kind perch does not keep. */
int gpu_decode(const void *cupti_record, const struct gpu_clock *c, uint32_t pid,
	       struct perch_cuda_rec *out, const char **name);

/* Whether a runtime (else driver) API callback id launches work: a kernel or a graph. */
bool gpu_is_launch_cbid(bool runtime, uint32_t cbid);
/* The launch callback ids of a domain, for cuptiEnableCallback: *n of them. */
const uint32_t *gpu_launch_cbids(bool runtime, size_t *n);

/* The next record of a channel stream buf[0..len) at *off: its header copied to *rec, its name
 * (not NUL-terminated, rec->name_len bytes) in *name; *off steps past it. 1: a record; 0: the
 * end (or a partial record: more bytes to come); -EINVAL: a damaged stream. */
int gpu_stream_next(const void *buf, size_t len, size_t *off, struct perch_cuda_rec *rec,
		    const char **name);

#endif /* PERCH_GPU_RECORDS_H */
