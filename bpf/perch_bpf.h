/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Record layouts shared by the BPF sampler (bpf/sample.bpf.c) and the userspace loader
 * (userspace/record.c). Both sides include this one header; fixed-width types only, no pointers.
 */
#ifndef PERCH_BPF_H
#define PERCH_BPF_H

/* The kernel's own limit on a callchain (kernel.perf_event_max_stack defaults to 127). */
#define PERCH_MAX_STACK 127

/* Entries per stack map and per counts map. The loader swaps buffers every drain period, so
 * each buffer only has to hold the distinct stacks of one period. */
#define PERCH_STACK_ENTRIES 16384
#define PERCH_COUNT_ENTRIES 16384
#define PERCH_MAX_TARGETS   65536

/*
 * One aggregated sample bucket. The kernel counts samples per key in the active counts map.
 * user_ret is the word at the user stack pointer when the tick fired: for a leaf function that
 * set up no frame (GCC 12 does this even with -mno-omit-leaf-frame-pointer), it is the return
 * address into the leaf's caller, which a frame-pointer walk never sees. Userspace decides from
 * the leaf's prologue whether to splice it in. flags carries PERCH_KEY_* bits.
 */
struct perch_key {
	__u32 tgid;
	__u32 tid;
	__s32 ustack_id; /* <0: -errno from bpf_get_stackid, or none (kernel thread) */
	__s32 kstack_id; /* <0: -errno, or no kernel part (sample taken in user mode) */
	__u64 user_ret;
	__u64 user_sp_off; /* reserved for DWARF unwinding (later); 0 now */
};

/* Counters the sampler keeps per CPU; userspace sums them. Never drop silently. */
enum perch_stat {
	PERCH_STAT_SAMPLES = 0, /* ticks that hit a target thread */
	PERCH_STAT_COUNT_FULL,	/* counts map full: sample lost */
	PERCH_STAT_USTACK_FULL, /* stack map full or hash collision (-EEXIST/-ENOMEM) on user stack */
	PERCH_STAT_KSTACK_FULL,	 /* the same for the kernel stack */
	PERCH_STAT_USTACK_FAULT, /* user stack could not be read (-EFAULT etc.) */
	PERCH_STAT_KSTACK_FAULT, /* kernel stack could not be read */
	PERCH_STAT_TARGET_FULL,	 /* a forked child could not be added to the target set */
	PERCH_STAT_EVENT_LOST,	 /* process events dropped because the ring buffer was full */
	PERCH_STAT_MAX,
};

/* Process events the sampler sends through its ring buffer. */
enum perch_event_type {
	PERCH_EV_FORK = 1, /* child tgid created by a tracked process */
	PERCH_EV_EXEC = 2, /* a tracked process called exec */
	PERCH_EV_EXIT = 3, /* a tracked process's last thread exited */
};

struct perch_event {
	__u32 type;
	__u32 pid;  /* tgid the event is about */
	__u32 ppid; /* parent tgid for FORK */
	__u32 pad;
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[16];
};

#endif /* PERCH_BPF_H */
