// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the kernel BTF copy (userspace/record/btfcache.c) and of the cache directory
 * (userspace/record/cachedir.c): the copy has the source's bytes and is made once per boot; a copy of
 * the wrong size, one others can write, or one of another boot is not used; without a source
 * there is none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/btfcache.h"
#include "record/cachedir.h"
#include "guards.h"

static char tmp[PATH_MAX - 64], src[PATH_MAX], dir[PATH_MAX];

static int run(const char *cmd)
{
	char buf[3 * PATH_MAX];

	snprintf(buf, sizeof(buf), "cd '%s' && %s", tmp, cmd);
	return system(buf);
}

static ino_t inode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void copy_has_the_bytes_and_is_made_once(void **state)
{
	char *a, *b, cmd[2 * PATH_MAX];
	struct stat st;

	(void)state;
	a = btfcache__path(src, dir);
	assert_non_null(a);
	assert_int_equal(strncmp(a, dir, strlen(dir)), 0);
	assert_non_null(strstr(a, "/vmlinux."));
	snprintf(cmd, sizeof(cmd), "cmp -s '%s' '%s'", src, a);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stat(a, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	b = btfcache__path(src, dir);
	assert_non_null(b);
	assert_string_equal(a, b);
	assert_int_equal(inode(a), st.st_ino); /* used again, not written again */
	free(a);
	free(b);
}

static void copy_not_to_be_trusted_is_made_again(void **state)
{
	char *a, *b;
	ino_t first;

	(void)state;
	a = btfcache__path(src, dir);
	assert_non_null(a);
	first = inode(a);
	assert_int_equal(chmod(a, 0666), 0);
	b = btfcache__path(src, dir);
	assert_non_null(b);
	assert_true(inode(b) != first);
	free(b);
	/* A different size: not this kernel's. */
	assert_int_equal(truncate(a, 10), 0);
	first = inode(a);
	b = btfcache__path(src, dir);
	assert_non_null(b);
	assert_true(inode(b) != first);
	assert_int_equal(run("cmp -s src.btf run/vmlinux.*.btf"), 0);
	free(a);
	free(b);
}

static void copies_of_other_boots_are_removed(void **state)
{
	char *a;

	(void)state;
	assert_int_equal(run("rm -f run/* && cp src.btf run/vmlinux.earlier-boot.btf &&"
			     " chmod 600 run/vmlinux.earlier-boot.btf"),
			 0);
	a = btfcache__path(src, dir);
	assert_non_null(a);
	assert_int_equal(
		run("test $(ls run | wc -l) -eq 1 && test ! -e run/vmlinux.earlier-boot.btf"), 0);
	free(a);
}

static void no_source_no_copy(void **state)
{
	char missing[PATH_MAX];

	(void)state;
	snprintf(missing, sizeof(missing), "%s/missing.btf", tmp);
	assert_null(btfcache__path(missing, dir));
	assert_null(btfcache__path(NULL, dir));
	assert_null(btfcache__path(src, NULL));
}

static void cache_dir_follows_xdg_then_home(void **state)
{
	char want[2 * PATH_MAX], *p;
	struct stat st;

	(void)state;
	assert_int_equal(setenv("XDG_CACHE_HOME", tmp, 1), 0);
	p = cachedir__path("lines");
	assert_non_null(p);
	snprintf(want, sizeof(want), "%s/perch/lines", tmp);
	assert_string_equal(p, want);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0700);
	free(p);
	assert_int_equal(setenv("XDG_CACHE_HOME", "relative", 1),
			 0); /* ignored, as the spec says */
	assert_int_equal(setenv("HOME", tmp, 1), 0);
	p = cachedir__path("debug");
	assert_non_null(p);
	snprintf(want, sizeof(want), "%s/.cache/perch/debug", tmp);
	assert_string_equal(p, want);
	free(p);
	assert_int_equal(unsetenv("XDG_CACHE_HOME"), 0);
	assert_int_equal(unsetenv("HOME"), 0);
	assert_null(cachedir__path("lines"));
}

/* A directory of another user's: no copy of root's goes into it. */
static void no_copy_in_dir_of_another_user(void **state)
{
	char other[PATH_MAX + 16];
	char *p;

	(void)state;
	snprintf(other, sizeof(other), "%s/other-run", tmp);
	if (make_foreign_dir(other))
		skip(); /* chown needs root */
	p = btfcache__path(src, other);
	free(p);
	assert_null(p);
	assert_true(dir_is_empty(other));
}

/* `sudo -E perch` keeps the user's HOME: their cache is not perch's (as root) to write in, and
 * no directory of root's is made inside it. */
static void cache_dir_of_another_user_is_not_used(void **state)
{
	char other[PATH_MAX + 16];

	(void)state;
	snprintf(other, sizeof(other), "%s/other-home", tmp);
	if (make_foreign_dir(other))
		skip(); /* chown needs root */
	assert_int_equal(setenv("HOME", other, 1), 0);
	assert_null(cachedir__path("lines"));
	assert_int_equal(setenv("XDG_CACHE_HOME", other, 1), 0);
	errno = 0;
	assert_null(cachedir__path("debug"));
	assert_int_equal(errno, EPERM);
	assert_true(dir_is_empty(other));
	/* The base is ours but perch/ inside it is not. */
	snprintf(other, sizeof(other), "%s/own-xdg", tmp);
	assert_int_equal(mkdir(other, 0700), 0);
	assert_int_equal(setenv("XDG_CACHE_HOME", other, 1), 0);
	snprintf(other, sizeof(other), "%s/own-xdg/perch", tmp);
	assert_int_equal(make_foreign_dir(other), 0);
	assert_null(cachedir__path("lines"));
	assert_true(dir_is_empty(other));
	assert_int_equal(unsetenv("XDG_CACHE_HOME"), 0);
	assert_int_equal(unsetenv("HOME"), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/perch-btf.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(src, sizeof(src), "%s/src.btf", tmp);
	snprintf(dir, sizeof(dir), "%s/run", tmp);
	/* Any bytes do: the copy is the source's bytes, whatever they are. */
	return run("head -c 300000 /dev/urandom > src.btf");
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	(void)state;
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(copy_has_the_bytes_and_is_made_once),
		cmocka_unit_test(copy_not_to_be_trusted_is_made_again),
		cmocka_unit_test(copies_of_other_boots_are_removed),
		cmocka_unit_test(no_source_no_copy),
		cmocka_unit_test(cache_dir_follows_xdg_then_home),
		cmocka_unit_test(no_copy_in_dir_of_another_user),
		cmocka_unit_test(cache_dir_of_another_user_is_not_used),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
