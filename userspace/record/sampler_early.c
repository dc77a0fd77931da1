// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's early stacks (see struct perch_early, sampler_impl.h): ticks a process took in
 * the first moments after its exec, before the unwinder (unwinder.h) had listed its modules'
 * tables, come with a copy of their user stack. Each is walked here with the rows the kernel's
 * walk uses (the same unwind_rows and proc_unwind maps, the same steps as unwind_frame() in
 * bpf/sample.bpf.c) as soon as the tables are listed, and handed on at the next drain with its
 * whole stack; one that cannot be walked to its outermost frame (its process exec'd again or
 * exited first, the copy ends too soon, no CFI) is handed on with what was walked, flagged as
 * stopped early. None is dropped.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "sampler_impl.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

/* One early tick: the copy while it waits, then the stack walked from it. */
struct early_tick {
	struct perch_early *raw;
	uint64_t pc[PERCH_MAX_STACK + 1]; /* leaf first, zero-terminated */
	uint32_t n;
	bool walked; /* the walk reached the outermost frame (or PERCH_MAX_STACK) */
	bool truncated;
	bool fp; /* walked by frame pointers: no tables came */
};

struct early_walk {
	const struct perch_early *e;
	const struct perch_proc_unwind *proc;
	int rows_fd;
	uint64_t ip, sp, bp;
	bool exact, guess;
};

enum walk_end { WALK_GOING = 0, WALK_DONE, WALK_TRUNCATED, WALK_STOPPED };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The word at addr, from the copy of the stack; false outside it. */
static bool read_word(const struct early_walk *w, uint64_t addr, uint64_t *out)
{
	const struct perch_early *e = w->e;

	if (addr < e->sp || addr - e->sp > e->len || e->len - (addr - e->sp) < sizeof(*out))
		return false;
	memcpy(out, e->stack + (addr - e->sp), sizeof(*out));
	return true;
}

static bool row_at(int rows_fd, uint32_t i, struct unwind_row *out)
{
	struct perch_row_pair pair;
	__u32 k = i / 2;

	if (bpf_map_lookup_elem(rows_fd, &k, &pair))
		return false;
	*out = pair.row[i & 1];
	return true;
}

/* The row that covers addr (as lookup_mapping() and lookup_row() find it); false: none. */
static bool find_row(const struct early_walk *w, uint64_t addr, struct unwind_row *out)
{
	const struct perch_unwind_map *m = NULL;
	uint32_t lo = 0, len;

	for (uint32_t i = 0; i < w->proc->n && i < PERCH_UNWIND_MAPS; i++) {
		if (w->proc->map[i].start <= addr && addr < w->proc->map[i].end)
			m = &w->proc->map[i];
	}
	if (!m || addr < m->base || !m->nrows || addr - m->base > 0xffffffffull)
		return false;
	len = m->nrows;
	while (len > 1) {
		uint32_t half = len / 2;
		struct unwind_row r;

		if (!row_at(w->rows_fd, m->first_row + lo + half, &r))
			return false;
		if (r.pc <= addr - m->base)
			lo += half;
		len -= half;
	}
	return row_at(w->rows_fd, m->first_row + lo, out);
}

/* A frame without a row: the leaf's return address on top of the stack, else frame pointers. */
static int step_no_cfi(struct early_walk *w, uint32_t n, uint32_t mode)
{
	uint64_t frame[2];

	if (mode == PERCH_UNWIND_DWARF || (n && w->guess))
		return WALK_STOPPED;
	if (!n) {
		if (!read_word(w, w->sp, &frame[1]) || !frame[1])
			return WALK_STOPPED;
		w->sp += 8;
		w->ip = frame[1];
		w->guess = true;
		return WALK_GOING;
	}
	if (!w->bp)
		return WALK_DONE;
	if (w->bp < w->sp || !read_word(w, w->bp, &frame[0]) || !read_word(w, w->bp + 8, &frame[1]))
		return WALK_STOPPED;
	w->sp = w->bp + 16;
	w->bp = frame[0];
	w->ip = frame[1];
	return w->ip ? WALK_GOING : WALK_DONE;
}

/* Step from a frame with its row, as unwind_frame() does. */
static int step_row(struct early_walk *w, const struct unwind_row *row, uint64_t *pc)
{
	uint64_t cfa, ra, bp = w->bp, g[7];

	switch (row->cfa) {
	case UNWIND_CFA_RSP:
		cfa = w->sp + row->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		cfa = w->bp + row->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = w->sp + row->cfa_off + ((w->ip & 15) >= (uint64_t)row->plt_k ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		if (pc != NULL)
			*pc = w->ip + 1;
		for (int i = 0; i < 7; i++) {
			if (!read_word(w, w->sp + row->cfa_off + 120 + 8 * i, &g[i]))
				return WALK_STOPPED;
		}
		w->bp = g[0];
		w->sp = g[5];
		w->ip = g[6];
		w->exact = true;
		return w->ip ? WALK_GOING : WALK_DONE;
	case UNWIND_CFA_OUTERMOST:
		return WALK_DONE;
	default:
		return WALK_STOPPED;
	}
	if (cfa <= w->sp || !read_word(w, cfa - 8, &ra))
		return WALK_STOPPED;
	if (row->cfa != UNWIND_CFA_PLT && row->rbp_off && !read_word(w, cfa + row->rbp_off, &bp))
		return WALK_STOPPED;
	w->sp = cfa;
	w->bp = bp;
	w->ip = ra;
	return ra ? WALK_GOING : WALK_DONE;
}

/* Walk t's copy with its process's list proc; the frames into t. */
static int walk(struct early_tick *t, const struct perch_proc_unwind *proc, int rows_fd,
		uint32_t mode)
{
	struct early_walk w = {.e = t->raw, .proc = proc, .rows_fd = rows_fd};
	int end = WALK_GOING;
	uint32_t n = 0;

	w.ip = t->raw->ip;
	w.sp = t->raw->sp;
	w.bp = t->raw->bp;
	while (end == WALK_GOING) {
		struct unwind_row row;
		uint64_t lookup;

		if (n >= PERCH_MAX_STACK) {
			end = WALK_TRUNCATED;
			break;
		}
		t->pc[n] = n && w.exact ? w.ip + 1 : w.ip;
		lookup = n && !w.exact ? w.ip - 1 : w.ip;
		w.exact = false;
		if (!find_row(&w, lookup, &row) || row.cfa == UNWIND_CFA_NONE) {
			end = step_no_cfi(&w, n, mode);
		} else {
			w.guess = false;
			end = step_row(&w, &row, n ? &t->pc[n] : NULL);
		}
		n++;
	}
	t->n = n;
	t->pc[n] = 0;
	t->truncated = end == WALK_TRUNCATED;
	return end;
}

/* No list of t's image will come (its process exec'd again or is gone) or none came in time:
 * walk the copy by frame pointers, as the kernel walks a process without tables (its first
 * entry the interrupted pc, then the return addresses of the RBP chain). */
static void fp_walk(struct early_tick *t)
{
	struct early_walk w = {.e = t->raw};
	uint64_t bp = t->raw->bp, sp = t->raw->sp, frame[2];
	uint32_t n = 0;

	t->pc[n++] = t->raw->ip;
	while (n < PERCH_MAX_STACK && bp && bp >= sp && read_word(&w, bp, &frame[0]) &&
	       read_word(&w, bp + 8, &frame[1]) && frame[1]) {
		t->pc[n++] = frame[1];
		sp = bp + 16;
		bp = frame[0];
	}
	t->n = n;
	t->pc[n] = 0;
	t->fp = true;
}

/* Try t's walk now: true when it is walked, or never will be (its process is gone or exec'd). */
static bool try_walk(struct sampler *sp, struct early_tick *t, bool last)
{
	const struct perch_key *key = &t->raw->key;
	const struct procs_proc *pp;
	struct perch_proc_unwind proc;
	__u32 pid = key->tgid, gen = 0;
	bool gone, target;

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
		fp_walk(t);
		return true;
	}
	t->walked = walk(t, &proc, sp->fds.unwind_rows, sp->unwind_mode) != WALK_STOPPED;
	if (t->walked)
		log_debug("sampler: early tick of %u walked %.3f ms after it was taken", pid,
			  (now_ns() - t->raw->time_ns) / 1e6);
	return t->walked || last;
}

static int handle_early(void *ctx, void *data, size_t len)
{
	struct sampler *sp = ctx;
	struct early_tick *t;

	const struct perch_early *e = data;
	const size_t head = offsetof(struct perch_early, stack);

	if (len < head || e->len > PERCH_EARLY_STACK || len < head + e->len ||
	    vec_grow(&sp->early, &sp->early_cap, sp->nearly + 1, sizeof(*sp->early), 16)) {
		sp->early_stats[SAMPLER_EARLY_LOST]++;
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->raw = malloc(head + e->len); /* the copy only: walks read no further */
	if (!t || !t->raw) {
		free(t);
		sp->early_stats[SAMPLER_EARLY_LOST]++;
		return 0;
	}
	memcpy(t->raw, data, head + e->len);
	sp->early[sp->nearly++] = t;
	return 0;
}

int sampler_early_open(struct sampler *sp)
{
	if (sp->unwind_mode == PERCH_UNWIND_FP)
		return 0;
	sp->early_rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.early), handle_early, sp, NULL);
	if (!sp->early_rb) {
		log_warn("sampler: early stacks ring: %s", strerror(errno));
		return 0; /* ticks in the early window are counted as they are */
	}
	return 0;
}

/* The new early ticks, and another try at those whose tables were not listed yet. */
void sampler_early_read(struct sampler *sp)
{
	if (!sp->early_rb)
		return;
	ring_buffer__consume(sp->early_rb);
	for (size_t i = 0; i < sp->nearly; i++) {
		if (!sp->early[i]->walked)
			try_walk(sp, sp->early[i], false);
	}
}

/* Hand t on as a sample of its key, with its whole stack or flagged as stopped early. */
static void hand_on(struct sampler *sp, struct early_tick *t, sampler_sample_fn fn, void *ctx)
{
	struct perch_key key = t->raw->key;
	uint64_t k[PERCH_MAX_STACK + 1] = {0}, hash = FNV_OFFSET;
	uint32_t nk = t->raw->nk / sizeof(uint64_t);

	struct early_walk w = {.e = t->raw};

	for (uint32_t i = 0; i < t->n; i++)
		hash = (hash ^ t->pc[i]) * FNV_PRIME;
	key.ustack_id = 0;
	key.user_ret = 0;
	key.ustack_hash = 0;
	if (t->fp) {
		/* As a frame-pointer stack: the collector repairs a frameless leaf from user_ret. */
		uint64_t top = 0;

		read_word(&w, t->raw->sp, &top);
		key.user_ret = top;
		sp->early_stats[SAMPLER_EARLY_FP]++;
	} else {
		key.flags |= PERCH_KEY_DWARF;
		key.flags |= t->truncated ? PERCH_KEY_TRUNCATED : 0;
		key.flags |= t->walked ? 0 : PERCH_KEY_UNWIND_FAILED;
		key.ustack_hash = hash;
		sp->early_stats[t->walked ? SAMPLER_EARLY_RESCUED : SAMPLER_EARLY_SHORT]++;
	}
	key.kstack_id = nk ? 0 : -EFAULT;
	memcpy(k, t->raw->kstack, (nk < PERCH_MAX_STACK ? nk : PERCH_MAX_STACK) * sizeof(*k));
	fn(ctx, &key, 1, t->pc, nk ? k : NULL);
}

/* At a drain: every early tick walked, or older than PERCH_EARLY_NS (or all of them, at the last
 * drain), handed on. */
void sampler_early_drained(struct sampler *sp, sampler_sample_fn fn, void *ctx, bool last)
{
	uint64_t now = now_ns();
	size_t kept = 0;

	sampler_early_read(sp);
	for (size_t i = 0; i < sp->nearly; i++) {
		struct early_tick *t = sp->early[i];
		bool old = last || now - t->raw->time_ns > PERCH_EARLY_NS;

		if (!t->walked && !try_walk(sp, t, old)) {
			sp->early[kept++] = t;
			continue;
		}
		hand_on(sp, t, fn, ctx);
		free(t->raw);
		free(t);
	}
	sp->nearly = kept;
}

uint64_t sampler__early_stat(const struct sampler *sp, enum sampler_early_stat which)
{
	return which < SAMPLER_EARLY_MAX ? sp->early_stats[which] : 0;
}

void sampler_early_free(struct sampler *sp)
{
	ring_buffer__free(sp->early_rb);
	for (size_t i = 0; i < sp->nearly; i++) {
		free(sp->early[i]->raw);
		free(sp->early[i]);
	}
	free(sp->early);
}

void sampler__ending(struct sampler *sp)
{
	sp->ending = true;
}
