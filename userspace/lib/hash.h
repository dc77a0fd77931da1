/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hashes every table uses, written once: FNV-1a (64 bits) for strings and bytes, mix64
 * (the finalizer of MurmurHash3) to spread integer keys over a power-of-two table, and hash32 to
 * fold either into the 32 bits an idxtab slot keeps.
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

/* A 64-bit hash folded to 32 bits, keeping entropy from both halves (lib/idxtab.h's slots). */
static inline uint32_t hash32(uint64_t h)
{
	return (uint32_t)(h ^ h >> 32);
}

#endif /* PERCH_HASH_H */
