/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The DWARF byte cursor, written once: every reader of DWARF and CFI bytes (the unit DIE reader
 * and the line-program decoder of symbolize/, the CFI interpreter of unwind/) reads through it.
 *
 * Every read is bounds-checked. A read that would pass end marks the cursor bad, moves it to end
 * and gives 0, so every later read fails too: a caller checks bad once after a run of reads, and
 * a corrupt file can never make it read outside [p, end).
 */
#ifndef PERCH_DWCURSOR_H
#define PERCH_DWCURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwcursor {
	const uint8_t *p, *end;
	bool bad; /* a read ran past end (p is then end) */
	bool msb; /* big-endian data */
};

static inline struct dwcursor dwc_make(const void *p, const void *end)
{
	return (struct dwcursor){.p = p, .end = end};
}

static inline size_t dwc_left(const struct dwcursor *c)
{
	return (size_t)(c->end - c->p);
}

/* Mark c bad; returns 0 for the read that failed. */
static inline uint64_t dwc_fail(struct dwcursor *c)
{
	c->bad = true;
	c->p = c->end;
	return 0;
}

/* An unsigned integer of n bytes (0..8), in the cursor's byte order. */
static inline uint64_t dwc_u(struct dwcursor *c, size_t n)
{
	uint64_t v = 0;
	size_t i;

	if (n > 8 || dwc_left(c) < n)
		return dwc_fail(c);
	for (i = 0; i < n; i++)
		v |= (uint64_t)c->p[c->msb ? n - 1 - i : i] << (8 * i);
	c->p += n;
	return v;
}

static inline uint8_t dwc_u8(struct dwcursor *c)
{
	return (uint8_t)dwc_u(c, 1);
}

static inline uint16_t dwc_u16(struct dwcursor *c)
{
	return (uint16_t)dwc_u(c, 2);
}

static inline uint32_t dwc_u32(struct dwcursor *c)
{
	return (uint32_t)dwc_u(c, 4);
}

static inline uint64_t dwc_u64(struct dwcursor *c)
{
	return dwc_u(c, 8);
}

/* An offset into another section: 4 or 8 bytes (32- or 64-bit DWARF). */
static inline uint64_t dwc_offset(struct dwcursor *c, size_t off_size)
{
	return dwc_u(c, off_size);
}

/* A target address of addr_size bytes. */
static inline uint64_t dwc_addr(struct dwcursor *c, size_t addr_size)
{
	return dwc_u(c, addr_size);
}

/* An unsigned LEB128 (bits past 64 are dropped, as libdw does). */
static inline uint64_t dwc_uleb(struct dwcursor *c)
{
	unsigned int shift = 0;
	uint64_t v = 0;

	if (c->p < c->end && !(*c->p & 0x80)) /* most are one byte */
		return *c->p++;
	while (c->p < c->end) {
		uint8_t b = *c->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	return dwc_fail(c);
}

static inline int64_t dwc_sleb(struct dwcursor *c)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	uint8_t b;

	do {
		if (c->p >= c->end)
			return (int64_t)dwc_fail(c);
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

static inline void dwc_skip(struct dwcursor *c, uint64_t n)
{
	if (n > dwc_left(c))
		dwc_fail(c);
	else
		c->p += n;
}

/* A NUL-terminated string, skipped; NULL (and bad) when it runs past end. */
static inline const char *dwc_cstr(struct dwcursor *c)
{
	const uint8_t *s = c->p;

	while (c->p < c->end) {
		if (!*c->p++)
			return (const char *)s;
	}
	dwc_fail(c);
	return NULL;
}

/*
 * The initial length of a unit or CFI entry: 4 bytes, or 0xffffffff then 8 (64-bit DWARF, where
 * offsets are 8 bytes: *off_size). Other values from 0xfffffff0 up are reserved and returned as
 * they are, for the caller to refuse.
 */
static inline uint64_t dwc_unit_length(struct dwcursor *c, size_t *off_size)
{
	uint64_t len = dwc_u(c, 4);

	*off_size = 4;
	if (len == 0xffffffff) {
		len = dwc_u(c, 8);
		*off_size = 8;
	}
	return len;
}

#endif /* PERCH_DWCURSOR_H */
