// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of userspace/lib/safeout.c, how perch creates its output files: never a write through a
 * symlink planted at the name (its target stays as it was), what is at the name untouched until
 * the output is published, and an output that is its own input recognised.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/safeout.h"

static char dir[PATH_MAX];

static const char *at(const char *name)
{
	static char p[4][PATH_MAX];
	static int k;
	char *s = p[k++ % 4];

	snprintf(s, PATH_MAX, "%.200s/%.32s", dir, name);
	return s;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void assert_holds(const char *path, const char *text)
{
	char buf[64] = {0};
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_string_equal(buf, text);
}

/* A report's -o: a symlink at the name is refused, its target unchanged, nothing created. */
static void symlink_output_is_refused_and_its_target_kept(void **state)
{
	struct safeout o;

	(void)state;
	put(at("victim"), "keep me");
	assert_int_equal(symlink(at("victim"), at("out.txt")), 0);
	assert_int_equal(safeout__open(&o, at("out.txt"), 0644, 0), -ELOOP);
	assert_holds(at("victim"), "keep me");
	assert_null(o.path);
	assert_null(o.tmp);
}

/* A recording's -o: the symlink is moved aside as .old at publish, the target never written. */
static void symlink_recording_is_kept_as_old(void **state)
{
	struct safeout o;
	char target[PATH_MAX];
	ssize_t n;
	int fd;

	(void)state;
	put(at("victim2"), "keep me");
	assert_int_equal(symlink(at("victim2"), at("rec.data")), 0);
	fd = safeout__open(&o, at("rec.data"), 0600, SAFEOUT_KEEP_OLD);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "new", 3), 3);
	assert_int_equal(safeout__publish(&o), 0);
	close(fd);
	safeout__discard(&o);
	assert_holds(at("victim2"), "keep me");
	assert_holds(at("rec.data"), "new");
	n = readlink(at("rec.data.old"), target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_string_equal(target, at("victim2"));
}

/* What is at the name stays as it was until publish; discarded, the new file is gone. */
static void existing_file_is_untouched_until_published(void **state)
{
	struct safeout o;
	struct stat st;
	int fd;

	(void)state;
	put(at("report.txt"), "old report");
	fd = safeout__open(&o, at("report.txt"), 0644, 0);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "half", 4), 4);
	close(fd);
	assert_holds(at("report.txt"), "old report");
	assert_string_not_equal(safeout__name(&o), at("report.txt"));
	safeout__discard(&o);
	assert_int_equal(access(at("report.txt.old"), F_OK), -1);
	fd = safeout__open(&o, at("report.txt"), 0644, 0);
	assert_int_equal(write(fd, "whole", 5), 5);
	close(fd);
	assert_int_equal(safeout__publish(&o), 0);
	assert_string_equal(safeout__name(&o), at("report.txt"));
	safeout__discard(&o);
	assert_holds(at("report.txt"), "whole");
	assert_int_equal(stat(at("report.txt"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644 & ~022 & 0777);
	assert_int_equal(access(at("report.txt.old"), F_OK), -1);
}

/* -o X X, and -o through a hard link, name the input; a symlink to it does not (it would be
 * refused or moved aside, never written through). */
static void output_that_is_the_input_is_recognised(void **state)
{
	(void)state;
	put(at("in.data"), "recording");
	assert_true(safeout__is_input(at("in.data"), at("in.data")));
	assert_int_equal(link(at("in.data"), at("hard.data")), 0);
	assert_true(safeout__is_input(at("hard.data"), at("in.data")));
	assert_int_equal(symlink(at("in.data"), at("soft.data")), 0);
	assert_false(safeout__is_input(at("soft.data"), at("in.data")));
	assert_false(safeout__is_input(at("none.data"), at("in.data")));
}

/* A FIFO at the name is written as it is (a pipe to a reader), and a directory is refused. */
static void fifo_is_streamed_and_directory_refused(void **state)
{
	struct safeout o;
	int fd, rd;
	char c = 0;

	(void)state;
	assert_int_equal(mkfifo(at("pipe"), 0600), 0);
	rd = open(at("pipe"), O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	fd = safeout__open(&o, at("pipe"), 0644, 0);
	assert_true(fd >= 0);
	assert_null(o.tmp);
	assert_int_equal(write(fd, "x", 1), 1);
	assert_int_equal(read(rd, &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	close(rd);
	safeout__discard(&o);
	assert_int_equal(mkdir(at("adir"), 0700), 0);
	assert_int_equal(safeout__open(&o, at("adir"), 0644, 0), -EEXIST);
}

static int make_dir(void **state)
{
	(void)state;
	umask(022);
	snprintf(dir, sizeof(dir), "/tmp/perch-safeout-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symlink_output_is_refused_and_its_target_kept),
		cmocka_unit_test(symlink_recording_is_kept_as_old),
		cmocka_unit_test(existing_file_is_untouched_until_published),
		cmocka_unit_test(output_that_is_the_input_is_recognised),
		cmocka_unit_test(fifo_is_streamed_and_directory_refused),
	};

	return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
