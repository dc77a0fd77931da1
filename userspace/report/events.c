// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The events a recording sampled on (`perch record -e`, format/events.h) as the report shows
 * them: what one sample is ("cpu-clock at 997 Hz per CPU", "page-faults, 1 sample every 1
 * event"), and the lookups of `perch report --event=NAME`, which keeps one event's samples
 * (model/sampleset.h keeps them, as a profile option, when an output runs: every output then
 * shows that event alone, and the timeline keeps its ticks only; the loaded recording stays as
 * it was).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "format/events.h"
#include "report.h"

const char *report__events(const struct recording *r)
{
	return report_meta(r, REC_META_event) ?: "cpu-clock";
}

const char *report__periods(const struct recording *r)
{
	return report_meta(r, REC_META_period) ?: "none";
}

bool report__same_events(const struct recording *a, const struct recording *b, bool periods)
{
	const char *ea = report__events(a), *eb = report__events(b);
	const char *pa = report_meta(a, REC_META_period), *pb = report_meta(b, REC_META_period);
	const struct rec_event_def *da = rec_event_find(ea);

	if (strcmp(ea, eb) && (!da || da != rec_event_find(eb)))
		return false;
	return !periods || !strcmp(pa ?: "", pb ?: "");
}

uint32_t report__nevents(const struct recording *r)
{
	return rec_event_count(report_meta(r, REC_META_event));
}

int report__find_event(const struct recording *r, const char *name, uint32_t *ev)
{
	const struct rec_event_def *d = rec_event_find(name);
	const char *list = report_meta(r, REC_META_event);
	char buf[64];

	for (uint32_t i = 0; rec_event_nth(list, i, buf, sizeof(buf)); i++) {
		if (!strcmp(buf, name) || (d && rec_event_find(buf) == d)) {
			*ev = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* The event's period from META period (0: sampled at the frequency, or not said). */
static uint64_t event_period(const struct recording *r, uint32_t ev)
{
	char buf[32];

	if (!rec_event_nth(report_meta(r, REC_META_period), ev, buf, sizeof(buf)))
		return 0;
	return strtoull(buf, NULL, 10);
}

bool report_event(const struct recording *r, uint32_t ev, struct report_event *e)
{
	const struct rec_event_def *d;

	if (!rec_event_nth(report_meta(r, REC_META_event), ev, e->name, sizeof(e->name)))
		return false;
	d = rec_event_find(e->name);
	e->clock = d && d->clock;
	e->period = event_period(r, ev);
	return true;
}

bool report_event_shown(const struct recording *r, const struct report_opts *o,
			struct report_event *e)
{
	if (o->view != REPORT_VIEW_CPU || !report_event(r, o->event ? o->event - 1 : 0, e))
		return false;
	return e->period || strcmp(e->name, "cpu-clock");
}

uint64_t report_event_weight(const struct report_event *e, uint64_t count)
{
	return e->period ? count * e->period : count;
}

/* One event's line: "E at F Hz per CPU" or "E, 1 sample every P events". */
static size_t put_event(const struct recording *r, uint32_t ev, bool per_cpu, char *buf, size_t len)
{
	struct report_event e;

	if (!report_event(r, ev, &e))
		return snprintf(buf, len, "? at %s Hz%s", report_meta(r, REC_META_frequency) ?: "?",
				per_cpu ? " per CPU" : "");
	if (!e.period)
		return snprintf(buf, len, "%s at %s Hz%s", e.name,
				report_meta(r, REC_META_frequency) ?: "?",
				per_cpu ? " per CPU" : "");
	return snprintf(buf, len, "%s, 1 sample every %" PRIu64 " %s", e.name, e.period,
			e.clock		? "ns"
			: e.period == 1 ? "event"
					: "events");
}

void report_sampling(const struct recording *r, uint32_t event, bool per_cpu, char *buf, size_t len)
{
	uint32_t n = report__nevents(r);
	size_t used = 0;

	buf[0] = '\0';
	if (event) {
		put_event(r, event - 1, per_cpu, buf, len);
		return;
	}
	for (uint32_t i = 0; i < n && used < len; i++) {
		used += snprintf(buf + used, len - used, "%s", i ? "; " : "");
		if (used < len)
			used += put_event(r, i, per_cpu, buf + used, len - used);
	}
}
