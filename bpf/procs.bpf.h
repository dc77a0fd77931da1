/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The targets' process events: fork, exec and exit (part of the sampler's program).
 *
 * bpf/sample.bpf.c includes it where it stands (one BPF object, one compilation unit): it uses
 * the maps and helpers defined before it there.
 */

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
