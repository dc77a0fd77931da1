/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unwind tables for code without frame pointers: a module's DWARF call-frame information
 * (.eh_frame, and .debug_frame where no .eh_frame entry covers an address) turned into one
 * sorted array of small rows (unwind_row.h) that a BPF program can binary-search, the way the
 * OpenTelemetry eBPF profiler unwinds. One table per module, in the module's ELF virtual address
 * space; the loader adds the load bias.
 *
 * The CFA programs are executed here (unwind/cfi.c), not by libdw, so that the tests can hold
 * every row against libdw's own answer (dwarf_cfi_addrframe) at every address of the module's
 * code. Where FDEs overlap, an address belongs to the FDE that starts last at or before it, and
 * not past that FDE's end: what a binary search of .eh_frame_hdr finds.
 */
#ifndef PERCH_UNWIND_TABLE_H
#define PERCH_UNWIND_TABLE_H

#include <libelf.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind_row.h"

struct unwind_table;

/* Why a row is UNWIND_CFA_UNSUPPORTED (counted per byte of code in the statistics). */
enum unwind_why {
	UNWIND_WHY_CFA_REG,  /* CFA = register + offset with a register other than RSP or RBP */
	UNWIND_WHY_CFA_EXPR, /* a CFA expression other than the PLT one (stack realignment) */
	UNWIND_WHY_RA,	     /* return address not saved at CFA - 8 */
	UNWIND_WHY_RBP,	     /* RBP neither unchanged nor saved at CFA + offset */
	UNWIND_WHY_RSP,	     /* the caller's RSP is not the CFA */
	UNWIND_WHY_RANGE,    /* an offset does not fit its field */
	UNWIND_WHY_BAD_CFI,  /* a CFA program that cannot be executed (also where libdw fails) */
	UNWIND_WHY_MAX,
};

struct unwind_stats {
	size_t rows;		 /* rows in the table, the closing NONE row included */
	size_t bytes;		 /* rows * sizeof(struct unwind_row) */
	size_t cies;		 /* CIEs read, both sections */
	size_t fdes_eh;		 /* FDEs read from .eh_frame */
	size_t fdes_debug;	 /* FDEs read from .debug_frame */
	size_t fdes_skipped;	 /* empty, unparsable, or outside the executable segments */
	size_t fdes_overlapping; /* FDEs cut short by an FDE that starts inside them */
	size_t rows_unmerged;	 /* rows before adjacent equal rows were merged */
	uint64_t code_bytes;	 /* bytes of executable sections (SHF_EXECINSTR) */
	uint64_t covered_bytes;	 /* bytes with CFI (rows other than NONE) */
	size_t kind_rows[UNWIND_CFA_MAX];	    /* rows per kind */
	uint64_t kind_bytes[UNWIND_CFA_MAX];	    /* bytes covered per row kind */
	uint64_t unsupported_bytes[UNWIND_WHY_MAX]; /* UNSUPPORTED bytes per reason */
};

/*
 * Build the table of the ELF file at path, reading .debug_frame from the file itself. Returns
 * NULL and sets errno on failure: ENOENT and the like from open(), ENOEXEC when the file is not
 * ELF, EOPNOTSUPP when it is not x86-64, ENODATA when no FDE covers its executable segments
 * (a CFI section holding no FDE, a terminator alone, included), EOVERFLOW when its code spans
 * 4 GiB or more, EINVAL when a CFI section cannot be read, EBADMSG when its CFI sections hold
 * FDEs but not one usable (damaged), ENOMEM. Corrupt
 * FDEs among good ones do not fail the build: see struct unwind_stats.
 */
struct unwind_table *unwind_table__build(const char *path);

/*
 * The same from open ELF handles (borrowed for the call): .eh_frame and the executable segments
 * from elf; .debug_frame from elf, or, when elf has none, from debug (a separate debug file;
 * may be NULL).
 */
struct unwind_table *unwind_table__build_elf(Elf *elf, Elf *debug);

void unwind_table__free(struct unwind_table *t);

/* The rows, sorted by pc, valid until unwind_table__free(); row pcs are offsets from base. */
const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *nr);
uint64_t unwind_table__base(const struct unwind_table *t);
const struct unwind_stats *unwind_table__stats(const struct unwind_table *t);

/*
 * The load bias of a mapping [start, end) of this module from file offset pgoff, as
 * /proc/PID/maps or an MMAP2 record shows it: module vaddr = process address - bias. 0, or
 * -ENOENT when the mapping holds no executable segment's bytes.
 */
int unwind_table__load_bias(const struct unwind_table *t, uint64_t start, uint64_t end,
			    uint64_t pgoff, uint64_t *bias);

/* The row covering vaddr (an ELF virtual address of the module), or NULL below the first row.
 * Past the last FDE it is the closing NONE row. */
const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t vaddr);

/* "rsp", "rbp", "plt", ...: for messages. */
const char *unwind_cfa__name(unsigned int cfa);
const char *unwind_why__name(unsigned int why);

#endif /* PERCH_UNWIND_TABLE_H */
