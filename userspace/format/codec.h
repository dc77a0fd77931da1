/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recording's encoding, shared by the writer and the reader (format/ only; recording.h is
 * the contract): sizes and limits, little-endian integers, the CRC of a block, a growable byte
 * buffer to build payloads in and a cursor to read them with, and the rules a REGIONS node
 * follows. The small helpers are inline: they run once per field of every sample.
 */
#ifndef PERCH_FORMAT_CODEC_H
#define PERCH_FORMAT_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "recording.h"

/*
 * The reader refuses blocks over MAX_BLOCK, so a damaged length can't make it allocate gigabytes;
 * the writer cuts pending data into blocks of about CHUNK bytes, far below it.
 */
#define FILE_HDR_SIZE  16
#define BLOCK_HDR_SIZE 16
#define COUNT_SIZE     4
#define MAX_BLOCK      (256u << 20)
#define CHUNK	       (4u << 20)
#define MAX_STRING     (1u << 20)
#define MAX_STACK      (1u << 16)
#define MAX_LINES      256

/* Smallest encoding of one entry of each payload, to bound a count before trusting it. */
#define MIN_STR	    4
#define MIN_FRAME   (1 + 4 + 4 + 8)
#define MIN_THREAD  (4 * 4)
#define MIN_SAMPLE  (4 + 4 + 8 + 4 + 4 + 4) /* version 3; 4 bytes less before (no comm) */
#define MIN_LINES   (4 + 4)
#define MIN_RTHREAD (4 + 4 + 8 + 4)
#define RNODE_SIZE  (4 + 4 + 7 * 8 + 4 + 8)
#define LINE_SIZE   (4 * 3)
#define MIN_KV_STR  (4 + 4)
#define MIN_KV_U64  (4 + 8)
/* Version 4's blocks: LEB128 varints (uleb: 1 byte a 7 bits; sleb: zigzag then uleb). */
#define ULEB_MAX   10
#define MIN_NODE   2	    /* parent, frame */
#define MIN_KEY	   5	    /* pid, tid, comm, flags, stack */
#define MIN_WINDOW 3	    /* start, duration, ncounts */
#define MIN_COUNT  2	    /* key delta, count */
#define MIN_EVENT  2	    /* time delta, key */
#define MIN_SPAN   (5 + 1)  /* pid, tid, time delta, kind (u8), name, size */
#define MIN_MODULE 2	    /* path, build-id */
#define MIN_GPU	   (1 + 13) /* kind (u8), 13 varints */

static inline void le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static inline void le64_put(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

static inline uint32_t le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64_get(const uint8_t *p)
{
	return (uint64_t)le32_get(p) | (uint64_t)le32_get(p + 4) << 32;
}

/* CRC-32 of a block's payload (zlib's). */
uint32_t codec_crc(const uint8_t *p, size_t len);

/* Building: a growable buffer and put_* into room made by buf_reserve(). */

struct buf {
	uint8_t *data;
	size_t len, cap;
};

/* Room for more bytes after len. 0 or -ENOMEM. */
int buf_reserve(struct buf *b, size_t more);

static inline void put_bytes(struct buf *b, const void *p, size_t len)
{
	if (len)
		memcpy(b->data + b->len, p, len);
	b->len += len;
}

static inline void put_u8(struct buf *b, uint8_t v)
{
	b->data[b->len++] = v;
}

static inline void put_u32(struct buf *b, uint32_t v)
{
	le32_put(b->data + b->len, v);
	b->len += 4;
}

static inline void put_u64(struct buf *b, uint64_t v)
{
	le64_put(b->data + b->len, v);
	b->len += 8;
}

/* An unsigned LEB128 varint into room already reserved (ULEB_MAX bytes at most). */
static inline void put_uleb(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		b->data[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

/* A signed value, zigzagged (0, -1, 1, -2 ... as 0, 1, 2, 3 ...) so small magnitudes are short. */
static inline void put_sleb(struct buf *b, int64_t v)
{
	put_uleb(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* u32 length + bytes, room included. 0, -E2BIG or -ENOMEM. */
int put_str(struct buf *b, const char *s, size_t len);

/* Reading: the unread rest of a payload; every cur_* is false when it is too short. */

struct cur {
	const uint8_t *p;
	size_t left;
};

static inline bool cur_take(struct cur *c, size_t n, const uint8_t **p)
{
	if (c->left < n)
		return false;
	*p = c->p;
	c->p += n;
	c->left -= n;
	return true;
}

static inline bool cur_u8(struct cur *c, uint8_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 1, &p))
		return false;
	*v = *p;
	return true;
}

static inline bool cur_u32(struct cur *c, uint32_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 4, &p))
		return false;
	*v = le32_get(p);
	return true;
}

static inline bool cur_u64(struct cur *c, uint64_t *v)
{
	const uint8_t *p;

	if (!cur_take(c, 8, &p))
		return false;
	*v = le64_get(p);
	return true;
}

static inline bool cur_str(struct cur *c, const uint8_t **s, uint32_t *len)
{
	return cur_u32(c, len) && cur_take(c, *len, s);
}

/* An unsigned LEB128 varint; false when cut short or longer than 64 bits. */
static inline bool cur_uleb(struct cur *c, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t byte;

		if (!cur_u8(c, &byte) || (shift == 63 && byte > 1))
			return false;
		x |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* A varint that must fit 32 bits (an id). */
static inline bool cur_uleb32(struct cur *c, uint32_t *v)
{
	uint64_t x;

	if (!cur_uleb(c, &x) || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

static inline bool cur_sleb(struct cur *c, int64_t *v)
{
	uint64_t x;

	if (!cur_uleb(c, &x))
		return false;
	*v = (int64_t)(x >> 1) ^ -(int64_t)(x & 1);
	return true;
}

/* The entry count opening a payload; false when n entries of min bytes can't be there. */
static inline bool cur_count(struct cur *c, size_t min, uint32_t *n)
{
	return cur_u32(c, n) && *n <= c->left / min;
}

/* The rules of REGIONS nodes, which the writer refuses to break and the reader checks. */
bool codec_rnode_ok(const struct rec_region_node *n, uint32_t idx, size_t nstrings);

#endif /* PERCH_FORMAT_CODEC_H */
