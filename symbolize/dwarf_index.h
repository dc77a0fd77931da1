/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DWARF index of one module: every function and inlined call with code, flattened into sorted
 * arrays of address segments (each naming its innermost scope, with links to the scopes it was
 * inlined into), and the line tables flattened into sorted arrays of (address, file, line).
 * Built lazily with libdw: dwarf_index__build() only maps addresses to compile units (from
 * .debug_aranges, the unit DIEs and a scan of the line tables: some 8 ms for libc, plus what libdw
 * takes to decompress the sections); the first lookup in a unit's code indexes that unit (with any
 * whose code overlaps it), and later lookups there are two binary searches that allocate nothing. Lookups therefore change the index behind its const
 * pointer: like the rest of the symbolizer, it is not thread-safe. The index keeps the file
 * mapped until every unit is indexed, so the file may be closed, even deleted, after building.
 * Internal to symbolize/.
 */
#ifndef PERCH_DWARF_INDEX_H
#define PERCH_DWARF_INDEX_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolizer.h"

struct dwarf_index;

/*
 * Index the DWARF of elf (the module itself, or its separate debug file: both use the module's
 * ELF virtual addresses), read from path. Code lives in [text_lo, text_hi]; ranges and line rows
 * outside it come from sections the linker discarded and are dropped. The index opens path again
 * to read units on demand (elf may be ended once this returns); when it cannot, or path names
 * another file by now, it indexes everything from elf at once. Returns NULL and sets errno:
 * ENODATA when elf has no DWARF describing code or none libdw can read, ENOMEM, E2BIG past 2^32
 * entries.
 */
struct dwarf_index *dwarf_index__build(Elf *elf, const char *path, uint64_t text_lo,
				       uint64_t text_hi);
/*
 * The index dwarf_index__build() falls back to: every unit indexed now, from elf alone, nothing
 * kept open. It answers exactly as the lazy index does; for tests and benchmarks.
 */
struct dwarf_index *dwarf_index__build_eager(Elf *elf, const char *path, uint64_t text_lo,
					     uint64_t text_hi);
void dwarf_index__free(struct dwarf_index *di);

/* Whether the index never reads the DWARF section called name: locations, call frames (the
 * unwinder reads .eh_frame), macros and name tables. */
bool dwarf_index__unused_section(const char *name);

/* The line-table row covering vaddr: *file (NULL when none; owned by di) and *line (0). */
void dwarf_index__line(const struct dwarf_index *di, uint64_t vaddr, const char **file,
		       unsigned int *line);

/*
 * The inline chain at vaddr, innermost first, as sym_module__resolve_inline() describes it. *n = 0
 * when no function DIE covers vaddr. Returns 0, or -ENOSPC when the chain has more than max
 * frames (the innermost max are written). Names are demangled when demangle is set.
 */
int dwarf_index__frames(const struct dwarf_index *di, uint64_t vaddr, bool demangle,
			struct sym_frame *frames, size_t max, size_t *n);

#endif /* PERCH_DWARF_INDEX_H */
