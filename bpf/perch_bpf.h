/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Record layouts shared by the BPF sampler (bpf/sample.bpf.c) and the userspace loader
 * (userspace/record/sampler/). Both sides include this one header; fixed-width types only, no
 * pointers.
 */
#ifndef PERCH_BPF_H
#define PERCH_BPF_H

#include "unwind/unwind_row.h"

/* The kernel's own limit on a callchain (kernel.perf_event_max_stack defaults to 127). */
#define PERCH_MAX_STACK 127

/* Entries per stack map and per counts map. The loader swaps buffers every drain period, so
 * each buffer only has to hold the distinct stacks of one period. */
#define PERCH_STACK_ENTRIES 16384
#define PERCH_COUNT_ENTRIES 16384
#define PERCH_MAX_TARGETS   65536

/*
 * One aggregated sample bucket. The kernel counts samples per key in the active counts map.
 *
 * Frame-pointer stacks (flags without PERCH_KEY_DWARF): ustack_id is the user stack's id in the
 * stack map. user_ret is the word at the user stack pointer when the tick fired: for a leaf
 * function that set up no frame (GCC 12 does this even with -mno-omit-leaf-frame-pointer), it is
 * the return address into the leaf's caller, which a frame-pointer walk never sees. Userspace
 * decides from the leaf's prologue whether to splice it in.
 *
 * Stacks the sampler unwound itself from the DWARF tables (PERCH_KEY_DWARF): ustack_hash is the
 * user stack's key in the dwarf stack map, ustack_id is 0 (or -errno when the stack could not be
 * stored) and user_ret is 0: the stack is complete, nothing to splice in. Except where the leaf
 * (JIT code: no table) was left by its frame pointer (PERCH_KEY_FP_LEAF): user_ret as above.
 */
struct perch_key {
	__u32 tgid;
	__u32 tid;
	__s32 ustack_id; /* <0: -errno from bpf_get_stackid, or none (kernel thread) */
	__s32 kstack_id; /* <0: -errno, or no kernel part (sample taken in user mode) */
	__u64 user_ret;
	__u64 ustack_hash; /* PERCH_KEY_DWARF: key in the dwarf stack map */
	__u64 region_hash; /* the thread's open regions: key in region_stacks; 0 = none open */
	__u32 flags;	   /* PERCH_KEY_* */
	__u32 gen;	   /* the process's exec generation (its value in `targets`) */
	char comm[16];	   /* the thread's name when the sample was taken */
	__u64 step;	   /* 1 + the step its program had open (perch_step(n)); 0: none */
	__u64 py_hash;	   /* the thread's Python frames: key in this buffer's pystacks; 0: none */
};

enum perch_key_flags {
	PERCH_KEY_DWARF = 1 << 0,	  /* user stack unwound in BPF from DWARF tables */
	PERCH_KEY_TRUNCATED = 1 << 1,	  /* unwinding hit PERCH_MAX_STACK: outer frames missing */
	PERCH_KEY_UNWIND_FAILED = 1 << 2, /* unwinding stopped early: outer frames missing */
	PERCH_KEY_REGION_LOST = 1 << 3,	  /* the region stack could not be read or stored */
	PERCH_KEY_PREEMPTED = 1 << 4,	  /* --off-cpu: switched out while runnable (not blocked) */
	PERCH_KEY_FP_LEAF = 1 << 5, /* PERCH_KEY_DWARF whose leaf (no table, not frameless) was
				     * left by its frame pointer: user_ret as for a frame-pointer
				     * stack */
	PERCH_KEY_PY_TRUNCATED = 1
				 << 6, /* Python frames: PERCH_PY_DEPTH kept, outer ones missing */
	PERCH_KEY_PY_LOST = 1 << 7,    /* Python frames: the walk stopped at memory it could not
					  * read, or the stack could not be stored */
	PERCH_KEY_EARLY = 1 << 8, /* --off-cpu: a switch-out in its process's early window (struct
				   * perch_early): its stacks come through the `early` ring, keyed
				   * by its time in ustack_hash; the loader names it once walked */
};
/* perch record -e A,B: the tick's event index (its perf event's BPF cookie) in flags' top byte. */
#define PERCH_KEY_EVENT_SHIFT 24

/*
 * Regions (include/perch.h): for a process whose region runtime the loader found, the sampler
 * reads the interrupted thread's region stack (struct perch_abi_tls at thread pointer +
 * the registry's tls_offset) at every tick and keys the sample by it. Region stacks are few and small: they
 * stay in region_stacks for the whole recording, keyed by a hash of depth and ids.
 */
#define PERCH_REGION_DEPTH  64 /* PERCH_MAX_DEPTH in include/perch_abi.h */
#define PERCH_REGION_PROCS  16384
#define PERCH_REGION_STACKS 16384

/* Where the process's registry is: the sampler reads its tls_offset at every tick (0 until the
 * runtime's constructor ran), so it needs nothing more from the loader once the registry is
 * found, even in the first milliseconds of a launched program. */
#define PERCH_REGISTRY_TLS_OFFSET 16 /* offsetof(struct perch_abi_registry, tls_offset) */

struct perch_region_proc {
	__u64 registry;
	__u64 ctl; /* the registry's ctl (ABI 5 on; 0: an older runtime, no steps or pauses) */
};

/* The first bytes of struct perch_abi_ctl (include/perch_abi.h; regions.c checks the layout):
 * the program's pause depth and open step, the profiler's step range and --only-region id. */
struct perch_ctl {
	__u32 paused;
	__u32 in_step;
	__u64 step;
	__u64 first, last;
	__u32 gate;
	__u32 only;
};

/* The first 8 + 4 * PERCH_REGION_DEPTH bytes of struct perch_abi_tls, and a stored stack. */
struct perch_rstack {
	__u32 depth; /* nesting depth; ids[0 .. min(depth, PERCH_REGION_DEPTH)) outermost first */
	__u32 pad;
	__u32 ids[PERCH_REGION_DEPTH];
};

/* A user stack the sampler unwound: pc[0] is the leaf; n frames. Keyed by a hash of the frames in
 * the double-buffered dwarf stack maps. Like a kernel callchain, pc[1..] are return addresses that
 * userspace looks up at pc - 1; the few exact addresses among them (a signal trampoline's first
 * instruction, the instruction a signal interrupted) are stored plus one. */
struct perch_ustack {
	__u32 n;
	__u32 pad;
	__u64 pc[PERCH_MAX_STACK];
};

/*
 * CPython: for a process the loader found an interpreter in (record/python/), every key also
 * carries the interrupted thread's Python frames, innermost first: per frame the code object,
 * the instruction pointer's distance from it, and a tag read from the code object at the tick
 * (its co_qualname pointer), so a code object freed and reused is not named as the new one.
 * The thread's state is found in the interpreter's thread list by native thread id (cached per
 * thread); frames are walked through `previous`, as the interpreter links them.
 */
#define PERCH_PY_DEPTH	    128	   /* Python frames kept per stack */
#define PERCH_PY_PROCS	    16384  /* processes with an interpreter */
#define PERCH_PY_THREADS    65536  /* thread -> thread state cache (LRU) */
#define PERCH_PY_SCAN	    256	   /* thread states looked at to find a thread's */
#define PERCH_PY_NONE	    0xffff /* an offset the version does not have */
#define PERCH_PY_FRAME_READ 72	   /* bytes of a frame read at once: every field below lies in it */

/* Per process: where its interpreter is and the offsets of its version (record/python/). */
struct perch_py_proc {
	__u64 runtime;	     /* address of _PyRuntime */
	__u32 version;	     /* PY_VERSION_HEX */
	__u16 interp_head;   /* _PyRuntimeState: interpreters.head */
	__u16 threads_head;  /* PyInterpreterState: threads.head */
	__u16 ts_next;	     /* PyThreadState: next */
	__u16 ts_native_tid; /* PyThreadState: native_thread_id */
	__u16 ts_frame;	     /* PyThreadState: cframe (<= 3.12) or current_frame (3.13+) */
	__u16 cframe_frame;  /* _PyCFrame: current_frame; PERCH_PY_NONE: ts_frame is the frame */
	__u16 fr_code;	     /* _PyInterpreterFrame: f_code / f_executable */
	__u16 fr_previous;   /* previous */
	__u16 fr_instr;	     /* prev_instr (<= 3.12) / instr_ptr (3.13+) */
	__u16 fr_owner;	     /* owner (a byte) */
	__u16 fr_is_entry;   /* is_entry (a byte; 3.11); PERCH_PY_NONE: entry shims instead */
	__u16 code_tag;	     /* PyCodeObject: co_qualname, the tag */
	__u8 owner_cstack;   /* owner of the C stack's entry shim frames (3.12+); 0xff: none */
	__u8 pad[7];
};

enum perch_py_frame_flags {
	PERCH_PY_ENTRY = 1 << 0, /* the outermost frame of one C call of the interpreter's loop
				  * (_PyEval_EvalFrameDefault): the next frame is another's */
};

struct perch_py_frame {
	__u64 code;  /* the code object (f_code / f_executable) */
	__u64 tag;   /* its co_qualname pointer at the tick */
	__u32 instr; /* the instruction pointer less code (bytes); 0 when unreadable */
	__u32 flags; /* PERCH_PY_* */
};

struct perch_pystack {
	__u32 n;
	__u32 pad;
	struct perch_py_frame f[PERCH_PY_DEPTH];
};

/* How the sampler walks user stacks (the loader sets it before loading). */
enum perch_unwind_mode {
	PERCH_UNWIND_FP = 0, /* frame pointers only (bpf_get_stackid) */
	PERCH_UNWIND_AUTO,   /* DWARF tables where a module has them, frame pointers elsewhere */
	PERCH_UNWIND_DWARF,  /* DWARF tables only: a frame without CFI ends the stack (counted) */
};

/*
 * The unwind tables in the kernel: every loaded module's rows (unwind_row.h) back to back in one
 * array, two rows to an element (24 bytes: no padding, so the loader hands a table's rows to one
 * batch update as they are; each table starts on an even row).
 */
#define PERCH_UNWIND_ROWS  (1u << 20) /* rows of all loaded tables: 12 MiB */
#define PERCH_UNWIND_MAPS  64	      /* executable mappings with a table, per process */
#define PERCH_UNWIND_PROCS 16384      /* processes with tables */

struct perch_row_pair {
	struct unwind_row row[2];
};

/* One executable mapping of a process whose module has a table. */
struct perch_unwind_map {
	__u64 start, end; /* [start, end) in the process */
	__u64 base;	  /* process address of the table's pc offset 0 (load bias + table base) */
	__u32 first_row;  /* the table's first row in the rows array */
	__u32 nrows;	  /* its rows, the closing NONE row included */
};

/* Per process: its mappings with tables, sorted by start, not overlapping. */
struct perch_proc_unwind {
	__u32 n;
	__u32 pad;
	struct perch_unwind_map map[PERCH_UNWIND_MAPS];
};

/* Counters the sampler keeps per CPU; userspace sums them. Never drop silently. */
enum perch_stat {
	PERCH_STAT_SAMPLES = 0, /* ticks that hit a target thread */
	PERCH_STAT_COUNT_FULL,	/* counts map full: sample lost */
	PERCH_STAT_USTACK_FULL, /* stack map full or hash collision (-EEXIST/-ENOMEM) on user stack */
	PERCH_STAT_KSTACK_FULL,	    /* the same for the kernel stack */
	PERCH_STAT_USTACK_FAULT,    /* user stack could not be read (-EFAULT etc.) */
	PERCH_STAT_KSTACK_FAULT,    /* kernel stack could not be read */
	PERCH_STAT_TARGET_FULL,	    /* a forked child could not be added to the target set */
	PERCH_STAT_EVENT_LOST,	    /* process events dropped because the ring buffer was full */
	PERCH_STAT_DWARF,	    /* user stacks the sampler unwound from DWARF tables */
	PERCH_STAT_DWARF_TRUNCATED, /* ...that hit PERCH_MAX_STACK frames */
	PERCH_STAT_DWARF_FAULT,	    /* ...that stopped at unreadable stack memory */
	PERCH_STAT_DWARF_NO_CFI,    /* ...that stopped at CFI the rows cannot express, or none */
	PERCH_STAT_DWARF_BAD_FRAME, /* ...that stopped where the stack pointer did not grow */
	PERCH_STAT_DWARF_COLLISION, /* two different stacks with one hash: the user stack is lost */
	PERCH_STAT_FP_FALLBACK,	    /* user stacks of processes with tables walked with frame
				     * pointers: the leaf is in code without a table (JIT code) */
	PERCH_STAT_REGION_LOST,	    /* region stacks unreadable, colliding, or region map full */
	PERCH_STAT_TICK_LOST,	    /* --timeline: ticks counted but not in the timeline (its ring
				     * buffer was full) */
	PERCH_STAT_LAUNCHES,	    /* --gpu: launch probe hits of target threads */
	PERCH_STAT_LAUNCH_LOST,	    /* ...whose stack could not be kept (counts map or ring full) */
	PERCH_STAT_GPU_CALLS,	    /* --gpu -p: libcuda entry point hits of target threads */
	PERCH_STAT_GPU_CALL_LOST,   /* ...whose stack could not be kept (counts map or ring full) */
	PERCH_STAT_GPU_NAME_LOST,   /* ...kernel name lookups not sent (their ring was full) */
	PERCH_STAT_OFF_CPU,	    /* --off-cpu: blocks of target threads at least the minimum */
	PERCH_STAT_OFF_CPU_LOST,    /* ...not kept (start or off-CPU map full) */
	PERCH_STAT_OFFSPAN_LOST,    /* --off-cpu --timeline: block spans the `offspans` ring lost */
	PERCH_STAT_EARLY,	 /* ticks in a process's first PERCH_EARLY_NS after its exec whose
				     * walk stopped short: their raw stack went to the loader */
	PERCH_STAT_EARLY_LOST,	 /* ...that the `early` ring could not take: counted as they were */
	PERCH_STAT_PRE_EXEC,	 /* ticks of a launched command before its exec: perch's own code in
				* the forked child (perch;...;execve), left out */
	PERCH_STAT_PY_STACKS,	 /* ticks of Python threads whose Python frames were walked */
	PERCH_STAT_PY_NO_THREAD, /* ticks in a Python process of a thread with no thread state */
	PERCH_STAT_PY_TRUNCATED, /* ...walks that kept PERCH_PY_DEPTH frames and had more */
	PERCH_STAT_PY_FAULT,	 /* ...walks stopped at memory they could not read */
	PERCH_STAT_PY_LOST,	 /* ...stacks the pystacks map could not store (full, collision) */
	PERCH_STAT_MAX,
};

/* Process events the sampler sends through its ring buffer. */
enum perch_event_type {
	PERCH_EV_FORK = 1, /* child tgid created by a tracked process */
	PERCH_EV_EXEC = 2, /* a tracked process called exec */
	PERCH_EV_EXIT = 3, /* a tracked process's last thread exited */
};

/*
 * Exec generations: `targets` maps each target tgid to the number of execs the sampler has seen it
 * make (0 when it became a target: attached, launched or forked), and every sample carries the
 * generation it was taken in, so the loader resolves it in the image that was running then, how
 * ever many execs a drain period holds.
 */
struct perch_event {
	__u32 type;
	__u32 pid;     /* tgid the event is about */
	__u32 ppid;    /* parent tgid for FORK */
	__u32 gen;     /* EXEC: the generation the exec starts; FORK: the parent's at the fork */
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[16];
};

/*
 * --timeline: every tick that was counted also goes through the `ticks` ring buffer with its time
 * and its key, so the loader gives it the key id of the bucket it was counted in, at the drain of
 * that buffer. The time is taken before the tick reads `active`: once the loader has flipped
 * `active` and waited, no tick still to come has a time before the flip.
 */
struct perch_tick {
	__u64 time_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u32 buf;     /* the counts buffer it was counted in */
	__u32 pad;
	struct perch_key key;
};

/*
 * --gpu: each hit of the uprobe on perch_cuda_launch() (runtime/cuda/inject.c, at the exit of a
 * CUDA launch call) captures the launching thread's user stack and region stack as a tick does, and
 * puts the key in the counts map with no count (so the drain of that buffer gives it a key id)
 * and this record in the `launches` ring buffer: the loader names the key's id at that drain,
 * as it does for --timeline's ticks, and joins it to the GPU activities of the correlation id.
 */
struct perch_launch {
	__u64 time_ns;	      /* CLOCK_MONOTONIC, before `active` was read */
	__u32 buf;	      /* the counts buffer the key is in */
	__u32 correlation_id; /* CUPTI's, the probe's first argument */
	struct perch_key key;
};

/*
 * --gpu -p PID (attach mode: CUPTI cannot be injected into a running process): uprobes on
 * libcuda.so's exported entry points (format/gpu_entries.h), pid-filtered. Each hit of a target
 * thread captures its user stack and region stack as a launch probe hit does (a key with no
 * count in the counts map of buf) with the first six argument registers, in the `gpu_calls` ring
 * buffer; the loader names the key's id at the drain of buf and reads from the arguments what
 * the entry point takes (the CUfunction handle, the byte count).
 */
#define PERCH_GPU_ARGS 6

struct perch_gpu_call {
	__u64 time_ns;		    /* CLOCK_MONOTONIC, before `active` was read */
	__u32 buf;		    /* the counts buffer the key is in */
	__u32 entry;		    /* the probe's cookie: its index in REC_GPU_ENTRIES */
	__u64 args[PERCH_GPU_ARGS]; /* rdi, rsi, rdx, rcx, r8, r9 at the entry */
	struct perch_key key;
};

/*
 * Kernel names: a CUfunction is an opaque handle. cuModuleGetFunction(&f, mod, name),
 * cuLibraryGetKernel(&k, lib, name) and cuKernelGetFunction(&f, k) are probed at entry (the out
 * pointer and the name kept per thread in `gpu_pending`) and at return, where the handle written
 * and the name go to the `gpu_names` ring buffer, so launches of functions resolved after attach
 * are named.
 */
#define PERCH_GPU_NAME_MAX 256

enum perch_gpu_namer {
	PERCH_GPU_NAMER_MODULE = 0,  /* cuModuleGetFunction: a CUfunction by name */
	PERCH_GPU_NAMER_LIBRARY = 1, /* cuLibraryGetKernel: a CUkernel by name */
	PERCH_GPU_NAMER_KERNEL = 2,  /* cuKernelGetFunction: the CUfunction of a CUkernel */
};

struct perch_gpu_pending {
	__u64 out;    /* where the callee writes the handle */
	__u64 name;   /* the name argument (MODULE, LIBRARY) */
	__u64 kernel; /* the CUkernel argument (KERNEL) */
	__u32 namer;  /* enum perch_gpu_namer: the probe's cookie */
	__u32 pad;
};

struct perch_gpu_name {
	__u32 tgid;
	__u32 namer;  /* enum perch_gpu_namer */
	__s32 result; /* the CUresult returned (0: CUDA_SUCCESS) */
	__u32 len;    /* bytes of name, no NUL; PERCH_GPU_NAME_MAX - 1: perhaps cut */
	__u64 handle; /* the handle the callee wrote */
	__u64 kernel; /* KERNEL: the CUkernel it was asked for */
	char name[PERCH_GPU_NAME_MAX];
};

/*
 * --off-cpu: when a target thread leaves the CPU (sched_switch, in its own context), its key is
 * taken as a tick's (user stack, kernel stack, region stack; PERCH_KEY_PREEMPTED when it was
 * still runnable), put in the counts map with no count (so the drain of that buffer names it,
 * while its stacks are there) and kept here under its tid with the time. When it runs again
 * (the sched_switch that picks it), a block of at least the minimum adds its nanoseconds to the
 * key in the off-CPU map of the buffer active then: aggregated in the kernel as bcc's
 * offcputime. The loader resolves those keys through every key it has named so far. The entry
 * stays while the thread lives: a thread that leaves the CPU again from the same user registers
 * in the same drain period (a loop blocking in one call) reuses its user stack, not unwound again.
 */
struct perch_offcpu_start {
	__u64 time_ns; /* bpf_ktime_get_ns() at the switch-out; 0 while the thread runs */
	__u32 preempted;
	__u32 flips;  /* the loader's flip count when the user stack was taken */
	__u64 ip, sp; /* the user registers it was taken at: the same at the next switch-out in
		       * the same drain period, it is the same stack, still in the buffer */
	struct perch_key key;
};

/*
 * --off-cpu --timeline: each block that adds to the off-CPU map also goes through the `offspans`
 * ring buffer as a span, the part of it inside the recorded windows: it starts no earlier than
 * the last resume (resumed_ns) and, once a pause has begun (paused_ns after resumed_ns), ends no
 * later than the pause. The loader resolves its key at the drain of buf (the buffer active when
 * the block ended; the key was named at or before it), as ticks are.
 */
struct perch_offspan {
	__u64 start_ns, end_ns; /* CLOCK_MONOTONIC */
	__u32 buf;
	__u32 pad;
	struct perch_key key;
};

/*
 * Early stacks: a process runs from its exec while the loader builds and lists its modules' unwind
 * tables (milliseconds, more on a loaded machine), and a tick in that window cannot walk its user
 * stack (no list yet, or a module not listed yet). For PERCH_EARLY_NS after an exec (and while the
 * loader builds a new module's table for the process, and PERCH_EARLY_NS after it lists it:
 * record/unwinder.c, early_hold), a tick whose walk from the tables stops short copies its
 * registers, its kernel stack and up to PERCH_EARLY_STACK bytes of its user stack from sp into the
 * `early` ring instead of being counted; the loader walks the copy with the same rows once the
 * tables are listed and adds the sample with its whole stack (record/sampler/sampler_early.c).
 * An --off-cpu switch-out in that window does the same with its key (PERCH_KEY_EARLY): the loader
 * names the key once walked, and the block's time waits for that name (sampler_offcpu.c), where
 * a frame-pointer walk would lose the callers of a thread that blocks in a frameless syscall
 * wrapper (glibc's read). Ticks of the normal path (a walk that reaches the outermost frame) pay nothing for it.
 */
#define PERCH_EARLY_NS	  2000000000ull
#define PERCH_EARLY_STACK 65536
#define PERCH_EARLY_RING  (4u << 20)

struct perch_early {
	__u64 time_ns; /* CLOCK_MONOTONIC, the tick's (the switch-out's) */
	__u64 ip, sp, bp;
	__u32 len; /* bytes of stack copied from sp */
	__u32 nk;  /* bytes of kstack (bpf_get_stack's result) */
	struct perch_key key;
	__u64 kstack[PERCH_MAX_STACK];
	__u8 stack[PERCH_EARLY_STACK]; /* in the ring: only len bytes of it */
};

#endif /* PERCH_BPF_H */
