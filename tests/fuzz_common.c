// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared by the fuzz harnesses: bytes loaded as a recording through a memfd, as they are and with
 * their CRCs made right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "fuzz_common.h"

void fuzz_check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Rewrite the CRC of every complete block in data. */
static void fix_crcs(uint8_t *data, size_t size)
{
	size_t pos = 16;

	while (size >= 16 && pos <= size - 16) {
		uint32_t plen = le32(data + pos + 4), crc;

		if (plen > size - pos - 16)
			break;
		crc = crc32(crc32(0L, Z_NULL, 0), data + pos + 16, plen);
		for (int i = 0; i < 4; i++)
			data[pos + 8 + i] = crc >> (8 * i);
		pos += 16 + plen;
	}
}

static void load_bytes(const uint8_t *data, size_t size,
		       void (*fn)(const struct recording *r, int err, size_t size))
{
	struct recording *r = NULL;
	char path[64];
	int fd, err;

	fd = memfd_create("perch-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size)
		goto cleanup;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = recording__load(path, &r);
	fn(r, err, size);
	recording__free(r);
cleanup:
	close(fd);
}

void fuzz_load(const uint8_t *data, size_t size,
	       void (*fn)(const struct recording *r, int err, size_t size))
{
	uint8_t *fixed = malloc(size ? size : 1);

	load_bytes(data, size, fn);
	if (!fixed)
		return;
	memcpy(fixed, data, size);
	fix_crcs(fixed, size);
	load_bytes(fixed, size, fn);
	free(fixed);
}
