// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Parsing the /proc texts of the system metrics (sysread.h). The kernel writes these with
 * seq_printf in fixed layouts (fs/proc/array.c, fs/proc/base.c, fs/proc/stat.c); a field that is
 * missing or not a number fails the whole text, never a guess.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sysread.h"

/* The next decimal at *p after blanks; advances *p. */
static bool next_u64(const char **p, uint64_t *v)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno)
		return false;
	*p = end;
	return true;
}

static const char *next_line(const char *p)
{
	const char *nl = strchr(p, '\n');

	return nl ? nl + 1 : NULL;
}

/* user nice system idle iowait irq softirq steal (guest time is inside user already). */
static bool cpu_line(const char *p, struct sys_cpu *c)
{
	uint64_t f[8];
	uint64_t cpu;

	p += 3;
	if (!next_u64(&p, &cpu) || cpu > UINT32_MAX)
		return false;
	for (int i = 0; i < 8; i++) {
		if (!next_u64(&p, &f[i]))
			return false;
	}
	c->cpu = (uint32_t)cpu;
	c->busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
	c->total = c->busy + f[3] + f[4];
	return true;
}

int sysread_cpus(const char *text, struct sys_cpu *out, size_t max, size_t *n)
{
	*n = 0;
	for (const char *p = text; p && *p; p = next_line(p)) {
		if (strncmp(p, "cpu", 3) || p[3] < '0' || p[3] > '9')
			continue;
		if (*n == max)
			break;
		if (!cpu_line(p, &out[*n]))
			return -EINVAL;
		(*n)++;
	}
	return *n ? 0 : -EINVAL;
}

static void skip_field(const char **p)
{
	while (**p == ' ')
		(*p)++;
	while (**p && **p != ' ' && **p != '\n')
		(*p)++;
}

/* After the command's closing parenthesis (the name may hold spaces and parentheses): field 3,
 * state, then ppid, pgrp, session, tty_nr, tpgid (-1 without a terminal), flags, minflt (10),
 * cminflt, majflt (12), cmajflt, utime (14), stime (15). */
int sysread_pid_stat(const char *text, struct sys_pstat *out)
{
	const char *p = strrchr(text, ')');
	uint64_t f[6];

	if (!p)
		return -EINVAL;
	p++;
	for (int i = 0; i < 7; i++) /* state .. flags */
		skip_field(&p);
	for (int i = 0; i < 6; i++) {
		if (!next_u64(&p, &f[i]))
			return -EINVAL;
	}
	out->minflt = f[0];
	out->majflt = f[2];
	out->utime = f[4];
	out->stime = f[5];
	return 0;
}

int sysread_statm(const char *text, uint64_t *resident)
{
	uint64_t size;
	const char *p = text;

	return next_u64(&p, &size) && next_u64(&p, resident) ? 0 : -EINVAL;
}

/* "name: value" lines (io) or "name:\tvalue" (status). */
static bool field(const char *text, const char *name, uint64_t *v)
{
	size_t len = strlen(name);

	for (const char *p = text; p && *p; p = next_line(p)) {
		if (!strncmp(p, name, len) && p[len] == ':') {
			p += len + 1;
			return next_u64(&p, v);
		}
	}
	return false;
}

int sysread_io(const char *text, uint64_t *rchar, uint64_t *wchar)
{
	return field(text, "rchar", rchar) && field(text, "wchar", wchar) ? 0 : -EINVAL;
}

int sysread_ctxsw(const char *text, uint64_t *vol, uint64_t *invol)
{
	return field(text, "voluntary_ctxt_switches", vol) &&
			       field(text, "nonvoluntary_ctxt_switches", invol)
		       ? 0
		       : -EINVAL;
}
