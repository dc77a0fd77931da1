// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Opening files without following symlinks or blocking on FIFOs (see safefile.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "safefile.h"

/* fd when it is a regular file, now blocking as usual; else it is closed and -errno. */
static int keep_regular(int fd)
{
	struct stat st;
	int flags, err = -EINVAL;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto err_out;
	}
	if (!S_ISREG(st.st_mode))
		goto err_out;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) {
		err = -errno;
		goto err_out;
	}
	return fd;
err_out:
	close(fd);
	return err;
}

int safefile__open(int dirfd, const char *path, int flags, mode_t mode)
{
	return keep_regular(openat(dirfd, path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
}

/* Without openat2: each directory on the way opened with O_NOFOLLOW, which fails on a symlink
 * (O_PATH | O_NOFOLLOW opens the link itself, and O_DIRECTORY refuses it). */
static int walk_in_root(int root_fd, const char *path)
{
	char buf[PATH_MAX], *comp, *save = NULL, *next;
	int dir = root_fd, fd = -ENOENT;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, "..")) {
			fd = -EXDEV;
			break;
		}
		if (!next) {
			fd = safefile__open(dir, comp, O_RDONLY, 0);
			break;
		}
		fd = openat(dir, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir != root_fd)
			close(dir);
		if (fd < 0)
			return -errno;
		dir = fd;
		fd = -ENOENT;
	}
	if (dir != root_fd)
		close(dir);
	return fd;
}

int safefile__open_in_root(int root_fd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, root_fd, path, &how, sizeof(how));

	/* No openat2 (before 5.6), or a seccomp filter that does not know it. */
	if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG))
		return walk_in_root(root_fd, path);
	return keep_regular((int)fd);
}

bool safefile__owned_dir(const char *dir)
{
	struct stat st;

	return dir && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}
