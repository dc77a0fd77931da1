/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a recording says about itself: its META block (how it was taken), its STATS blocks (what
 * each part of the run counted, and perch's own cost) and its END block, under the keys of
 * format/keys.h.
 */
#ifndef PERCH_STATS_H
#define PERCH_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "format/recording.h"
#include "run.h"

int stats__meta(const struct record_run *r);
/* Every counter; with cost, perch's own cost too (the BPF programs' run time, perch's rusage). */
void stats__write(const struct record_run *r, bool cost);
/* The END block; extra: more END keys (control__end()'s, at most CONTROL_END_KV). */
int stats__end(struct rec_writer *w, uint64_t duration_ns, int status, uint64_t drains,
	       const struct rec_kv *extra, size_t nextra);

#endif /* PERCH_STATS_H */
