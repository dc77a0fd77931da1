/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch record`: loads the BPF sampler, launches or attaches to the targets, drains the
 * kernel's counts into the recording file until the targets exit (the CLI then prints the
 * summary). The parts of the run: record.c (the run), sampler.c, targets.c, procs.c (the process
 * table the collector, unwinder and regions listen to), stats.c. What a run is asked for:
 * record_opts.h.
 */
#ifndef PERCH_RECORD_H
#define PERCH_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include "record_opts.h"

/* What a recording's end was, besides its exit status. */
struct record_result {
	bool complete;	       /* opts->output was written to its end (the CLI reads it back) */
	bool duration_stopped; /* -d ran out and perch's SIGTERM ended the launched command */
	int signalled;	       /* SIGINT or SIGTERM that stopped perch; 0: none */
	uint64_t forgotten;    /* opts->forget_exited: the exited processes forgotten */
};

/* Run a recording. Returns the exit status perch should exit with (enum perch_exit, or the
 * launched command's status: 0 when perch itself stopped it at -d, as res says); every failure
 * has printed its one line already. */
int record__run(const struct record_opts *opts, struct record_result *res);

#endif /* PERCH_RECORD_H */
