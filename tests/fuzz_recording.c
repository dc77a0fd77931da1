// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness for the recording loader: any bytes must load or be refused with a
 * documented error, never crash, and whatever loads must only hold ids that resolve. Each input
 * is loaded as it is and again with every block's CRC made right, or almost no mutation would get
 * past the CRC check to the payload parsers.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Iuserspace -Ibpf \
 *         userspace/recording.c tests/fuzz_recording.c -lz -o fuzz_recording
 *   ./fuzz_recording -max_total_time=60 CORPUS_DIR
 *
 * Not a unit test: the Makefile only builds tests/test_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

static void check_ids(const struct recording *r)
{
	check(r->nstrings >= 1 && r->strings[0][0] == '\0');
	for (size_t i = 0; i < r->nframes; i++) {
		check(r->frames[i].kind <= REC_FRAME_KERNEL);
		check(r->frames[i].module < r->nstrings && r->frames[i].name < r->nstrings);
	}
	for (size_t i = 0; i < r->nthreads; i++)
		check(r->threads[i].comm < r->nstrings);
	for (size_t i = 0; i < r->nsamples; i++) {
		for (uint32_t j = 0; j < r->samples[i].nframes; j++)
			check(r->samples[i].frames[j] < r->nframes);
	}
}

/* Touch every key and value, so the sanitizers see a bad pointer among them. */
static void check_kv(const struct rec_kv *kv, size_t n, bool with_str)
{
	for (size_t i = 0; i < n; i++)
		check(kv[i].key && (!with_str || kv[i].str));
}

static void check_loaded(const struct recording *r, int err, size_t size)
{
	check(!err || err == -EBADMSG || err == -ENODATA);
	check(r->good_size <= size);
	check_ids(r);
	check_kv(r->meta, r->nmeta, true);
	check_kv(r->stats, r->nstats, false);
	check_kv(r->end, r->nend, false);
	recording__meta(r, "command");
	recording__stat(r, "lost", NULL);
	recording__end(r, "duration_ns", NULL);
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

static void load_bytes(const uint8_t *data, size_t size)
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
	if (r)
		check_loaded(r, err, size);
	else
		check(err == -EPROTO || err == -EPROTONOSUPPORT);
	recording__free(r);
cleanup:
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed = malloc(size ? size : 1);

	load_bytes(data, size);
	if (!fixed)
		return 0;
	memcpy(fixed, data, size);
	fix_crcs(fixed, size);
	load_bytes(fixed, size);
	free(fixed);
	return 0;
}
