// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The source files `perch annotate` prints beside its counts. Their paths come from the
 * target's debug info, so the target chose them: a FIFO would block annotate for good, a symlink
 * or a path to a file only root may read would print what its owner may not see. So a source is
 * opened without following a symlink as its last component and without blocking (a regular file
 * only, lib/safefile.h), and with the file system's permission checks of the user who owns the
 * binaries its samples lie in (setfsuid/setfsgid, no supplementary groups): what that user could
 * not read (through every folder on the way, ACLs included) is not shown. A binary is found
 * from "/" through no symlink at all, so its owner is the file's the recording named, not one a
 * link swapped in. Where the binaries cannot be opened now or have several owners, the checks
 * are those of a user who owns nothing (nobody): only what anyone may read is shown; root's
 * binaries (root chose their debug info) get root's.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>
#include "annotate.h"
#include "lib/safefile.h"

#define NOBODY 65534u

/* The owner of module, opened from "/" with no symlink anywhere on its path (a folder of the
 * target's owner swapped for a link to a root-owned binary's folder is refused); 0 or -errno. */
static int module_owner(int root, const char *module, struct stat *st)
{
	int fd = safefile__open_in_root(root, module), err = 0;

	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		err = -errno;
	close(fd);
	return err;
}

uid_t annotate_src_owner(const char *const *modules, size_t n, gid_t *gid)
{
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	uid_t uid = NOBODY;
	struct stat st;

	*gid = NOBODY;
	for (size_t i = 0; i < n && root >= 0; i++) {
		if (module_owner(root, modules[i], &st) || (i && st.st_uid != uid)) {
			uid = *gid = NOBODY;
			break;
		}
		uid = st.st_uid;
		*gid = st.st_gid;
	}
	if (root >= 0)
		close(root);
	return uid;
}

/* The supplementary groups dropped, fsuid and fsgid set; whether all of it took. */
static bool become(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL))
		return false;
	setfsgid(gid);
	setfsuid(uid);
	/* setfs*id() says nothing of failure: the ids they now report are the check */
	return (uid_t)setfsuid((uid_t)-1) == uid && (gid_t)setfsgid((gid_t)-1) == gid;
}

static void restore(const gid_t *groups, int ngroups)
{
	setfsuid(geteuid());
	setfsgid(getegid());
	if (ngroups >= 0)
		setgroups((size_t)ngroups, groups);
}

/* path opened as safefile__open() does, with uid's and gid's rights (as root; any other user's
 * own rights apply as they are): an fd or -errno. */
static int open_as(const char *path, uid_t uid, gid_t gid)
{
	int ngroups = -1, fd = -EPERM;
	gid_t *groups = NULL;

	if (geteuid() || !uid) /* a user's own rights; root's binaries: root's sources */
		return safefile__open(AT_FDCWD, path, O_RDONLY, 0);
	ngroups = getgroups(0, NULL);
	groups = calloc(ngroups > 0 ? (size_t)ngroups : 1, sizeof(*groups));
	if (!groups || ngroups < 0 || getgroups(ngroups, groups) != ngroups) {
		free(groups);
		return -ENOMEM;
	}
	if (become(uid, gid))
		fd = safefile__open(AT_FDCWD, path, O_RDONLY, 0);
	restore(groups, ngroups);
	free(groups);
	return fd;
}

FILE *annotate_src_open(const char *path, uid_t uid, gid_t gid, const char **why)
{
	int fd = *path ? open_as(path, uid, gid) : -ENOENT;
	FILE *f;

	*why = fd == -ELOOP			? "a symbolic link"
	       : fd == -EINVAL			? "not a regular file"
	       : fd == -EACCES && uid == NOBODY ? "not readable by every user"
	       : fd == -EACCES			? "not readable by the binary's owner"
						: strerror(-fd);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "r");
	if (!f) {
		*why = strerror(errno);
		close(fd);
	}
	return f;
}
