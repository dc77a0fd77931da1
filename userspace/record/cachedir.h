/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perch's cache directory: $XDG_CACHE_HOME/perch, or ~/.cache/perch. It holds what runs can
 * share and what can be deleted at any time: source lines per build-id (lines/) and decompressed
 * copies of debug files (debug/).
 */
#ifndef PERCH_CACHEDIR_H
#define PERCH_CACHEDIR_H

/* What is kept for the rest of the boot (root only; /run is emptied at reboot): the kernel's
 * symbols (kallsyms) and its BTF (vmlinux.BOOT_ID.btf). */
#define CACHEDIR_RUN "/run/perch"

/* The sub-directory leaf of the cache directory, created (mode 0700, and its parents) if it is
 * not there: a malloc'd path, or NULL + errno when there is none to use (EPERM: the base or a
 * directory on the way belongs to another user, as $HOME under `sudo -E`). */
char *cachedir__path(const char *leaf);

/* Create path and its missing parents, mode 0700: 0, or -1 + errno. */
int cachedir__mkdirs(char *path);

#endif /* PERCH_CACHEDIR_H */
