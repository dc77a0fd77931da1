// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The events table of events.h, and the META event list read back. */
#include <stddef.h>
#include <string.h>
#include <linux/perf_event.h>
#include "events.h"

#define EVENT_DEF(n, a, t, c, clk) {n, a, t, c, clk, t == PERF_TYPE_HARDWARE},
static const struct rec_event_def events[] = {REC_EVENTS(EVENT_DEF)};
#undef EVENT_DEF

#define EVENT_NAME(n, a, t, c, clk) n ", "
static const char names[] = REC_EVENTS(EVENT_NAME);
#undef EVENT_NAME

const struct rec_event_def *rec_event_find(const char *name)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (!strcmp(events[i].name, name) ||
		    (events[i].alias && !strcmp(events[i].alias, name)))
			return &events[i];
	return NULL;
}

const char *rec_event_names(void)
{
	static char buf[sizeof(names)];

	if (!buf[0]) {
		memcpy(buf, names, sizeof(names));
		buf[sizeof(names) - 3] = '\0'; /* the last ", " */
	}
	return buf;
}

bool rec_event_nth(const char *list, uint32_t n, char *buf, size_t len)
{
	size_t k;

	if (!list || !len)
		return false;
	for (; n; n--) {
		list = strchr(list, ',');
		if (!list)
			return false;
		list++;
	}
	k = strcspn(list, ",");
	if (k >= len)
		k = len - 1;
	memcpy(buf, list, k);
	buf[k] = '\0';
	return true;
}

uint32_t rec_event_count(const char *list)
{
	uint32_t n = 1;

	for (const char *s = list ? strchr(list, ',') : NULL; s; s = strchr(s + 1, ','))
		n++;
	return n;
}
