/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The samples a profile is built from, as two profile options choose and weigh them: the event
 * (`perch record -e A,B` keeps each sample's event in its flags; `--event=NAME` keeps one) and
 * the view (`--view=cpu|off|wall`: what a sample weighs). Applied to a loaded recording, which
 * stays as it was loaded (const): a sample set is a recording of its own that shares the
 * source's definitions (strings, frames, threads, regions, GPU, ...) and owns what the options
 * change, so one loaded file serves a report per event, a diff, or a test comparing both.
 *
 * The view comes first. cpu is the tick counts as recorded. off is each key's off-CPU
 * nanoseconds (`perch record --off-cpu`, the OFFCPU block). wall is both in nanoseconds: ticks x
 * the sampling period (1e9 / frequency: exact for cpu-clock, an approximation for cycles, whose
 * period the kernel adapts) + off-CPU ns. The timeline's instants stay on-CPU ticks, so off and
 * wall drop them. The per-window counts follow the view where the recording has the off-CPU
 * spans of --timeline (OFFSPANS: each window's off-CPU ns, plus its ticks x the period for
 * wall); without them they are ticks, so off and wall drop the windows (no time axis there).
 *
 * Then the event: only the samples of that event stay, renumbered in order, with the timeline
 * ticks and window counts of those samples (renumbered to match). Indices that other tables
 * keep into the samples (steps, GPU launch keys, off-CPU spans) are the source's.
 */
#ifndef PERCH_SAMPLESET_H
#define PERCH_SAMPLESET_H

#include <stdint.h>
#include "format/recording.h"

enum sample_view { SAMPLE_VIEW_CPU = 0, SAMPLE_VIEW_OFF, SAMPLE_VIEW_WALL };

struct sampleset_opts {
	uint32_t event;	       /* 1 + the index of the one event kept (META event); 0: all */
	enum sample_view view; /* what a sample weighs */
};

struct sampleset;

/* The samples of r that o asks for. r must outlive the set and is never written. NULL + errno:
 * ENODATA when wall needs the sampling frequency and r does not say it, ENOMEM. */
struct sampleset *sampleset__new(const struct recording *r, const struct sampleset_opts *o);
void sampleset__free(struct sampleset *s);
/* The set as a recording: r itself when the options change nothing, else the set's own (valid
 * while the set lives). */
const struct recording *sampleset__recording(const struct sampleset *s);

/* The sampling period in ns (1e9 / META frequency; 0 when the recording does not say it). */
uint64_t sampleset__tick_ns(const struct recording *r);

#endif /* PERCH_SAMPLESET_H */
