/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Steps and program pauses of a recording (include/perch.h: perch_step(), perch_step_end(),
 * perch_profile_pause()/resume()): each step's start and end from its program's control log
 * (regions_ctl.c), the samples the sampler took in it (every tick carries its process's open
 * step), and the windows the programs paused in; written as the STEPS block
 * (format/recording.h). With --steps=FIRST:LAST it also says when the recording is done: the
 * last step asked for has ended (the next step started, perch_step_end(), or its process ended).
 */
#ifndef PERCH_RECORD_STEPS_H
#define PERCH_RECORD_STEPS_H

#include <stdbool.h>
#include <stdint.h>

struct steps;
struct rec_writer;

/* --steps=A:B or --steps=A (A:A): 0, or -EINVAL for anything else (B < A, not a number). */
int steps_parse(const char *arg, uint64_t *first, uint64_t *last);

/* w is borrowed. gate: --steps=first:last was asked for. NULL + errno. */
struct steps *steps__new(struct rec_writer *w, bool gate, uint64_t first, uint64_t last);
void steps__free(struct steps *st);
/* count samples of key id key, taken while pid had step1 - 1 open (step1 0: none). */
void steps__sample(struct steps *st, uint32_t pid, uint64_t step1, uint32_t key, uint64_t count);
/* What a program did (the regions' ctl function: kind an enum perch_log_kind or
 * REGIONS_CTL_GONE). */
void steps__event(void *ctx, uint32_t pid, uint32_t kind, uint64_t time_ns, uint64_t value);
/* --steps: the last step asked for has ended. */
bool steps__done(const struct steps *st);
/* The table, written when it changed since the last write (every drain and at the end). */
void steps__flush(struct steps *st);
/* Steps and pauses not kept (past REC_STEPS_MAX). */
uint64_t steps__dropped(const struct steps *st);
/* Ends refused: a step or pause that would end before it started (it stays open). */
uint64_t steps__refused(const struct steps *st);

#endif /* PERCH_RECORD_STEPS_H */
