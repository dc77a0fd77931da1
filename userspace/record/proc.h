/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Process facts from /proc: executable mappings (captured while the process lives), command
 * name, parent; and the kernel's limits (sysctls) perch runs under.
 */
#ifndef PERCH_PROC_H
#define PERCH_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;	     /* file offset of start */
	uint64_t dev_major, dev_minor, inode;
	char *path; /* as /proc/PID/maps prints it ("[vdso]", "/usr/lib/...", or "" for anon) */
	char *open_path; /* what the profiler can open now: /proc/PID/map_files/START-END, or NULL
			    * for anonymous and special mappings */
};

struct proc_maps;

/* Read the executable mappings of pid (only those with 'x' permission). NULL + errno (ESRCH when
 * the process is gone). */
struct proc_maps *proc_maps__read(pid_t pid);
void proc_maps__free(struct proc_maps *m);
/* An empty set, filled by proc_maps__add() from mmap events when /proc is too late. */
struct proc_maps *proc_maps__new(void);
/* A copy of m (strings too). NULL + errno. */
struct proc_maps *proc_maps__copy(const struct proc_maps *m);
/* Add a mapping (copying its strings), replacing whatever part of existing mappings it overlaps,
 * as mmap(MAP_FIXED) does. 0 or -ENOMEM. */
int proc_maps__add(struct proc_maps *m, const struct proc_map *map);
/* The mapping containing addr, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr);
size_t proc_maps__count(const struct proc_maps *m);
const struct proc_map *proc_maps__get(const struct proc_maps *m, size_t i);

/* perch's own vDSO image, the one the kernel maps into every 64-bit process: its address and size
 * (ELF headers through the section headers), or NULL. */
const void *proc_vdso_image(size_t *size);
/* For a mapping named "[vdso]": a path the symbolizer can open holding that image (a memfd of
 * perch's, valid for perch's lifetime), else NULL. */
const char *proc_vdso_path(const char *map_path);

/* The number a /proc file (a sysctl) starts with. 0 or -errno. */
int proc_read_uint(const char *path, unsigned int *out);

/* Thread/process name (comm) into buf, trailing whitespace trimmed; returns 0 or -errno. */
int proc_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The process's command line (/proc/PID/cmdline, cut at len - 1) into buf, its arguments joined
 * by spaces and trailing whitespace and NULs trimmed (a program that rewrites its argv, as
 * postgres does, pads it with them); returns 0 or -errno. */
int proc_cmdline(pid_t pid, char *buf, size_t len);
/* The n bytes of a command line as proc_cmdline() gives it, in place (buf[n] must be writable):
 * NULs between arguments become spaces, trailing whitespace and NULs go. Its length. */
size_t proc_cmdline_text(char *buf, size_t n);
/* When the process started (/proc/PID/stat field 22, clock ticks since boot): with the pid, it
 * names one process for good, even after the pid is reused. 0 or -errno (-ESRCH: gone). */
int proc_start_time(pid_t pid, uint64_t *start);

/* The pid of pid inside its own (innermost) pid namespace, which a JIT names its perf map after,
 * and its effective uid, from /proc/PID/status. 0 or -errno (-ESRCH: gone). */
int proc_ns_ids(pid_t pid, uint32_t *nspid, uid_t *euid);
/* /proc/PID/cgroup into buf (at most size - 1 bytes, terminated; what is past them is left
 * out): lines "ID:CONTROLLERS:PATH". Its length, or -errno. */
ssize_t proc_read_cgroup(pid_t pid, char *buf, size_t size);

#endif /* PERCH_PROC_H */
