// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's early stacks (see struct perch_early, sampler_impl.h): ticks a process took in
 * the first moments after its exec, before the unwinder (unwinder.h) had listed its modules'
 * tables, come with a copy of their user stack. Each is walked (early_walk.h) with the rows the
 * kernel's walk uses (the same unwind_rows and proc_unwind maps) as soon as the tables are listed
 * and the process table has seen its exec, and handed on at the next drain with its whole stack.
 * One whose image never gets its tables listed (its process exec'd again or exited first) is
 * walked by frame pointers, as the kernel would have; one whose walk stops short (the copy ends
 * too soon, no CFI) is handed on with what was walked, flagged as stopped early. None is dropped.
 * With --timeline each one's tick joins the timeline at its own time (sampler_timeline.c holds
 * later ticks back while an earlier early tick waits). An --off-cpu switch-out in the window
 * (PERCH_KEY_EARLY) comes the same way; handed on, it is a key with no count that names the
 * block's key for sampler_offcpu.c.
 *
 * The ring is read by a thread of its own once the targets started (after the launch's fork,
 * which is done from perch's only thread), into a list the loop takes at each read: the loop builds a
 * module's table in one go (hundreds of milliseconds for a 30 MB binary, seconds on a loaded
 * machine), and the ticks of that time would fill the ring (4 MiB, about 600 copies of a small
 * stack) while nothing read it. What is held is bounded (EARLY_HELD_MAX; beyond it a copy is
 * counted lost). Everything else stays on the loop's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "record/early_walk.h"
#include "sampler_impl.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

/* Bytes of copies held (read, not yet handed on) at most: 64 MiB, 10,000 copies of 6 KiB. */
#define EARLY_HELD_MAX (64ull << 20)
/* How long the reader waits for the ring at a time: how soon it sees it is to stop. */
#define EARLY_READER_WAIT_MS 50

/* The ring's reader thread and what it read for the loop to take (under lock). */
struct early_reader {
	pthread_t thread;
	pthread_mutex_t lock;
	bool started, stop;	   /* stop: under lock */
	struct early_tick **taken; /* read, not taken by the loop yet */
	size_t ntaken, cap;
	uint64_t lost; /* copies counted lost since the loop last took */
	uint64_t held; /* bytes of copies read and not handed on (under lock) */
};

/* One early tick: the copy while it waits, then the stack walked from it. */
struct early_tick {
	struct perch_early *raw;
	uint64_t pc[PERCH_MAX_STACK + 1]; /* leaf first, zero-terminated */
	uint32_t n;
	bool walked; /* the walk reached the outermost frame (or PERCH_MAX_STACK) */
	bool truncated;
	bool fp;      /* walked by frame pointers: no tables came */
	bool fp_leaf; /* its leaf (no table, not frameless) left by its frame pointer */
	bool offcpu;  /* an --off-cpu switch-out's (PERCH_KEY_EARLY), not a tick's */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Row i of the sampler's unwind_rows (the rows the kernel walk reads). */
static bool map_row(void *ctx, uint32_t i, struct unwind_row *out)
{
	struct perch_row_pair pair;
	__u32 k = i / 2;

	if (bpf_map_lookup_elem(*(const int *)ctx, &k, &pair))
		return false;
	*out = pair.row[i & 1];
	return true;
}

/* No tables will come for t (or its leaf has none and is not frameless): by frame pointers, as
 * the kernel would have walked it. */
static void by_frame_pointers(struct early_tick *t)
{
	t->n = early_walk_fp(t->raw, t->pc);
	t->fp = true;
}

/* Try t's walk now: true when it is done: walked, or never will be (its process is gone or
 * exec'd; or `settled`: at a drain whose catch-up read the mmap records up to it, and so listed
 * its tables; or `last`). */
static bool try_walk(struct sampler *sp, struct early_tick *t, bool settled, bool last)
{
	const struct perch_key *key = &t->raw->key;
	const struct procs_proc *pp;
	struct perch_proc_unwind proc;
	__u32 pid = key->tgid, gen = 0;
	bool gone, target, nocfi = false;
	int end;

	/* The process table (which the collector keeps images by) has not seen the fork or the
	 * exec yet: the image has no mappings to resolve the stack in. */
	pp = procs__find(sp->procs, pid);
	target = !bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.targets), &pid, &gen);
	if (target && (!pp || pp->gen < key->gen) && !last)
		return false;
	/* Gone: no longer a target, or past the image (in the kernel's count of execs, or in the
	 * process table's: the collector may free the image after the next drain). */
	gone = !target || gen != key->gen || !pp || pp->gen > key->gen;
	if (gone || bpf_map_lookup_elem(sp->fds.proc_unwind, &pid, &proc)) {
		if (!gone && !last)
			return false;
		by_frame_pointers(t);
		return true;
	}
	end = early_walk(t->raw, &proc, map_row, &sp->fds.unwind_rows, sp->unwind_mode, t->pc,
			 &t->n, &t->fp_leaf, &nocfi);
	t->walked = end == EARLY_WALK_DONE || end == EARLY_WALK_TRUNCATED;
	/* A switch-out's frame without a row before the drain that settles it: its module's table
	 * may not be listed yet (see unwind.bpf.h's early path), so the walk may not be the one its
	 * tables give: again then. */
	if (t->walked && t->offcpu && nocfi && !settled && !last) {
		t->walked = false;
		return false;
	}
	t->truncated = end == EARLY_WALK_TRUNCATED;
	if (t->walked) {
		log_debug("sampler: early tick of %u walked %.3f ms after it was taken", pid,
			  (now_ns() - t->raw->time_ns) / 1e6);
		return true;
	}
	if (!settled && !last)
		return false;
	if (end == EARLY_WALK_FP_LEAF)
		by_frame_pointers(t);
	return true;
}

/* A copy from the ring into the reader's list (under its lock: the ring is read by the reader's
 * thread, or by the loop before that starts). */
static int handle_early(void *ctx, void *data, size_t len)
{
	const size_t head = offsetof(struct perch_early, stack);
	const struct perch_early *e = data;
	struct early_reader *r = ((struct sampler *)ctx)->early_reader;
	struct early_tick *t;

	if (len < head || e->len > PERCH_EARLY_STACK || len < head + e->len ||
	    r->held + head + e->len > EARLY_HELD_MAX ||
	    vec_grow(&r->taken, &r->cap, r->ntaken + 1, sizeof(*r->taken), 16)) {
		r->lost++;
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->raw = malloc(head + e->len); /* the copy only: walks read no further */
	if (!t || !t->raw) {
		free(t);
		r->lost++;
		return 0;
	}
	memcpy(t->raw, data, head + e->len);
	t->offcpu = e->key.flags & PERCH_KEY_EARLY;
	r->held += head + e->len;
	r->taken[r->ntaken++] = t;
	return 0;
}

/* The reader: waits for the ring, reads it under the lock. Signals stay with the loop's thread. */
static void *early_reader_run(void *arg)
{
	struct sampler *sp = arg;
	struct early_reader *r = sp->early_reader;
	int efd = ring_buffer__epoll_fd(sp->early_rb);
	struct epoll_event ev;

	for (;;) {
		int n = epoll_wait(efd, &ev, 1, EARLY_READER_WAIT_MS);

		pthread_mutex_lock(&r->lock);
		if (r->stop) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		if (n > 0)
			ring_buffer__consume(sp->early_rb);
		pthread_mutex_unlock(&r->lock);
		if (n < 0 && errno != EINTR) {
			log_warn("sampler: early stacks' reader: %s: the loop reads them",
				 strerror(errno));
			return NULL;
		}
	}
}

void sampler__targets_started(struct sampler *sp)
{
	struct early_reader *r = sp->early_reader;
	sigset_t all, old;
	int err;

	if (!r || r->started || !sp->early_rb)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, NULL, early_reader_run, sp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		log_warn("sampler: early stacks' reader: %s: the loop reads them", strerror(err));
	else
		log_debug("sampler: early stacks' reader started");
	r->started = !err;
}

/* The loop takes what was read (reading the ring itself too: nothing submitted before this is
 * left behind). */
static void early_take(struct sampler *sp)
{
	struct early_reader *r = sp->early_reader;

	pthread_mutex_lock(&r->lock);
	ring_buffer__consume(sp->early_rb);
	if (!r->ntaken) {
		/* nothing new */
	} else if (!vec_grow(&sp->early, &sp->early_cap, sp->nearly + r->ntaken, sizeof(*sp->early),
			     16)) {
		memcpy(sp->early + sp->nearly, r->taken, r->ntaken * sizeof(*r->taken));
		sp->nearly += r->ntaken;
	} else {
		for (size_t i = 0; i < r->ntaken; i++) {
			r->held -= offsetof(struct perch_early, stack) + r->taken[i]->raw->len;
			free(r->taken[i]->raw);
			free(r->taken[i]);
		}
		r->lost += r->ntaken;
	}
	r->ntaken = 0;
	sp->early_stats[SAMPLER_EARLY_LOST] += r->lost;
	r->lost = 0;
	pthread_mutex_unlock(&r->lock);
}

/* t handed on: its bytes no longer held. */
static void early_release(struct sampler *sp, struct early_tick *t)
{
	struct early_reader *r = sp->early_reader;

	pthread_mutex_lock(&r->lock);
	r->held -= offsetof(struct perch_early, stack) + t->raw->len;
	pthread_mutex_unlock(&r->lock);
	free(t->raw);
	free(t);
}

/* Wherever tables are walked. */
static void early_setup(struct sampler *sp)
{
	sp->skel->rodata->early_stacks = sp->unwind_mode != PERCH_UNWIND_FP;
	if (!sp->skel->rodata->early_stacks) {
		bpf_map__set_max_entries(sp->skel->maps.early, 4096);
		bpf_map__set_max_entries(sp->skel->maps.early_until, 1);
	} else if (libbpf_num_possible_cpus() > 0) {
		/* A tick's and a switch-out's for each CPU. */
		bpf_map__set_max_entries(sp->skel->maps.early_scratch,
					 2 * libbpf_num_possible_cpus());
	}
}

/* The early stacks' ring (0 always: without it the early ticks count as they are). */
static int early_open(struct sampler *sp)
{
	if (!sp->skel->rodata->early_stacks)
		return 0;
	sp->early_reader = calloc(1, sizeof(*sp->early_reader));
	if (!sp->early_reader || pthread_mutex_init(&sp->early_reader->lock, NULL)) {
		log_warn("sampler: early stacks: %s", strerror(ENOMEM));
		free(sp->early_reader);
		sp->early_reader = NULL;
		return 0; /* ticks in the early window are counted as they are */
	}
	sp->early_rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.early), handle_early, sp, NULL);
	if (!sp->early_rb)
		log_warn("sampler: early stacks ring: %s", strerror(errno));
	return 0;
}

/* The new early ticks, and another try at those whose tables were not listed yet. */
void sampler_early_read(struct sampler *sp)
{
	if (!sp->early_rb)
		return;
	early_take(sp);
	for (size_t i = 0; i < sp->nearly; i++) {
		if (!sp->early[i]->walked)
			try_walk(sp, sp->early[i], false, false);
	}
}

/* Hand t on as a sample of its key, with its whole stack or flagged as stopped early. */
static void hand_on(struct sampler *sp, struct early_tick *t, sampler_sample_fn fn, void *ctx)
{
	struct perch_key key = t->raw->key;
	struct raw_sample raw;
	uint64_t k[PERCH_MAX_STACK + 1] = {0}, hash = FNV_OFFSET;
	uint32_t nk = t->raw->nk / sizeof(uint64_t);

	for (uint32_t i = 0; i < t->n; i++)
		hash = (hash ^ t->pc[i]) * FNV_PRIME;
	key.ustack_id = 0;
	key.user_ret = 0;
	key.ustack_hash = 0;
	if (t->fp || t->fp_leaf) {
		/* The collector repairs a frameless leaf from user_ret. */
		uint64_t top = 0;

		early_read_word(t->raw, t->raw->sp, &top);
		key.user_ret = top;
	}
	if (t->fp) {
		sp->early_stats[t->offcpu ? SAMPLER_EARLY_OFFCPU_FP : SAMPLER_EARLY_FP]++;
	} else {
		key.flags |= t->fp_leaf ? PERCH_KEY_FP_LEAF : 0;
		key.flags |= PERCH_KEY_DWARF;
		key.flags |= t->truncated ? PERCH_KEY_TRUNCATED : 0;
		key.flags |= t->walked ? 0 : PERCH_KEY_UNWIND_FAILED;
		key.ustack_hash = hash;
		if (t->offcpu)
			sp->early_stats[t->walked ? SAMPLER_EARLY_OFFCPU
						  : SAMPLER_EARLY_OFFCPU_SHORT]++;
		else
			sp->early_stats[t->walked ? SAMPLER_EARLY_RESCUED : SAMPLER_EARLY_SHORT]++;
	}
	key.kstack_id = nk ? 0 : -EFAULT;
	memcpy(k, t->raw->kstack, (nk < PERCH_MAX_STACK ? nk : PERCH_MAX_STACK) * sizeof(*k));
	if (t->offcpu) {
		/* A key with no count, as a switch-out's at a drain; its blocks go by its name. */
		key.flags &= ~(uint32_t)PERCH_KEY_EARLY;
		sampler_raw_sample_py(sp, &key, 0, t->pc, nk ? k : NULL, &raw);
		sampler_offcpu_early_named(sp, &t->raw->key, fn(ctx, &raw));
		return;
	}
	/* --timeline: its tick, at the time it was taken (the timeline keeps the order). */
	sampler_raw_sample_py(sp, &key, 1, t->pc, nk ? k : NULL, &raw);
	sampler_timeline_late(sp, t->raw->time_ns, fn(ctx, &raw));
}

/* At a drain: every early tick that is walked, or never will be further, handed on; those of a
 * process whose tables are not listed yet wait, up to PERCH_EARLY_NS (none at the last drain).
 * The time is taken after the ring is read: a tick taken while it was read is newer than a time
 * taken before, and `now - time` wrapped around made it look older than PERCH_EARLY_NS: handed on
 * at once by frame pointers, in a process the table had not seen yet (no mappings). */
static void early_drained(struct sampler *sp, const struct sampler_drain *d)
{
	uint64_t now;
	size_t kept = 0;

	sampler_early_read(sp);
	now = now_ns();
	for (size_t i = 0; i < sp->nearly; i++) {
		struct early_tick *t = sp->early[i];
		bool old = d->last ||
			   (now > t->raw->time_ns && now - t->raw->time_ns > PERCH_EARLY_NS);

		/* A tick taken after the flip may be in a module whose mmap record the drain's
		 * catch-up did not read: the next drain's will (one so handed on had a leaf in no
		 * mapping: samples_without_mappings, shortlived.sh). */
		bool settled = t->raw->time_ns < d->flip;

		if (!t->walked && !try_walk(sp, t, settled, old)) {
			sp->early[kept++] = t;
			continue;
		}
		hand_on(sp, t, d->fn, d->ctx);
		early_release(sp, t);
	}
	sp->nearly = kept;
}

uint64_t sampler_early_oldest(const struct sampler *sp)
{
	uint64_t oldest = UINT64_MAX;

	for (size_t i = 0; i < sp->nearly; i++)
		if (!sp->early[i]->offcpu && sp->early[i]->raw->time_ns < oldest)
			oldest = sp->early[i]->raw->time_ns;
	return oldest;
}

uint64_t sampler__early_stat(const struct sampler *sp, enum sampler_early_stat which)
{
	return which < SAMPLER_EARLY_MAX ? sp->early_stats[which] : 0;
}

static void early_free(struct sampler *sp)
{
	struct early_reader *r = sp->early_reader;

	if (r && r->started) {
		pthread_mutex_lock(&r->lock);
		r->stop = true;
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
	}
	ring_buffer__free(sp->early_rb);
	for (size_t i = 0; i < sp->nearly; i++) {
		free(sp->early[i]->raw);
		free(sp->early[i]);
	}
	free(sp->early);
	if (r) {
		for (size_t i = 0; i < r->ntaken; i++) {
			free(r->taken[i]->raw);
			free(r->taken[i]);
		}
		free(r->taken);
		pthread_mutex_destroy(&r->lock);
		free(r);
	}
}

const struct sampler_part sampler_early_part = {
	.name = "early stacks",
	.setup = early_setup,
	.open = early_open,
	.drained = early_drained,
	.free = early_free,
};

void sampler__ending(struct sampler *sp)
{
	sp->ending = true;
}
