/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --off-cpu, the sampler's side (sampler_offcpu.c, a part of the sampler): the blocked time of
 * target threads with its stacks, by key id at the drains, and with --timeline each block as a
 * span.
 */
#ifndef PERCH_SAMPLER_OFFCPU_H
#define PERCH_SAMPLER_OFFCPU_H

#include <stdint.h>
#include "sampler.h"

/* --off-cpu: the blocked nanoseconds of one key (its key id), at the drain of its buffer. */
typedef void (*sampler_offcpu_fn)(void *ctx, uint32_t key, uint64_t ns);
void sampler__on_off_cpu(struct sampler *sp, sampler_offcpu_fn fn, void *ctx);
/* Off-CPU entries whose stack got no key id. */
uint64_t sampler__off_cpu_unkeyed(const struct sampler *sp);
/* --off-cpu --timeline: one block of a key as a span [start_ns, end_ns) (the part inside the
 * recorded windows; struct perch_offspan), at the drain of the buffer it ended in. */
typedef void (*sampler_offspan_fn)(void *ctx, uint32_t key, uint64_t start_ns, uint64_t end_ns);
void sampler__on_off_span(struct sampler *sp, sampler_offspan_fn fn, void *ctx);
/* Spans handed to the span function, and those whose key had no key id. */
uint64_t sampler__off_spans(const struct sampler *sp);
uint64_t sampler__off_spans_unkeyed(const struct sampler *sp);

#endif /* PERCH_SAMPLER_OFFCPU_H */
