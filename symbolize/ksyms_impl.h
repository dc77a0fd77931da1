/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Between ksyms.c (the table) and ksyms_cache.c (the table kept for the boot). */
#ifndef PERCH_KSYMS_IMPL_H
#define PERCH_KSYMS_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include "ksyms.h"

struct ksym_range {
	uint64_t lo, hi; /* [lo, hi) */
};

size_t ksyms__count(const struct ksyms *k);
const struct ksym *ksyms__at(const struct ksyms *k, size_t i);
/* The kernel's own text: from its first text symbol to the end of its last one's page. */
struct ksym_range ksyms__core_range(const struct ksyms *k);
/* A symbol as the boot's cache stores it: offsets into its strings, KSYM_NO_STR for none. */
struct ksym_stored {
	uint64_t addr;
	uint32_t name, module;
};
#define KSYM_NO_STR UINT32_MAX

/* A table over a cache file mapped whole (map, len: unmapped by ksyms__free): its symbols
 * (sorted, validated), strings (each offset inside them, the last byte NUL) and ranges stay in
 * the mapping, and each struct ksym is made when it is first looked up. */
struct ksyms *ksyms__from_mapping(void *map, size_t len, const struct ksym_stored *syms,
				  size_t nsyms, const char *strings,
				  const struct ksym_range *ranges, size_t nranges);

#endif /* PERCH_KSYMS_IMPL_H */
