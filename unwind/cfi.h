/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to unwind/: reading .eh_frame and .debug_frame and executing their CFA programs into
 * rows, one run of rows per FDE. unwind_table.c then drops, orders and clips the runs and merges
 * them into the table.
 */
#ifndef PERCH_UNWIND_CFI_H
#define PERCH_UNWIND_CFI_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/ehframe.h"
#include "unwind_table.h"

/* A row at its ELF virtual address, and why it is unsupported (UNWIND_WHY_MAX when it is not). */
struct cfi_row {
	uint64_t pc;
	struct unwind_row row; /* row.pc is not used */
	uint8_t why;
};

/* The rows of one FDE covering [lo, hi): rows[first .. first + n), pcs rising, the first at lo. */
struct cfi_run {
	uint64_t lo, hi;
	size_t first, n;
};

struct cfi_rows {
	struct cfi_row *rows;
	size_t nr_rows, cap_rows;
	struct cfi_run *runs;
	size_t nr_runs, cap_runs;
};

/*
 * Append the runs of every FDE in sec to out and count CIEs and FDEs in st. Malformed entries
 * never fail the call: an FDE that cannot be read is skipped (st->fdes_skipped), a CFA program
 * that cannot be executed gives UNWIND_WHY_BAD_CFI rows from where it fails. Returns 0, or
 * -ENOMEM.
 */
int unwind_cfi__decode(const struct eh_section *sec, struct cfi_rows *out, struct unwind_stats *st);

/* Free what unwind_cfi__decode() allocated in r (not r itself). */
void unwind_cfi__release(struct cfi_rows *r);

#endif /* PERCH_UNWIND_CFI_H */
