/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The /proc texts the system metrics read (metrics.c), parsed: /proc/stat's per-CPU lines,
 * /proc/PID/stat, statm, io and a thread's status. Text in, numbers out, no I/O, so each is
 * tested on the kernel's own text (tests/test_sysread.c).
 */
#ifndef PERCH_RECORD_SYSREAD_H
#define PERCH_RECORD_SYSREAD_H

#include <stddef.h>
#include <stdint.h>

struct sys_cpu {
	uint32_t cpu;	      /* N of "cpuN" */
	uint64_t busy, total; /* ticks: user+nice+system+irq+softirq+steal; + idle+iowait */
};

/* The "cpuN" lines of /proc/stat (not the "cpu" total), at most max. 0 or -EINVAL. */
int sysread_cpus(const char *text, struct sys_cpu *out, size_t max, size_t *n);

/* /proc/PID/stat: the whole process's faults and CPU ticks (clock ticks, sysconf(_SC_CLK_TCK)).
 * 0 or -EINVAL. */
struct sys_pstat {
	uint64_t minflt, majflt, utime, stime;
};
int sysread_pid_stat(const char *text, struct sys_pstat *out);

/* /proc/PID/statm: resident pages (the second field). */
int sysread_statm(const char *text, uint64_t *resident);

/* /proc/PID/io: rchar and wchar, the bytes read(2) and write(2)-like calls moved (page cache
 * hits included; not read_bytes/write_bytes, which count the storage layer only). */
int sysread_io(const char *text, uint64_t *rchar, uint64_t *wchar);

/* A thread's /proc/PID/task/TID/status: its voluntary and involuntary context switches. */
int sysread_ctxsw(const char *text, uint64_t *vol, uint64_t *invol);

#endif /* PERCH_RECORD_SYSREAD_H */
