/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers for tests of what others may put in perch's way: a deadline for calls that must not
 * block (a FIFO where a file was expected), so a regression fails the run instead of hanging it,
 * and directories that belong to another user.
 */
#ifndef PERCH_TEST_GUARDS_H
#define PERCH_TEST_GUARDS_H

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FOREIGN_UID 65534 /* nobody */

static inline void deadline_passed(int sig)
{
	static const char msg[] = "FAIL: blocked past the deadline (a FIFO opened?)\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* failing anyway */
	}
	_exit(1);
}

/* The calls until deadline_stop() must return within seconds. */
static inline void deadline_start(unsigned int seconds)
{
	signal(SIGALRM, deadline_passed);
	alarm(seconds);
}

static inline void deadline_stop(void)
{
	alarm(0);
}

/* Make dir (mode 0755) owned by FOREIGN_UID: 0, or -1 (not root: the test should skip). */
static inline int make_foreign_dir(const char *dir)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -1;
	return chown(dir, FOREIGN_UID, FOREIGN_UID);
}

/* Whether dir holds nothing (no file was written into it). */
static inline bool dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

#endif /* PERCH_TEST_GUARDS_H */
