// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * symbolize/pyline.c against real location tables: every code unit of code objects compiled by
 * Debian's python3.11 (3.11.2), 3.12.1 and 3.13.0 (built from source with pyenv), with the line
 * CPython's own code.co_lines() gives it (-1: none). The tables were made once with
 *
 *   for P in python3.11 python3.12 python3.13; do $P tests/pyline_tables.py; done
 *
 * (tests/pyline_tables.py prints this file's rows). Damaged tables: -EINVAL, never a read past
 * their end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "symbolize/pyline.h"

struct table {
	int firstlineno;
	const char *bytes;
	size_t len;
	const int *lines; /* per code unit */
	size_t units;
};

static const struct table
	tables[] =
		{
			/* 3.11.2 f_simple */
			{3,
			 "\x80\x00\xd8\x08\x09\x80\x41\xdd\x0d\x12\x90\x31\x89\x58\x8c\x58\xf0\x00\x01\x05\x13\xf0\x00\x01\x05\x13\x88\x01\xd8\x08\x09\x88\x51\x90\x11\x89\x55\x89\x0a\x88\x01\x88\x01\xd8\x0b\x0c\x80\x48",
			 48, (const int[]){3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
					   5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7, 7},
			 31},
			/* 3.11.2 f_multi */
			{9,
			 "\x80\x00\xe0\x07\x08\xf0\x00\x02\x05\x13\xd8\x10\x11\xd8\x10\x11\xf1\x03\x01\x11\x12\xf0\x00\x01\x09\x13\xf0\x04\x04\x05\x0d\xdd\x0e\x18\xd8\x0c\x0f\xf1\x03\x01\x0f\x11\xf4\x00\x01\x0f\x11\xf0\x00\x01\x09\x11\xf8\xe5\x0b\x15\xf0\x00\x01\x05\x0d\xf0\x00\x01\x05\x0d\xf0\x00\x01\x05\x0d\xd8\x08\x0c\x88\x04\xf0\x03\x01\x05\x0d\xf8\xf8\xf8\xe0\x0b\x20\xd0\x0b\x20\x95\x75\x98\x51\x91\x78\x94\x78\xd0\x0b\x20\xd1\x0b\x20\xd4\x0b\x20\xd0\x04\x20",
			 110, (const int[]){9,	11, 11, 12, 13, 12, 12, 12, 14, 15, 15, 15, 15,
					    15, 15, 16, 15, 15, 15, 15, 15, 15, 15, 15, -1, 17,
					    17, 17, 17, 17, 17, 17, 17, 17, 18, 18, 17, -1, -1,
					    -1, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
					    19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19},
			 65},
			/* 3.11.2 K.m */
			{22,
			 "\x80\x00\xf0\x02\x01\x09\x15\xf0\x00\x01\x09\x15\xf0\x00\x01\x09\x15\xe0\x0f\x14\x88\x75\x89\x77\x8c\x77\x88\x0e",
			 28, (const int[]){22, 23, 23, 23, 25, 25, 25, 25, 25, 25, 25, 25, 25, 25},
			 14},
			/* 3.11.2 f_long */
			{27,
			 "\x80\x00\xd8\x08\x09\x80\x41\xf0\x2a\x00\x09\x0a\x80\x41\xd8\x0b\x0c\x88\x71\x89\x35\x80\x4c",
			 23, (const int[]){27, 28, 28, 49, 49, 50, 50, 50, 50, 50}, 10},
			/* 3.11.2 dumps */
			{183,
			 "\x80\x00\xf0\x58\x01\x00\x0d\x15\xf0\x00\x04\x05\x2c\x98\x1c\xf0\x00\x04\x05\x2c\xd8\x08\x16\xf0\x03\x04\x05\x2c\xd8\x1b\x24\xf0\x03\x04\x05\x2c\xe0\x08\x0b\x88\x0b\x98\x06\x98\x0e\xa8\x3a\xd0\x2b\x3d\xd8\x08\x0f\x88\x0f\xa0\x09\x88\x0f\xb0\x22\x88\x0f\xdd\x0f\x1f\xd7\x0f\x26\xd2\x0f\x26\xa0\x73\xd1\x0f\x2b\xd4\x0f\x2b\xd0\x08\x2b\xd8\x07\x0a\x80\x7b\xdd\x0e\x19\x88\x03\xd8\x0b\x0e\x88\x33\xf0\x00\x04\x0c\x0e\xd8\x11\x19\xa8\x0c\xd8\x17\x25\xb0\x19\xc0\x36\xd8\x13\x1d\xa0\x77\xb8\x29\xf0\x07\x04\x0c\x0e\xf0\x00\x04\x0c\x0e\xf0\x08\x00\x0b\x0d\xf0\x09\x04\x0c\x0e\xf0\x00\x04\x0c\x0e\xf7\x08\x00\x0f\x15\x8a\x66\x90\x53\x89\x6b\x8c\x6b\xf0\x09\x04\x05\x1a",
			 165,
			 (const int[]){183, 227, 227, 227, 227, 228, 227, 228, 227, 229, 229, 229,
				       229, 229, 229, 230, 230, 230, 230, 230, 230, 231, 231, 231,
				       231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231,
				       231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 232,
				       232, 233, 233, 233, 233, 233, 233, 233, 234, 234, 234, 235,
				       235, 236, 236, 236, 237, 237, 237, 234, 234, 238, 234, 234,
				       238, 238, 238, 238, 238, 238, 238, 238, 238, 238, 238, 238,
				       238, 238, 238, 238, 238, 238, 238, 234},
			 92},
			/* 3.12.1 f_simple */
			{3,
			 "\x80\x00\xd8\x08\x09\x80\x41\xdc\x0d\x12\x90\x31\x8b\x58\xf2\x00\x01\x05\x13\x88\x01\xd8\x08\x09\x88\x51\x90\x11\x89\x55\x89\x0a\x89\x01\xf0\x03\x01\x05\x13\xe0\x0b\x0c\x80\x48",
			 44, (const int[]){3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
					   5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 7, 7},
			 29},
			/* 3.12.1 f_multi */
			{9,
			 "\x80\x00\xe1\x07\x08\xd8\x10\x11\xd8\x10\x11\xf1\x03\x01\x11\x12\xf0\x00\x01\x09\x13\xf0\x04\x04\x05\x0d\xdc\x0e\x18\xd8\x0c\x0f\xf3\x03\x01\x0f\x11\xf0\x00\x01\x09\x11\xf8\xe4\x0b\x15\xf2\x00\x01\x05\x0d\xd9\x08\x0c\xf0\x03\x01\x05\x0d\xfa\xe4\x17\x1c\x98\x51\x93\x78\xd6\x0b\x20\x90\x21\x8a\x41\xd2\x0b\x20\xd0\x04\x20\xf9\xd2\x0b\x20",
			 84, (const int[]){9,  11, 11, 12, 13, 12, 12, 12, 14, 15, 15, 15, 15,
					   15, 16, 15, 15, 15, 15, 15, -1, 17, 17, 17, 17, 17,
					   17, 17, 17, 18, 18, 17, -1, -1, -1, 19, 19, 19, 19,
					   19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
					   19, 19, 19, 19, 19, 19, 19, 19, -1, -1, 19, 19, 19},
			 65},
			/* 3.12.1 K.m */
			{22, "\x80\x00\xf2\x02\x01\x09\x15\xe1\x0f\x14\x8b\x77\x88\x0e", 14,
			 (const int[]){22, 23, 23, 23, 25, 25, 25, 25, 25, 25, 25}, 11},
			/* 3.12.1 f_long */
			{27,
			 "\x80\x00\xd8\x08\x09\x80\x41\xf0\x2a\x00\x09\x0a\x80\x41\xd8\x0b\x0c\x88\x71\x89\x35\x80\x4c",
			 23, (const int[]){27, 28, 28, 49, 49, 50, 50, 50, 50, 50}, 10},
			/* 3.12.1 dumps */
			{183,
			 "\x80\x00\xf1\x58\x01\x00\x0d\x15\x99\x1c\xd9\x08\x16\x99\x39\xd8\x08\x0b\x88\x0b\x98\x06\x98\x0e\xa8\x3a\xd0\x2b\x3d\xd8\x08\x0f\x88\x0f\xa1\x09\xb1\x22\xdc\x0f\x1f\xd7\x0f\x26\xd1\x0f\x26\xa0\x73\xd3\x0f\x2b\xd0\x08\x2b\xd8\x07\x0a\x80\x7b\xdc\x0e\x19\x88\x03\xd9\x0b\x0e\xf0\x00\x04\x0c\x0e\xd8\x11\x19\xa8\x0c\xd8\x17\x25\xb0\x19\xc0\x36\xd8\x13\x1d\xa0\x77\xb8\x29\xf1\x07\x04\x0c\x0e\xf0\x08\x00\x0b\x0d\xf1\x09\x04\x0c\x0e\xf7\x08\x00\x0f\x15\x89\x66\x90\x53\x8b\x6b\xf0\x09\x04\x05\x1a", 123,
			 (
				 const int[]){183, 227, 227, 227, 227, 228, 228, 228, 228, 229, 229,
					      229, 229, 229, 229, 230, 230, 230, 230, 230, 230, 231,
					      231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231,
					      231, 231, 231, 231, 231, 231, 231, 231, 231, 232, 232,
					      233, 233, 233, 233, 233, 233, 234, 234, 234, 235, 235,
					      236, 236, 236, 237, 237, 237, 234, 234, 238, 234, 234,
					      238, 238, 238, 238, 238, 238, 238, 238, 238, 238, 238,
					      238, 238, 238, 238, 234},
			 82},
			/* 3.13.0 f_simple */
			{3,
			 "\x80\x00\xd8\x08\x09\x80\x41\xdc\x0d\x12\x90\x31\x8e\x58\x88\x01\xd8\x08\x09\x90\x11\x89\x55\x89\x0a\x8a\x01\xf1\x03\x00\x0e\x16\xe0\x0b\x0c\x80\x48",
			 37, (const int[]){3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
					   5, 5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5, 5, 7, 7},
			 30},
			/* 3.13.0 f_multi */
			{9,
			 "\x80\x00\xe6\x07\x08\xd8\x10\x11\xd8\x10\x11\xf1\x03\x01\x11\x12\xf0\x00\x01\x09\x13\xf0\x04\x04\x05\x0d\xdc\x0e\x18\xd8\x0c\x0f\xf3\x03\x01\x0f\x11\xf0\x00\x01\x09\x11\xf8\xe4\x0b\x15\xf3\x00\x01\x05\x0d\xd9\x08\x0c\xf0\x03\x01\x05\x0d\xfa\xe4\x17\x1c\x98\x51\x94\x78\xd3\x0b\x20\x91\x78\x90\x21\x8a\x41\x91\x78\xd1\x0b\x20\xd0\x04\x20\xf9\xd2\x0b\x20",
			 88,
			 (const int[]){9,  11, 11, 11, 11, 11, 11, 11, 12, 13, 12, 12, 12, 14, 15,
				       15, 15, 15, 15, 16, 15, 15, 15, 15, 15, -1, 17, 17, 17, 17,
				       17, 17, 17, 17, 17, 18, 18, 17, -1, -1, -1, 19, 19, 19, 19,
				       19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19, 19,
				       19, 19, 19, 19, 19, 19, 19, -1, -1, 19, 19, 19},
			 72},
			/* 3.13.0 K.m */
			{22, "\x80\x00\xf2\x02\x01\x09\x15\xe1\x0f\x14\x8b\x77\x88\x0e", 14,
			 (const int[]){22, 23, 23, 23, 25, 25, 25, 25, 25, 25, 25}, 11},
			/* 3.13.0 f_long */
			{27,
			 "\x80\x00\xd8\x08\x09\x80\x41\xf0\x2a\x00\x09\x0a\x80\x41\xd8\x0b\x0c\x89\x35\x80\x4c",
			 21, (const int[]){27, 28, 28, 49, 49, 50, 50, 50, 50}, 9},
			/* 3.13.0 dumps */
			{183,
			 "\x80\x00\xf6\x58\x01\x00\x0d\x15\x9e\x1c\xde\x08\x16\x9e\x39\xd8\x08\x0b\x89\x0b\x98\x06\x99\x0e\xa8\x3a\xd1\x2b\x3d\xd8\x08\x0f\x89\x0f\xa6\x09\xb6\x22\xdc\x0f\x1f\xd7\x0f\x26\xd1\x0f\x26\xa0\x73\xd3\x0f\x2b\xd0\x08\x2b\xd8\x07\x0a\x81\x7b\xdc\x0e\x19\x88\x03\xd9\x0b\x0e\xf0\x00\x04\x0c\x0e\xd8\x11\x19\xd8\x17\x25\xc0\x36\xd8\x13\x1d\xb8\x29\xf1\x07\x04\x0c\x0e\xf0\x08\x00\x0b\x0d\xf1\x09\x04\x0c\x0e\xf7\x08\x00\x0f\x15\x89\x66\x90\x53\x8b\x6b\xf0\x09\x04\x05\x1a",
			 117,
			 (const int[]){183, 227, 227, 227, 227, 227, 227, 227, 227, 227, 227, 227,
				       227, 227, 227, 228, 228, 228, 228, 228, 228, 228, 228, 228,
				       228, 228, 228, 228, 228, 229, 229, 229, 229, 229, 229, 229,
				       229, 229, 230, 230, 230, 230, 230, 230, 230, 230, 230, 230,
				       230, 230, 230, 230, 230, 230, 230, 231, 231, 231, 231, 231,
				       231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231, 231,
				       231, 231, 231, 231, 232, 232, 232, 233, 233, 233, 233, 233,
				       233, 234, 234, 234, 235, 236, 236, 237, 237, 234, 234, 238,
				       234, 234, 238, 238, 238, 238, 238, 238, 238, 238, 238, 238,
				       238, 238, 238, 238, 238, 234},
			 114},
};

static void test_real_tables(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const struct table *tb = &tables[t];

		for (uint32_t u = 0; u < tb->units; u++) {
			int line = -2, err;

			err = pyline_find((const uint8_t *)tb->bytes, tb->len, tb->firstlineno, u,
					  &line);
			if (tb->lines[u] < 0) {
				assert_int_equal(err, -ENOENT);
			} else {
				assert_int_equal(err, 0);
				assert_int_equal(line, tb->lines[u]);
			}
		}
		/* past the last unit the table covers */
		int line;

		assert_int_equal(pyline_find((const uint8_t *)tb->bytes, tb->len, tb->firstlineno,
					     (uint32_t)tb->units + 64, &line),
				 -EINVAL);
	}
}

/* Every prefix of every table, copied to its own allocation (the sanitizers see a read past
 * it): a unit its prefix covers gives the full table's answer, any other -EINVAL. */
static void test_cut_tables(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const struct table *tb = &tables[t];

		for (size_t cut = 0; cut < tb->len; cut++) {
			uint8_t *p = malloc(cut ? cut : 1);

			memcpy(p, tb->bytes, cut);
			for (uint32_t u = 0; u < tb->units; u++) {
				int line = -2, err = pyline_find(p, cut, tb->firstlineno, u, &line);

				assert_true(err == 0 || err == -ENOENT || err == -EINVAL);
				if (err == 0)
					assert_int_equal(line, tb->lines[u]);
			}
			free(p);
		}
	}
}

static void test_hostile(void **state)
{
	/* not an entry's start; a varint that never ends; deltas that leave int's range */
	static const uint8_t not_start[] = {0x00, 0x01};
	static const uint8_t endless[] = {0xe8, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f};
	static const uint8_t huge[] = {0xe8, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03, 0xe8,
				       0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x03, 0x80, 0x00};
	int line;

	(void)state;
	assert_int_equal(pyline_find(not_start, sizeof(not_start), 1, 0, &line), -EINVAL);
	assert_int_equal(pyline_find(endless, sizeof(endless), 1, 0, &line), -EINVAL);
	assert_int_equal(pyline_find(huge, sizeof(huge), 1, 3, &line), -EINVAL);
	assert_int_equal(pyline_find(NULL, 0, 1, 0, &line), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_tables),
		cmocka_unit_test(test_cut_tables),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
