// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record/pycode.c against code objects laid out in this test's own memory as CPython 3.11 lays
 * them out (its offsets: pycode.c's py_layout_for): names in each PEP 393 kind decoded to UTF-8,
 * the line table read and used, the type and the tag checked (ESTALE), hostile lengths refused
 * or cut, a read of memory that is not there (EIO), and each code object read once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "record/pycode.h"

static uint64_t fake_code_type[8];

struct fake_str {
	uint8_t head[72]; /* PyCompactUnicodeObject of 3.11 */
	uint8_t data[8192];
};

struct fake_bytes {
	uint8_t head[32];
	uint8_t data[64];
};

static struct fake_str qualname, filename;
static struct fake_bytes table;
static uint8_t code[512];
static struct py_layout layout;

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* A compact string of n characters of kind bytes each (ASCII when ascii). */
static void make_str(struct fake_str *s, const void *chars, uint64_t n, unsigned int kind,
		     int ascii)
{
	uint32_t state = kind << 2 | 1u << 5 | (uint32_t)ascii << 6;

	memset(s, 0, sizeof(*s));
	put64(s->head + 16, n);
	memcpy(s->head + 32, &state, sizeof(state));
	/* an ASCII string's characters follow the PyASCIIObject (48 bytes), another's the
	 * PyCompactUnicodeObject (72) */
	memcpy((uint8_t *)s + (ascii ? 48 : 72), chars, n * kind);
}

/* f_simple of tests/test_pyline.c's 3.11 rows: first line 3, unit 20 on line 6. */
static const char simple_table[] =
	"\x80\x00\xd8\x08\x09\x80\x41\xdd\x0d\x12\x90\x31\x89\x58\x8c\x58\xf0\x00\x01\x05\x13\xf0"
	"\x00\x01\x05\x13\x88\x01\xd8\x08\x09\x88\x51\x90\x11\x89\x55\x89\x0a\x88\x01\x88\x01\xd8"
	"\x0b\x0c\x80\x48";

static void make_code(void)
{
	py_layout_for(0x030b02f0, &layout);
	layout.code_type = (uint64_t)(uintptr_t)fake_code_type;
	memset(code, 0, sizeof(code));
	put64(code + 8, layout.code_type);
	put64(code + layout.code_qualname, (uint64_t)(uintptr_t)&qualname);
	put64(code + layout.code_filename, (uint64_t)(uintptr_t)&filename);
	put64(code + layout.code_linetable, (uint64_t)(uintptr_t)&table);
	memcpy(code + layout.code_firstlineno, &(int32_t){3}, 4);
	make_str(&qualname, "Model.forward", 13, 1, 1);
	make_str(&filename, (const uint16_t[]){0x414, 0x430, '.', 'p', 'y'}, 5, 2, 0); /* "Да.py" */
	memset(&table, 0, sizeof(table));
	put64(table.head + 16, sizeof(simple_table) - 1);
	memcpy(table.data, simple_table, sizeof(simple_table) - 1);
}

static const struct py_code *get(struct pycode_cache **c, uint64_t tag)
{
	*c = pycode_cache__new(getpid(), &layout);
	assert_non_null(*c);
	return pycode_cache__get(*c, (uint64_t)(uintptr_t)code, tag);
}

static uint64_t tag_of(void)
{
	return (uint64_t)(uintptr_t)&qualname;
}

static void test_names_and_lines(void **state)
{
	struct pycode_cache *c;
	const struct py_code *pc;

	(void)state;
	make_code();
	pc = get(&c, tag_of());
	assert_non_null(pc);
	assert_string_equal(pc->qualname, "Model.forward");
	assert_string_equal(pc->filename, "\xd0\x94\xd0\xb0.py");
	assert_int_equal(pc->firstlineno, 3);
	assert_int_equal(pycode_line(pc, 0), 3);
	assert_int_equal(pycode_line(pc, 20), 6);
	assert_int_equal(pycode_line(pc, 500), -1);
	/* read once: what the process says later is not read again */
	make_str(&qualname, "Other", 5, 1, 1);
	assert_ptr_equal(pycode_cache__get(c, (uint64_t)(uintptr_t)code, tag_of()), pc);
	assert_string_equal(pc->qualname, "Model.forward");
	pycode_cache__free(c);
}

static void test_kind4_and_latin1(void **state)
{
	struct pycode_cache *c;
	const struct py_code *pc;

	(void)state;
	make_code();
	make_str(&qualname, (const uint32_t[]){0x1f600, 0xd800, 'x'}, 3, 4, 0);
	make_str(&filename, "caf\xe9.py", 7, 1, 0); /* Latin-1, not ASCII */
	pc = get(&c, tag_of());
	assert_non_null(pc);
	assert_string_equal(pc->qualname, "\xf0\x9f\x98\x80\xef\xbf\xbdx"); /* surrogate: U+FFFD */
	assert_string_equal(pc->filename, "caf\xc3\xa9.py");
	pycode_cache__free(c);
}

static void test_refused(void **state)
{
	struct pycode_cache *c;

	(void)state;
	make_code();
	assert_null(get(&c, tag_of() + 8)); /* another tag: freed and reused */
	assert_int_equal(errno, ESTALE);
	/* asked again: the same answer, kept */
	assert_null(pycode_cache__get(c, (uint64_t)(uintptr_t)code, tag_of() + 8));
	assert_int_equal(errno, ESTALE);
	pycode_cache__free(c);

	put64(code + 8, 0x1234); /* not a code object */
	assert_null(get(&c, tag_of()));
	assert_int_equal(errno, ESTALE);
	pycode_cache__free(c);

	make_code();
	put64(qualname.head + 16, 1ull << 50); /* a length no string has */
	assert_null(get(&c, tag_of()));
	assert_int_equal(errno, EINVAL);
	pycode_cache__free(c);

	make_code();
	memcpy(filename.head + 32, &(uint32_t){3u << 2 | 1u << 5}, 4); /* kind 3 */
	assert_null(get(&c, tag_of()));
	assert_int_equal(errno, EINVAL);
	pycode_cache__free(c);

	make_code();
	memcpy(filename.head + 32, &(uint32_t){1u << 2}, 4); /* not compact */
	assert_null(get(&c, tag_of()));
	pycode_cache__free(c);

	make_code();
	c = pycode_cache__new(getpid(), &layout);
	assert_null(pycode_cache__get(c, 4096, 1)); /* nothing mapped there */
	assert_int_equal(errno, EIO);
	pycode_cache__free(c);
}

static void test_long_name_cut(void **state)
{
	struct pycode_cache *c;
	const struct py_code *pc;
	static char name[5000];

	(void)state;
	make_code();
	memset(name, 'a', sizeof(name));
	make_str(&filename, name, sizeof(name), 1, 1);
	pc = get(&c, tag_of());
	assert_non_null(pc);
	assert_int_equal(strlen(pc->filename), PYCODE_PATH_MAX);
	pycode_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_lines),
		cmocka_unit_test(test_kind4_and_latin1),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_long_name_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
