// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the line cache (userspace/record/linecache.c): chains survive a run, misses are cached too,
 * a damaged tail or a file others can write is not trusted, build-ids that are not hex are not
 * paths.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guards.h"
#include "record/linecache.h"

static char dir[PATH_MAX];

static const char *ID = "93ac61ec5a8eb1396f9fbd350e3169a558528a40";

static void put_chain(void)
{
	struct linecache *lc = linecache__new(dir);
	const struct sym_frame chain[] = {
		{"hot_inline", "inlined.c", 8, true},
		{"caller", "inlined.c", 13, false},
	};
	const struct sym_frame unnamed[] = {{NULL, NULL, 0, false}};

	assert_non_null(lc);
	linecache__put(lc, ID, 0x1234, chain, 2);
	linecache__put(lc, ID, 0x99, NULL, 0);
	linecache__put(lc, ID, 0x77, unnamed, 1);
	linecache__free(lc);
}

static void chains_survive_a_run(void **state)
{
	struct linecache *lc;
	const struct sym_frame *f;
	size_t n;

	(void)state;
	put_chain();
	lc = linecache__new(dir);
	assert_non_null(lc);
	assert_true(linecache__get(lc, ID, 0x1234, &f, &n));
	assert_int_equal(n, 2);
	assert_string_equal(f[0].function, "hot_inline");
	assert_string_equal(f[0].file, "inlined.c");
	assert_int_equal(f[0].line, 8);
	assert_true(f[0].inlined);
	assert_string_equal(f[1].function, "caller");
	assert_int_equal(f[1].line, 13);
	assert_false(f[1].inlined);
	assert_true(linecache__get(lc, ID, 0x99, &f, &n)); /* DWARF had nothing: cached too */
	assert_int_equal(n, 0);
	assert_true(linecache__get(lc, ID, 0x77, &f, &n));
	assert_int_equal(n, 1);
	assert_null(f[0].function);
	assert_null(f[0].file);
	assert_false(linecache__get(lc, ID, 0x1235, &f, &n));
	assert_false(linecache__get(lc, "ffff", 0x1234, &f, &n));
	linecache__free(lc);
}

static void damaged_tail_keeps_the_records_before(void **state)
{
	char path[PATH_MAX + 64];
	struct linecache *lc;
	const struct sym_frame *f;
	size_t n;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), LINECACHE_FILE, dir, ID);
	unlink(path);
	put_chain();
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x01\x02\x03\x04\x05\x06\x07\x08\xff\xff\xff\xff", 12), 12);
	close(fd);
	lc = linecache__new(dir);
	assert_true(linecache__get(lc, ID, 0x1234, &f, &n));
	assert_int_equal(n, 2);
	assert_false(linecache__get(lc, ID, 0x0807060504030201ull, &f, &n));
	linecache__free(lc);
}

/* A file written under other naming rules (an older perch: DIR/BUILDID, same magic) is not read:
 * its names are what those rules gave (__libc_start_main@@GLIBC_2.34). */
static void file_of_other_naming_rules_is_not_read(void **state)
{
	char path[PATH_MAX + 64], old[PATH_MAX + 64];
	struct linecache *lc;
	const struct sym_frame *f;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), LINECACHE_FILE, dir, ID);
	snprintf(old, sizeof(old), "%s/%s", dir, ID);
	unlink(path);
	put_chain();
	assert_int_equal(rename(path, old), 0);
	lc = linecache__new(dir);
	assert_false(linecache__get(lc, ID, 0x1234, &f, &n));
	linecache__free(lc);
	unlink(old);
}

static void file_others_can_write_is_ignored(void **state)
{
	char path[PATH_MAX + 64];
	struct linecache *lc;
	const struct sym_frame *f;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), LINECACHE_FILE, dir, ID);
	unlink(path);
	put_chain();
	assert_int_equal(chmod(path, 0666), 0);
	lc = linecache__new(dir);
	assert_false(linecache__get(lc, ID, 0x1234, &f, &n));
	linecache__free(lc);
	assert_int_equal(chmod(path, 0600), 0);
}

static void build_id_must_be_hex(void **state)
{
	struct linecache *lc = linecache__new(dir);
	const struct sym_frame *f;
	size_t n;

	(void)state;
	linecache__put(lc, "../escape", 1, NULL, 0);
	assert_false(linecache__get(lc, "../escape", 1, &f, &n));
	linecache__free(lc);
	assert_int_equal(access("../escape", F_OK), -1);
}

/* A FIFO where a module's cache file would be (planted in a cache directory perch shares): reading
 * and writing it would block perch for good. Skipped, at once. */
static void fifo_at_cache_path_is_skipped_without_blocking(void **state)
{
	char path[PATH_MAX + 64];
	const struct sym_frame chain[] = {{"f", "f.c", 1, false}};
	const struct sym_frame *f;
	struct linecache *lc;
	struct stat st;
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), LINECACHE_FILE, dir, ID);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	deadline_start(5);
	lc = linecache__new(dir);
	assert_false(linecache__get(lc, ID, 0x1234, &f, &n));
	linecache__put(lc, ID, 0x1234, chain, 1);
	linecache__free(lc);
	deadline_stop();
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(path);
}

/* `sudo -E perch`: the cache directory is another user's; nothing of root's goes into it. */
static void cache_dir_of_another_user_gets_no_files(void **state)
{
	char other[PATH_MAX + 64];
	const struct sym_frame chain[] = {{"f", "f.c", 1, false}};
	struct linecache *lc;

	(void)state;
	snprintf(other, sizeof(other), "%s/other-user", dir);
	if (make_foreign_dir(other))
		skip(); /* chown needs root */
	lc = linecache__new(other);
	linecache__put(lc, ID, 0x1234, chain, 1);
	linecache__free(lc);
	assert_true(dir_is_empty(other));
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/perch-lc.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chains_survive_a_run),
		cmocka_unit_test(damaged_tail_keeps_the_records_before),
		cmocka_unit_test(file_of_other_naming_rules_is_not_read),
		cmocka_unit_test(file_others_can_write_is_ignored),
		cmocka_unit_test(build_id_must_be_hex),
		cmocka_unit_test(fifo_at_cache_path_is_skipped_without_blocking),
		cmocka_unit_test(cache_dir_of_another_user_gets_no_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
