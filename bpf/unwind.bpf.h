/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sampler's unwinder: user stacks walked from the loader's unwind tables (part of the
 * sampler's program).
 *
 * bpf/sample.bpf.c includes it where it stands (one BPF object, one compilation unit): it uses
 * the maps and helpers defined before it there.
 */

/* ---- unwinding from the tables ---------------------------------------------------------- */

/* Why the unwinder stopped. */
enum unwind_stop {
	UNW_GOING = 0,
	UNW_DONE,      /* outermost frame reached: the stack is complete */
	UNW_TRUNCATED, /* PERCH_MAX_STACK frames and more to go */
	UNW_FAULT,     /* stack memory could not be read */
	UNW_NO_CFI,    /* a row kind it cannot follow, or no CFI where tables are required */
	UNW_BAD_FRAME, /* the stack pointer did not move up: garbage */
	UNW_FP_LEAF,   /* the leaf is in code without a table: walk with frame pointers instead */
};

/* The unwinder's registers; lives on the tick's stack. Frames go to the CPU's unwind_scratch. */
struct unwind_ctx {
	__u64 ip, sp, bp;
	__u64 hash;
	__u32 tgid;
	__u32 stop;    /* enum unwind_stop */
	__u32 exact;   /* ip is the interrupted instruction (after a signal frame), not a return
		      * address */
	__u32 guess;   /* ip is the word on top of a JIT leaf's stack, taken for its return address:
		      * true if the next frame has a table, else the walk starts over (fp_leaf) */
	__u32 fp_leaf; /* the second walk: a leaf without a table has a frame (frame pointers
			* from it, then tables where they are) */
	__u32 slot;    /* enum scratch_slot: where the frames go */
	__u32 nocfi;   /* a frame was stepped from without a row (frame pointers, a frameless
			* guess): in the early window, perhaps a module not listed yet */
};

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

/*
 * The step and the lookups below are global functions: the verifier checks each once, on its
 * own, and their callers see only their results, so the paths through one frame do not multiply
 * (and loading stays quick). The binary searches halve a length a fixed number of times (no
 * data-dependent loop exit).
 */

/* The process's mapping that holds addr (p: its sorted list), copied to out. */
__noinline int lookup_mapping(const struct perch_proc_unwind *p, __u64 addr,
			      struct perch_unwind_map *out)
{
	const struct perch_unwind_map *m;
	__u32 lo = 0, len;

	if (!p || !out)
		return 0;
	len = p->n;
	if (len > PERCH_UNWIND_MAPS)
		len = PERCH_UNWIND_MAPS;
	if (!len)
		return 0;
	/* 64 mappings: six halvings leave one. */
	for (int i = 0; i < 6; i++) {
		__u32 half = len / 2;

		if (p->map[(lo + half) & (PERCH_UNWIND_MAPS - 1)].start <= addr)
			lo += half;
		len -= half;
	}
	m = &p->map[lo & (PERCH_UNWIND_MAPS - 1)];
	if (addr < m->start || addr >= m->end)
		return 0;
	*out = *m;
	return 1;
}

static __always_inline const struct unwind_row *row_at(__u32 i)
{
	__u32 k = i / 2;
	struct perch_row_pair *pair = bpf_map_lookup_elem(&unwind_rows, &k);

	return pair ? &pair->row[i & 1] : NULL;
}

/* The index in unwind_rows of the last row of m's table whose pc is at or below addr; -1 below
 * the table. */
__noinline long lookup_row(const struct perch_unwind_map *m, __u64 addr)
{
	const struct unwind_row *r;
	__u32 lo = 0, len, first;
	__u64 off;

	if (!m)
		return -1;
	len = m->nrows;
	first = m->first_row;
	if (addr < m->base || !len || len > PERCH_UNWIND_ROWS)
		return -1;
	off = addr - m->base;
	if (off > 0xffffffffull)
		off = 0xffffffffull;
	/* At most 2^20 rows: twenty halvings leave one. */
	for (int i = 0; i < 20; i++) {
		__u32 half = len / 2;

		r = row_at(first + lo + half);
		if (r && r->pc <= off)
			lo += half;
		len -= half;
	}
	return first + lo;
}

static __always_inline long stop(struct unwind_ctx *u, __u32 why)
{
	u->stop = why;
	return 1;
}

/* A frame without CFI: the frame-pointer rule (the caller's RBP at RBP, the return address above
 * it). */
static __always_inline long fp_step(struct unwind_ctx *u)
{
	__u64 frame[2];

	if (!u->bp)
		return stop(u, UNW_DONE); /* the end of the frame-pointer chain */
	if (u->bp < u->sp)
		return stop(u, UNW_BAD_FRAME);
	if (bpf_probe_read_user(frame, sizeof(frame), (void *)u->bp))
		return stop(u, UNW_FAULT);
	u->sp = u->bp + 16;
	u->bp = frame[0];
	u->ip = frame[1];
	return u->ip ? 0 : stop(u, UNW_DONE);
}

/*
 * The leaf is in code without a table (JIT code). A JIT's leaves often set up no frame, and its
 * callers are often native code built without frame pointers, where a frame-pointer walk loses
 * everything above the JIT frames (_start and the rest). So guess the leaf is frameless: its
 * return address is the word on top of the stack. The next frame says whether it was right: a
 * table there confirms it and the walk goes on with the tables; none (UNW_FP_LEAF), and the walk
 * starts over with frame pointers from the leaf (fp_leaf), on with the tables from the first
 * frame that has one, so the stack ends where the tables end every other stack of the thread
 * (_start, clone3), not where the frame-pointer chain happens to (issue 23: node's JIT stacks
 * ended at __libc_start_call_main, the rest at _start). Userspace repairs frameless leaves
 * (PERCH_KEY_FP_LEAF).
 */
static __always_inline long frameless_leaf(struct unwind_ctx *u)
{
	__u64 ra;

	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)u->sp) || !ra)
		return stop(u, UNW_FP_LEAF);
	u->sp += 8;
	u->ip = ra;
	u->guess = 1;
	return 0;
}

/* A signal trampoline: the interrupted registers are in the kernel's ucontext_t at RSP + cfa_off
 * (uc_mcontext.gregs: RBP at byte 120, RSP at 160, RIP at 168). */
static __always_inline long signal_step(struct unwind_ctx *u, const struct unwind_row *row)
{
	__u64 g[7]; /* gregs[REG_RBP .. REG_RIP] */

	if (bpf_probe_read_user(g, sizeof(g), (void *)(u->sp + row->cfa_off + 120)))
		return stop(u, UNW_FAULT);
	u->bp = g[0];
	u->sp = g[5];
	u->ip = g[6];
	u->exact = 1;
	return u->ip ? 0 : stop(u, UNW_DONE);
}

/* One frame: record u->ip, then step to the caller with the row that covers it. Returns 0 to go
 * on, 1 when u->stop says why it ended. */
__noinline int unwind_frame(struct unwind_ctx *u)
{
	const struct unwind_row *row = NULL;
	const struct perch_proc_unwind *proc;
	struct perch_unwind_map m;
	struct perch_ustack *st;
	__u64 lookup, cfa, ra, bp;
	__u32 n, kind, slot;
	__s16 rbp_off;
	long idx;

	if (!u)
		return 1;
	slot = u->slot;
	st = bpf_map_lookup_elem(&unwind_scratch, &slot);
	proc = bpf_map_lookup_elem(&proc_unwind, &u->tgid);
	if (!st || !proc)
		return stop(u, UNW_NO_CFI);
	bp = u->bp;
	n = st->n;
	if (n >= PERCH_MAX_STACK)
		return stop(u, UNW_TRUNCATED);
	/* Userspace looks callers up at pc - 1: an exact address goes in plus one. */
	st->pc[n] = n && u->exact ? u->ip + 1 : u->ip;
	st->n = n + 1;
	u->hash = (u->hash ^ u->ip) * FNV_PRIME;
	/* A return address is one past its call, which may be the last byte of its function. */
	lookup = n && !u->exact ? u->ip - 1 : u->ip;
	u->exact = 0;
	if (lookup_mapping(proc, lookup, &m)) {
		idx = lookup_row(&m, lookup);
		if (idx >= 0)
			row = row_at(idx);
	}
	kind = row ? row->cfa : UNWIND_CFA_NONE;
	if (!row)
		goto no_cfi;
	u->guess = 0; /* a caller with a table: the leaf was frameless, as guessed */
	switch (kind) {
	case UNWIND_CFA_RSP:
		cfa = u->sp + row->cfa_off;
		break;
	case UNWIND_CFA_RBP:
		cfa = u->bp + row->cfa_off;
		break;
	case UNWIND_CFA_PLT:
		cfa = u->sp + row->cfa_off + ((u->ip & 15) >= (__u64)row->plt_k ? 8 : 0);
		break;
	case UNWIND_CFA_SIGNAL:
		/* The handler returned to the trampoline's first byte: name it, not what precedes. */
		if (n)
			st->pc[n] = u->ip + 1;
		return signal_step(u, row);
	case UNWIND_CFA_OUTERMOST:
		return stop(u, UNW_DONE);
	case UNWIND_CFA_NONE:
		goto no_cfi;
	default:
		return stop(u, UNW_NO_CFI);
	}
	if (cfa <= u->sp)
		return stop(u, UNW_BAD_FRAME);
	if (bpf_probe_read_user(&ra, sizeof(ra), (void *)(cfa - 8)))
		return stop(u, UNW_FAULT);
	rbp_off = kind == UNWIND_CFA_PLT ? 0 : row->rbp_off;
	if (rbp_off && bpf_probe_read_user(&bp, sizeof(bp), (void *)(cfa + rbp_off)))
		return stop(u, UNW_FAULT);
	u->sp = cfa;
	u->bp = bp;
	u->ip = ra;
	return ra ? 0 : stop(u, UNW_DONE);
no_cfi:
	if (unwind_mode == PERCH_UNWIND_DWARF)
		return stop(u, UNW_NO_CFI);
	u->nocfi = 1;
	if (!n && !u->fp_leaf)
		return frameless_leaf(u);
	if (u->guess)
		return stop(u, UNW_FP_LEAF);
	return fp_step(u);
}

static long unwind_step(__u64 i, void *data)
{
	return unwind_frame(data) ? 1 : 0;
}

__noinline int same_stack(const struct perch_ustack *a, const struct perch_ustack *b)
{
	__u32 n;

	if (!a || !b || a->n != b->n)
		return 0;
	n = a->n;
	for (__u32 i = 0; i < PERCH_MAX_STACK; i++) {
		if (i >= n)
			break;
		if (a->pc[i] != b->pc[i])
			return 0;
	}
	return 1;
}

/* Store the unwound stack under its hash in this period's dwarf stack map. */
static __always_inline void store_ustack(void *dmap, struct perch_ustack *st, struct perch_key *key)
{
	struct perch_ustack *old = bpf_map_lookup_elem(dmap, &key->ustack_hash);
	long err;

	if (old) {
		if (!same_stack(old, st)) {
			stat_inc(PERCH_STAT_DWARF_COLLISION);
			key->ustack_id = -EEXIST;
		}
		return;
	}
	err = bpf_map_update_elem(dmap, &key->ustack_hash, st, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stat_inc(PERCH_STAT_USTACK_FULL);
		key->ustack_id = err;
	}
}

/* Why the walk stopped, in the key's flags and (tick: counted as ticks are) the counters. */
static __always_inline void count_stop(__u32 why, struct perch_key *key, bool tick)
{
	__u32 stat;

	switch (why) {
	case UNW_DONE:
		return;
	case UNW_TRUNCATED:
		if (tick)
			stat_inc(PERCH_STAT_DWARF_TRUNCATED);
		key->flags |= PERCH_KEY_TRUNCATED;
		return;
	case UNW_FAULT:
		stat = PERCH_STAT_DWARF_FAULT;
		break;
	case UNW_BAD_FRAME:
		stat = PERCH_STAT_DWARF_BAD_FRAME;
		break;
	default:
		stat = PERCH_STAT_DWARF_NO_CFI;
		break;
	}
	if (tick)
		stat_inc(stat);
	key->flags |= PERCH_KEY_UNWIND_FAILED;
}

/* How a user stack was taken. */
enum ustack_how {
	USTACK_FP = 0, /* no tables (or a leaf without one): walk frame pointers */
	USTACK_DWARF,  /* unwound from the tables, into the key */
	USTACK_EARLY,  /* a tick in its process's early window that the tables cannot walk yet */
};

/* A tick (or an --off-cpu switch-out) of tgid within PERCH_EARLY_NS of its exec (see struct
 * perch_early). */
static __always_inline bool early_window(__u32 tgid, __u32 slot)
{
	__u64 *until;

	if (slot == SCRATCH_PROBE)
		return false;
	until = bpf_map_lookup_elem(&early_until, &tgid);
	return until && bpf_ktime_get_ns() < *until;
}

/* One walk from the interrupted registers into st (u's slot). */
static __always_inline void walk_user_stack(struct unwind_ctx *u, struct perch_ustack *st,
					    struct pt_regs *regs)
{
	u->ip = BPF_CORE_READ(regs, ip);
	u->sp = BPF_CORE_READ(regs, sp);
	u->bp = BPF_CORE_READ(regs, bp);
	u->hash = FNV_OFFSET;
	u->stop = UNW_GOING;
	u->exact = 0;
	u->guess = 0;
	st->n = 0;
	/* One call more than frames: the last finds the limit reached with frames left. */
	bpf_loop(PERCH_MAX_STACK + 1, unwind_step, u, 0);
}

/* Unwind the user stack from the tables into the key, building it in scratch slot `slot`.
 * Returns USTACK_FP when the process has no tables (or the leaf is in code without one): the
 * caller walks frame pointers instead; USTACK_EARLY (ticks and switch-outs) when it stops short in the early
 * window: nothing counted, the caller copies the stack for the loader. The dwarf_* counters count
 * ticks' stacks (the report sets them against the samples): a probe's (SCRATCH_PROBE) are not
 * counted there. */
static __always_inline int dwarf_user_stack_in(struct pt_regs *regs, __u32 tgid, void *dmap,
					       struct perch_key *key, __u32 slot)
{
	struct perch_ustack *st;
	struct unwind_ctx u = {};

	if (unwind_mode == PERCH_UNWIND_FP)
		return USTACK_FP;
	if (!bpf_map_lookup_elem(&proc_unwind, &tgid))
		return regs && early_window(tgid, slot) ? USTACK_EARLY : USTACK_FP;
	st = bpf_map_lookup_elem(&unwind_scratch, &slot);
	if (!regs || !st)
		return USTACK_FP;
	u.slot = slot;
	u.tgid = tgid;
	walk_user_stack(&u, st, regs);
	if (u.stop == UNW_FP_LEAF) {
		/* Not frameless: again, with frame pointers from the leaf (see frameless_leaf()). */
		u.fp_leaf = 1;
		walk_user_stack(&u, st, regs);
	}
	/* In the early window a switch-out's walk that went without rows may have met a module
	 * whose table is not listed yet: a frame-pointer step from glibc's frameless read() in a
	 * frame-pointer program looks complete and skips read's caller (every block's leaf is such
	 * a wrapper). The loader walks it again once its tables are. A tick's rarely is, and a JIT's
	 * ticks (code without tables) would all be copied. */
	if (((u.stop != UNW_DONE && u.stop != UNW_TRUNCATED) ||
	     (u.nocfi && slot == SCRATCH_OFFCPU)) &&
	    early_window(tgid, slot))
		return USTACK_EARLY;
	if (u.fp_leaf && u.stop != UNW_DONE && u.stop != UNW_TRUNCATED) {
		/* The tables could not go on from where the frame pointers led: the frame-pointer
		 * walk alone, as it was. */
		if (slot == SCRATCH_TICK)
			stat_inc(PERCH_STAT_FP_FALLBACK);
		return USTACK_FP;
	}
	if (u.fp_leaf) {
		key->flags |= PERCH_KEY_FP_LEAF;
		key->user_ret = user_stack_top(regs);
	}
	if (slot == SCRATCH_TICK)
		stat_inc(PERCH_STAT_DWARF);
	key->flags |= PERCH_KEY_DWARF;
	count_stop(u.stop, key, slot == SCRATCH_TICK);
	key->ustack_hash = u.hash;
	store_ustack(dmap, st, key);
	return USTACK_DWARF;
}

static __always_inline int dwarf_user_stack(struct pt_regs *regs, __u32 tgid, void *dmap,
					    struct perch_key *key)
{
	return dwarf_user_stack_in(regs, tgid, dmap, key, SCRATCH_TICK);
}
