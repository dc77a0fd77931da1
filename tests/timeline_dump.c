// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The time axis of a recording as lines, for the integration scenarios (tests/integration/
 * timeline.sh) to check with awk: what the recording loaded, not what a report makes of it.
 *
 *   timeline_dump FILE
 *   version V
 *   window START_NS END_NS
 *   sample INDEX PID TID COUNT
 *   event TIME_NS SAMPLE_INDEX
 *   span PID TID TIME_NS KIND SIZE NAME      KIND: begin, end, mark; NAME: the region's, the
 *                                            rest of the line
 */
#include <stdio.h>
#include <string.h>
#include "format/recording.h"

static const char *kind_name(uint8_t kind)
{
	switch (kind) {
	case REC_SPAN_BEGIN:
		return "begin";
	case REC_SPAN_END:
		return "end";
	case REC_SPAN_MARK:
		return "mark";
	default:
		return "?";
	}
}

int main(int argc, char **argv)
{
	struct recording *r = NULL;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: timeline_dump FILE\n");
		return 2;
	}
	err = recording__load(argv[1], &r);
	if (!r) {
		fprintf(stderr, "timeline_dump: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	printf("version %u\n", r->version);
	for (size_t i = 0; i < r->nwindows; i++)
		printf("window %lu %lu\n", (unsigned long)r->windows[i].start_ns,
		       (unsigned long)r->windows[i].end_ns);
	for (size_t i = 0; i < r->nsamples; i++)
		printf("sample %zu %u %u %lu\n", i, r->samples[i].pid, r->samples[i].tid,
		       (unsigned long)r->samples[i].count);
	for (size_t i = 0; i < r->nevents; i++)
		printf("event %lu %u\n", (unsigned long)r->events[i].time_ns, r->events[i].sample);
	for (size_t i = 0; i < r->nspans; i++) {
		const struct rec_span *s = &r->spans[i];

		printf("span %u %u %lu %s %lu %s\n", s->pid, s->tid, (unsigned long)s->time_ns,
		       kind_name(s->kind), (unsigned long)s->size, recording__string(r, s->name));
	}
	recording__free(r);
	return 0;
}
