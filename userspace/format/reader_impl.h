/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The reader's insides, shared by its files (format/ only): reader.c (the file, blocks and the
 * definitions of every version) and reader_time.c (version 4's stacks, keys, windows, timeline,
 * spans and modules).
 */
#ifndef PERCH_FORMAT_READER_IMPL_H
#define PERCH_FORMAT_READER_IMPL_H

#include "codec.h"
#include "recording.h"
#include "lib/u64map.h"

struct arena_chunk;

/* A node of the stack tree (STACKS). */
struct lnode {
	uint32_t parent1; /* 0: a root; else parent + 1 */
	uint32_t frame;
	uint32_t depth; /* frames from the root, itself included */
};

/* A loaded recording and what only the loader needs; recording__free() gets back here. */
struct loaded {
	/* First member, so that a struct recording * is a struct loaded *. */
	struct recording r;
	struct arena_chunk *arena; /* every string, key and META value */
	uint32_t *pool;		   /* every sample's regions and frames, back to back */
	size_t npool, cap_pool;
	struct rec_line *lines; /* every frame's inline chain, back to back */
	size_t nlines, cap_lines;
	size_t *line_off; /* per frame: where its chain starts in lines (with rec_frame.nlines) */
	size_t cap_line_off;
	size_t cap_strings, cap_frames, cap_threads, cap_samples, cap_rthreads, cap_stats;
	size_t cap_region_names;
	struct u64map thread_tab;  /* pid << 32 | tid -> index in r.threads, while loading */
	struct u64map rthread_tab; /* pid << 32 | tid -> index in r.rthreads, while loading */

	/* Version 4 (reader_time.c). */
	struct lnode *nodes;
	size_t nnodes, cap_nodes;
	uint32_t *key_sample; /* key id -> index in r.samples */
	size_t nkeys, cap_keys;
	uint32_t *stack; /* one key's frames, root first; reused */
	size_t cap_stack;
	struct rec_count *counts; /* every window's counts, back to back */
	size_t ncounts, cap_counts;
	size_t *win_off; /* per window: where its counts start (pointers set by finish()) */
	size_t cap_win_off, cap_windows, cap_events, cap_spans, cap_modules;
	size_t cap_gpu, cap_gpu_notes, cap_origins, cap_gpu_calls, cap_offspans, cap_cgroups;
	struct u64map launch_tab; /* GPU LAUNCH: pid << 32 | correlation -> sample index + 1 */
	uint64_t last_end;	  /* of the last window */
	struct rec_metric_point *metric_points; /* every series' points (metrics.c) */
	struct rec_count *step_counts;		/* every step's counts (steps.c) */
	size_t cap_sthreads;
	struct u64map sthread_tab; /* pid << 32 | tid -> index in r.sthreads (sizes.c) */
};

/* What a block may have appended; a block that fails is cut back to it. */
struct mark {
	size_t nstrings, nframes, nsamples, npool, nregion_names;
	size_t nnodes, nkeys, nwindows, ncounts, nevents, nspans, nmodules, ngpu, ngpu_notes;
	size_t ngpu_calls;
};

/* reader.c: a stack of checked frame ids into the pool, as s's regions and frames. */
int place_stack(struct loaded *L, const uint32_t *ids, uint32_t n, struct rec_sample *s);

/* reader_time.c: the parsers of version 4's blocks, finish() and free's share. */
int parse_stacks(struct loaded *L, struct cur *c);
int parse_keys(struct loaded *L, struct cur *c);
int parse_windows(struct loaded *L, struct cur *c);
int parse_timeline(struct loaded *L, struct cur *c);
int parse_spans(struct loaded *L, struct cur *c);
int parse_modules(struct loaded *L, struct cur *c);
int parse_gpu(struct loaded *L, struct cur *c);
/* metrics.c */
int parse_metrics(struct loaded *L, struct cur *c);
/* origins.c */
int parse_origins(struct loaded *L, struct cur *c);
int parse_cgroups(struct loaded *L, struct cur *c);
/* offcpu.c */
int parse_offcpu(struct loaded *L, struct cur *c);
/* steps.c */
int parse_steps(struct loaded *L, struct cur *c);
/* sizes.c */
int parse_sizes(struct loaded *L, struct cur *c);
void sizes_free(struct loaded *L);
/* offspans.c: OFFSPANS, and their sort by start (from time_finish) */
int parse_offspans(struct loaded *L, struct cur *c);
void offspans_finish(struct loaded *L);
void time_finish(struct loaded *L);
void time_free(struct loaded *L);

#endif /* PERCH_FORMAT_READER_IMPL_H */
