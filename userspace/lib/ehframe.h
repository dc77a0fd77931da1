/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The framing of .eh_frame and .debug_frame, written once: entries (CIEs and FDEs), DW_EH_PE_*
 * encoded pointers, CIE headers and FDE address ranges. unwind/cfi.c runs the CFA programs of the
 * entries read here; symbolize/ reads only the FDE ranges, which bound functions in code that no
 * symbol names. Every read is bounds-checked through lib/dwcursor.h.
 */
#ifndef PERCH_EHFRAME_H
#define PERCH_EHFRAME_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwcursor.h"

/* One section's bytes, borrowed for the call. */
struct eh_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr; /* sh_addr: the base of DW_EH_PE_pcrel pointers */
	bool eh;	/* .eh_frame; false: .debug_frame */
};

/* One CIE or FDE: its body after the CIE id/pointer. */
struct eh_entry {
	uint64_t off;
	struct dwcursor body;
	bool is_cie;
	uint64_t cie_off; /* FDEs: the CIE's section offset; UINT64_MAX when it points nowhere */
};

/* What a CIE says about its FDEs' layout and programs. */
struct eh_cie {
	uint64_t off; /* section offset: what FDEs point at */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;		  /* DW_EH_PE_* of the FDEs' addresses */
	bool z;				  /* FDEs carry augmentation data */
	bool signal;			  /* 'S': signal frames */
	const uint8_t *insns, *insns_end; /* initial instructions */
};

/* An FDE's code range [lo, hi), as ELF virtual addresses. */
struct eh_range {
	uint64_t lo, hi;
};

/* The next entry at *off: 1, 0 at the end (or a terminator), -1 when the section is corrupt. */
int eh_next_entry(const struct eh_section *sec, uint64_t *off, struct eh_entry *e);

/* Whether sec holds an FDE, or entries that cannot be framed: false for no section, an empty one,
 * a zero terminator alone (what crtend.o leaves in a library without code of its own, as ICU's
 * libicudata) or CIEs alone. A section that holds FDEs and yields no row is damaged; one that
 * holds none simply describes no code. */
bool eh_holds_fdes(const struct eh_section *sec);

/* A DW_EH_PE_* encoded pointer. With apply, the pcrel base (the field's own address) is added;
 * without, only the value format counts. false when it cannot be read. */
bool eh_read_encoded(const struct eh_section *sec, struct dwcursor *c, uint8_t enc, bool apply,
		     uint64_t *out);

/* Read a CIE's header; false when it cannot be (its FDEs are then unreadable). */
bool eh_parse_cie(const struct eh_section *sec, const struct eh_entry *e, struct eh_cie *cie);

/* Read an FDE's range from its body c (moved past the augmentation data, to the program);
 * false when it cannot be read or is empty. */
bool eh_fde_range(const struct eh_section *sec, const struct eh_cie *cie, struct dwcursor *c,
		  struct eh_range *r);

/*
 * Every readable FDE range of sec, sorted by lo, in *out (the caller frees it), *n of them; FDEs
 * that cannot be read are counted in *skipped. Returns 0, -ENOMEM.
 */
int eh_fde_ranges(const struct eh_section *sec, struct eh_range **out, size_t *n, size_t *skipped);

/* elf's .eh_frame (its bytes borrowed from libelf, valid while elf is open); false when it has
 * none, or an empty one. */
bool eh_frame_of(Elf *elf, struct eh_section *sec);

/*
 * Sorted ranges r[0..n) (as eh_fde_ranges gives them) made one per start, the shortest of those
 * sharing it, each ending where the next begins at the latest: the function bounds that code no
 * symbol names is grouped by (symbolize/fdesyms.c) and `perch annotate` disassembles. The new n.
 */
size_t eh_ranges_disjoint(struct eh_range *r, size_t n);

#endif /* PERCH_EHFRAME_H */
