/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * NVML, loaded at run time (dlopen("libnvidia-ml.so.1")): GPU utilization and memory for the
 * system metrics (metrics.c). perch neither links nor needs it: without a GPU driver it is
 * absent, and the caller records why in one note.
 */
#ifndef PERCH_RECORD_NVML_H
#define PERCH_RECORD_NVML_H

#include <stddef.h>
#include <stdint.h>

struct nvml;

/* NULL when NVML is absent or does not start; why (len bytes) then says so ("no NVML: ..."). */
struct nvml *nvml__open(char *why, size_t len);
void nvml__close(struct nvml *n);
unsigned int nvml__devices(const struct nvml *n);
/* Device i's utilization (percent of the last sample period NVML keeps) and memory in use.
 * 0 or -EIO. */
int nvml__read(const struct nvml *n, unsigned int i, unsigned int *util_pct, uint64_t *mem_used);

#endif /* PERCH_RECORD_NVML_H */
