/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to the recording run (record.c, run_parts.c, stats.c and the parts' own files): the
 * run as its parts see it, and the table of its parts (struct record_part). A record-time part is
 * its own files and one row of run_parts.c's table.
 */
#ifndef PERCH_RECORD_RUN_H
#define PERCH_RECORD_RUN_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/perch_bpf.h"
#include "format/recording.h"
#include "record_opts.h"

struct procs;
struct sampler;
struct targets;
struct unwinder;
struct collector;
struct regions;
struct gpu;
struct gpu_attach;
struct metrics;
struct control;
struct steps;

struct record_run {
	const struct record_opts *o;
	struct procs *procs; /* the targets' processes; the parts below listen to it */
	struct sampler *sp;
	struct targets *tg;
	struct unwinder *uw; /* NULL when the sampler does not unwind (--unwind=fp) */
	struct collector *col;
	struct python *py; /* the interpreters in the targets (record/python/) */
	struct regions *rg;
	struct gpu *gpu;       /* --gpu */
	struct gpu_attach *ga; /* --gpu -p */
	struct metrics *mt;    /* --metrics (NULL: off) */
	struct control *ctl;   /* when sampling is on (--delay, pauses, caps) */
	struct steps *steps;   /* the programs' steps and pauses (perch_step(), --steps) */
	struct rec_writer *w;
	uint32_t rnames[PERCH_REGION_DEPTH]; /* one sample's region stack (string ids) */
	uint64_t start_ns;
	uint64_t flip_ns; /* the last drain's flip: where the next window starts */
	uint64_t drains;
	unsigned int max_stack;
	bool duration_stop; /* -d ran out: a launched command was sent SIGTERM */
	int stop_signal;    /* o->on_drain (perch top) asked to stop as if sent it (0: no) */
	uint64_t swept_ns;  /* o->forget_exited: the last sweep of the process table */
	uint64_t forgotten; /* processes forgotten so far */
};

/* What a part's STATS entries are made of: the BPF counters (enum perch_stat, summed over CPUs;
 * ok[i] false for one not read), and whether perch's own cost is written this time. */
struct run_counters {
	uint64_t totals[PERCH_STAT_MAX];
	bool ok[PERCH_STAT_MAX];
	bool cost;
};

/*
 * A part of the recording run, one row of run_parts.c's table. open (once the sampler is open;
 * 0 or the enum perch_exit to end with, logged), drained (after each drain's buckets went to the
 * collector; flip: when it switched buffers), finish (after the last drain) and stats (its STATS
 * entries into kv, their number) walk the table in its order, free in the reverse order. Any may
 * be NULL.
 */
struct record_part {
	const char *name;
	int (*open)(struct record_run *r);
	void (*drained)(struct record_run *r, uint64_t flip);
	void (*finish)(struct record_run *r);
	void (*free)(struct record_run *r);
	size_t (*stats)(const struct record_run *r, const struct run_counters *c,
			struct rec_kv *kv);
};

/* run_parts.c: the walks of its table. */
int run_parts_open(struct record_run *r);
void run_parts_drained(struct record_run *r, uint64_t flip);
void run_parts_finish(struct record_run *r);
void run_parts_free(struct record_run *r);
/* Every part's STATS entries into kv (room for REC_STAT_NR), their number. */
size_t run_parts_stats(const struct record_run *r, const struct run_counters *c, struct rec_kv *kv);

/* A STATS entry. */
struct rec_kv run_stat_kv(enum rec_stat key, uint64_t value);

#endif /* PERCH_RECORD_RUN_H */
