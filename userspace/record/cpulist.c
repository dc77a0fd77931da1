// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perch record -C: CPU lists (see cpulist.h). */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "cpulist.h"

int cpulist_ncpus(void)
{
	return libbpf_num_possible_cpus();
}

/* One decimal number at *s, moved past it; -1 when there is none. */
static long number(const char **s)
{
	char *end;
	long v;

	if (**s < '0' || **s > '9')
		return -1;
	v = strtol(*s, &end, 10);
	*s = end;
	return v > 1000000 ? 1000000 : v;
}

/* One "N" or "N-M" at *s, moved past it. */
static int range(const char **s, int ncpus, bool *set)
{
	long lo = number(s), hi = lo;

	if (lo < 0)
		return -EINVAL;
	if (**s == '-') {
		(*s)++;
		hi = number(s);
		if (hi < lo)
			return -EINVAL;
	}
	if (hi >= ncpus)
		return -ERANGE;
	for (long c = lo; c <= hi; c++)
		set[c] = true;
	return 0;
}

int cpulist_parse(const char *list, int ncpus, bool *set)
{
	const char *s = list;
	int err;

	for (int c = 0; c < ncpus; c++)
		set[c] = false;
	for (;;) {
		err = range(&s, ncpus, set);
		if (err)
			return err;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}
