/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perch record -a: every process of the machine made a target, kernel threads and the idle
 * task (pid 0, "swapper") too, as perf -a samples them. The processes that start later are
 * followed as a target's children are: every process descends from one already listed.
 */
#ifndef PERCH_RECORD_SYSTEMWIDE_H
#define PERCH_RECORD_SYSTEMWIDE_H

#include <stddef.h>
#include <sys/types.h>
#include "procs.h"
#include "record/sampler/sampler.h"

/* Start every process in /proc in ps (borrowed) and add it to the sampler, but skip (perch
 * itself: the command it launches is made a target on its own). *n: how many were added. 0, or the enum perch_exit to end
 * with (logged); processes that exit meanwhile or whose region runtime another perch owns are
 * no failure. */
int systemwide_start(struct sampler *sp, struct procs *ps, pid_t skip, size_t *n);

#endif /* PERCH_RECORD_SYSTEMWIDE_H */
