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

/* .eh_frame's bytes (borrowed from libelf, valid while elf is open); false when there is none. */
static bool find_eh_frame(Elf *elf, struct eh_section *sec)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".eh_frame"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			return false;
		*sec = (struct eh_section){d->d_buf, d->d_size, sh.sh_addr, true};
		return true;
	}
	return false;
}

/* One entry per start (the shortest, as sorted), each ending where the next begins at the
 * latest, so that the last start at or below an address is the only candidate for it. */
static size_t dedupe_ranges(struct eh_range *r, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && r[k - 1].lo == r[i].lo)
			continue;
		if (k && r[k - 1].hi > r[i].lo)
			r[k - 1].hi = r[i].lo;
		r[k++] = r[i];
	}
	return k;
}

/* d's symbols: one per range, named base+0xOFFSET? (m turns vaddrs into file offsets). */
static int name_ranges(struct sym_module *m, const char *base, const struct eh_range *r, size_t n,
		       struct sym_module *d)
{
	size_t i, each = strlen(base) + sizeof("+0x?") + 16;
	char *p;

	d->syms = calloc(n, sizeof(*d->syms));
	d->names = malloc(n * each);
	if (!d->syms || !d->names)
		return -ENOMEM;
	p = d->names;
	for (i = 0; i < n; i++) {
		uint64_t off;

		if (sym_module__vaddr_to_offset(m, r[i].lo, &off))
			continue; /* no file bytes: not code this module maps */
		d->syms[d->nr_syms] = (struct func_sym){r[i].lo, r[i].hi, p, NO_SRC};
		p += snprintf(p, each, "%s+0x%llx?", base, (unsigned long long)off) + 1;
		d->nr_syms++;
	}
	return 0;
}

int fdesyms_load(struct sym_module *m, Elf *elf, const char *base, struct sym_module *d)
{
	struct eh_range *r = NULL;
	struct eh_section sec;
	size_t n = 0, skipped = 0;
	int err;

	if (!find_eh_frame(elf, &sec))
		return 0;
	err = eh_fde_ranges(&sec, &r, &n, &skipped);
	if (skipped)
		log_debug("symbolize: %s: %zu unreadable .eh_frame entries", base, skipped);
	if (!err && n)
		err = name_ranges(m, base, r, dedupe_ranges(r, n), d);
	free(r);
	return err;
}
