// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Output files created under a temporary name and renamed into place (see safeout.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safeout.h"

/* path + suffix, malloc'd; NULL on ENOMEM. */
static char *with_suffix(const char *path, const char *suffix)
{
	size_t len = strlen(path), n = strlen(suffix);
	char *s = malloc(len + n + 1);

	if (s) {
		memcpy(s, path, len);
		memcpy(s + len, suffix, n + 1);
	}
	return s;
}

/* A device or FIFO that is already there is written as it is (blocking: a FIFO waits for its
 * reader), but never a file reached by a race after the lstat(). */
static int open_existing(const char *path)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return fd;
	close(fd);
	return -EEXIST;
}

/* mkostemp() creates with O_EXCL (no symlink followed) and mode 0600: mode (less the umask)
 * is set after. */
static int open_tmp(struct safeout *o, mode_t mode)
{
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	o->tmp = with_suffix(o->path, ".XXXXXX");
	if (!o->tmp)
		return -ENOMEM;
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return -errno;
	}
	if (fchmod(fd, mode & ~mask)) {
		int err = -errno;

		close(fd);
		return err; /* the file is removed by safeout__discard() */
	}
	return fd;
}

static int open_at(struct safeout *o, mode_t mode)
{
	struct stat st;

	if (lstat(o->path, &st))
		return errno == ENOENT ? open_tmp(o, mode) : -errno;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return open_existing(o->path);
	if (S_ISLNK(st.st_mode) && !(o->flags & SAFEOUT_KEEP_OLD))
		return -ELOOP;
	if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return open_tmp(o, mode);
	return -EEXIST;
}

int safeout__open(struct safeout *o, const char *path, mode_t mode, unsigned flags)
{
	int fd;

	*o = (struct safeout){.flags = flags};
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	fd = open_at(o, mode);
	if (fd < 0)
		safeout__discard(o);
	return fd;
}

const char *safeout__name(const struct safeout *o)
{
	return o->tmp ? o->tmp : o->path;
}

/* Move path to path.old (when it is a regular file or a symlink, which is moved, not followed).
 * 0 or -errno. */
static int keep_old(const char *path)
{
	char *old;
	struct stat st;
	int err = 0;

	if (lstat(path, &st) || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
		return 0;
	old = with_suffix(path, ".old");
	if (!old)
		return -ENOMEM;
	if (rename(path, old))
		err = -errno;
	free(old);
	return err;
}

int safeout__publish(struct safeout *o)
{
	int err = 0;

	if (!o->tmp)
		return 0;
	if (o->flags & SAFEOUT_KEEP_OLD)
		err = keep_old(o->path);
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		return err;
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

void safeout__discard(struct safeout *o)
{
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

bool safeout__is_input(const char *out, const char *in)
{
	struct stat so, si;

	return !lstat(out, &so) && !stat(in, &si) && S_ISREG(so.st_mode) &&
	       so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}
