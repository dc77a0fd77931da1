/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Opening files that someone else may have put in perch's way: a JIT's perf map inside a
 * container, a cache file in a directory perch does not own. A symlink could point perch at a
 * file only root may read, and a FIFO would block it for good; so these open without following
 * symlinks, never block in open(), and give back regular files only.
 */
#ifndef PERCH_SAFEFILE_H
#define PERCH_SAFEFILE_H

#include <stdbool.h>
#include <sys/types.h>

/* openat(dirfd, path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode) of a regular file
 * (O_NONBLOCK is cleared again): an fd, or -errno; -ELOOP for a symlink as the last component,
 * -EINVAL for anything but a regular file (a FIFO, a device, a directory). */
int safefile__open(int dirfd, const char *path, int flags, mode_t mode);

/* Open path for reading as if root_fd were "/", following no symlink at all (so none can lead
 * out of it): openat2() with RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or,
 * on kernels without it, one component at a time with O_NOFOLLOW. ".." is refused. A regular
 * file only, as safefile__open(). */
int safefile__open_in_root(int root_fd, const char *path);

/* Whether dir is a directory (not a symlink to one) that the effective user owns: the only kind
 * perch writes cache files into. */
bool safefile__owned_dir(const char *dir);

#endif /* PERCH_SAFEFILE_H */
