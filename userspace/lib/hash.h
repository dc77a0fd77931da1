/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hashes every table uses, written once: FNV-1a (64 bits) for strings and bytes, and mix64
 * (the finalizer of MurmurHash3) to spread integer keys over a power-of-two table.
 */
#ifndef PERCH_HASH_H
#define PERCH_HASH_H

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

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif /* PERCH_HASH_H */
