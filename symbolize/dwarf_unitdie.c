// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unit DIEs of the DWARF index read straight from the section bytes (see dwarf_index.c): a
 * unit's tag, DW_AT_stmt_list and whether it has ranges, without libdw setting up every unit.
 */
#include <dwarf.h>
#include <gelf.h>
#include <string.h>

#include "dwarf_impl.h"
#include "lib/dwcursor.h"

struct raw dwidx_section_bytes(Elf *elf, const char *name)
{
	struct raw raw = {0};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf_Data *data;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return raw;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if ((strncmp(n, ".debug_", 7) != 0 || strcmp(n + 7, name) != 0) &&
		    (strncmp(n, ".zdebug_", 8) != 0 || strcmp(n + 8, name) != 0))
			continue;
		data = elf_getdata(scn, NULL);
		/* Still compressed (libdw could not, or did not): of no use. */
		if (!data || !data->d_buf || (sh.sh_flags & SHF_COMPRESSED) ||
		    (data->d_size >= 4 && memcmp(data->d_buf, "ZLIB", 4) == 0))
			return raw;
		raw.p = data->d_buf;
		raw.size = data->d_size;
		return raw;
	}
	return raw;
}

/* Skip an attribute value of form; false for a form not known here. */
static bool skip_form(struct dwcursor *r, uint64_t form, const struct unit *u)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		break;
	case DW_FORM_addr:
		dwc_u(r, u->addr_size);
		break;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		dwc_u(r, 1);
		break;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		dwc_u(r, 2);
		break;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		dwc_u(r, 3);
		break;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		dwc_u(r, 4);
		break;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		dwc_u(r, 8);
		break;
	case DW_FORM_data16:
		dwc_skip(r, 16);
		break;
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		dwc_uleb(r);
		break;
	case DW_FORM_string:
		dwc_cstr(r);
		break;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		dwc_u(r, u->off_size);
		break;
	case DW_FORM_ref_addr:
		dwc_u(r, u->version <= 2 ? u->addr_size : u->off_size);
		break;
	case DW_FORM_block1:
		dwc_skip(r, dwc_u(r, 1));
		break;
	case DW_FORM_block2:
		dwc_skip(r, dwc_u(r, 2));
		break;
	case DW_FORM_block4:
		dwc_skip(r, dwc_u(r, 4));
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		dwc_skip(r, dwc_uleb(r));
		break;
	default:
		return false;
	}
	return !r->bad;
}

/*
 * The tag and DW_AT_stmt_list of unit u's DIE, and whether it has DW_AT_low_pc or DW_AT_ranges,
 * read from the sections: through libdw, that would set up every unit, most of the time to build.
 * False for anything not understood here (libdw reads the DIE then).
 */
bool dwidx_read_unit_die(const struct raw *info, const struct raw *abbrev, const struct unit *u,
			 unsigned int *tag, uint64_t *lines, bool *has_pc)
{
	struct dwcursor d, a;
	uint64_t code, c, name, form;

	if (!info->p || !abbrev->p || u->die >= info->size || u->abbrev >= abbrev->size)
		return false;
	d = (struct dwcursor){.p = info->p + u->die, .end = info->p + info->size};
	a = (struct dwcursor){.p = abbrev->p + u->abbrev, .end = abbrev->p + abbrev->size};
	code = dwc_uleb(&d);
	for (;;) {
		c = dwc_uleb(&a);
		if (a.bad || !c)
			return false;
		*tag = (unsigned int)dwc_uleb(&a);
		dwc_u(&a, 1); /* has children */
		if (c == code)
			break;
		do {
			name = dwc_uleb(&a);
			form = dwc_uleb(&a);
			if (form == DW_FORM_implicit_const)
				dwc_uleb(&a);
		} while (!a.bad && (name || form));
	}
	*lines = NO_LINES;
	*has_pc = false;
	for (;;) {
		name = dwc_uleb(&a);
		form = dwc_uleb(&a);
		if (a.bad)
			return false;
		if (!name && !form)
			return true;
		if (form == DW_FORM_implicit_const)
			dwc_uleb(&a);
		*has_pc |= name == DW_AT_low_pc || name == DW_AT_ranges;
		if (name != DW_AT_stmt_list) {
			if (!skip_form(&d, form, u))
				return false;
		} else if (form == DW_FORM_sec_offset) {
			*lines = dwc_u(&d, u->off_size);
		} else if (form == DW_FORM_data4 || form == DW_FORM_data8) {
			*lines = dwc_u(&d, form == DW_FORM_data4 ? 4 : 8);
		} else {
			return false;
		}
		if (d.bad)
			return false;
	}
}
