/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to record/collect/: the collector as its files see it. collect.c is the collector
 * (a listener on the process table; symbolizing each sample's frames), collect_leaf.c its leaf
 * repair.
 */
#ifndef PERCH_RECORD_COLLECT_IMPL_H
#define PERCH_RECORD_COLLECT_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "collect.h"
#include "lib/u64map.h"
#include "record/proc.h"
#include "symbolize/perfmap.h"

struct sym_module;

/* A JIT frame written without a name: named later if the map comes to cover it. */
struct jit_unnamed {
	uint32_t frame;
	uint64_t lookup; /* the address looked up (a return address less one) */
};

struct proc;

/* One exec generation of a process (raw_sample.h: gen): what it had mapped, and what its addresses
 * meant. Samples carry their generation, so each is resolved in the image it was taken in. */
struct image {
	struct proc *p;
	uint32_t gen;
	struct proc_maps *maps;
	bool maps_failed;     /* tried and the process was gone (or had exec'd past it) */
	uint64_t reread_at;   /* 1 + the drain it last reread /proc/PID/maps in */
	struct u64map frames; /* address -> frame id */
	struct u64map leaf;   /* leaf pc -> 1 + (return address on top of the stack there?) */
	struct u64map ret_ok; /* address -> 1 + (does a call instruction precede it?) */
};

/* A process, in its collector slot of the process table (procs.h), which has its pid, parent
 * and exec generation (a forked child's generation 0 runs the parent's image until it maps
 * something of its own). */
struct proc {
	const struct procs_proc *pp;
	uint32_t keep_from;  /* images older than this are drained and freed */
	struct image **imgs; /* by generation, oldest first */
	size_t nimgs, capimgs;
	struct perfmap *jit; /* /tmp/perf-PID.map of a JIT, when the process writes one */
	long long jit_size;  /* its size when loaded: reload when it grew */
	uint64_t jit_drain;  /* 1 + the drain it was last read in: once a drain at most */
	int root_fd;	     /* the process's root directory, held open to find the map in */
	uint32_t nspid;	     /* its pid in its own pid namespace: the map's name */
	uid_t uid;	     /* its effective uid: who must own the map */
	bool jit_capped;     /* its map was over PERFMAP_MAX_BYTES or the budget (counted once) */
	struct jit_unnamed *unnamed; /* JIT frames its map did not name yet */
	size_t nunnamed, capunnamed;
	bool execd;	  /* in collector.execd: an exec whose older images a drain frees */
	bool cgroup_read; /* its container's control group found (note_cgroup()) */
};

struct collector {
	struct rec_writer *w;
	unsigned int max_stack;
	struct symbolizer *sym;
	struct ksyms *ksyms;
	bool ksyms_failed;
	const struct kdyn *kdyn; /* kernel symbols that came and went (borrowed; NULL: none) */
	struct linecache *lc;	 /* lines resolved by earlier runs, per build-id */
	bool lc_tried;
	bool lines;	  /* record source lines and inline chains (DWARF) */
	struct procs *ps; /* borrowed: the processes, with our slots */
	int id;
	uint64_t drains; /* collector__drained() calls so far */
	/* The processes that exec'd since a drain looked: the drains free their older images
	 * (not a walk of the whole process table, which -a makes long). */
	struct proc **execd;
	size_t nexecd, capexecd;
	struct u64map kframes;		  /* kernel address -> frame id */
	struct u64map threads;		  /* pid << 32 | tid -> 1 */
	struct u64map lines_done;	  /* frame id -> 1 once its LINES are written */
	struct u64map jit_waiting;	  /* frame id -> 1 while a JIT frame waits for its name */
	struct perfmap_budget jit_budget; /* every process's map, together (`-a`) */
	bool jit_budget_said;
	uint32_t kernel_str, unknown_str, bpf_str;
	uint32_t *frames; /* scratch: one sample's frame ids */
	size_t cap_frames;
	uint64_t stats[COLLECT_STAT_MAX];
	struct python *py; /* CPython frames: their names and the loop's code (NULL: none) */
	uint32_t python_str;
	bool keys;	   /* --timeline: key ids wanted */
	uint32_t last_key; /* the last bucket's, UINT32_MAX: none */
};

/* collect.c: the mapping of img that holds addr (NULL: none); its module, opened once; the name
 * of p's JIT symbol at addr, its start in *start (NULL: none). */
const struct proc_map *collect_find_map(struct collector *c, struct image *img, uint64_t addr);
struct sym_module *collect_map_module(struct collector *c, const struct proc_map *m);
const char *collect_jit_name(struct collector *c, struct proc *p, uint64_t addr, uint64_t *start);

/* collect_leaf.c: the return address into the caller a frame-pointer walk of user stack u (nu
 * frames, leaf first) skipped under a frameless leaf, else 0 (user_ret: the word on top of the
 * stack at the tick, 0 unknown); how many of its frames to believe (the first caller outside
 * every mapping ends it). */
uint64_t collect_hidden_caller(struct collector *c, struct image *img, uint64_t user_ret,
			       const uint64_t *u, size_t nu);
size_t collect_believable_frames(struct collector *c, struct image *img, const uint64_t *ustack,
				 size_t nu);

/* collect_python.c: a sample's Python frames spliced into its native stack. run_at[i]: 1 + the
 * run of Python frames that stands in for native user frame i (leaf first), 0: none. */
#define PERCH_SPLICE_MAX 128
struct py_splice {
	bool on;
	size_t nruns, placed;
	uint32_t start[PERCH_SPLICE_MAX];
	uint32_t run_at[PERCH_SPLICE_MAX];
};

void collect_py_begin(struct collector *c, const struct raw_sample *s, const uint64_t *ustack,
		      size_t nu, struct py_splice *sp);
/* The runs no activation took, at the root end (before the native frames). */
void collect_py_root(struct collector *c, const struct raw_sample *s, const struct py_splice *sp,
		     size_t *n);
/* A trampoline of `python -X perf` (its perf map names it py::FUNCTION:FILE) in a sample whose
 * Python frames were walked: the walked frame names the same code, so it stands alone. */
bool collect_py_trampoline(struct collector *c, struct image *img, const struct py_splice *sp,
			   uint64_t addr, bool is_return);
/* Native user frame i's run in its place; false when frame i is not one the Python frames take. */
bool collect_py_at(struct collector *c, const struct raw_sample *s, const struct py_splice *sp,
		   size_t i, size_t *n);

#endif /* PERCH_RECORD_COLLECT_IMPL_H */
