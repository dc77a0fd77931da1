// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perch record -a: every process of the machine a target (see systemwide.h). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "systemwide.h"

/* A /proc entry's pid, 0 when it is not a process. */
static pid_t entry_pid(const struct dirent *d)
{
	char *end;
	long v = strtol(d->d_name, &end, 10);

	return *end || v <= 0 || v > 0x3fffffff ? 0 : (pid_t)v;
}

int systemwide_start(struct sampler *sp, struct procs *ps, pid_t skip, size_t *n)
{
	DIR *dir = opendir("/proc");
	struct dirent *d;
	int ret = 0;

	*n = 0;
	if (!dir) {
		log_err("-a: cannot list /proc: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	/* The idle task: its ticks are where no process ran (kernel frames only). */
	ret = sampler__add_target(sp, 0, false);
	while (!ret && (d = readdir(dir))) {
		pid_t pid = entry_pid(d);

		if (!pid || pid == skip)
			continue;
		/* Its tables first, so that its first ticks unwind; a refusal (its regions are
		 * another perch's) leaves it sampled all the same. */
		procs__snapshot(ps, pid, NULL);
		ret = sampler__add_target(sp, pid, false);
		*n += !ret;
	}
	closedir(dir);
	log_debug("-a: %zu processes", *n);
	return ret;
}
