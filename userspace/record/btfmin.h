/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel's BTF cut down to what one BPF object's CO-RE relocations read (bpftool's `gen
 * min_core_btf`): a few hundred bytes instead of the whole kernel's ~5 MiB. libbpf parses the
 * BTF it is given and scans all of it for every type the object relocates; with the whole
 * kernel's that was ~25 ms of every start (btf__parse and the candidate search), with the cut
 * one nothing measurable. Made once per boot and object, next to the full copy (btfcache.h).
 */
#ifndef PERCH_BTFMIN_H
#define PERCH_BTFMIN_H

#include <stddef.h>

/* The cut-down BTF of full_btf (a copy btfcache__path() made: DIR/vmlinux.BOOT_ID.btf) for the
 * BPF object obj (its ELF bytes): DIR/vmlinux.BOOT_ID.min-HASH.btf, made with bpftool when there
 * is none. A malloc'd path, or NULL when there is none to use (no bpftool, or it failed): the
 * caller then uses full_btf. A file is used only as btfcache uses its copy: a regular file this
 * user owns that no one else can write. */
char *btfmin__path(const char *full_btf, const void *obj, size_t obj_len);

/* The bpftool it runs: PERCH_BPFTOOL if set (tests), else the first of /usr/sbin/bpftool,
 * /usr/local/sbin/bpftool, /sbin/bpftool owned by root and writable by no one else; NULL if
 * none. */
const char *btfmin__bpftool(void);

#endif /* PERCH_BTFMIN_H */
