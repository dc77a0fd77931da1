/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --off-cpu: blocked time of target threads on sched_switch (part of the sampler's program).
 *
 * bpf/sample.bpf.c includes it where it stands (one BPF object, one compilation unit): it uses
 * the maps and helpers defined before it there.
 */

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

/* The user stack by frame pointers (the kernel's walk), as a tick without tables takes it. */
static __always_inline void fp_user_stack(void *ctx, __u32 buf, struct perch_key *key,
					  struct pt_regs *regs)
{
	long err =
		bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0, BPF_F_USER_STACK);

	key->ustack_id = err;
	if (err < 0)
		note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
	key->user_ret = regs ? user_stack_top(regs) : 0;
}

/* The user part of the key of the thread leaving the CPU (the current one), as a tick's; its
 * user registers in *ip, *sp. True when the stack is to go to the `early` ring (the process's
 * early window, its tables not listed yet: struct perch_early). */
static __always_inline bool switch_out_ustack(void *ctx, __u32 tgid, __u32 buf,
					      struct perch_key *key, struct pt_regs *regs)
{
	long err;

	err = dwarf_user_stack_in(regs, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, key,
				  SCRATCH_OFFCPU);
	if (err == USTACK_DWARF)
		return false;
	if (err == USTACK_EARLY && regs)
		return true;
	fp_user_stack(ctx, buf, key, regs);
	return false;
}

/* The key of the thread leaving the CPU into st (its user stack reused when st took it from
 * the same registers in this drain period); 0 or -1 (lost). */
static __always_inline int switch_out_key(void *ctx, __u32 tgid, __u32 tid, __u32 gen,
					  struct perch_offcpu_start *st, bool reuse, __u64 now)
{
	__u32 buf = active, f = flips << 1 | buf; /* a flip between the two reads: no match */
	struct perch_key *key = &st->key;
	struct pt_regs *regs;
	__u64 ip = 0, sp = 0, step = key->step; /* the caller's */
	bool to_ring = false;
	long err;

	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs && (BPF_CORE_READ(regs, cs) & 3) != 3)
		regs = NULL;
	if (regs) {
		ip = BPF_CORE_READ(regs, ip);
		sp = BPF_CORE_READ(regs, sp);
	}
	/* An early key is never reused: its name is its own record's. */
	reuse = reuse && regs && st->flips == f && st->ip == ip && st->sp == sp &&
		key->tgid == tgid && key->gen == gen && !(key->flags & PERCH_KEY_EARLY);
	key->flags &=
		PERCH_KEY_DWARF | PERCH_KEY_TRUNCATED | PERCH_KEY_UNWIND_FAILED | PERCH_KEY_FP_LEAF;
	if (!reuse) {
		__builtin_memset(key, 0, sizeof(*key));
		key->tgid = tgid;
		key->tid = tid;
		key->gen = gen;
		key->step = step;
		to_ring = switch_out_ustack(ctx, tgid, buf, key, regs);
	}
	st->flips = f;
	st->ip = ip;
	st->sp = sp;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	key->region_hash = 0;
	region_stack_in(tgid, key, SCRATCH_OFFCPU);
	/* Never reused: Python calls run on the interpreter's own frames, so the same native
	 * registers can block under another Python function. */
	key->py_hash = 0;
	py_stack_in(tgid, tid, buf, key, SCRATCH_OFFCPU);
	if (st->preempted)
		key->flags |= PERCH_KEY_PREEMPTED;
	if (to_ring) {
		/* Its stacks in the record; the time makes the key one of its own. */
		key->flags |= PERCH_KEY_EARLY;
		key->ustack_hash = now;
		if (send_early(ctx, regs, key, now, SWITCH_SKIP))
			return 0;
		key->flags &= ~PERCH_KEY_EARLY; /* the ring is full: by frame pointers */
		key->ustack_hash = 0;
		fp_user_stack(ctx, buf, key, regs);
	}
	/* From __schedule on: the program and bpf_trace_run are not the thread's. */
	err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0, SWITCH_SKIP);
	key->kstack_id = err;
	if (err < 0)
		note_stack_error(err, PERCH_STAT_KSTACK_FULL, PERCH_STAT_KSTACK_FAULT);
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
	if (switch_out_key(ctx, tgid, tid, *gen, st, true, now)) {
		stat_inc(PERCH_STAT_OFF_CPU_LOST);
		return 0;
	}
	st->time_ns = now;
	return 0;
}
