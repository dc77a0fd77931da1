// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A fuzz harness's entry point run over files, without libFuzzer: make check-unit links it with
 * each tests/fuzz_*.c and runs it over every file of tests/corpus/, plain and under the
 * sanitizers, so the corpus (and every crasher added to it) is checked on every make test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			uint8_t *p = realloc(data, cap = cap ? 2 * cap : 65536);

			if (!p)
				break;
			data = p;
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc; i++)
		bad |= replay(argv[i]);
	printf("%s: %d corpus files replayed\n", argv[0], argc - 1);
	return bad ? 1 : 0;
}
