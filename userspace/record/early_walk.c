// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The walk of an early stack (see early_walk.h): unwind_frame() of bpf/sample.bpf.c over a copy.
 */
#include <string.h>
#include "early_walk.h"

struct walker {
	const struct perch_early *e;
	const struct perch_proc_unwind *proc;
	early_row_fn row;
	void *ctx;
	uint64_t ip, sp, bp;
	bool exact, guess;
	bool fp_leaf; /* the second walk: the leaf left by its frame pointer */
	bool nocfi;   /* a frame stepped from without a row */
};

enum { WALK_GOING = 0 };

bool early_read_word(const struct perch_early *e, uint64_t addr, uint64_t *out)
{
	if (addr < e->sp || addr - e->sp > e->len || e->len - (addr - e->sp) < sizeof(*out))
		return false;
	memcpy(out, e->stack + (addr - e->sp), sizeof(*out));
	return true;
}

/* The row that covers addr, as lookup_mapping() and lookup_row() find it; false: none. */
static bool find_row(const struct walker *w, uint64_t addr, struct unwind_row *out)
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

		if (!w->row(w->ctx, m->first_row + lo + half, &r))
			return false;
		if (r.pc <= addr - m->base)
			lo += half;
		len -= half;
	}
	return w->row(w->ctx, m->first_row + lo, out);
}

/* A frame without a row: the leaf's return address on top of the stack, else frame pointers. */
static int step_no_cfi(struct walker *w, uint32_t n, uint32_t mode)
{
	uint64_t frame[2];

	if (mode == PERCH_UNWIND_DWARF)
		return EARLY_WALK_STOPPED;
	w->nocfi = true;
	if (n && w->guess)
		return EARLY_WALK_FP_LEAF;
	if (!n && !w->fp_leaf) {
		if (!early_read_word(w->e, w->sp, &frame[1]) || !frame[1])
			return EARLY_WALK_FP_LEAF;
		w->sp += 8;
		w->ip = frame[1];
		w->guess = true;
		return WALK_GOING;
	}
	if (!w->bp)
		return EARLY_WALK_DONE;
	if (w->bp < w->sp || !early_read_word(w->e, w->bp, &frame[0]) ||
	    !early_read_word(w->e, w->bp + 8, &frame[1]))
		return EARLY_WALK_STOPPED;
	w->sp = w->bp + 16;
	w->bp = frame[0];
	w->ip = frame[1];
	return w->ip ? WALK_GOING : EARLY_WALK_DONE;
}

/* A signal trampoline: the interrupted registers from the kernel's ucontext_t at RSP + cfa_off
 * (uc_mcontext.gregs: RBP at byte 120, RSP at 160, RIP at 168). */
static int step_signal(struct walker *w, const struct unwind_row *row)
{
	uint64_t g[7];

	for (int i = 0; i < 7; i++) {
		if (!early_read_word(w->e, w->sp + row->cfa_off + 120 + 8 * i, &g[i]))
			return EARLY_WALK_STOPPED;
	}
	w->bp = g[0];
	w->sp = g[5];
	w->ip = g[6];
	w->exact = true;
	return w->ip ? WALK_GOING : EARLY_WALK_DONE;
}

/* Step from a frame with its row. */
static int step_row(struct walker *w, const struct unwind_row *row)
{
	uint64_t cfa, ra, bp = w->bp;

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
		return step_signal(w, row);
	case UNWIND_CFA_OUTERMOST:
		return EARLY_WALK_DONE;
	default:
		return EARLY_WALK_STOPPED;
	}
	if (cfa <= w->sp || !early_read_word(w->e, cfa - 8, &ra))
		return EARLY_WALK_STOPPED;
	if (row->cfa != UNWIND_CFA_PLT && row->rbp_off &&
	    !early_read_word(w->e, cfa + row->rbp_off, &bp))
		return EARLY_WALK_STOPPED;
	w->sp = cfa;
	w->bp = bp;
	w->ip = ra;
	return ra ? WALK_GOING : EARLY_WALK_DONE;
}

/* Frame i: its pc into pc[i], then the step to its caller. */
static int walk_frame(struct walker *w, uint32_t i, uint32_t mode, uint64_t *pc)
{
	struct unwind_row r;
	uint64_t lookup;

	/* Return addresses are looked up at pc - 1; an exact address (after a signal frame) goes
	 * in plus one, as the kernel stores it. */
	pc[i] = i && w->exact ? w->ip + 1 : w->ip;
	lookup = i && !w->exact ? w->ip - 1 : w->ip;
	w->exact = false;
	if (!find_row(w, lookup, &r) || r.cfa == UNWIND_CFA_NONE)
		return step_no_cfi(w, i, mode);
	w->guess = false;
	/* The handler returned to the trampoline's first byte: name it. */
	if (r.cfa == UNWIND_CFA_SIGNAL && i)
		pc[i] = w->ip + 1;
	return step_row(w, &r);
}

/* One walk from the copy's registers. */
static int walk(struct walker *w, uint32_t mode, uint64_t *pc, uint32_t *n)
{
	const struct perch_early *e = w->e;
	int end = WALK_GOING;
	uint32_t i = 0;

	w->ip = e->ip;
	w->sp = e->sp;
	w->bp = e->bp;
	w->exact = false;
	w->guess = false;
	while (end == WALK_GOING) {
		if (i >= PERCH_MAX_STACK) {
			end = EARLY_WALK_TRUNCATED;
			break;
		}
		end = walk_frame(w, i, mode, pc);
		i++;
	}
	pc[i] = 0;
	*n = i;
	return end;
}

int early_walk(const struct perch_early *e, const struct perch_proc_unwind *proc, early_row_fn row,
	       void *ctx, uint32_t mode, uint64_t *pc, uint32_t *n, bool *fp_leaf, bool *nocfi)
{
	struct walker w = {.e = e, .proc = proc, .row = row, .ctx = ctx};
	int end = walk(&w, mode, pc, n);

	if (end == EARLY_WALK_FP_LEAF) {
		/* Not frameless: again, with frame pointers from the leaf, as the kernel does. */
		w.fp_leaf = true;
		w.nocfi = false;
		end = walk(&w, mode, pc, n);
		if (end != EARLY_WALK_DONE && end != EARLY_WALK_TRUNCATED)
			end = EARLY_WALK_FP_LEAF;
	}
	if (fp_leaf)
		*fp_leaf = w.fp_leaf && end != EARLY_WALK_FP_LEAF;
	if (nocfi)
		*nocfi = w.nocfi;
	return end;
}

uint32_t early_walk_fp(const struct perch_early *e, uint64_t *pc)
{
	uint64_t bp = e->bp, sp = e->sp, frame[2];
	uint32_t n = 0;

	pc[n++] = e->ip;
	while (n < PERCH_MAX_STACK && bp && bp >= sp && early_read_word(e, bp, &frame[0]) &&
	       early_read_word(e, bp + 8, &frame[1]) && frame[1]) {
		pc[n++] = frame[1];
		sp = bp + 16;
		bp = frame[0];
	}
	pc[n] = 0;
	return n;
}
