// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython location tables (see pyline.h). An entry starts with a byte whose top bit is set; bits
 * 3-6 are its code, bits 0-2 one less than the code units it covers. What follows depends on the
 * code: 15, no location (and no line); 14, the long form (line delta as a signed varint, then the
 * end line delta and the two columns as varints); 13, no columns (a signed varint line delta);
 * 10 to 12, one line (delta code - 10) and two column bytes; 0 to 9, the short form (the same
 * line) and one column byte. Varints are 6-bit groups, least significant first, bit 6 saying
 * another follows; a signed one keeps its sign in the lowest bit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include "pyline.h"

enum { LOC_NONE = 15, LOC_LONG = 14, LOC_NO_COLUMNS = 13, LOC_ONE_LINE = 10 };

struct cursor {
	const uint8_t *p, *end;
};

/* The next varint; false when the table ends in it or it does not fit 32 bits. */
static bool varint(struct cursor *c, uint32_t *v)
{
	uint32_t val = 0;

	for (unsigned int shift = 0; shift < 32; shift += 6) {
		uint8_t b;

		if (c->p >= c->end)
			return false;
		b = *c->p++;
		if (b & 0x80) /* the next entry's start: this one is cut short */
			return false;
		val |= (uint32_t)(b & 63) << shift;
		if (!(b & 64)) {
			*v = val;
			return true;
		}
	}
	return false;
}

static bool svarint(struct cursor *c, int64_t *v)
{
	uint32_t u;

	if (!varint(c, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

/* Past n bytes of the entry (columns); false when the table ends first. */
static bool skip(struct cursor *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (c->p >= c->end || (*c->p++ & 0x80))
			return false;
	return true;
}

/* One entry's line delta (and whether it has a line), the cursor past the entry. */
static bool entry(struct cursor *c, unsigned int code, int64_t *delta, bool *has)
{
	uint32_t ignore;

	*delta = 0;
	*has = code != LOC_NONE;
	if (code == LOC_NONE)
		return true;
	if (code == LOC_LONG)
		return svarint(c, delta) && varint(c, &ignore) && varint(c, &ignore) &&
		       varint(c, &ignore);
	if (code == LOC_NO_COLUMNS)
		return svarint(c, delta);
	if (code >= LOC_ONE_LINE) {
		*delta = code - LOC_ONE_LINE;
		return skip(c, 2);
	}
	return skip(c, 1);
}

int pyline_find(const uint8_t *table, size_t len, int firstlineno, uint32_t unit, int *line)
{
	struct cursor c = {table, table + len};
	int64_t at = firstlineno, delta;
	uint64_t start = 0;

	while (table && c.p < c.end) {
		uint8_t first = *c.p++;
		unsigned int code = (first >> 3) & 15, units = (first & 7) + 1;
		bool has;

		if (!(first & 0x80) || !entry(&c, code, &delta, &has))
			return -EINVAL;
		at += delta;
		if (at < INT_MIN || at > INT_MAX)
			return -EINVAL;
		if (unit < start + units) {
			if (!has)
				return -ENOENT;
			*line = (int)at;
			return 0;
		}
		start += units;
	}
	return -EINVAL;
}
