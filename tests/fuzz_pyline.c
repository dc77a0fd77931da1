// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for CPython location tables (symbolize/pyline.c), bytes a profiled process
 * controls: its first 4 bytes are the first line, the rest the table. Nothing may crash or read
 * past the table; every answer is a line, no line or damaged; and a unit the table gives an
 * answer for (a line or none) means every unit before it has one too (the table was read that
 * far).
 *
 *   make fuzz && build-fuzz/fuzz_pyline -max_total_time=60 CORPUS_DIR
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "symbolize/pyline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int32_t first = 0;
	uint8_t *table;
	size_t len = size > 4 ? size - 4 : 0;
	int last = 0; /* the previous unit's answer */

	if (size >= 4)
		memcpy(&first, data, 4);
	/* its own allocation: the sanitizers see a read past the table */
	table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + (size > 4 ? 4 : size), len);
	for (uint32_t u = 0; u < 8 * (uint32_t)len + 8; u++) {
		int line, err = pyline_find(table, len, first, u, &line);

		fuzz_check(err == 0 || err == -ENOENT || err == -EINVAL);
		fuzz_check(err == -EINVAL || last != -EINVAL);
		last = err;
	}
	free(table);
	return 0;
}
