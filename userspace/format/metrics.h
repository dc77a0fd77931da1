/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The system metrics a recording holds (METRICS, recording.h): one table of what each metric
 * id is, read by the sampler (record/metrics.c), the reader and every report, so a metric is
 * named and merged one way everywhere.
 */
#ifndef PERCH_FORMAT_METRICS_H
#define PERCH_FORMAT_METRICS_H

#include <stdint.h>
#include "recording.h"

/* What a metric's subject number is. */
enum rec_metric_subject {
	REC_MS_CPU = 0,	 /* a CPU number */
	REC_MS_PROC = 1, /* a target's pid */
	REC_MS_GPU = 2,	 /* an NVML device index */
};

/* What a point's value is, and so how two neighbouring points merge. */
enum rec_metric_merge {
	REC_MM_SUM = 0,	 /* an amount in the interval (CPU ns, faults, bytes): summed */
	REC_MM_MEAN = 1, /* a share over the interval, in 1/10000: averaged over time */
	REC_MM_MAX = 2,	 /* a level at the interval's end (bytes): the larger kept */
};

/* X(ENUM, id, name, subject, merge, unit): ids are the file's, never reused. */
#define REC_METRIC_LIST(X)                                                    \
	X(CPU_BUSY, 1, "cpu_busy", REC_MS_CPU, REC_MM_MEAN, "share")          \
	X(USER, 2, "cpu_user", REC_MS_PROC, REC_MM_SUM, "ns")                 \
	X(SYSTEM, 3, "cpu_system", REC_MS_PROC, REC_MM_SUM, "ns")             \
	X(RSS, 4, "rss", REC_MS_PROC, REC_MM_MAX, "bytes")                    \
	X(MINFLT, 5, "minor_faults", REC_MS_PROC, REC_MM_SUM, "count")        \
	X(MAJFLT, 6, "major_faults", REC_MS_PROC, REC_MM_SUM, "count")        \
	X(VCSW, 7, "voluntary_switches", REC_MS_PROC, REC_MM_SUM, "count")    \
	X(IVCSW, 8, "involuntary_switches", REC_MS_PROC, REC_MM_SUM, "count") \
	X(READ, 9, "read_bytes", REC_MS_PROC, REC_MM_SUM, "bytes")            \
	X(WRITE, 10, "write_bytes", REC_MS_PROC, REC_MM_SUM, "bytes")         \
	X(GPU_UTIL, 11, "gpu_util", REC_MS_GPU, REC_MM_MEAN, "share")         \
	X(GPU_MEM, 12, "gpu_memory_used", REC_MS_GPU, REC_MM_MAX, "bytes")

#define REC_METRIC_ENUM(e, id, name, subject, merge, unit) REC_METRIC_##e = id,
enum rec_metric_id { REC_METRIC_LIST(REC_METRIC_ENUM) REC_METRIC_MAX_ID };
#undef REC_METRIC_ENUM

/*
 * Not a measurement: in a merged recording (perch merge), a series with this metric id and no
 * points says that the series after it, up to the next such one, came from the input its subject
 * names (a string id: the input's label, as ORIGINS's). rec_metric_info() knows no such id, so a
 * perch that does not know it skips the marker as a metric from a later perch and shows the
 * series as before.
 */
#define REC_METRIC_ORIGIN 127 /* the list's ids stay below it */

/* A share of 1 (REC_MM_MEAN values). */
#define REC_METRIC_SHARE_ONE 10000

struct rec_metric_info {
	const char *name;
	const char *unit; /* "ns", "bytes", "count" or "share" (1/10000) */
	uint8_t subject;  /* enum rec_metric_subject */
	uint8_t merge;	  /* enum rec_metric_merge */
};

/* The metric id's entry; NULL for an id this perch does not know. */
const struct rec_metric_info *rec_metric_info(uint32_t id);

/* Two neighbouring points a (lasting da ns) and b (db ns) as one, as the metric merges. */
uint64_t rec_metric_merge(uint8_t merge, uint64_t a, uint64_t da, uint64_t b, uint64_t db);

/*
 * A series being recorded, bounded: at most budget points. Past it, neighbours merge pairwise
 * (rec_metric_merge) and a point holds twice the samples from then on, so a series covers any
 * run with budget / 2 to budget points (the law of the recording's windows). m.points is pts.
 */
struct rec_series {
	struct rec_metric m;
	struct rec_metric_point *pts;
	size_t cap;
	uint32_t per, fill; /* samples a point holds (2^merges), and the last point's */
	uint8_t merge;
};

/* metric: a known id. */
void rec_series__init(struct rec_series *s, uint32_t metric, uint32_t subject);
/* A sample: the value v over [start, end) (start counts for the first point only: each point
 * begins where the one before ended). 0 or -ENOMEM (the sample is lost). */
int rec_series__add(struct rec_series *s, uint64_t start, uint64_t end, uint64_t v,
		    uint32_t budget);
void rec_series__free(struct rec_series *s);

#endif /* PERCH_FORMAT_METRICS_H */
