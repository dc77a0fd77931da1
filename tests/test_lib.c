// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of userspace/lib/, the helpers every part shares and none may get wrong: the binary search
 * (held against a linear scan), the two hash tables (against a plain array of what went in), the
 * growth helper, the hashes (published FNV-1a vectors) and the DWARF byte cursor (the LEB128
 * examples of the DWARF 5 standard, section 7.6, and reads past the end).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/dwcursor.h"
#include "lib/hash.h"
#include "lib/idxtab.h"
#include "lib/search.h"
#include "lib/u64map.h"
#include "lib/vec.h"

struct row {
	uint64_t start;
	int tag;
};

static size_t linear_last_le(const struct row *v, size_t nr, uint64_t key)
{
	size_t n = 0;

	while (n < nr && v[n].start <= key)
		n++;
	return n;
}

static void search_last_le_matches_linear_scan(void **state)
{
	struct row v[200];

	(void)state;
	srand(7);
	for (size_t nr = 0; nr <= 200; nr += 13) {
		uint64_t at = 0;

		for (size_t i = 0; i < nr; i++) {
			at += (uint64_t)(rand() % 3); /* runs of equal keys too */
			v[i] = (struct row){.start = at, .tag = (int)i};
		}
		for (uint64_t key = 0; key <= at + 2; key++)
			assert_int_equal(search_last_le(v, nr, start, key),
					 linear_last_le(v, nr, key));
	}
}

static void search_prefix_takes_any_predicate(void **state)
{
	const int v[] = {1, 3, 5, 7, 9, 11};

	(void)state;
	/* the first element >= 7 (a lower bound), within a sub-range, and none */
	assert_int_equal(search_prefix(0, 6, i, v[i] < 7), 3);
	assert_int_equal(search_prefix(2, 4, i, v[i] < 100), 4);
	assert_int_equal(search_prefix(0, 6, i, v[i] < 0), 0);
	assert_int_equal(search_prefix(0, 0, i, v[i] < 7), 0);
}

/* Deleting keeps every other key findable: runs that wrap around the table's end, keys whose
 * home is before the deleted slot and after it; the map checked against a plain array after each
 * of thousands of deletions and re-insertions. */
static void u64map_deletes_without_losing_others(void **state)
{
	enum { N = 3000 };
	static bool in[N];
	struct u64map m = {0};
	uint64_t v, x = 88172645463325252ull;

	(void)state;
	memset(in, 0, sizeof(in));
	assert_false(u64map__del(&m, 5));
	for (int round = 0; round < 20000; round++) {
		uint64_t k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % N;
		if (in[k]) {
			assert_true(u64map__del(&m, k * 64));
			assert_false(u64map__del(&m, k * 64));
		} else {
			assert_int_equal(u64map__put(&m, k * 64, k + 1), 0);
		}
		in[k] = !in[k];
		if (round % 997)
			continue;
		for (uint64_t j = 0; j < N; j++) {
			bool got = u64map__get(&m, j * 64, &v);

			assert_true(got == in[j]);
			if (got)
				assert_true(v == j + 1);
		}
	}
	u64map__clear(&m);
}

static void u64map_keeps_what_was_put(void **state)
{
	struct u64map m = {0};
	uint64_t v;

	(void)state;
	assert_false(u64map__get(&m, 1, &v));
	for (uint64_t k = 0; k < 5000; k++)
		assert_int_equal(u64map__put(&m, k * 4096, k),
				 0);			/* keys alike in their low bits */
	assert_int_equal(u64map__put(&m, 4096, 77), 0); /* replaces */
	for (uint64_t k = 0; k < 5000; k++) {
		assert_true(u64map__get(&m, k * 4096, &v));
		assert_int_equal(v, k == 1 ? 77 : k);
	}
	assert_false(u64map__get(&m, 4095, &v));
	assert_int_equal(m.len, 5000);
	u64map__clear(&m);
	assert_false(u64map__get(&m, 0, &v));
}

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const char *const *strs = ctx;

	return strcmp(strs[idx], key) == 0;
}

/* Intern s in strs (an array of n) through t, with a hash that may be forced to collide. */
static uint32_t intern(struct idxtab *t, const char **strs, uint32_t *n, const char *s,
		       uint32_t hash)
{
	struct idxtab_slot *slot;

	assert_int_equal(idxtab__reserve(t), 0);
	slot = idxtab__find(t, hash, str_eq, strs, s);
	if (slot->idx1)
		return slot->idx1 - 1;
	strs[*n] = s;
	idxtab__set(t, slot, *n, hash);
	return (*n)++;
}

static void idxtab_interns_each_key_once_under_colliding_hashes(void **state)
{
	static char names[3000][8];
	const char *strs[3000];
	struct idxtab t = {0};
	uint32_t n = 0;

	(void)state;
	for (int i = 0; i < 3000; i++)
		snprintf(names[i], sizeof(names[i]), "f%u", (unsigned int)i % 10000u);
	/* every tenth name shares one hash: equal hashes must still be told apart by eq */
	for (int i = 0; i < 3000; i++) {
		uint32_t h = i % 10 ? (uint32_t)fnv64_str(FNV64_OFFSET, names[i]) : 42;

		assert_int_equal(intern(&t, strs, &n, names[i], h), i);
	}
	for (int i = 2999; i >= 0; i--) {
		uint32_t h = i % 10 ? (uint32_t)fnv64_str(FNV64_OFFSET, names[i]) : 42;

		assert_int_equal(intern(&t, strs, &n, names[i], h), i);
	}
	assert_int_equal(n, 3000);
	assert_int_equal(t.count, 3000);
	idxtab__clear(&t);
}

static void vec_grow_doubles_from_first_and_keeps_contents(void **state)
{
	int *v = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(vec_grow(&v, &cap, 1, sizeof(*v), 16), 0);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 16; i++)
		v[i] = i;
	assert_int_equal(vec_grow(&v, &cap, 16, sizeof(*v), 16), 0);
	assert_int_equal(cap, 16); /* enough already: nothing moves */
	assert_int_equal(vec_grow(&v, &cap, 100, sizeof(*v), 16), 0);
	assert_int_equal(cap, 128);
	for (int i = 0; i < 16; i++)
		assert_int_equal(v[i], i);
	assert_int_equal(vec_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v), 16), -ENOMEM);
	assert_int_equal(vec_grow(&v, &cap, SIZE_MAX, sizeof(*v), 16), -ENOMEM); /* no wrap */
	assert_int_equal(cap, 128); /* kept on failure */
	free(v);
}

static void hashes_match_published_vectors(void **state)
{
	(void)state;
	/* FNV-1a 64, from the FNV reference test suite */
	assert_true(fnv64_str(FNV64_OFFSET, "") == 0xcbf29ce484222325ull);
	assert_true(fnv64_str(FNV64_OFFSET, "a") == 0xaf63dc4c8601ec8cull);
	assert_true(fnv64_str(FNV64_OFFSET, "foobar") == 0x85944171f73967e8ull);
	assert_true(fnv64_bytes(FNV64_OFFSET, "foobar", 6) == 0x85944171f73967e8ull);
	/* mix64 is a bijection's finalizer: 0 stays 0, neighbours land far apart */
	assert_true(mix64(0) == 0);
	assert_true((mix64(1) ^ mix64(2)) >> 32 != 0);
}

static void dwcursor_reads_leb128_as_the_standard_spells_it(void **state)
{
	static const uint8_t u[] = {2, 127, 0x80, 1, 0x81, 1, 0x82, 1, 0xb9, 0x64};
	static const uint8_t s[] = {2, 0x7e, 0xff, 0, 0x81, 0x7f, 0x80, 1, 0x80, 0x7f};
	struct dwcursor c = dwc_make(u, u + sizeof(u));

	(void)state;
	assert_int_equal(dwc_uleb(&c), 2);
	assert_int_equal(dwc_uleb(&c), 127);
	assert_int_equal(dwc_uleb(&c), 128);
	assert_int_equal(dwc_uleb(&c), 129);
	assert_int_equal(dwc_uleb(&c), 130);
	assert_int_equal(dwc_uleb(&c), 12857);
	assert_false(c.bad);
	c = dwc_make(s, s + sizeof(s));
	assert_int_equal(dwc_sleb(&c), 2);
	assert_int_equal(dwc_sleb(&c), -2);
	assert_int_equal(dwc_sleb(&c), 127);
	assert_int_equal(dwc_sleb(&c), -127);
	assert_int_equal(dwc_sleb(&c), 128);
	assert_int_equal(dwc_sleb(&c), -128);
	assert_false(c.bad);
	assert_int_equal(dwc_left(&c), 0);
}

static void dwcursor_fails_safely_past_the_end(void **state)
{
	static const uint8_t b[] = {0x34, 0x12, 0x80, 0x80, 'h', 'i'};
	struct dwcursor c = dwc_make(b, b + 2);

	(void)state;
	assert_int_equal(dwc_u16(&c), 0x1234);
	assert_int_equal(dwc_u8(&c), 0); /* nothing left */
	assert_true(c.bad);
	assert_int_equal(dwc_u32(&c), 0); /* and every later read fails too */
	c = dwc_make(b + 2, b + 4);	  /* a LEB128 whose last byte is missing */
	assert_int_equal(dwc_uleb(&c), 0);
	assert_true(c.bad);
	c = dwc_make(b + 4, b + 6); /* a string without its NUL */
	assert_null(dwc_cstr(&c));
	assert_true(c.bad);
	c = dwc_make(b, b + 2);
	c.msb = true; /* big-endian data */
	assert_int_equal(dwc_u16(&c), 0x3412);
	c = dwc_make(b, b + 6);
	dwc_skip(&c, 7);
	assert_true(c.bad);
	assert_int_equal(dwc_left(&c), 0);
}

static void dwcursor_reads_64_bit_unit_lengths(void **state)
{
	static const uint8_t b32[] = {0x10, 0, 0, 0};
	static const uint8_t b64[] = {0xff, 0xff, 0xff, 0xff, 0x20, 0, 0, 0, 0, 0, 0, 0};
	struct dwcursor c = dwc_make(b32, b32 + sizeof(b32));
	size_t off_size = 0;

	(void)state;
	assert_int_equal(dwc_unit_length(&c, &off_size), 0x10);
	assert_int_equal(off_size, 4);
	c = dwc_make(b64, b64 + sizeof(b64));
	assert_int_equal(dwc_unit_length(&c, &off_size), 0x20);
	assert_int_equal(off_size, 8);
	assert_false(c.bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(search_last_le_matches_linear_scan),
		cmocka_unit_test(search_prefix_takes_any_predicate),
		cmocka_unit_test(u64map_keeps_what_was_put),
		cmocka_unit_test(u64map_deletes_without_losing_others),
		cmocka_unit_test(idxtab_interns_each_key_once_under_colliding_hashes),
		cmocka_unit_test(vec_grow_doubles_from_first_and_keeps_contents),
		cmocka_unit_test(hashes_match_published_vectors),
		cmocka_unit_test(dwcursor_reads_leb128_as_the_standard_spells_it),
		cmocka_unit_test(dwcursor_fails_safely_past_the_end),
		cmocka_unit_test(dwcursor_reads_64_bit_unit_lengths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
