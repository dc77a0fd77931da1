// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler: runs on every perf_event tick on every CPU, keeps only ticks that hit a target
 * process (tgid in `targets`), and counts them in the kernel keyed by (tgid, tid, user stack,
 * kernel stack id, word at the user stack pointer; see struct perch_key). Follows forks of targets
 * and reports when their last thread exits.
 *
 * Counts and stacks are double buffered: the loader flips `active`, waits for in-flight ticks to
 * finish, drains and clears the idle buffer. Each buffer only holds one drain period's distinct
 * stacks (the loader sizes them to the CPUs and the frequency), so the maps never fill on a long
 * run; when one does, the loss is counted.
 *
 * User stacks of processes whose modules have unwind tables (the loader builds them from
 * .eh_frame, see unwind/unwind_row.h, and lists each process's mappings in `proc_unwind`) are
 * unwound here, frame by frame from the rows, the way the OpenTelemetry eBPF profiler does: no
 * stack is copied out, and code built without frame pointers gets complete stacks. Frames in code
 * without a table take a frame-pointer step (--unwind=auto). Such stacks are stored under a hash
 * of their frames in the double-buffered dwarf stack maps; kernel stacks always come from
 * bpf_get_stackid.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "perch_bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EEXIST 17
#define EFAULT 14

/* Which buffer the ticks write to (0 or 1); written by the loader. */
volatile __u32 active = 0;
/*
 * The one pause flag of a recording (perch record --delay, SIGUSR1/SIGUSR2, --control, the caps):
 * while it is not 0 every tick returns at its first instruction, before the target lookup, so a
 * paused perch costs the targets one load and a branch a tick. Written by the loader
 * (sampler__pause()); anything else that must know whether perch records reads it here.
 */
volatile __u32 perch_paused = 0;
/* enum perch_unwind_mode; set by the loader before loading. */
const volatile __u32 unwind_mode = PERCH_UNWIND_FP;
/* --steps: only ticks of a process whose program has a step of the range open count (the
 * range is in its runtime's ctl); --only-region: only ticks whose thread is inside the region
 * named by ctl.only. Set before loading; a process with no runtime of ABI 5 counts no tick. */
const volatile __u32 gate_steps = 0;
const volatile __u32 only_region = 0;
/* --timeline: every counted tick into `ticks` (struct perch_tick); set before loading. */
const volatile __u32 timeline = 0;
/* Early stacks (struct perch_early): set before loading, where tables are walked. */
const volatile __u32 early_stacks = 0;
/* perch record -e A,B: every tick's key carries its event's index (the perf event's BPF cookie)
 * in its flags; one event, nothing to tell apart: the tick skips the helper. */
const volatile __u32 multi_event = 0;
/* The launched command's tgid (0: none), set by the loader before the command may exec: until
 * its first exec (generation 0) it is perch's forked child running perch's code. */
volatile __u32 launched_tgid = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_MAX_TARGETS);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries as needed: creating it costs nothing */
	__type(key, __u32);
	__type(value, __u32); /* exec generation (see perch_bpf.h) */
} targets SEC(".maps");

#define STACK_MAP                                                    \
	{                                                            \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);              \
		__uint(max_entries, PERCH_STACK_ENTRIES);            \
		__uint(key_size, sizeof(__u32));                     \
		__uint(value_size, PERCH_MAX_STACK * sizeof(__u64)); \
	}
#define COUNT_MAP                                         \
	{                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);          \
		__uint(max_entries, PERCH_COUNT_ENTRIES); \
		__type(key, struct perch_key);            \
		__type(value, __u64);                     \
	}

/* Allocated as stacks arrive (each buffer holds one drain period's), not all up front. */
#define DSTACK_MAP                                        \
	{                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);          \
		__uint(max_entries, PERCH_STACK_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);     \
		__type(key, __u64);                       \
		__type(value, struct perch_ustack);       \
	}

struct STACK_MAP stacks0 SEC(".maps");
struct STACK_MAP stacks1 SEC(".maps");
struct COUNT_MAP counts0 SEC(".maps");
struct COUNT_MAP counts1 SEC(".maps");
struct DSTACK_MAP dstacks0 SEC(".maps");
struct DSTACK_MAP dstacks1 SEC(".maps");

/* Every loaded table's rows, back to back, each table from an even row. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PERCH_UNWIND_ROWS / 2);
	__type(key, __u32);
	__type(value, struct perch_row_pair);
} unwind_rows SEC(".maps");

/* tgid -> its mappings with tables. Copied to a forked child here, dropped at exec. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_UNWIND_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct perch_proc_unwind);
} proc_unwind SEC(".maps");

/* tgid -> until when (bpf_ktime_get_ns) a tick whose walk stops short goes to `early`: set at
 * its exec (see struct perch_early). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_UNWIND_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u64);
} early_until SEC(".maps");

/* Early stacks for the loader to walk (struct perch_early, each only as long as its copy; one
 * page with --unwind=fp), built in the CPU's element of early_scratch (too big for a per-CPU
 * array's element; the loader sizes it to the CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PERCH_EARLY_RING);
} early SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct perch_early);
} early_scratch SEC(".maps");

/*
 * Which slot of the per-CPU scratch maps a program builds in: a tick (cpu-clock's hrtimer
 * interrupt, the cycles NMI) can interrupt a uprobe program on the same CPU, and building in the
 * same slot would overwrite the stack or region stack the probe is in the middle of.
 */
enum scratch_slot {
	SCRATCH_TICK = 0,
	SCRATCH_PROBE = 1,  /* uprobes: --gpu's launch probe, --gpu -p's libcuda probes */
	SCRATCH_OFFCPU = 2, /* --off-cpu: the switch-in probe */
	SCRATCH_SLOTS,
};

/* Where a tick builds the stack it unwinds (too big for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct perch_ustack);
} unwind_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERCH_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Processes with the region runtime: where a thread's region stack is. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_REGION_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries as needed: creating it costs nothing */
	__type(key, __u32);
	__type(value, struct perch_region_proc);
} region_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_REGION_STACKS);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* entries as needed: creating it costs nothing */
	__type(key, __u64);
	__type(value, struct perch_rstack);
} region_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct perch_rstack);
} region_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* --gpu: launch probe hits (struct perch_launch). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} launches SEC(".maps");

/* --timeline only (the loader sizes it to the machine; one page otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ticks SEC(".maps");

static __always_inline void stat_inc(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += 1;
}

static __always_inline void note_stack_error(long err, __u32 full_stat, __u32 fault_stat)
{
	if (err == -EEXIST || err == -12 /* ENOMEM */)
		stat_inc(full_stat);
	else
		stat_inc(fault_stat);
}

/* The user registers of the interrupted thread: the tick's own when it hit user mode, else the
 * ones saved on kernel entry. NULL for a thread that has none (a kernel thread). */
static __always_inline struct pt_regs *user_regs(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;

	if ((BPF_CORE_READ(regs, cs) & 3) == 3)
		return regs;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs || (BPF_CORE_READ(regs, cs) & 3) != 3)
		return NULL;
	return regs;
}

/* The word at the user stack pointer: the return address into the caller when the leaf has not
 * pushed anything (see struct perch_key). */
static __always_inline __u64 user_stack_top(struct pt_regs *regs)
{
	__u64 sp, word = 0;

	if (!regs)
		return 0;
	sp = BPF_CORE_READ(regs, sp);
	if (bpf_probe_read_user(&word, sizeof(word), (void *)sp))
		word = 0;
	return word;
}

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

/* A tick of tgid within PERCH_EARLY_NS of its exec (see struct perch_early). */
static __always_inline bool early_window(__u32 tgid, __u32 slot)
{
	__u64 *until;

	if (slot != SCRATCH_TICK)
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
 * caller walks frame pointers instead; USTACK_EARLY (ticks only) when it stops short in the early
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
	if (u.stop != UNW_DONE && u.stop != UNW_TRUNCATED && early_window(tgid, slot))
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

/* The program's own say (ABI 5, struct perch_ctl): true when tgid records nothing now (it
 * paused, or no step of the --steps range is open); else the step it has open into *step (1 + n,
 * 0: none) and --only-region's name id into *only (0: none known yet). */
static __always_inline bool proc_off(__u32 tgid, __u64 *step, __u32 *only)
{
	struct perch_region_proc *rp = bpf_map_lookup_elem(&region_procs, &tgid);
	struct perch_ctl c;

	*step = 0;
	*only = 0;
	if (!rp || !rp->ctl || bpf_probe_read_user(&c, sizeof(c), (void *)rp->ctl))
		return gate_steps || only_region; /* no runtime: no step, no region */
	if (c.paused)
		return true;
	if (c.in_step)
		*step = c.step + 1;
	if (gate_steps && !(c.in_step && c.step >= c.first && c.step <= c.last))
		return true;
	*only = c.only;
	return only_region && !c.only;
}

/*
 * A region stack's hash, the test for --only-region's id and the comparison of two stacks:
 * global functions like same_stack(), so the verifier checks each loop once per program instead
 * of once per caller (the three inlined 64-step loops were a third of the tick program's
 * verification, ~8 ms of every start). Each looks at ids[0 .. min(depth, PERCH_REGION_DEPTH))
 * only: what lies beyond the depth is not part of the stack (userspace reads no further).
 */
__noinline __u64 rstack_hash(const struct perch_rstack *st)
{
	__u64 hash = FNV_OFFSET;
	__u32 n;

	if (!st)
		return 1;
	n = st->depth;
	hash = (hash ^ n) * FNV_PRIME;
	for (__u32 i = 0; i < PERCH_REGION_DEPTH; i++) {
		if (i >= n)
			break;
		hash = (hash ^ st->ids[i]) * FNV_PRIME;
	}
	return hash | 1; /* never 0: 0 means no region */
}

__noinline int rstack_has(const struct perch_rstack *st, __u32 id)
{
	__u32 n;

	if (!st || !id)
		return 0;
	n = st->depth;
	for (__u32 i = 0; i < PERCH_REGION_DEPTH; i++) {
		if (i >= n)
			break;
		if (st->ids[i] == id)
			return 1;
	}
	return 0;
}

__noinline int same_rstack(const struct perch_rstack *a, const struct perch_rstack *b)
{
	__u32 n;

	if (!a || !b || a->depth != b->depth)
		return 0;
	n = a->depth;
	for (__u32 i = 0; i < PERCH_REGION_DEPTH; i++) {
		if (i >= n)
			break;
		if (a->ids[i] != b->ids[i])
			return 0;
	}
	return 1;
}

/* Key the sample by the interrupted thread's region stack, read from its TLS into scratch slot
 * `slot`; true when the stack holds the name id only (not 0). */
static __always_inline bool region_stack_find(__u32 tgid, struct perch_key *key, __u32 slot,
					      __u32 only)
{
	struct perch_region_proc *rp = bpf_map_lookup_elem(&region_procs, &tgid);
	struct perch_rstack *st, *old;
	__u64 fsbase = 0, hash;
	__s64 tls_offset = 0;
	bool found;

	if (!rp)
		return false;
	if (bpf_probe_read_user(&tls_offset, sizeof(tls_offset),
				(void *)(rp->registry + PERCH_REGISTRY_TLS_OFFSET)) ||
	    !tls_offset)
		return false; /* the runtime is not initialized yet: no region can be open */
	st = bpf_map_lookup_elem(&region_scratch, &slot);
	if (!st)
		return false;
#if defined(__TARGET_ARCH_x86)
	fsbase = BPF_CORE_READ(bpf_get_current_task_btf(), thread.fsbase);
#endif
	if (!fsbase || bpf_probe_read_user(st, sizeof(*st), (void *)(fsbase + tls_offset))) {
		stat_inc(PERCH_STAT_REGION_LOST);
		key->flags |= PERCH_KEY_REGION_LOST;
		return false;
	}
	if (!st->depth)
		return false;
	st->pad = 0;
	hash = rstack_hash(st);
	found = rstack_has(st, only);
	old = bpf_map_lookup_elem(&region_stacks, &hash);
	if (old) {
		if (!same_rstack(old, st))
			goto lost;
	} else if (bpf_map_update_elem(&region_stacks, &hash, st, BPF_NOEXIST)) {
		if (!bpf_map_lookup_elem(&region_stacks, &hash))
			goto lost; /* full (not a race with another CPU storing the same stack) */
	}
	key->region_hash = hash;
	return found;
lost:
	stat_inc(PERCH_STAT_REGION_LOST);
	key->flags |= PERCH_KEY_REGION_LOST;
	return found;
}

static __always_inline void region_stack_in(__u32 tgid, struct perch_key *key, __u32 slot)
{
	region_stack_find(tgid, key, slot, 0);
}

/* One more tick of key in countmap; false when the map is full (counted). */
static __always_inline bool count_key(void *countmap, struct perch_key *key)
{
	__u64 one = 1, *count = bpf_map_lookup_elem(countmap, key);

	if (count) {
		__sync_fetch_and_add(count, 1);
		return true;
	}
	if (!bpf_map_update_elem(countmap, key, &one, BPF_NOEXIST))
		return true;
	/* Lost the race with another CPU inserting the same key, or the map is full. */
	count = bpf_map_lookup_elem(countmap, key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return true;
	}
	stat_inc(PERCH_STAT_COUNT_FULL);
	return false;
}

/* --timeline: the counted tick, its time and key (see struct perch_tick). */
static __always_inline void send_tick(__u64 now, __u32 buf, const struct perch_key *key)
{
	struct perch_tick *t = bpf_ringbuf_reserve(&ticks, sizeof(*t), 0);

	if (!t) {
		stat_inc(PERCH_STAT_TICK_LOST);
		return;
	}
	t->time_ns = now;
	t->buf = buf;
	t->pad = 0;
	__builtin_memcpy(&t->key, key, sizeof(*key));
	bpf_ringbuf_submit(t, 0);
}

/* The user stack from sp into e->stack: the main thread's up to the process's first stack
 * pointer (argc; its strings lie above), another thread's halved until it fits below the end of
 * its stack. Returns the bytes copied. */
static __always_inline __u32 copy_early_stack(struct perch_early *e)
{
	__u64 top = BPF_CORE_READ(bpf_get_current_task_btf(), mm, start_stack) + 8, len;

	if (top > e->sp && top - e->sp <= PERCH_EARLY_STACK) {
		len = (top - e->sp) & (2 * PERCH_EARLY_STACK - 1);
		if (len && len <= PERCH_EARLY_STACK &&
		    !bpf_probe_read_user(e->stack, len, (void *)e->sp))
			return len;
		return 0;
	}
#pragma unroll
	for (int i = 0; i < 6; i++) {
		if (!bpf_probe_read_user(e->stack, PERCH_EARLY_STACK >> i, (void *)e->sp))
			return PERCH_EARLY_STACK >> i;
	}
	return 0;
}

/* Copy what a later walk needs (see struct perch_early) into the `early` ring, no more of the
 * stack than was copied; false when it is full (counted): the tick is then counted as it was. */
static __always_inline bool send_early(struct bpf_perf_event_data *ctx, struct pt_regs *regs,
				       const struct perch_key *key, __u64 now)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct perch_early *e = bpf_map_lookup_elem(&early_scratch, &cpu);
	__u64 size;
	long nk;

	if (!e)
		return false;
	e->time_ns = now ? now : bpf_ktime_get_ns();
	e->ip = BPF_CORE_READ(regs, ip);
	e->sp = BPF_CORE_READ(regs, sp);
	e->bp = BPF_CORE_READ(regs, bp);
	__builtin_memcpy(&e->key, key, sizeof(*key));
	nk = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);
	e->nk = nk > 0 ? nk : 0;
	e->len = copy_early_stack(e);
	size = offsetof(struct perch_early, stack) + (e->len & (2 * PERCH_EARLY_STACK - 1));
	if (size > sizeof(*e) || bpf_ringbuf_output(&early, e, size, 0)) {
		stat_inc(PERCH_STAT_EARLY_LOST);
		return false;
	}
	stat_inc(PERCH_STAT_EARLY);
	return true;
}

SEC("perf_event")
int on_tick(struct bpf_perf_event_data *ctx)
{
	struct perch_key key = {};
	void *stackmap, *countmap;
	struct pt_regs *regs;
	__u64 id, now;
	__u32 buf, tgid, *gen, only;
	long err;
	int how;

	if (perch_paused)
		return 0;
	id = bpf_get_current_pid_tgid();
	tgid = id >> 32;
	gen = bpf_map_lookup_elem(&targets, &tgid);
	if (!gen || proc_off(tgid, &key.step, &only))
		return 0;
	if (tgid && tgid == launched_tgid && !*gen) {
		stat_inc(PERCH_STAT_PRE_EXEC); /* perch's own code, not the command's */
		return 0;
	}
	/* The time before `active` (see struct perch_tick): a call the compiler keeps in order. */
	now = timeline ? bpf_ktime_get_ns() : 0;
	buf = active;
	stat_inc(PERCH_STAT_SAMPLES);

	stackmap = buf ? (void *)&stacks1 : (void *)&stacks0;
	countmap = buf ? (void *)&counts1 : (void *)&counts0;

	key.tgid = tgid;
	key.tid = (__u32)id;
	key.gen = *gen;
	if (multi_event)
		key.flags = (__u32)bpf_get_attach_cookie(ctx) << PERCH_KEY_EVENT_SHIFT;
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (!region_stack_find(tgid, &key, SCRATCH_TICK, only) && only_region)
		return 0; /* --only-region: not inside it */
	regs = user_regs(ctx);
	how = dwarf_user_stack(regs, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, &key);
	if (how == USTACK_EARLY && regs && send_early(ctx, regs, &key, now))
		return 0; /* the loader counts it once it has walked it */
	if (how != USTACK_DWARF) {
		err = bpf_get_stackid(ctx, stackmap, BPF_F_USER_STACK);
		key.ustack_id = err;
		if (err < 0)
			note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
		key.user_ret = regs ? user_stack_top(regs) : 0;
	}
	err = bpf_get_stackid(ctx, stackmap, 0);
	key.kstack_id = err;
	/* -EFAULT here means the tick hit user mode: there is no kernel part, nothing lost. */
	if (err < 0 && err != -EFAULT)
		note_stack_error(err, PERCH_STAT_KSTACK_FULL, PERCH_STAT_KSTACK_FAULT);

	if (count_key(countmap, &key) && timeline)
		send_tick(now, buf, &key);
	return 0;
}

/* The key of a launch is in the counts map with no count: the drain of buf names it. */
static __always_inline bool key_launch(void *countmap, const struct perch_key *key)
{
	__u64 zero = 0;

	return !bpf_map_update_elem(countmap, key, &zero, BPF_NOEXIST) ||
	       bpf_map_lookup_elem(countmap, key);
}

/*
 * --gpu: perch_cuda_launch(correlation_id) in libperch_cuda.so, at the exit of a launch call (see
 * struct perch_launch). The user stack is taken at the probe's first instruction, exactly as a
 * tick in user mode takes it; there is no kernel part.
 */
SEC("uprobe")
int BPF_KPROBE(on_launch, __u32 correlation_id)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, buf, *gen = bpf_map_lookup_elem(&targets, &tgid);
	struct perch_key key = {};
	struct perch_launch *l;
	__u64 now;
	long err;

	if (!gen)
		return 0;
	now = bpf_ktime_get_ns(); /* before `active`, as a tick's */
	buf = active;
	stat_inc(PERCH_STAT_LAUNCHES);
	key.tgid = tgid;
	key.tid = (__u32)id;
	key.gen = *gen;
	key.kstack_id = -EFAULT; /* user mode: no kernel part, nothing lost */
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	/* The probes' scratch slots: a tick's interrupt coming in the middle of this unwind on the
	 * same CPU must not write over its frames (it did: empty and foreign launch stacks). */
	region_stack_in(tgid, &key, SCRATCH_PROBE);
	if (!dwarf_user_stack_in(ctx, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, &key,
				 SCRATCH_PROBE)) {
		err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0,
				      BPF_F_USER_STACK);
		key.ustack_id = err;
		if (err < 0)
			note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
		key.user_ret = user_stack_top(ctx);
	}
	if (!key_launch(buf ? (void *)&counts1 : (void *)&counts0, &key))
		goto lost;
	l = bpf_ringbuf_reserve(&launches, sizeof(*l), 0);
	if (!l)
		goto lost;
	l->time_ns = now;
	l->buf = buf;
	l->correlation_id = correlation_id;
	__builtin_memcpy(&l->key, &key, sizeof(key));
	bpf_ringbuf_submit(l, 0);
	return 0;
lost:
	stat_inc(PERCH_STAT_LAUNCH_LOST);
	return 0;
}

/* ---- --gpu -p PID: libcuda's entry points (attach mode, see struct perch_gpu_call) -------- */

/* 4 MiB: some 26,000 calls between two reads (perch reads it at every look at its events, at
 * least every drain: 260,000 calls a second); past that, calls are counted lost. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} gpu_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} gpu_names SEC(".maps");

/* pid_tgid -> the name lookup it is inside (entry to return). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct perch_gpu_pending);
} gpu_pending SEC(".maps");

/* The caller's user stack and region stack into key, as on_launch takes them: at the probe's
 * first instruction, no kernel part. False when the key could not be kept. */
static __always_inline bool gpu_call_key(struct pt_regs *ctx, __u64 id, __u32 gen, __u32 buf,
					 struct perch_key *key)
{
	__u32 tgid = id >> 32;
	long err;

	key->tgid = tgid;
	key->tid = (__u32)id;
	key->gen = gen;
	key->kstack_id = -EFAULT;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	region_stack_in(tgid, key, SCRATCH_PROBE);
	if (!dwarf_user_stack_in(ctx, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, key,
				 SCRATCH_PROBE)) {
		err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0,
				      BPF_F_USER_STACK);
		key->ustack_id = err;
		if (err < 0)
			note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
		key->user_ret = user_stack_top(ctx);
	}
	return key_launch(buf ? (void *)&counts1 : (void *)&counts0, key);
}

/* A launch, copy or memset entry point; the cookie says which (format/gpu_entries.h). */
SEC("uprobe")
int on_gpu_call(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, buf, *gen = bpf_map_lookup_elem(&targets, &tgid);
	struct perch_key key = {};
	struct perch_gpu_call *c;

	if (!gen)
		return 0;
	now = bpf_ktime_get_ns(); /* before `active`, as a tick's */
	buf = active;
	stat_inc(PERCH_STAT_GPU_CALLS);
	if (!gpu_call_key(ctx, id, *gen, buf, &key))
		goto lost;
	c = bpf_ringbuf_reserve(&gpu_calls, sizeof(*c), 0);
	if (!c)
		goto lost;
	c->time_ns = now;
	c->buf = buf;
	c->entry = (__u32)bpf_get_attach_cookie(ctx);
	c->args[0] = PT_REGS_PARM1(ctx);
	c->args[1] = PT_REGS_PARM2(ctx);
	c->args[2] = PT_REGS_PARM3(ctx);
	c->args[3] = PT_REGS_PARM4(ctx);
	c->args[4] = PT_REGS_PARM5(ctx);
	c->args[5] = ctx->r9; /* the sixth: libbpf 1.1 has no PT_REGS_PARM6 */
	__builtin_memcpy(&c->key, &key, sizeof(key));
	bpf_ringbuf_submit(c, 0);
	return 0;
lost:
	stat_inc(PERCH_STAT_GPU_CALL_LOST);
	return 0;
}

/* The entry of a name lookup (enum perch_gpu_namer in the cookie): its arguments, for its return. */
SEC("uprobe")
int on_gpu_namer(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct perch_gpu_pending p = {};

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	p.out = PT_REGS_PARM1(ctx);
	p.kernel = PT_REGS_PARM2(ctx);
	p.name = PT_REGS_PARM3(ctx);
	p.namer = (__u32)bpf_get_attach_cookie(ctx);
	bpf_map_update_elem(&gpu_pending, &id, &p, BPF_ANY);
	return 0;
}

/* Its return: the handle the callee wrote and the name it was given (read now: paged in). */
SEC("uretprobe")
int on_gpu_named(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct perch_gpu_pending *p = bpf_map_lookup_elem(&gpu_pending, &id);
	struct perch_gpu_name *n;
	long len = 0;

	if (!p)
		return 0;
	n = bpf_ringbuf_reserve(&gpu_names, sizeof(*n), 0);
	if (!n) {
		stat_inc(PERCH_STAT_GPU_NAME_LOST);
		bpf_map_delete_elem(&gpu_pending, &id);
		return 0;
	}
	n->tgid = id >> 32;
	n->namer = p->namer;
	n->result = (__s32)PT_REGS_RC(ctx);
	n->kernel = p->namer == PERCH_GPU_NAMER_KERNEL ? p->kernel : 0;
	if (bpf_probe_read_user(&n->handle, sizeof(n->handle), (void *)p->out))
		n->handle = 0;
	if (p->namer != PERCH_GPU_NAMER_KERNEL)
		len = bpf_probe_read_user_str(n->name, sizeof(n->name), (void *)p->name);
	n->len = len > 0 ? (__u32)len - 1 : 0;
	bpf_ringbuf_submit(n, 0);
	bpf_map_delete_elem(&gpu_pending, &id);
	return 0;
}

static __always_inline void send_event(__u32 type, __u32 pid, __u32 ppid, __u32 gen,
				       struct task_struct *t)
{
	struct perch_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(PERCH_STAT_EVENT_LOST);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->ppid = ppid;
	e->gen = gen;
	e->time_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	bpf_ringbuf_submit(e, 0);
}

/* Raw tracepoints, not tp_btf: attaching those would make libbpf read the kernel's BTF from
 * sysfs, which costs more than loading every program here (the CO-RE relocations read perch's
 * copy of it instead; see userspace/record/btfcache.h). The task pointers are read with CO-RE. */
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	__u32 zero = 0, *pgen;

	if (ctgid == ptgid)
		return 0; /* a new thread: threads are sampled through their tgid */
	pgen = bpf_map_lookup_elem(&targets, &ptgid);
	if (!pgen) {
		/* Not ours; but the pid may be reused from a target that exited moments ago and
		 * that the loader has not forgotten yet. */
		if (bpf_map_lookup_elem(&targets, &ctgid))
			bpf_map_delete_elem(&targets, &ctgid);
		return 0;
	}
	if (bpf_map_update_elem(&targets, &ctgid, &zero, BPF_ANY))
		stat_inc(PERCH_STAT_TARGET_FULL);
	/* The child runs its parent's image until it execs: the same tables, from its first tick. */
	if (unwind_mode != PERCH_UNWIND_FP) {
		struct perch_proc_unwind *pu = bpf_map_lookup_elem(&proc_unwind, &ptgid);

		if (pu)
			bpf_map_update_elem(&proc_unwind, &ctgid, pu, BPF_ANY);
	}
	/* And the same region runtime at the same addresses. */
	{
		struct perch_region_proc *rp = bpf_map_lookup_elem(&region_procs, &ptgid);

		if (rp)
			bpf_map_update_elem(&region_procs, &ctgid, rp, BPF_ANY);
	}
	send_event(PERCH_EV_FORK, ctgid, ptgid, *pgen, child);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid), *gen = bpf_map_lookup_elem(&targets, &tgid);

	if (!gen)
		return 0;
	/* The old image's tables no longer apply; the loader lists the new image's. */
	bpf_map_delete_elem(&proc_unwind, &tgid);
	bpf_map_delete_elem(&region_procs, &tgid);
	if (early_stacks) {
		__u64 until = bpf_ktime_get_ns() + PERCH_EARLY_NS;

		bpf_map_update_elem(&early_until, &tgid, &until, BPF_ANY);
	}
	/* A process execs on one thread at a time (exec ends the others): no race on gen. */
	*gen += 1;
	send_event(PERCH_EV_EXEC, tgid, 0, *gen, p);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0; /* other threads of the process live on */
	bpf_map_delete_elem(&early_until, &tgid);
	/* The loader removes it from `targets` once it has read the process's last mmap
	 * records, which it filters by this map. */
	send_event(PERCH_EV_EXIT, tgid, 0, 0, p);
	return 0;
}

/* ---- --off-cpu: blocked time of target threads (see struct perch_offcpu_start) ------------ */

/* Blocks shorter than this are not kept (ns; --off-cpu-min). Set before loading. */
const volatile __u64 off_cpu_min_ns = 0;
/* How many times the loader has flipped `active` (it clears a buffer's stacks at each drain). */
volatile __u32 flips = 0;
/* The recorded windows (written by the loader, sampler__pause()): CLOCK_MONOTONIC ns of the last
 * resume and of the last pause; paused_ns > resumed_ns while a pause lasts (0, 0: recording). */
volatile __u64 resumed_ns = 0;
volatile __u64 paused_ns = 0;
volatile __u64 resumed_before_ns = 0; /* the resume the last pause ended the window of */

/* --off-cpu --timeline: block spans (struct perch_offspan); the loader sizes it (one page
 * otherwise). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} offspans SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_MAX_TARGETS);
	__type(key, __u32); /* tid */
	__type(value, struct perch_offcpu_start);
} offcpu_start SEC(".maps");

#define OFFCPU_MAP                                        \
	{                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);          \
		__uint(max_entries, PERCH_COUNT_ENTRIES); \
		__type(key, struct perch_key);            \
		__type(value, __u64);                     \
	}

struct OFFCPU_MAP offcpu0 SEC(".maps");
struct OFFCPU_MAP offcpu1 SEC(".maps");

/* ns more off-CPU time of key in offmap; false when the map is full. */
static __always_inline bool add_offcpu(void *offmap, const struct perch_key *key, __u64 ns)
{
	__u64 *sum = bpf_map_lookup_elem(offmap, key);

	if (sum) {
		__sync_fetch_and_add(sum, ns);
		return true;
	}
	if (!bpf_map_update_elem(offmap, key, &ns, BPF_NOEXIST))
		return true;
	sum = bpf_map_lookup_elem(offmap, key);
	if (sum)
		__sync_fetch_and_add(sum, ns);
	return sum != NULL;
}

/* --timeline: the block's span (see struct perch_offspan). */
static __always_inline void send_offspan(__u64 start, __u64 end, __u32 buf,
					 const struct perch_key *key)
{
	struct perch_offspan *o;

	if (!timeline)
		return;
	o = bpf_ringbuf_reserve(&offspans, sizeof(*o), 0);
	if (!o) {
		stat_inc(PERCH_STAT_OFFSPAN_LOST);
		return;
	}
	o->start_ns = start;
	o->end_ns = end;
	o->buf = buf;
	o->pad = 0;
	__builtin_memcpy(&o->key, key, sizeof(*key));
	bpf_ringbuf_submit(o, 0);
}

/* [start, end) of key's block: to the off-CPU map of buf and, with --timeline, as a span. */
static __always_inline void keep_block(__u64 start, __u64 end, __u32 buf,
				       const struct perch_key *key)
{
	if (!add_offcpu(buf ? (void *)&offcpu1 : (void *)&offcpu0, key, end - start)) {
		stat_inc(PERCH_STAT_OFF_CPU_LOST);
		return;
	}
	send_offspan(start, end, buf, key);
}

/*
 * next runs again: its blocked time, if long enough, to the key it left the CPU with; only the
 * parts inside the recorded windows: from the last resume on, up to a pause still going, and the
 * part before the last pause when the block began before it (earlier windows inside one block
 * are not seen: one pause and one resume are remembered).
 */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	__u32 tid = BPF_CORE_READ(next, pid), buf;
	struct perch_offcpu_start *st = bpf_map_lookup_elem(&offcpu_start, &tid);
	__u64 start, end = now, resumed = resumed_ns, paused = paused_ns, from;
	struct perch_key key;

	if (!st || !st->time_ns)
		return;
	start = st->time_ns;
	st->time_ns = 0;
	if (end <= start || end - start < off_cpu_min_ns)
		return;
	__builtin_memcpy(&key, &st->key, sizeof(key));
	buf = active;
	stat_inc(PERCH_STAT_OFF_CPU);
	if (paused > resumed) { /* pausing or paused: the part up to the pause */
		from = start > resumed ? start : resumed;
		if (paused > from)
			keep_block(from, end < paused ? end : paused, buf, &key);
		return;
	}
	if (start < paused) /* began before the last pause: the part before it */
		keep_block(start > resumed_before_ns ? start : resumed_before_ns, paused, buf,
			   &key);
	from = start > resumed ? start : resumed;
	if (end > from)
		keep_block(from, end, buf, &key);
}

#define SWITCH_SKIP 2 /* kernel frames above __schedule: the program, bpf_trace_run4 */

/* The user part of the key of the thread leaving the CPU (the current one), as a tick's; its
 * user registers in *ip, *sp. */
static __always_inline void switch_out_ustack(void *ctx, __u32 tgid, __u32 buf,
					      struct perch_key *key, struct pt_regs *regs)
{
	long err;

	if (dwarf_user_stack_in(regs, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, key,
				SCRATCH_OFFCPU))
		return;
	err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0, BPF_F_USER_STACK);
	key->ustack_id = err;
	if (err < 0)
		note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
	key->user_ret = regs ? user_stack_top(regs) : 0;
}

/* The key of the thread leaving the CPU into st (its user stack reused when st took it from
 * the same registers in this drain period); 0 or -1 (lost). */
static __always_inline int switch_out_key(void *ctx, __u32 tgid, __u32 tid, __u32 gen,
					  struct perch_offcpu_start *st, bool reuse)
{
	__u32 buf = active, f = flips << 1 | buf; /* a flip between the two reads: no match */
	struct perch_key *key = &st->key;
	struct pt_regs *regs;
	__u64 ip = 0, sp = 0, step = key->step; /* the caller's */
	long err;

	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs && (BPF_CORE_READ(regs, cs) & 3) != 3)
		regs = NULL;
	if (regs) {
		ip = BPF_CORE_READ(regs, ip);
		sp = BPF_CORE_READ(regs, sp);
	}
	reuse = reuse && regs && st->flips == f && st->ip == ip && st->sp == sp &&
		key->tgid == tgid && key->gen == gen;
	key->flags &= PERCH_KEY_DWARF | PERCH_KEY_TRUNCATED | PERCH_KEY_UNWIND_FAILED;
	if (!reuse) {
		__builtin_memset(key, 0, sizeof(*key));
		key->tgid = tgid;
		key->tid = tid;
		key->gen = gen;
		key->step = step;
		switch_out_ustack(ctx, tgid, buf, key, regs);
	}
	st->flips = f;
	st->ip = ip;
	st->sp = sp;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	key->region_hash = 0;
	region_stack_in(tgid, key, SCRATCH_OFFCPU);
	/* From __schedule on: the program and bpf_trace_run are not the thread's. */
	err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0, SWITCH_SKIP);
	key->kstack_id = err;
	if (err < 0)
		note_stack_error(err, PERCH_STAT_KSTACK_FULL, PERCH_STAT_KSTACK_FAULT);
	if (st->preempted)
		key->flags |= PERCH_KEY_PREEMPTED;
	/* Named at the drain of this buffer, while its stacks are there: the block may end
	 * periods later. */
	return key_launch(buf ? (void *)&counts1 : (void *)&counts0, key) ? 0 : -1;
}

/*
 * Runs as prev, the thread leaving the CPU: its stacks are the ones it blocks with. Like bcc's
 * offcputime, the stacks are taken at every switch-out of a target thread and the block's
 * length is known only when it runs again (switch_in).
 */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tgid = id >> 32, tid = (__u32)id, *gen;
	struct perch_offcpu_start zero = {}, *st;
	__u64 step;
	__u32 only;

	switch_in(next, now);
	gen = bpf_map_lookup_elem(&targets, &tgid);
	if (!tid || !gen || perch_paused) /* paused: no block starts (switch_in clips one ending) */
		return 0;
	if (proc_off(tgid, &step, &only)) /* the program paused, or outside --steps */
		return 0;
	if (BPF_CORE_READ(prev, __state) & 0x80 /* TASK_DEAD: its last switch */) {
		bpf_map_delete_elem(&offcpu_start, &tid);
		return 0;
	}
	st = bpf_map_lookup_elem(&offcpu_start, &tid);
	if (!st) {
		if (bpf_map_update_elem(&offcpu_start, &tid, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&offcpu_start, &tid)) {
			stat_inc(PERCH_STAT_OFF_CPU_LOST); /* full */
			return 0;
		}
		st = bpf_map_lookup_elem(&offcpu_start, &tid);
		if (!st)
			return 0;
		st->flips = ~0u; /* no stack to reuse */
	}
	st->time_ns = 0; /* not a block until its key is complete */
	st->preempted = BPF_CORE_READ(prev, __state) == 0; /* TASK_RUNNING: still runnable */
	st->key.step = step; /* kept by switch_out_key, as the key's other fields it reuses */
	if (switch_out_key(ctx, tgid, tid, *gen, st, true)) {
		stat_inc(PERCH_STAT_OFF_CPU_LOST);
		return 0;
	}
	st->time_ns = now;
	return 0;
}
