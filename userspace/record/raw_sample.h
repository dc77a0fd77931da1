/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One counted bucket as a sampler hands it on, whatever collected it (the BPF tick program's
 * key and stack maps, an early tick the loader walked, a future source): raw addresses per
 * thread, the few facts about them the collector needs to symbolize and flag them, and opaque
 * handles the run resolves (the thread's region stack, its step). The collector (record/
 * collect/) takes nothing else, so it knows no BPF map, key layout or flag of the kernel side.
 */
#ifndef PERCH_RECORD_RAW_SAMPLE_H
#define PERCH_RECORD_RAW_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

enum raw_sample_flags {
	RAW_USER_LOST = 1u << 0,   /* the user stack could not be collected */
	RAW_KERNEL_LOST = 1u << 1, /* the kernel stack could not be collected */
	/* The user stack was unwound from the module's tables: whole unless RAW_TRUNCATED or
	 * RAW_UNWIND_STOPPED says otherwise, and its leaf's caller is never hidden (no repair). */
	RAW_UNWOUND = 1u << 2,
	RAW_TRUNCATED = 1u << 3,      /* RAW_UNWOUND: the walk hit the depth limit */
	RAW_UNWIND_STOPPED = 1u << 4, /* RAW_UNWOUND: the walk stopped before the outermost frame */
	/* RAW_UNWOUND, but its leaf (no table, not frameless) was left by its frame pointer:
	 * repaired as a frame-pointer stack is. */
	RAW_LEAF_BY_FP = 1u << 5,
	RAW_PREEMPTED = 1u << 6,    /* --off-cpu: switched out while runnable, not blocked */
	RAW_REGIONS_LOST = 1u << 7, /* the thread's region stack could not be read or stored */
	RAW_PY_TRUNCATED = 1u << 8, /* Python frames: the outer ones are missing (too deep) */
	/* Python frames: the walk stopped at memory it could not read, or they were not kept. */
	RAW_PY_LOST = 1u << 9,
};

/* One Python frame as the interpreter had it: its code object and how far into it the
 * instruction pointer was, with a tag read from the code object then (record/pycode.h). */
struct raw_pyframe {
	uint64_t code;
	uint64_t tag;
	uint32_t instr; /* bytes from the code object to the instruction; 0: unknown */
	uint32_t flags; /* RAW_PY_ENTRY */
};
#define RAW_PY_ENTRY 1u /* the outermost frame of one C call of the interpreter's loop */

#define RAW_COMM_LEN 16 /* the kernel's TASK_COMM_LEN */

struct raw_sample {
	uint32_t pid, tid;
	uint32_t gen;	/* the process's exec generation: which image the addresses are of */
	uint32_t flags; /* RAW_* */
	uint32_t event; /* perch record -e A,B: the event's index */
	uint64_t count; /* ticks (or --off-cpu nanoseconds) the bucket holds */
	/* The thread's name at the tick, NUL-terminated; "": unknown. */
	char comm[RAW_COMM_LEN + 1];
	const uint64_t *ustack; /* return addresses, leaf first (the leaf's pc first); NULL: none */
	size_t nu;
	const uint64_t *kstack; /* the same for the kernel; NULL: none */
	size_t nk;
	uint64_t user_ret;     /* frame-pointer walks: the word on top of the user stack at the tick
				* (the return address when the leaf is frameless); 0: unknown */
	uint64_t region_stack; /* the sampler's handle of the thread's open regions; 0: none open */
	uint64_t step;	       /* 1 + the step its program had open (perch_step(n)); 0: none */
	const struct raw_pyframe *py; /* the thread's Python frames, innermost first; NULL: none */
	size_t npy;
};

#endif /* PERCH_RECORD_RAW_SAMPLE_H */
