/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recording's process table: ONE entry per target process (pid, parent, exec generation)
 * and ONE table of the modules they map, keyed by (device, inode), each with a slot per
 * listener. The recording run feeds every process event in once (a fork, an exec, an executable
 * mmap, an exit, a snapshot of /proc); procs fans it out to the registered listeners in the order
 * they registered. The listeners today: the unwinder (unwinder.c, first: the sampler needs its
 * tables soonest), the collector (collect.c), regions (regions.c) and the sampler (sampler.c,
 * its target map).
 *
 * A new record-time part is one more listener: a CUPTI/GPU part (launch correlation per
 * process), system metrics (per-process counters) register a struct procs_listener with the
 * events they care about, keep their per-process state in their slot, and need nothing else
 * here. A part that is off is simply not registered.
 *
 * The contract:
 * - Every hook is optional (NULL: not interested). Hooks run in registration order, on the
 *   recording's thread, never concurrently; they must not feed events back into procs.
 * - A listener's slots (procs__slot(), procs__module_slot()) are its own: NULL until it sets
 *   one, freed by its drop/drop_module hook when procs is freed, or by itself earlier (setting
 *   the slot back to NULL). procs is freed before its listeners.
 * - Process entries live for the whole recording (samples are drained after their process
 *   exited, and a forked child resolves through its parent's image): exit marks an entry, it
 *   does not remove it. A pid the kernel reuses continues its entry. Only procs__sweep()
 *   removes entries (a continuous run: perch agent), long after their exit: each listener's
 *   forget hook, then its slot's drop.
 */
#ifndef PERCH_PROCS_H
#define PERCH_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "proc.h"

#define PROCS_MAX_LISTENERS 8
#define PROCS_COMM_LEN	    16

struct procs;

/* One target process. Listeners read these fields; procs writes them. */
struct procs_proc {
	uint32_t pid;
	uint32_t ppid;	     /* the parent it was forked from while perch watched, else 0 */
	uint32_t parent_gen; /* the parent's exec generation at that fork */
	uint32_t gen;	     /* exec generation: the execs seen since perch watched it, counted
			      * as the sampler counts them (see perch_bpf.h) */
	bool forked;	     /* forked from a target while perch watched */
	bool exited;	     /* its last thread exited (the exit hooks have run) */
	char comm[PROCS_COMM_LEN + 1]; /* the name its last event carried ("" if none yet) */
};

/* A module: one file, whoever maps it. The vDSO is (0, 0). */
struct procs_module {
	uint64_t dev, inode;
};

struct procs_listener {
	const char *name; /* for log lines */
	void *ctx;	  /* passed to every hook */
	/* p is a target from now on, or starts over (an exec seen without mmap events): maps is
	 * what /proc shows now (NULL: unreadable). exe is the executable a command perch launched
	 * is about to exec (its maps are still perch's own image then); NULL when attached.
	 * A negative errno refuses the process (procs__snapshot() returns the first one). */
	int (*start)(void *ctx, struct procs_proc *p, const struct proc_maps *maps,
		     const char *exe);
	/* child was forked by parent (child->ppid, ->parent_gen are set). */
	void (*fork)(void *ctx, struct procs_proc *parent, struct procs_proc *child);
	/* p exec'd: its image starts over (p->gen is the new generation); its mappings follow. */
	void (*exec)(void *ctx, struct procs_proc *p);
	/* p mapped m executable. mod: m's module (NULL for anonymous memory). */
	void (*mmap)(void *ctx, struct procs_proc *p, const struct proc_map *m,
		     struct procs_module *mod);
	/* p's last thread exited, and every mmap record it left was delivered. */
	void (*exit)(void *ctx, struct procs_proc *p);
	/* p is about to be removed (procs__sweep()): unlink it from the listener's own lists; its
	 * slot is dropped next. */
	void (*forget)(void *ctx, struct procs_proc *p);
	/* Free a slot this listener set (procs__free(), procs__sweep()). */
	void (*drop)(void *ctx, void *slot);
	void (*drop_module)(void *ctx, void *slot);
};

/* NULL + errno. */
struct procs *procs__new(void);
/* Drops every slot through its listener's hooks: before the listeners are freed. */
void procs__free(struct procs *ps);

/* Register l (copied). Returns the listener's id (for its slots), or -ENOSPC. */
int procs__listen(struct procs *ps, const struct procs_listener *l);

/* Events, from the recording run. */

/* Read pid's mappings from /proc and start it with every listener (see the start hook): a
 * process perch attached to (exe NULL), a command it launched (exe: what it will exec), or one
 * that exec'd when no mmap events come. 0, or the first listener's refusal. */
int procs__snapshot(struct procs *ps, uint32_t pid, const char *exe);
/* The name a process event carried (not NUL-terminated when it fills PROCS_COMM_LEN). */
void procs__comm(struct procs *ps, uint32_t pid, const char *comm);
void procs__fork(struct procs *ps, uint32_t parent, uint32_t parent_gen, uint32_t child);
void procs__exec(struct procs *ps, uint32_t pid);
void procs__mmap(struct procs *ps, uint32_t pid, const struct proc_map *m);
/* pid's last thread exited: the exit hooks run at procs__flush(), once the mmap records it left
 * are read. */
void procs__exit(struct procs *ps, uint32_t pid);
void procs__flush(struct procs *ps);
/* Forget every process whose exit procs__flush() delivered before before_ns (CLOCK_MONOTONIC)
 * and that no forked child's entry resolves through: its listeners' forget hooks, its slots
 * dropped, its entry freed (the others keep their order). A continuous run's memory then follows
 * the live processes, not every process it ever saw. Returns how many. */
size_t procs__sweep(struct procs *ps, uint64_t before_ns);

/* Lookups, for listeners. */

/* The entry of pid, NULL if none (procs__get: made if none, NULL only out of memory). */
struct procs_proc *procs__find(const struct procs *ps, uint32_t pid);
struct procs_proc *procs__get(struct procs *ps, uint32_t pid);
/* Every entry, in the order they were made: i < procs__count(). */
size_t procs__count(const struct procs *ps);
struct procs_proc *procs__at(const struct procs *ps, size_t i);
/* The module (dev, inode), made if none; NULL only out of memory. */
struct procs_module *procs__module(struct procs *ps, uint64_t dev, uint64_t inode);
/* The module a mapping shows: its file's, or the vDSO's; NULL for anonymous memory and other
 * special mappings (and out of memory). */
struct procs_module *procs__module_of(struct procs *ps, const struct proc_map *m);

/* Listener id's slot of a process or a module. */
void **procs__slot(struct procs_proc *p, int id);
void **procs__module_slot(struct procs_module *m, int id);

#endif /* PERCH_PROCS_H */
