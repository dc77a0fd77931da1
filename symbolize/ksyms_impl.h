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
/* An empty table that will hold cached symbols: strings (copied) and what it covers. */
struct ksyms *ksyms__from_parts(const char *strings, size_t len, size_t nsyms,
				const struct ksym_range *ranges, size_t nranges);
const char *ksyms__string(const struct ksyms *k, uint32_t off);
/* Append a symbol (in address order, as built by a full load). 0 or -ENOMEM. */
int ksyms__push(struct ksyms *k, const struct ksym *s);

#endif /* PERCH_KSYMS_IMPL_H */
