// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Function bounds for code no symbol names, from the module's .eh_frame: every FDE covers one
 * function (or one part of it, as GCC's .cold splits), so a stripped binary's internal functions
 * still group their addresses into one row each. Each FDE becomes a symbol named
 * "MODULE+0xSTART?" (START: the file offset of its first byte, as the unnamed "MODULE+0xOFFSET"
 * frames show; the "?" marks the name as inferred). The FDEs are read with lib/ehframe.h, the
 * reader the unwinder's tables are built with.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ehframe.h"
#include "lib/log.h"
#include "module.h"
#include "symbolizer.h"

/* Room for one name: base, "+0x", 16 hex digits, "?" and its end. */
static size_t name_room(const char *base)
{
	return strlen(base) + sizeof("+0x?") + 16;
}

/*
 * d's symbols: one per range that m maps, each with an empty slot for its name, written on its
 * first lookup (fdesyms_name()): a large binary has tens of thousands of FDEs, of which a profile
 * names a few, and calloc leaves the untouched slots' pages unmapped.
 */
static int add_ranges(struct sym_module *m, const char *base, const struct eh_range *r, size_t n,
		      struct sym_module *d)
{
	size_t i, room = name_room(base);
	uint64_t off;

	d->syms = calloc(n, sizeof(*d->syms));
	d->names = calloc(n, room);
	d->name = strdup(base);
	if (!d->syms || !d->names || !d->name)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (sym_module__vaddr_to_offset(m, r[i].lo, &off))
			continue; /* no file bytes: not code this module maps */
		d->syms[d->nr_syms] =
			(struct func_sym){r[i].lo, r[i].hi, d->names + d->nr_syms * room, NO_SRC};
		d->nr_syms++;
	}
	return 0;
}

void fdesyms_name(struct sym_module *m, struct sym_module *d, const struct func_sym *f)
{
	uint64_t off = 0;

	if (*f->name)
		return;
	sym_module__vaddr_to_offset(m, f->start, &off);
	snprintf(d->names + (f - d->syms) * name_room(d->name), name_room(d->name), "%s+0x%llx?",
		 d->name, (unsigned long long)off);
}

int fdesyms_load(struct sym_module *m, Elf *elf, const char *base, struct sym_module *d)
{
	struct eh_range *r = NULL;
	struct eh_section sec;
	size_t n = 0, skipped = 0;
	int err;

	if (!eh_frame_of(elf, &sec))
		return 0;
	err = eh_fde_ranges(&sec, &r, &n, &skipped);
	if (skipped)
		log_debug("symbolize: %s: %zu unreadable .eh_frame entries", base, skipped);
	if (!err && n)
		err = add_ranges(m, base, r, eh_ranges_disjoint(r, n), d);
	free(r);
	return err;
}
