/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the fuzz harnesses (tests/fuzz_*.c) share: loading bytes as a recording, with every
 * block's CRC made right too (or almost no mutation would get past the CRC check to the payload
 * parsers), and the checks any loaded recording must pass. The same harnesses run under
 * libFuzzer (make fuzz) and over tests/corpus/ with tests/fuzz_replay.c (make check-unit).
 */
#ifndef PERCH_FUZZ_COMMON_H
#define PERCH_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failed check: a crash the fuzzer reports, with the input that caused it. */
void fuzz_check(bool ok);

/* Call fn with the recording data loads to (NULL when refused) and recording__load's result,
 * once for data as it is and once with every complete block's CRC rewritten. */
void fuzz_load(const uint8_t *data, size_t size,
	       void (*fn)(const struct recording *r, int err, size_t size));

#endif /* PERCH_FUZZ_COMMON_H */
