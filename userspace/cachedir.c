// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perch's cache directory (see cachedir.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "cachedir.h"

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

char *cachedir__path(const char *leaf)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *path;
	int r;

	if (xdg && xdg[0] == '/')
		r = asprintf(&path, "%s/perch/%s", xdg, leaf);
	else if (home && home[0] == '/')
		r = asprintf(&path, "%s/.cache/perch/%s", home, leaf);
	else
		return errno = ENOENT, NULL;
	if (r < 0)
		return errno = ENOMEM, NULL;
	if (cachedir__mkdirs(path)) {
		free(path);
		return NULL;
	}
	return path;
}
