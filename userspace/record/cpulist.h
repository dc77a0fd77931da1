/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perch record -C: a CPU list as perf and the kernel write them ("0,2-3"), against the CPUs the
 * machine can have.
 */
#ifndef PERCH_RECORD_CPULIST_H
#define PERCH_RECORD_CPULIST_H

#include <stdbool.h>

/* The number of possible CPUs (the sampler's per-CPU range), or -errno. */
int cpulist_ncpus(void);

/* Parse list into set[0 .. ncpus): true for each CPU named. 0, -EINVAL (malformed or empty),
 * -ERANGE (a CPU at or past ncpus). */
int cpulist_parse(const char *list, int ncpus, bool *set);

#endif /* PERCH_RECORD_CPULIST_H */
