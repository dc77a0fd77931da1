/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to record/sampler*: the sampler as its parts see it. sampler.c owns the BPF object,
 * its perf events, its target map and its counters; sampler_events.c turns its ring buffer and
 * the mmap watch into events of the process table and paces the waits for them; sampler_drain.c
 * drains the double-buffered counts and stacks; its parts (struct sampler_part, the table in
 * sampler_parts.c) follow each drain: sampler_timeline.c gives each tick of --timeline the key
 * id of the bucket it was counted in, sampler_launch.c each CUDA launch's stack (--gpu) its key
 * id, sampler_offcpu.c each blocked time (--off-cpu), sampler_early.c hands on the early stacks.
 */
#ifndef PERCH_RECORD_SAMPLER_IMPL_H
#define PERCH_RECORD_SAMPLER_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "format/events.h"
#include "lib/u64map.h"
#include "sample.skel.h"
#include "sampler.h"

#define SAMPLER_PARTS_MAX 8 /* rows of sampler_parts.c's table, at most */

struct sampler {
	unsigned int freq;
	struct procs *procs; /* borrowed: where the process events go */
	struct sample_bpf *skel;
	struct bpf_link **tick_links;
	int *perf_fds;
	int ncpus;
	/* sampler_ticks.c: the events (-e), each one's period (0: at freq Hz), the CPUs (-C,
	 * NULL: all), one perf event and link per event and CPU (event * ncpus + cpu) */
	const struct rec_event_def *events[REC_EVENTS_MAX];
	uint64_t periods[REC_EVENTS_MAX];
	size_t nevents, nticks;
	bool all_cpus;	    /* -a: room for every module's unwind rows */
	bool default_event; /* none asked for: cycles, else cpu-clock (decided at the first open) */
	bool *cpus;
	char event_names[REC_EVENTS_MAX * 24];
	uint32_t unwind_mode; /* enum perch_unwind_mode the sampler runs with */
	bool timeline;	      /* --timeline */
	bool gpu_calls;	      /* --gpu -p: libcuda's probes (sampler_gpucall.c) */
	bool gpu_launches;    /* --gpu with a command: the launch probe (sampler_launch.c) */
	struct sampler_fds fds;
	struct ring_buffer *rb;
	struct mmap_watch *mw;
	struct kdyn *kdyn;  /* the mmap watch's kernel symbols that come and go (BPF programs) */
	uint64_t last_flip; /* CLOCK_MONOTONIC ns: the drained buffer's ticks are from then on */
	pid_t launched;	    /* the command perch launched, or 0 */
	uint64_t fast_poll_until, spin_until;
	bool spun;
	uint64_t *stack_buf; /* one bucket's user and kernel stacks */
	struct perch_key *keys;
	uint64_t *vals;
	uint32_t *key_ids; /* per bucket: its key id in the recording (--timeline) */
	uint64_t *dkeys;   /* one period's dwarf stacks: hashes, stacks, hash -> index */
	struct perch_ustack *dvals;
	struct u64map dindex;
	uint64_t *pkeys; /* one period's Python stacks, as the dwarf stacks */
	struct perch_pystack *pvals;
	struct u64map pindex;
	struct raw_pyframe *pyframes; /* one bucket's Python frames */
	struct u64map kindex;	      /* one drain's buckets: key hash -> index (ticks, launches) */
	bool kindexed; /* kindex is this drain's (made at the first sampler_key_id()) */
	const struct record_opts *o;	     /* borrowed: what the parts were asked for */
	bool gate_steps;		     /* --steps: the BPF program's gate_steps */
	bool only_region;		     /* --only-region: its only_region */
	void *part_state[SAMPLER_PARTS_MAX]; /* a part's own (sampler_part_state()), or NULL */
	/* sampler_early.c: the early stacks' ring, its reader thread, the ticks waiting for their
	 * walk or drain */
	struct ring_buffer *early_rb;
	struct early_reader *early_reader;
	struct early_tick **early;
	size_t nearly, early_cap;
	uint64_t early_stats[SAMPLER_EARLY_MAX];
	bool ending;
};

/* sampler_ticks.c: the events and CPUs of o (0 or PERCH_EXIT_USAGE, logged), before loading;
 * their perf events with the tick program attached (0 or the enum perch_exit, logged); freed. */
int sampler_ticks_setup(struct sampler *sp, const struct record_opts *o);
int sampler_attach_ticks(struct sampler *sp);
void sampler_ticks_free(struct sampler *sp);

/* sampler_events.c: listen to the process table (a target that exited leaves the target map);
 * start reading the process events (0, or the enum perch_exit to end with, logged). */
int sampler_listen(struct sampler *sp);
int sampler_open_events(struct sampler *sp);

/* sampler_drain.c: the buffers a drain reads into (0 or PERCH_EXIT_INTERNAL), freed by
 * sampler_drain_free(). */
int sampler_drain_alloc(struct sampler *sp);
void sampler_drain_free(struct sampler *sp);

/* One drain of buffer `which`: its n buckets were counted under key_ids[i] (sampler_key_id());
 * fn and ctx take what a part hands on as samples of its own (early stacks); last: the recording
 * ends, nothing may wait for a later drain. */
struct sampler_drain {
	unsigned int which;
	size_t n;
	const uint32_t *key_ids;
	sampler_sample_fn fn;
	void *ctx;
	bool last;
	uint64_t flip; /* CLOCK_MONOTONIC: every process event and mmap record of a tick taken
			* before it has been read */
};

/*
 * A part of the sampler, one row of sampler_parts.c's table, walked in its order: setup before
 * the BPF object loads (its programs and maps on or off, sized), open once it is loaded and
 * attached (0 or the enum perch_exit to end with, logged), drained after each drain's buckets
 * went to the caller, free at the end. Any may be NULL. A new part is its own file and a row.
 */
struct sampler_part {
	const char *name;
	void (*setup)(struct sampler *sp);
	int (*open)(struct sampler *sp);
	void (*drained)(struct sampler *sp, const struct sampler_drain *d);
	void (*free)(struct sampler *sp);
};

/* sampler_parts.c: the state a part keeps to itself (NULL until it sets it), by its row. */
void *sampler_part_state(const struct sampler *sp, const struct sampler_part *part);
void sampler_part_set_state(struct sampler *sp, const struct sampler_part *part, void *state);
/* The walks of its table. */
void sampler_parts_setup(struct sampler *sp);
int sampler_parts_open(struct sampler *sp);
void sampler_parts_drained(struct sampler *sp, const struct sampler_drain *d);
void sampler_parts_free(struct sampler *sp);

/* sampler_drain.c: the key id the drain just gave the bucket of key (n buckets, key_ids[i]
 * each); SAMPLER_NO_KEY when it has none. */
uint32_t sampler_key_id(struct sampler *sp, const struct perch_key *key, size_t n,
			const uint32_t *key_ids);

/* sampler_timeline.c: an early stack's tick (sampler_early.c), counted under key id key at this
 * drain, before the timeline's part is drained; nothing without --timeline. */
void sampler_timeline_late(struct sampler *sp, uint64_t time_ns, uint32_t key);

/* sampler_events.c: the process events and mmap records so far into the process table, as
 * sampler__read_events reads them (no wait, no early ticks). */
void sampler_events_catch_up(struct sampler *sp);

/* sampler_early.c: read the early stacks' ring and walk what waits (at every read of the
 * events). The time of the oldest early tick still waiting for its walk (UINT64_MAX: none):
 * --timeline holds every later tick back until it is handed on. */
void sampler_early_read(struct sampler *sp);
uint64_t sampler_early_oldest(const struct sampler *sp);

/* sampler_offcpu.c: the early switch-out key (PERCH_KEY_EARLY, its bytes as the BPF program
 * keeps its blocks by) named key id `id` by sampler_early.c once its stack was walked. */
void sampler_offcpu_early_named(struct sampler *sp, const struct perch_key *key, uint32_t id);

/* sampler_drain.c: the neutral sample of key's bucket of count ticks; stacks leaf first,
 * zero-terminated, NULL when missing (their storage is borrowed by *out). */
void sampler_raw_sample(const struct perch_key *key, uint64_t count, const uint64_t *ustack,
			const uint64_t *kstack, struct raw_sample *out);
/* The same with the key's Python frames (from this drain's Python stacks; none when gone). */
void sampler_raw_sample_py(struct sampler *sp, const struct perch_key *key, uint64_t count,
			   const uint64_t *ustack, const uint64_t *kstack, struct raw_sample *out);

#endif /* PERCH_RECORD_SAMPLER_IMPL_H */
