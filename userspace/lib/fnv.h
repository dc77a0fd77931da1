/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* FNV-1a, 64 bits: the one string and byte hash the index tables and caches use. */
#ifndef PERCH_FNV_H
#define PERCH_FNV_H

#include <stddef.h>
#include <stdint.h>

#define FNV64_OFFSET 0xcbf29ce484222325ull
#define FNV64_PRIME  0x100000001b3ull

static inline uint64_t fnv64_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV64_PRIME;
	return h;
}

static inline uint64_t fnv64_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * FNV64_PRIME;
	return h;
}

#endif /* PERCH_FNV_H */
