// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * .eh_frame and .debug_frame framing (see ehframe.h): moved here from unwind/cfi.c so that the
 * symbolizer reads FDE bounds with the same reader the unwinder's tables are built with.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "ehframe.h"
#include "search.h"
#include "vec.h"

bool eh_read_encoded(const struct eh_section *sec, struct dwcursor *c, uint8_t enc, bool apply,
		     uint64_t *out)
{
	uint64_t field = sec->vaddr + (uint64_t)(c->p - sec->data);
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = dwc_u(c, 8);
		break;
	case DW_EH_PE_uleb128:
		v = dwc_uleb(c);
		break;
	case DW_EH_PE_udata2:
		v = dwc_u(c, 2);
		break;
	case DW_EH_PE_udata4:
		v = dwc_u(c, 4);
		break;
	case DW_EH_PE_sleb128:
		v = (uint64_t)dwc_sleb(c);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)dwc_u(c, 2);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)dwc_u(c, 4);
		break;
	default:
		return false;
	}
	if (c->bad)
		return false;
	if (apply) {
		/* Linkers write FDE addresses absolute or pc-relative; the other bases (text,
		 * data, function, aligned, indirect) are not used for them on x86-64. */
		if (enc & DW_EH_PE_indirect)
			return false;
		if ((enc & 0x70) == DW_EH_PE_pcrel)
			v += field;
		else if ((enc & 0x70) != DW_EH_PE_absptr)
			return false;
	}
	*out = v;
	return true;
}

int eh_next_entry(const struct eh_section *sec, uint64_t *off, struct eh_entry *e)
{
	struct dwcursor c = dwc_make(sec->data + *off, sec->data + sec->size);
	uint64_t len, id, id_off;
	size_t idsz;

	/* Under 4 bytes left is the end, not a corrupt length: linkers pad sections. */
	if (*off >= sec->size || sec->size - *off < 4)
		return 0;
	len = dwc_unit_length(&c, &idsz);
	/* A 32-bit length of 0 terminates .eh_frame; a 64-bit one is corrupt (len < idsz). */
	if (idsz == 4 && len == 0)
		return 0;
	if ((idsz == 4 && len >= 0xfffffff0) || c.bad || len > dwc_left(&c) || len < idsz)
		return -1;
	e->off = *off;
	id_off = (uint64_t)(c.p - sec->data);
	e->body = dwc_make(c.p, c.p + len);
	id = dwc_u(&e->body, idsz);
	if (sec->eh) {
		/* .eh_frame: 0 marks a CIE; an FDE's pointer counts back from the field. */
		e->is_cie = id == 0;
		e->cie_off = id <= id_off ? id_off - id : UINT64_MAX;
	} else {
		e->is_cie = id == (idsz == 4 ? 0xffffffffULL : UINT64_MAX);
		e->cie_off = id;
	}
	*off = id_off + len;
	return 1;
}

bool eh_holds_fdes(const struct eh_section *sec)
{
	struct eh_entry e;
	uint64_t off = 0;
	int rc;

	if (!sec->data)
		return false;
	while ((rc = eh_next_entry(sec, &off, &e)) > 0) {
		if (!e.is_cie)
			return true;
	}
	return rc < 0;
}

/* The augmentation data of a 'z' CIE: FDE pointer encoding, signal frames. */
static bool parse_augmentation(const struct eh_section *sec, struct dwcursor *c, const char *aug,
			       struct eh_cie *cie)
{
	struct dwcursor a;
	uint64_t len, ignored;

	len = dwc_uleb(c);
	if (c->bad || len > dwc_left(c))
		return false;
	a = dwc_make(c->p, c->p + len);
	c->p += len;
	cie->z = true;
	for (aug++; *aug; aug++) {
		switch (*aug) {
		case 'R':
			cie->fde_enc = (uint8_t)dwc_u(&a, 1);
			break;
		case 'L':
			dwc_u(&a, 1);
			break;
		case 'P':
			if (!eh_read_encoded(sec, &a, (uint8_t)dwc_u(&a, 1), false, &ignored))
				return false;
			break;
		case 'S':
			cie->signal = true;
			break;
		default:
			/* 'B', 'G' and the unknown: the length still lets FDEs be read. */
			return !a.bad;
		}
	}
	return !a.bad;
}

bool eh_parse_cie(const struct eh_section *sec, const struct eh_entry *e, struct eh_cie *cie)
{
	struct dwcursor c = e->body;
	unsigned int version, addr_size = 8;
	const char *aug;

	memset(cie, 0, sizeof(*cie));
	cie->off = e->off;
	version = (unsigned int)dwc_u(&c, 1);
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return false;
	aug = dwc_cstr(&c);
	if (!aug)
		return false;
	if (version == 4) {
		addr_size = (unsigned int)dwc_u(&c, 1);
		if (dwc_u(&c, 1) != 0 || (addr_size != 4 && addr_size != 8))
			return false;
	}
	cie->code_align = dwc_uleb(&c);
	cie->data_align = dwc_sleb(&c);
	cie->ra_reg = version == 1 ? dwc_u(&c, 1) : dwc_uleb(&c);
	cie->fde_enc = !sec->eh && addr_size == 4 ? DW_EH_PE_udata4 : DW_EH_PE_absptr;
	if (aug[0] == 'z') {
		if (!parse_augmentation(sec, &c, aug, cie))
			return false;
	} else if (aug[0]) {
		return false; /* "eh" and the like: the FDE layout is unknown */
	}
	if (c.bad)
		return false;
	cie->insns = c.p;
	cie->insns_end = c.end;
	return true;
}

bool eh_fde_range(const struct eh_section *sec, const struct eh_cie *cie, struct dwcursor *c,
		  struct eh_range *r)
{
	uint64_t lo, len, alen;

	if (!eh_read_encoded(sec, c, cie->fde_enc, true, &lo) ||
	    !eh_read_encoded(sec, c, cie->fde_enc & 0x0f, false, &len))
		return false;
	if (cie->z) {
		alen = dwc_uleb(c);
		if (c->bad || alen > (uint64_t)(c->end - c->p))
			return false;
		c->p += alen;
	}
	if (!len || lo + len < lo)
		return false;
	r->lo = lo;
	r->hi = lo + len;
	return true;
}

/* The CIEs of sec in section order (so sorted by off). */
static int read_cie_headers(const struct eh_section *sec, struct eh_cie **v, size_t *nr)
{
	struct eh_entry e;
	uint64_t off = 0;
	size_t cap = 0;

	while (eh_next_entry(sec, &off, &e) > 0) {
		if (!e.is_cie)
			continue;
		if (vec_grow(v, &cap, *nr + 1, sizeof(**v), 16))
			return -ENOMEM;
		if (eh_parse_cie(sec, &e, &(*v)[*nr]))
			(*nr)++;
	}
	return 0;
}

static const struct eh_cie *cie_at(const struct eh_cie *v, size_t nr, uint64_t off)
{
	size_t i = search_last_le(v, nr, off, off);

	return i && v[i - 1].off == off ? &v[i - 1] : NULL;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct eh_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

int eh_fde_ranges(const struct eh_section *sec, struct eh_range **out, size_t *n, size_t *skipped)
{
	struct eh_cie *cies = NULL;
	size_t nr_cies = 0, cap = 0;
	struct eh_entry e;
	uint64_t off = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = read_cie_headers(sec, &cies, &nr_cies);
	while (!err && eh_next_entry(sec, &off, &e) > 0) {
		const struct eh_cie *cie = e.is_cie ? NULL : cie_at(cies, nr_cies, e.cie_off);
		struct eh_range r;

		if (e.is_cie)
			continue;
		if (!cie || !eh_fde_range(sec, cie, &e.body, &r)) {
			(*skipped)++;
			continue;
		}
		if (vec_grow(out, &cap, *n + 1, sizeof(**out), 64))
			err = -ENOMEM;
		else
			(*out)[(*n)++] = r;
	}
	free(cies);
	if (!err && *n)
		qsort(*out, *n, sizeof(**out), range_cmp);
	return err;
}

bool eh_frame_of(Elf *elf, struct eh_section *sec)
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

size_t eh_ranges_disjoint(struct eh_range *r, size_t n)
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
