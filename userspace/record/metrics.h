/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * System metrics of a recording (--metrics): every interval, each CPU's busy share
 * (/proc/stat), and for every live target process its user and system CPU time, faults
 * (/proc/PID/stat), RSS (statm), context switches (its threads' status) and the bytes it read
 * and wrote (io: rchar, wchar); GPU utilization and memory through NVML where a driver is
 * (nvml.c). Series on CLOCK_MONOTONIC, bounded as the windows are, written as METRICS blocks
 * (format/recording.h). A listener of the process table (procs.h).
 */
#ifndef PERCH_RECORD_METRICS_H
#define PERCH_RECORD_METRICS_H

#include <stdint.h>

struct metrics;
struct procs;
struct rec_writer;

/* Sample every interval_ms (>= the drain period; a drain takes the sample when it is due).
 * NULL + errno. */
struct metrics *metrics__new(struct rec_writer *w, struct procs *ps, unsigned int interval_ms);
/* System-wide (-a: hundreds of processes, most of them idle): a process is read only when it had
 * a tick since its last sample (metrics__sampled(), for each drained sample), else every 10 s:
 * reading every process's stat, statm, io and each thread's status every 100 ms cost perch
 * record -a twice perf record -a -g's whole CPU time. */
void metrics__busy_only(struct metrics *m);
void metrics__sampled(struct metrics *m, uint32_t pid);
/* At each drain: a sample when one is due; the series written every second or 1/16 of the run. */
void metrics__drained(struct metrics *m);
/* The last, partial interval, and the series written. */
void metrics__finish(struct metrics *m);
/* Samples taken, and the CPU time (ns) perch spent taking them. */
uint64_t metrics__samples(const struct metrics *m);
uint64_t metrics__cost_ns(const struct metrics *m);
void metrics__free(struct metrics *m);

#endif /* PERCH_RECORD_METRICS_H */
