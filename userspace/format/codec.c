// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The parts of the recording's encoding that are not inline (codec.h): the block CRC, buffer
 * growth, length-prefixed strings and the REGIONS node rules both sides apply.
 */
#include <errno.h>
#include <zlib.h>

#include "codec.h"
#include "lib/vec.h"

uint32_t codec_crc(const uint8_t *p, size_t len)
{
	return crc32(crc32(0L, Z_NULL, 0), p, len);
}

int buf_reserve(struct buf *b, size_t more)
{
	if (more > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	return vec_grow(&b->data, &b->cap, b->len + more, 1, 16);
}

int put_str(struct buf *b, const char *s, size_t len)
{
	int err;

	if (len > UINT32_MAX)
		return -E2BIG;
	err = buf_reserve(b, 4 + len);
	if (err)
		return err;
	put_u32(b, len);
	put_bytes(b, s, len);
	return 0;
}

bool codec_rnode_ok(const struct rec_region_node *n, uint32_t idx, size_t nstrings)
{
	if (!idx)
		return !n->name && !n->parent;
	return n->name && n->name < nstrings && n->parent < idx;
}
