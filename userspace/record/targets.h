/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The targets of a recording: the command perch launches (found on $PATH, started stopped until
 * the sampler follows it, with the user's own descriptor limit) or the processes it attaches to;
 * when they are gone, the stop passed on to a launched command, and the status the recording
 * ends with.
 */
#ifndef PERCH_TARGETS_H
#define PERCH_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include "procs.h"
#include "record/regions/regions.h"
#include "record/sampler/sampler.h"
#include "record_opts.h"

struct targets;

/* Before anything starts: the command exists and is executable, or every pid is a process.
 * 0, or the enum perch_exit to end with (its line logged). */
int targets__check(const struct record_opts *o);

/* Whether the command (found as the shell finds it) links CUDA: a DT_NEEDED libcuda.so* or
 * libcudart.so*, or nvcc's device code sections (a statically linked runtime). Reads section
 * headers and the dynamic section only; a script, a missing or malformed file: false. */
bool targets__links_cuda(const char *cmd);

/* o is borrowed for the targets' life. Raises perch's soft descriptor limit to the hard one
 * (the symbolizer keeps a file open per module, the sampler one perf event per CPU); a launched
 * command gets the user's back. NULL + errno. */
struct targets *targets__new(const struct record_opts *o);
void targets__free(struct targets *tg);

/* fn(ctx) runs in the launched child just before its exec (its environment, descriptors for the
 * command alone). */
typedef void targets_exec_fn(void *ctx);
void targets__before_exec(struct targets *tg, targets_exec_fn *fn, void *ctx);

/* Launch the command or attach to the pids: each is started in ps (borrowed) and added to the
 * sampler before it runs on. rg names the other perch that owns a refused process's region
 * runtime. 0, or the enum perch_exit to end with (logged); the recording goes on if some
 * target is live all the same (targets__live()). */
int targets__start(struct targets *tg, struct sampler *sp, struct procs *ps,
		   const struct regions *rg);
size_t targets__live(const struct targets *tg);

/* True when every target is gone (a launched command: when it exited). */
bool targets__done(struct targets *tg);
/* The run was asked to stop (a signal, or the duration is over): true when it ends now
 * (attached); a launched command is passed sig once, and the run ends when it exits. */
bool targets__stop(struct targets *tg, int sig);
/* The status to end with: the launched command's, else ret. */
int targets__status(const struct targets *tg, int ret);

/* For the recording's META: the pids ("1234" or "1,2"), and the command line (attached: each
 * target's own, "; " between them). */
void targets__pids(const struct targets *tg, char *buf, size_t len);
void targets__command(const struct targets *tg, char *buf, size_t len);

#endif /* PERCH_TARGETS_H */
