// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's BTF as a regular file (see btfcache.h): DIR/vmlinux.BOOT_ID.btf. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btfcache.h"
#include "lib/log.h"
#include "lib/safefile.h"

#define MAX_BTF (256u << 20)

static bool read_boot_id(char *id, size_t len)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, id, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	id[n] = '\0';
	id[strcspn(id, "\n")] = '\0';
	/* A file name part: hex digits and dashes only. */
	return id[0] && strspn(id, "0123456789abcdef-") == strlen(id);
}

static bool usable(const char *path, off_t size)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 022) && st.st_size == size;
}

/* Copies of earlier boots (a /run that outlives reboots, as in some containers). */
static void remove_others(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (strncmp(e->d_name, "vmlinux.", 8) || n < 12 ||
		    strcmp(e->d_name + n - 4, ".btf") || strcmp(e->d_name, keep) == 0)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

/* Read all of sysfs_btf (size bytes) and write it to path through a temporary name. */
static int make_copy(const char *sysfs_btf, off_t size, const char *dir, const char *path)
{
	char *buf = malloc((size_t)size), *tmp = NULL;
	size_t have = 0;
	int in = -1, out = -1, err = -ENOMEM;

	if (!buf || asprintf(&tmp, "%s/.vmlinux-XXXXXX", dir) < 0) {
		tmp = NULL;
		goto out;
	}
	in = open(sysfs_btf, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = -errno;
		goto out;
	}
	while (have < (size_t)size) {
		ssize_t n = read(in, buf + have, (size_t)size - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -EIO;
			goto out;
		}
		have += (size_t)n;
	}
	out = mkstemp(tmp); /* mode 0600 */
	if (out < 0) {
		err = -errno;
		goto out;
	}
	for (size_t done = 0; done < have;) {
		ssize_t n = write(out, buf + done, have - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		done += (size_t)n;
	}
	err = close(out) ? -errno : 0;
	out = -1;
	if (!err && rename(tmp, path))
		err = -errno;
out:
	if (out >= 0)
		close(out);
	if (err && tmp)
		unlink(tmp);
	if (in >= 0)
		close(in);
	free(tmp);
	free(buf);
	return err;
}

char *btfcache__path(const char *sysfs_btf, const char *dir)
{
	char boot_id[64], *path = NULL, *name;
	struct stat st;

	if (!sysfs_btf || !dir || stat(sysfs_btf, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    st.st_size > MAX_BTF || !read_boot_id(boot_id, sizeof(boot_id)))
		return NULL;
	if (asprintf(&path, "%s/vmlinux.%s.btf", dir, boot_id) < 0)
		return NULL;
	/* Another user's directory is not ours to write in, nor to take files from. */
	if ((mkdir(dir, 0700) && errno != EEXIST) || !safefile__owned_dir(dir)) {
		log_debug("btf cache: %s is not a directory of this user's: not used", dir);
		free(path);
		return NULL;
	}
	if (usable(path, st.st_size))
		return path;
	if (make_copy(sysfs_btf, st.st_size, dir, path) || !usable(path, st.st_size)) {
		free(path);
		return NULL;
	}
	name = strrchr(path, '/') + 1;
	remove_others(dir, name);
	return path;
}
