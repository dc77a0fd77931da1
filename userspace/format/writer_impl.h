/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The writer's insides, shared by its files (format/ only): writer.c (the file, blocks,
 * strings, frames, lines, threads, META/STATS/END, REGIONS), writer_time.c (stacks, keys,
 * windows, the timeline, spans, modules: version 4's time axis), the blocks with files of their
 * own (origins.c, offcpu.c, offspans.c, sizes.c, metrics.c, steps.c: writer and parser side by
 * side), writer_blocks.c (the table of blocks) and writer_compact.c (rewriting a regular file into
 * its bounded form).
 */
#ifndef PERCH_FORMAT_WRITER_IMPL_H
#define PERCH_FORMAT_WRITER_IMPL_H

#include "codec.h"
#include "recording.h"
#include "lib/idxtab.h"
#include "lib/safeout.h"
#include "lib/u64map.h"

struct str_ref {
	size_t off; /* in rec_writer.names */
	size_t len;
};

/* A node of the stack tree (STACKS). */
struct wnode {
	uint32_t parent1; /* 0: a root; else parent + 1 */
	uint32_t frame;
};

/* A key (KEYS). */
struct wkey {
	uint32_t pid, tid, comm, flags;
	uint32_t stack1; /* 0: no frames; else node + 1 */
};

/* A window kept for compaction (merged as the budget asks). */
struct wwin {
	uint64_t start_ns, end_ns;
	uint32_t drains; /* rec_writer__window calls it holds */
	uint32_t n;
	struct rec_count *counts; /* keys (in .sample) ascending */
};

/* A TIMELINE or SPANS block in the file, copied as it is when the file is compacted. */
struct wextent {
	uint64_t off;
	uint32_t len; /* header included */
};

/* A region thread's latest REGIONS entry, encoded, for compaction. */
struct wrthread {
	uint64_t tid_key; /* pid << 32 | tid */
	struct buf bytes;
};

#define WR_STATES 32 /* above every enum rec_block_type */

struct rec_writer {
	int fd;
	int err; /* the first write error, returned by every call after it */
	uint64_t size;
	struct safeout out;   /* the file's name, and its temporary one until published */
	const char *path;     /* its name now (out's); NULL: a FIFO or device, streamed and never
			       * compacted */
	uint64_t compacted;   /* the file's size after the last compaction (0: none yet) */
	struct buf names;     /* the bytes of every string, back to back */
	struct str_ref *strs; /* by id; strs[0] is "" */
	size_t nstrs, cap_strs, strs_done;
	struct rec_frame *frames; /* by id */
	size_t nframes, cap_frames, frames_done;
	struct rec_thread *threads; /* every definition, in order */
	size_t nthreads, cap_threads, threads_done;
	struct buf lines; /* every LINES entry ever added, no header */
	uint32_t nlines, lines_done;
	size_t lines_done_off;
	struct buf block;  /* the block being built; reused */
	uint32_t *rframes; /* one sample's region and function frames; reused */
	size_t cap_rframes;
	struct idxtab str_tab, frame_tab;
	struct rec_kv *stats; /* every counter as the last STATS blocks wrote it (keys copied) */
	size_t nstats, cap_stats;
	struct buf meta; /* the META payload, for compaction */
	uint32_t nmeta;
	struct rec_kv *end; /* the END block (keys copied) */
	size_t nend;
	struct wrthread *rthreads;
	size_t nrthreads, cap_rthreads;
	struct u64map rthread_tab;

	/* The time axis (writer_time.c). */
	struct wnode *nodes;
	size_t nnodes, cap_nodes, nodes_done;
	struct u64map node_tab; /* parent1 << 32 | frame -> node */
	struct wkey *keys;
	size_t nkeys, cap_keys, keys_done;
	struct idxtab key_tab;
	uint64_t *pending; /* by key: counted since the last window */
	size_t cap_pending;
	uint32_t *touched; /* keys with a pending count */
	size_t ntouched, cap_touched;
	struct wwin *wins;
	size_t nwins, cap_wins;
	uint32_t budget;
	uint32_t per_win;	/* drains a full window holds: 2^merges */
	uint64_t last_end;	/* of the last window added */
	uint64_t file_last_end; /* of the file's last window: WINDOWS starts count from it */
	struct buf winbuf;	/* the pending WINDOWS block */
	uint32_t nwinbuf;
	struct buf events; /* the pending TIMELINE block */
	uint32_t nevents;
	uint64_t event_last;
	struct buf spans; /* the pending SPANS block */
	uint32_t nspans;
	uint64_t span_last;
	struct buf gpu; /* the pending GPU block */
	uint32_t ngpu;
	uint64_t gpu_last;
	struct wextent *extents; /* TIMELINE, SPANS and GPU blocks in the file */
	size_t nextents, cap_extents;
	uint64_t max_size, timeline_bytes, events_dropped, spans_dropped, gpu_dropped;
	struct rec_module *modules;
	size_t nmodules, cap_modules, modules_done;
	struct u64map module_tab;   /* path -> index */
	struct rec_origin *origins; /* ORIGINS (format/origins.c) */
	size_t norigins, cap_origins, origins_done;
	struct u64map origin_tab;   /* pid -> index */
	struct rec_cgroup *cgroups; /* CGROUPS (format/cgroups.c) */
	size_t ncgroups, cap_cgroups, cgroups_done;
	struct u64map cgroup_tab; /* pid -> index */
	struct buf metrics;	  /* the latest METRICS payload, after its count (metrics.c) */
	uint32_t nmetrics;
	bool has_metrics;
	struct buf steps; /* the latest STEPS payload, after its count (steps.c) */
	uint32_t nsteps;
	bool has_steps;
	struct wrthread *sthreads; /* SIZES (format/sizes.c): each thread's latest entry */
	size_t nsthreads, cap_sthreads;
	struct u64map sthread_tab;
	uint64_t refused; /* entries refused with -ERANGE: values the reader would refuse */
	/* By block type: the state of a block whose file keeps it to itself (NULL until it is
	 * first written; freed by its row of writer_blocks.c's table): OFFCPU, OFFSPANS. */
	void *state[WR_STATES];
};

typedef int (*put_fn)(struct rec_writer *w, size_t i);

/* A compaction's rewrite: the old file (timeline-like blocks are copied from it) and where each
 * of those lands in the new one (by extent). */
struct wr_rewrite {
	int from;
	uint64_t *off;
};

/*
 * A block of the file, one row of writer_blocks.c's table: flush writes what is new since the
 * last flush (NULL: written as it comes, or only by a compaction); rewrite writes all of it again
 * into a compacted file (NULL: flush does, from the watermark restart set back); restart sets its
 * watermark to a new file's start (in_file false) or to everything it holds (true: back to the
 * old file after a failed compaction); free frees what it keeps. Any may be NULL.
 */
struct wr_block {
	uint32_t type;
	int (*flush)(struct rec_writer *w);
	int (*rewrite)(struct rec_writer *w, const struct wr_rewrite *rw);
	void (*restart)(struct rec_writer *w, bool in_file);
	void (*free)(struct rec_writer *w);
};

/* writer_blocks.c: the walks of its table. */
int wr_blocks_flush(struct rec_writer *w);
int wr_blocks_rewrite(struct rec_writer *w, const struct wr_rewrite *rw);
void wr_blocks_restart(struct rec_writer *w, bool in_file);
void wr_blocks_free(struct rec_writer *w);

/* writer.c */
int wr_block_start(struct buf *b);
int wr_write_block(struct rec_writer *w, uint32_t type, struct buf *b, size_t n);
int wr_write_range(struct rec_writer *w, uint32_t type, size_t *done, size_t total, put_fn put);
int wr_write_all(int fd, const uint8_t *p, size_t len);
int wr_write_header(struct rec_writer *w);
int wr_write_kv(struct rec_writer *w, uint32_t type, const struct rec_kv *kv, size_t n,
		bool with_str);

/* writer_time.c */
/* A pending TIMELINE-like block b of n entries into the file (kept for compaction's copy). */
int wr_timeline_write(struct rec_writer *w, uint32_t type, struct buf *b, uint32_t *n);
/* A TIMELINE-like entry e (built with its delta) into the pending block b under the --max-size
 * cap the timeline's blocks share: -ENOSPC (and ++*dropped) past it. */
int wr_timeline_room(struct rec_writer *w, const struct buf *e, uint64_t *dropped);
int wr_timeline_add(struct rec_writer *w, struct buf *b, uint32_t *n, const struct buf *e);
int wr_time_ok(struct rec_writer *w, uint64_t t);
int wr_time_pending_window(struct rec_writer *w);
int wr_key_of(struct rec_writer *w, const struct rec_sample *s, uint32_t *key);
int wr_count(struct rec_writer *w, uint32_t key, uint64_t count);

/* writer_compact.c */
int wr_compact(struct rec_writer *w);
int wr_maybe_compact(struct rec_writer *w);

#endif /* PERCH_FORMAT_WRITER_IMPL_H */
