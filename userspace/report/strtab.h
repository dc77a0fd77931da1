/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A protobuf string table (pprof's Profile.string_table, OTLP's ProfilesDictionary.string_table):
 * each string once, at the index it was first interned at, every one UTF-8 as protobuf wants
 * (lib/escape.h's rule: what is not becomes U+FFFD). Strings are borrowed (they must outlive the
 * table) unless interned as owned, which the table frees. report/pprof.c and report/otlp.c.
 */
#ifndef PERCH_REPORT_STRTAB_H
#define PERCH_REPORT_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/idxtab.h"

/* A zeroed struct strtab is an empty table. */
struct strtab {
	char **strs; /* strs[i]: string i */
	size_t n, cap;
	struct idxtab tab;
	char **owned; /* strings the table frees */
	size_t nowned, cap_owned;
};

/* The index of s, added on first use; with own, the table frees s (at once when it has it
 * already). -ENOMEM (s freed when owned); never past INT32_MAX strings. */
int64_t strtab__intern(struct strtab *t, char *s, bool own);
/* A borrowed string's index. */
static inline int64_t strtab__id(struct strtab *t, const char *s)
{
	return strtab__intern(t, (char *)s, false);
}
void strtab__free(struct strtab *t);

#endif /* PERCH_REPORT_STRTAB_H */
