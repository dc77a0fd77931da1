/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampler, userspace side: loads the BPF program (bpf/sample.bpf.c) sized to the machine and
 * attaches it to one perf_event per CPU; owns its target map; turns its ring buffer of process
 * events and the mmap watch (mmapwatch.h) into events of the process table (procs.h); drains the
 * kernel's double-buffered counts and stacks; reads its counters and its own cost.
 */
#ifndef PERCH_SAMPLER_H
#define PERCH_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#include "bpf/perch_bpf.h"
#include "record/procs.h"
#include "record/raw_sample.h"
#include "record/record_opts.h"

/* Drains come every SAMPLER_DRAIN_MS; the buffers are sized for it. */
#define SAMPLER_DRAIN_MS 100

struct sampler;
struct kdyn;

/* The sampler's maps the record-time parts keep in step (borrowed: valid until sampler__free). */
struct sampler_fds {
	int unwind_rows, proc_unwind;	 /* the unwinder's */
	int early_until;		 /* the unwinder's too: it holds a window open */
	int region_procs, region_stacks; /* regions' */
	int py_procs;			 /* CPython's (record/python/) */
};

/* Load and attach the sampler for o->freq and o->unwind; its process events go to ps (borrowed,
 * freed after the sampler), and it listens to ps to drop exited targets from its map. Returns 0
 * with *out set, or the enum perch_exit to end with (its line logged). */
int sampler__open(const struct record_opts *o, struct procs *ps, struct sampler **out);
void sampler__free(struct sampler *sp);

/* Where the kernel's BTF is, which the sampler is loaded against (PERCH_SYSFS_BTF: for tests). */
const char *sampler_kernel_btf(void);

/* Sample pid and follow its children from now on. launched: the command perch started, whose
 * first ticks after its exec should unwind as completely as the rest (see sampler__wait_ms()).
 * 0 or PERCH_EXIT_BPF (logged). */
int sampler__add_target(struct sampler *sp, pid_t pid, bool launched);

/* The kernel symbols registered and unregistered while it runs (BPF programs, from the mmap
 * watch's records), each looked up in the window of the buffer being drained; NULL without
 * them. Borrowed: valid until sampler__free. */
const struct kdyn *sampler__kernel_syms(const struct sampler *sp);

/* Read the process events waiting (the ring buffer, then the mmap records), waiting at most
 * timeout_ms for the first. */
void sampler__read_events(struct sampler *sp, int timeout_ms);
/* How long the run may wait for events now, at most wait_ms: less for a while after an exec, so
 * that the unwind tables follow the new image's mappings (right after the launched command's
 * exec it naps 100 us here and returns 0). */
int sampler__wait_ms(struct sampler *sp, int wait_ms);

/* One counted bucket, as a neutral sample (record/raw_sample.h). Returns the key id the recording
 * gave it (rec_writer__key), SAMPLER_NO_KEY when none: --timeline's ticks name it. */
typedef uint32_t (*sampler_sample_fn)(void *ctx, const struct raw_sample *s);
#define SAMPLER_NO_KEY UINT32_MAX
/* Switch the sampler to the other buffer, and hand every bucket of the one it filled to fn; with
 * --timeline, then every tick of those buckets to the tick function, in time order. Returns when
 * it switched (CLOCK_MONOTONIC ns): every tick of the buckets was taken before. */
uint64_t sampler__drain(struct sampler *sp, sampler_sample_fn fn, void *ctx);

/* --timeline: one exact tick, at time_ns (CLOCK_MONOTONIC), of the bucket with key id key. */
typedef void (*sampler_tick_fn)(void *ctx, uint64_t time_ns, uint32_t key);
void sampler__on_tick(struct sampler *sp, sampler_tick_fn fn, void *ctx);
/* At the end: the ticks held back for time order (a later drain could have had earlier ones). */
void sampler__flush_ticks(struct sampler *sp);
/* Ticks whose bucket had no key id (the collector could not make one). */
uint64_t sampler__ticks_unkeyed(const struct sampler *sp);

/* --gpu: probe perch_cuda_launch() in library (the injection library perch hands the command);
 * each hit of a target thread goes to fn at the drain of its buffer, with the key id of its
 * stack (SAMPLER_NO_KEY: none could be made). 0 or the enum perch_exit to end with (logged). */
typedef void (*sampler_launch_fn)(void *ctx, const struct perch_launch *l, uint32_t key);
int sampler__probe_launches(struct sampler *sp, const char *library, sampler_launch_fn fn,
			    void *ctx);
/* Launch hits whose stack got no key id. */
uint64_t sampler__launches_unkeyed(const struct sampler *sp);

/* --gpu -p PID (attach mode): libcuda's entry points (struct perch_gpu_call). Each hit of a
 * target thread goes to fn at the drain of its buffer with the key id of its stack
 * (SAMPLER_NO_KEY: none could be made); each name lookup's return to name_fn, at the next
 * sampler__poll_gpu_calls() or drain, before the hits of that drain. 0 or PERCH_EXIT_BPF /
 * PERCH_EXIT_INTERNAL (logged). sampler__poll_gpu_calls() reads both rings without waiting
 * (the hits are held for their drain), so that they do not fill between drains. */
typedef void (*sampler_gpu_call_fn)(void *ctx, const struct perch_gpu_call *c, uint32_t key);
typedef void (*sampler_gpu_name_fn)(void *ctx, const struct perch_gpu_name *n);
int sampler__gpu_calls(struct sampler *sp, sampler_gpu_call_fn fn, sampler_gpu_name_fn name_fn,
		       void *ctx);
/* A uprobe of pid only, in the file at path, at file offset off: an entry point (namer false;
 * cookie: its index in REC_GPU_ENTRIES) or a name lookup, at entry and return (namer true;
 * cookie: enum perch_gpu_namer). 0 or -errno (not logged: the caller says which symbol). */
int sampler__probe_gpu(struct sampler *sp, pid_t pid, const char *path, uint64_t off, bool namer,
		       uint32_t cookie);
void sampler__poll_gpu_calls(struct sampler *sp);
/* Entry point hits whose stack got no key id. */
uint64_t sampler__gpu_calls_unkeyed(const struct sampler *sp);

/* Early stacks (struct perch_early, sampler_early.c): ticks taken right after an exec, before
 * their process's unwind tables were listed, walked by the loader once they were. */
enum sampler_early_stat {
	SAMPLER_EARLY_RESCUED = 0, /* walked to their outermost frame: whole stacks */
	SAMPLER_EARLY_SHORT,	   /* walked only part of the way: flagged as stopped early */
	SAMPLER_EARLY_FP,   /* no tables came for its image (it exec'd again or exited first, or
			   * 2 s passed): walked by frame pointers, as the kernel would have */
	SAMPLER_EARLY_LOST, /* not kept (out of memory, or a record cut short) */
	/* --off-cpu switch-outs in the window (PERCH_KEY_EARLY), as the three ticks' above */
	SAMPLER_EARLY_OFFCPU,
	SAMPLER_EARLY_OFFCPU_SHORT,
	SAMPLER_EARLY_OFFCPU_FP,
	SAMPLER_EARLY_MAX,
};
uint64_t sampler__early_stat(const struct sampler *sp, enum sampler_early_stat which);
/* The recording ends: the drains from now on hand on every early tick still waiting. */
void sampler__ending(struct sampler *sp);

/* The targets started (the command forked and released): the sampler may read on a thread of
 * its own from now on (the early stacks' ring, sampler_early.c). */
void sampler__targets_started(struct sampler *sp);
/* Pause or resume every tick (the BPF program's perch_paused flag): paused, a tick returns
 * before it looks at anything. */
void sampler__pause(struct sampler *sp, bool paused);

/* The BPF counters (enum perch_stat) summed over CPUs; ok[i] is false for one not read. */
void sampler__stats(const struct sampler *sp, uint64_t totals[PERCH_STAT_MAX],
		    bool ok[PERCH_STAT_MAX]);
/* The sampler's own cost, as the kernel measures it (kernel.bpf_stats_enabled=1; else 0). */
void sampler__cost(const struct sampler *sp, uint64_t *run_ns, uint64_t *runs, uint64_t *tick_ns,
		   uint64_t *ticks);
/* The events sampled, comma-separated ("cycles" or "cpu-clock" when none was asked for). */
const char *sampler__event_name(const struct sampler *sp);
/* Per event, its period (0: at -F Hz), comma-separated into buf; "" when every event is sampled
 * at -F Hz (META period). */
void sampler__periods(const struct sampler *sp, char *buf, size_t len);
uint32_t sampler__unwind_mode(const struct sampler *sp); /* enum perch_unwind_mode */
const struct sampler_fds *sampler__fds(const struct sampler *sp);

#endif /* PERCH_SAMPLER_H */
