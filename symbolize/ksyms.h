/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms: a sorted array searched by binary search.
 */
#ifndef PERCH_KSYMS_H
#define PERCH_KSYMS_H

#include <stdbool.h>
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

/*
 * The same, kept for the rest of the boot in cache_path (e.g. /run/perch/kallsyms; NULL: no
 * cache), valid while the boot id and /proc/modules are what they were when it was written. NULL
 * paths mean /proc/kallsyms, /proc/modules and /proc/sys/kernel/random/boot_id. A table read
 * from the cache covers only the kernel's text and its modules': see ksyms__covers().
 */
struct ksyms *ksyms__load_cached(const char *kallsyms_path, const char *cache_path,
				 const char *modules_path, const char *boot_id_path);

/* Whether the table can name addr at all (false for a cached table and an address outside the
 * kernel's and the modules' text, e.g. a BPF program: read /proc/kallsyms for it). */
bool ksyms__covers(const struct ksyms *k, uint64_t addr);

/* The symbol covering addr (the last one at or below it), or NULL below the first symbol or
 * past the end of the text it can vouch for. */
const struct ksym *ksyms__find(const struct ksyms *k, uint64_t addr);

#endif /* PERCH_KSYMS_H */
