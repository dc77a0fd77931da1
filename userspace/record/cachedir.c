// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perch's cache directory (see cachedir.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"
#include "lib/log.h"
#include "lib/safefile.h"

int cachedir__mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -1 : 0;
}

/* Create the directories of path below its first len bytes (the base, $XDG_CACHE_HOME or
 * $HOME), each one the effective user's before anything goes into it: 0, or -1 + errno (EPERM:
 * one is another user's). */
static int mkdirs_owned(char *path, size_t len)
{
	for (char *p = path + len + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			*p = c;
			return -1;
		}
		if (!safefile__owned_dir(path)) {
			log_debug("cache: %s is not this user's: no cache", path);
			*p = c;
			return errno = EPERM, -1;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

char *cachedir__path(const char *leaf)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *base = xdg && xdg[0] == '/' ? xdg : home;
	char *path;
	int r;

	if (!base || base[0] != '/')
		return errno = ENOENT, NULL;
	/* Another user's (`sudo -E` keeps their HOME): no files of ours go into their cache, and
	 * none of theirs (a FIFO, a symlink) is read as ours. */
	if (!safefile__owned_dir(base)) {
		log_debug("cache: %s is not this user's: no cache", base);
		return errno = EPERM, NULL;
	}
	r = asprintf(&path, base == xdg ? "%s/perch/%s" : "%s/.cache/perch/%s", base, leaf);
	if (r < 0)
		return errno = ENOMEM, NULL;
	if (mkdirs_owned(path, strlen(base))) {
		free(path);
		return NULL;
	}
	return path;
}
