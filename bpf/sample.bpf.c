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
 *
 * One object from one compilation unit, in pieces: this file (maps, the tick), unwind.bpf.h (the
 * unwinder), gpu.bpf.h (--gpu's probes), procs.bpf.h (fork, exec, exit), offcpu.bpf.h
 * (--off-cpu), each included where it stands.
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
 * page with --unwind=fp), built in the CPU's elements of early_scratch (too big for a per-CPU
 * array's element; the loader sizes it to two a CPU: a tick's, and a switch-out's, which a
 * cycles NMI can interrupt). */
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

#include "unwind.bpf.h"
#include "python.bpf.h"

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
 * stack than was copied; false when it is full (counted): the tick is then counted as it was.
 * kskip: 0 for a tick; for a switch-out the kernel frames above the thread's (its own slot). */
static __always_inline bool send_early(void *ctx, struct pt_regs *regs, const struct perch_key *key,
				       __u64 now, __u32 kskip)
{
	__u32 slot = bpf_get_smp_processor_id() * 2 + (kskip ? 1 : 0);
	struct perch_early *e = bpf_map_lookup_elem(&early_scratch, &slot);
	__u64 size;
	long nk;

	if (!e)
		return false;
	e->time_ns = now ? now : bpf_ktime_get_ns();
	e->ip = BPF_CORE_READ(regs, ip);
	e->sp = BPF_CORE_READ(regs, sp);
	e->bp = BPF_CORE_READ(regs, bp);
	__builtin_memcpy(&e->key, key, sizeof(*key));
	nk = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), kskip);
	e->nk = nk > 0 ? nk : 0;
	e->len = copy_early_stack(e);
	size = offsetof(struct perch_early, stack) + (e->len & (2 * PERCH_EARLY_STACK - 1));
	if (size > sizeof(*e) || bpf_ringbuf_output(&early, e, size, 0)) {
		stat_inc(PERCH_STAT_EARLY_LOST);
		return false;
	}
	if (!kskip)
		stat_inc(PERCH_STAT_EARLY); /* the ticks' */
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
	py_stack_in(tgid, key.tid, buf, &key, SCRATCH_TICK);
	regs = user_regs(ctx);
	how = dwarf_user_stack(regs, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, &key);
	if (how == USTACK_EARLY && regs && send_early(ctx, regs, &key, now, 0))
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

#include "gpu.bpf.h"
#include "procs.bpf.h"
#include "offcpu.bpf.h"
