/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a recording says about itself: its META block (how it was taken), its STATS blocks (what
 * each part counted: the sampler, collector, unwinder, regions, and perch's own cost) and its END
 * block, under the keys of format/keys.h.
 */
#ifndef PERCH_STATS_H
#define PERCH_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "collect.h"
#include "format/recording.h"
#include "gpu.h"
#include "gpu_attach.h"
#include "metrics.h"
#include "record.h"
#include "regions.h"
#include "sampler.h"
#include "targets.h"
#include "unwinder.h"

/* The parts of a recording run, borrowed; uw is NULL when the sampler does not unwind. */
struct stats_parts {
	const struct record_opts *o;
	const struct sampler *sp;
	const struct targets *tg;
	const struct collector *col;
	const struct unwinder *uw;
	const struct regions *rg;
	unsigned int max_stack;
	const struct gpu *gpu;	     /* NULL without --gpu */
	const struct gpu_attach *ga; /* --gpu -p, else NULL */
	const struct metrics *mt;    /* --metrics, else NULL */
	const struct steps *steps;   /* the programs' steps and pauses */
};

int stats__meta(struct rec_writer *w, const struct stats_parts *p);
/* Every counter; with cost, perch's own cost too (the BPF programs' run time, perch's rusage). */
void stats__write(struct rec_writer *w, const struct stats_parts *p, bool cost);
/* The END block; extra: more END keys (control__end()'s, at most CONTROL_END_KV). */
int stats__end(struct rec_writer *w, uint64_t duration_ns, int status, uint64_t drains,
	       const struct rec_kv *extra, size_t nextra);

#endif /* PERCH_STATS_H */
