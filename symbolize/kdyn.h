/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel symbols that come and go during a recording (BPF programs, their trampolines and
 * dispatchers): what the kernel's PERF_RECORD_KSYMBOL records said, each [addr, addr + len) with
 * its name and when it was registered and unregistered, so that a frame in code unloaded before
 * the drain that reads it (a short-lived tool's BPF program) is still named: /proc/kallsyms no
 * longer lists it by then. The records are the kernel's, the names partly a loader's: names are
 * cut at KDYN_NAME_MAX bytes, and the table holds at most KDYN_MAX symbols (a full table forgets
 * the oldest unregistered one first, else drops the new one, counted).
 */
#ifndef PERCH_KDYN_H
#define PERCH_KDYN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KDYN_MAX      4096
#define KDYN_NAME_MAX 255

struct kdyn;

struct kdyn_sym {
	uint64_t addr, len;
	uint64_t reg_ns;   /* when registered (0: before the table heard of it) */
	uint64_t unreg_ns; /* when unregistered (0: still registered) */
	bool bpf;	   /* PERF_RECORD_KSYMBOL_TYPE_BPF; else other kernel code */
	char *name;	   /* owned by the table */
};

struct kdyn *kdyn__new(void);
void kdyn__free(struct kdyn *k);

/* A registration of [addr, addr + len) named name (len bytes at most read) at time_ns. 0, or
 * -EINVAL (an empty or wrapping range) / -ENOSPC (table full, counted) / -ENOMEM. */
int kdyn__register(struct kdyn *k, uint64_t addr, uint64_t len, bool bpf, const char *name,
		   size_t name_len, uint64_t time_ns);
/* Its unregistration: closes the newest open entry at addr, or (registered before the table
 * heard of it) adds a closed one. The same results. */
int kdyn__unregister(struct kdyn *k, uint64_t addr, uint64_t len, bool bpf, const char *name,
		     size_t name_len, uint64_t time_ns);

/* The samples looked up next were taken in [from_ns, to_ns): a symbol registered then, or still
 * registered at from_ns, is preferred over another that held the address at another time. */
void kdyn__window(struct kdyn *k, uint64_t from_ns, uint64_t to_ns);

/* The symbol holding addr: in the window if one did, else the newest that ever did; NULL when
 * none. O(1) for an address outside every symbol's bounds (the kernel's own text). */
const struct kdyn_sym *kdyn__find(const struct kdyn *k, uint64_t addr);

size_t kdyn__count(const struct kdyn *k);
/* Registrations dropped because the table was full. */
uint64_t kdyn__dropped(const struct kdyn *k);

#endif /* PERCH_KDYN_H */
