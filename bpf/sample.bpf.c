// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler: runs on every perf_event tick on every CPU, keeps only ticks that hit a target
 * process (tgid in `targets`), and counts them in the kernel keyed by (tgid, tid, user stack id,
 * kernel stack id, word at the user stack pointer). Follows forks of targets and reports when
 * their last thread exits.
 *
 * Counts and stacks are double buffered: the loader flips `active`, waits for in-flight ticks to
 * finish, drains and clears the idle buffer. Each buffer only holds one drain period's distinct
 * stacks, so the maps never fill on a long run; when one does, the loss is counted.
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
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

struct STACK_MAP stacks0 SEC(".maps");
struct STACK_MAP stacks1 SEC(".maps");
struct COUNT_MAP counts0 SEC(".maps");
struct COUNT_MAP counts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PERCH_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

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

/* The word at the user stack pointer: the return address into the caller when the leaf has not
 * pushed anything (see struct perch_key). */
static __always_inline __u64 user_stack_top(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)&ctx->regs;
	__u64 sp, word = 0;

	if ((BPF_CORE_READ(regs, cs) & 3) != 3) {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		sp = BPF_CORE_READ(regs, sp);
	} else {
		sp = regs->sp;
	}
	if (bpf_probe_read_user(&word, sizeof(word), (void *)sp))
		word = 0;
	return word;
}

SEC("perf_event")
int on_tick(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct perch_key key = {};
	__u64 one = 1, *count;
	__u32 buf = active;
	void *stackmap, *countmap;
	long err;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	stat_inc(PERCH_STAT_SAMPLES);

	stackmap = buf ? (void *)&stacks1 : (void *)&stacks0;
	countmap = buf ? (void *)&counts1 : (void *)&counts0;

	key.tgid = tgid;
	key.tid = (__u32)id;
	err = bpf_get_stackid(ctx, stackmap, BPF_F_USER_STACK);
	key.ustack_id = err;
	if (err < 0)
		note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
	err = bpf_get_stackid(ctx, stackmap, 0);
	key.kstack_id = err;
	/* -EFAULT here means the tick hit user mode: there is no kernel part, nothing lost. */
	if (err < 0 && err != -EFAULT)
		note_stack_error(err, PERCH_STAT_KSTACK_FULL, PERCH_STAT_KSTACK_FAULT);
	key.user_ret = user_stack_top(ctx);

	count = bpf_map_lookup_elem(countmap, &key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return 0;
	}
	if (bpf_map_update_elem(countmap, &key, &one, BPF_NOEXIST)) {
		/* Lost the race with another CPU inserting the same key, or the map is full. */
		count = bpf_map_lookup_elem(countmap, &key);
		if (count)
			__sync_fetch_and_add(count, 1);
		else
			stat_inc(PERCH_STAT_COUNT_FULL);
	}
	return 0;
}

static __always_inline void send_event(__u32 type, __u32 pid, __u32 ppid, struct task_struct *t)
{
	struct perch_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		stat_inc(PERCH_STAT_EVENT_LOST);
		return;
	}
	e->type = type;
	e->pid = pid;
	e->ppid = ppid;
	e->pad = 0;
	e->time_ns = bpf_ktime_get_ns();
	BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 one = 1;

	if (ctgid == ptgid)
		return 0; /* a new thread: threads are sampled through their tgid */
	if (!bpf_map_lookup_elem(&targets, &ptgid)) {
		/* Not ours; but the pid may be reused from a target that exited moments ago and
		 * that the loader has not forgotten yet. */
		if (bpf_map_lookup_elem(&targets, &ctgid))
			bpf_map_delete_elem(&targets, &ctgid);
		return 0;
	}
	if (bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY))
		stat_inc(PERCH_STAT_TARGET_FULL);
	send_event(PERCH_EV_FORK, ctgid, ptgid, child);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (bpf_map_lookup_elem(&targets, &tgid))
		send_event(PERCH_EV_EXEC, tgid, 0, p);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0; /* other threads of the process live on */
	/* The loader removes it from `targets` once it has read the process's last mmap
	 * records, which it filters by this map. */
	send_event(PERCH_EV_EXIT, tgid, 0, p);
	return 0;
}
