/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch merge`: several loaded recordings (any version) written as one version 4 recording
 * through the writer, every count, window, timeline tick, region table, span, GPU entry, metric
 * series and off-CPU span of each kept, and each process's origin (recording.h, ORIGINS).
 *
 *   - pids: a process keeps its pid unless an earlier input had it; then it gets the first
 *     unused pid from 4194304 on (above the kernel's pid_max). Threads keep their tids.
 *   - counts: each input's windows in one time line: windows are sorted by start and those
 *     that overlap become one (counts summed, exact), so a merged file's windows never overlap;
 *     past the writer's budget neighbours merge as in a recording. Inputs of another host keep
 *     their CLOCK_MONOTONIC times (not comparable between hosts; the counts are). Counts of
 *     version 1 to 3 inputs (no windows) go to the untimed window.
 *   - metrics (METRICS): each input's series kept whole, labelled by origin, not merged on a
 *     common clock: in input order, each input's after a marker series (REC_METRIC_ORIGIN,
 *     format/metrics.h) naming its label, process series under the process's pid in the output
 *     (so ORIGINS labels them too); the points are the input's, so every series' min, mean and
 *     max in the merged file are the input's. Two hosts' cpu0 stay two series. The interval is
 *     the first input's that has metrics; the notes are joined, each after its input's label.
 *   - off-CPU spans (OFFSPANS): each input's, on its keys.
 *   - STATS: each key summed over the inputs (inputs that lack a key add 0); META: the first
 *     input's (the frequency must be the same in all: checked by the caller); END: duration_ns
 *     the longest, drains summed, exit_status the first nonzero.
 */
#ifndef PERCH_FORMAT_MERGE_H
#define PERCH_FORMAT_MERGE_H

#include <stddef.h>
#include "recording.h"

struct rec_merge_input {
	const struct recording *r;
	const char *label; /* its origin (ORIGINS) */
};

/* 0, or -errno: a writer's error (opening or writing out) or -ENOMEM. */
int rec_merge(const struct rec_merge_input *in, size_t n, const char *out);

#endif /* PERCH_FORMAT_MERGE_H */
