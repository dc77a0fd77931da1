/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Watches executable mmaps, execs and kernel symbols system-wide through one dummy perf event per
 * CPU (PERF_RECORD_MMAP2, PERF_RECORD_COMM with COMM_EXEC, PERF_RECORD_KSYMBOL), so the mappings of a process that
 * lives only milliseconds are known even when /proc/PID/maps is gone before anyone reads it, and a
 * BPF program unloaded within milliseconds is named though /proc/kallsyms no longer lists it.
 */
#ifndef PERCH_MMAPWATCH_H
#define PERCH_MMAPWATCH_H

#include <stdbool.h>
#include <stdint.h>

struct mmap_watch;

struct mmap_watch_event {
	enum { MW_MMAP, MW_EXEC, MW_KSYMBOL } type;
	uint32_t pid, tid;
	uint64_t time_ns; /* perf clock (CLOCK_MONOTONIC by default on x86) */
	/* MW_MMAP */
	uint64_t start, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	/* MW_KSYMBOL: [start, start + len) registered (or, ksym_gone, unregistered); path: its
	 * name; pid/tid: the thread that did it */
	bool ksym_bpf; /* PERF_RECORD_KSYMBOL_TYPE_BPF */
	bool ksym_gone;
	const char *path; /* valid during the callback */
};

/* Called for every event of every process on the system; the callee filters. */
typedef void (*mmap_watch_fn)(void *ctx, const struct mmap_watch_event *e);

/* One event per CPU 0..ncpus-1 (offline CPUs skipped). NULL + errno. */
struct mmap_watch *mmap_watch__new(int ncpus, mmap_watch_fn fn, void *ctx);
void mmap_watch__free(struct mmap_watch *w);

/* Read every pending record of every CPU and deliver them in time order. Returns the number of
 * events delivered. */
int mmap_watch__read(struct mmap_watch *w);

/* Records the kernel dropped because a ring was full. */
uint64_t mmap_watch__lost(const struct mmap_watch *w);

#endif /* PERCH_MMAPWATCH_H */
