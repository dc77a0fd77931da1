/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms: a sorted array searched by binary search.
 */
#ifndef PERCH_KSYMS_H
#define PERCH_KSYMS_H

#include <stdint.h>

struct ksyms;

struct ksym {
	uint64_t addr;
	const char *name;   /* owned by the ksyms table */
	const char *module; /* "[ext4]"-style module name without brackets, or NULL for vmlinux */
};

/* Load a kallsyms-format file (path NULL means /proc/kallsyms). Returns NULL and sets errno
 * (EACCES when every address reads as zero: kptr_restrict hides them). */
struct ksyms *ksyms__load(const char *path);
void ksyms__free(struct ksyms *k);

/* The symbol covering addr (the last one at or below it), or NULL below the first symbol or
 * past the end of the text it can vouch for. */
const struct ksym *ksyms__find(const struct ksyms *k, uint64_t addr);

#endif /* PERCH_KSYMS_H */
