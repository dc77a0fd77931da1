/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The events a recording samples on (`perch record -e`), written once: the recorder opens their
 * perf events by this table, the report reads META event/period and says what one sample is by
 * it. A recording names its events in META event (comma-separated, in the order given); with
 * more than one, each sample carries its event's index in its flags (REC_SAMPLE_EVENT).
 */
#ifndef PERCH_FORMAT_EVENTS_H
#define PERCH_FORMAT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

/* X(name, alias, perf type, perf config, clock): clock events count nanoseconds and are sampled
 * at -F HZ by default; the others count occurrences and are sampled every event by default
 * (-c 1). The perf type and config are linux/perf_event.h's (only expanded where it is
 * included). */
#define REC_EVENTS(X)                                                                              \
	X("cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true)                    \
	X("task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true)                  \
	X("page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false)           \
	X("minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false)          \
	X("major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false)          \
	X("context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false)     \
	X("cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false) \
	X("cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false)             \
	X("instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false)

/* Events one recording may sample at once: the index fits REC_SAMPLE_EVENT's bits. */
#define REC_EVENTS_MAX 8

struct rec_event_def {
	const char *name;
	const char *alias; /* perf's other spelling, or NULL */
	uint32_t type;	   /* perf_event_attr.type */
	uint64_t config;   /* perf_event_attr.config */
	bool clock;	   /* counts nanoseconds */
	bool hardware;	   /* needs a PMU */
};

/* The event named name (or its alias), NULL when there is none. */
const struct rec_event_def *rec_event_find(const char *name);
/* Every event's name, ", " between them (for a usage line). */
const char *rec_event_names(void);

/* The n-th name (0 first) of a META event list ("page-faults,context-switches") into buf;
 * false when the list has no n-th. */
bool rec_event_nth(const char *list, uint32_t n, char *buf, size_t len);
/* How many events a META event list names (1 for a missing list: the one event). */
uint32_t rec_event_count(const char *list);

#endif /* PERCH_FORMAT_EVENTS_H */
