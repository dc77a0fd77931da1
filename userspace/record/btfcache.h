/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The running kernel's BTF as a regular file, for libbpf's CO-RE relocations. Reading
 * /sys/kernel/btf/vmlinux costs ~1000 read() calls of one page each (6 ms here, more than
 * loading the sampler's programs); a copy under /run (root only, gone at reboot, named by the
 * boot id) is read in one call.
 */
#ifndef PERCH_BTFCACHE_H
#define PERCH_BTFCACHE_H

/* The copy of sysfs_btf (the kernel's BTF) in dir, made when there is none for this boot: a
 * malloc'd path, or NULL when there is no copy to use (libbpf then reads sysfs_btf itself). A
 * copy is used only when it is a regular file this user owns that no one else can write, and
 * it has sysfs_btf's size. */
char *btfcache__path(const char *sysfs_btf, const char *dir);

#endif /* PERCH_BTFCACHE_H */
