/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * When a recording samples: --delay, pause and resume (SIGUSR1 pauses, SIGUSR2 resumes; perf's
 * --control=fifo:CTL[,ACK] with `enable` and `disable`), and the caps (--max-duration, --max-size
 * without --timeline) that stop sampling for good. Pausing sets the sampler's one BPF flag
 * (sampler__pause()); this part keeps the intervals that were sampled and writes them, with why
 * sampling stopped, as the END keys of format/keys.h.
 */
#ifndef PERCH_RECORD_CONTROL_H
#define PERCH_RECORD_CONTROL_H

#include <stdbool.h>
#include <stdint.h>
#include "format/keys.h"
#include "format/recording.h"
#include "record/sampler/sampler.h"
#include "record_opts.h"

struct control;

/* Check and open o->control's FIFOs (before anything starts) and install the SIGUSR1/SIGUSR2
 * handlers. Returns 0 with *out set, or the enum perch_exit to end with (its line logged:
 * PERCH_EXIT_USAGE for a --control that is not fifo:PATH[,PATH] naming FIFOs). */
int control__open(const struct record_opts *o, struct control **out);
void control__free(struct control *c);

/* The targets start at start_ns (CLOCK_MONOTONIC): sampling starts now, or after --delay (the
 * sampler, sp, borrowed, is paused until then). */
void control__start(struct control *c, struct sampler *sp, uint64_t start_ns);
/* Every turn of the run's loop: the signals and FIFO commands that came, the delay and
 * --max-duration. */
void control__poll(struct control *c, uint64_t now_ns);
/* How long the loop may wait, at most wait_ms, before the delay or --max-duration is due. */
int control__wait_ms(const struct control *c, uint64_t now_ns, int wait_ms);
/* Stop sampling for good at now_ns, for why (first call wins). */
void control__cap(struct control *c, enum rec_stop why, uint64_t now_ns);
/* Why sampling stopped for good (REC_STOP_NONE: it did not). */
enum rec_stop control__stopped(const struct control *c);

/* The END keys at end_ns (the sampled intervals, time paused, the cap); kv has room for
 * CONTROL_END_KV. Returns how many it filled: 0 when sampling covered the whole run. names is
 * scratch for the keys' names, as long as kv lives. */
#define CONTROL_END_KV (4 + 2 * REC_END_ENABLED_MAX)
size_t control__end(struct control *c, uint64_t end_ns, struct rec_kv *kv, char names[][32]);

#endif /* PERCH_RECORD_CONTROL_H */
