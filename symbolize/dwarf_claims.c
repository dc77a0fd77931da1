// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where each unit of a DWARF index has code (see dwarf_index.c): .debug_aranges, the unit DIEs,
 * the spans of their line sequences, or indexing the unit; then the groups of units whose code
 * overlaps and the address map from their spans.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_impl.h"
#include "line_program.h"
#include "lib/dwcursor.h"
#include "lib/log.h"
#include "lib/search.h"

/* Every unit of .debug_info, in order. A damaged one ends the list: a partial index beats none. */
int dwidx_list_units(struct dwarf_index *di, Dwarf *dw)
{
	Dwarf_Off off = 0, next, abbrev;
	uint8_t addr_size, off_size;
	Dwarf_Half version;
	size_t hsize;
	int r, err;

	while ((r = dwarf_next_unit(dw, off, &next, &hsize, &version, &abbrev, &addr_size,
				    &off_size, NULL, NULL)) == 0) {
		if (di->nr_units >= NO_IDX - 1)
			return -E2BIG;
		err = vec_reserve(&di->units, &di->cap_units, di->nr_units + 1, sizeof(*di->units));
		if (err)
			return err;
		di->units[di->nr_units++] = (struct unit){
			.die = off + hsize,
			.size = next - off,
			.abbrev = abbrev,
			.lines = NO_LINES,
			.group = NO_IDX,
			.version = version,
			.addr_size = addr_size,
			.off_size = off_size,
		};
		off = next;
	}
	if (r < 0)
		log_warn("symbolize: %s: read DWARF unit: %s", di->path, dwarf_errmsg(-1));
	return 0;
}

/*
 * Unit u has code in [lo, hi). Only what reaches into text counts, as for scopes and line rows;
 * the start is clipped to text_lo, so that code the linker discarded (at address 0) claims
 * nothing.
 */
static int add_claim(const struct dwarf_index *di, struct claims *c, uint64_t lo, uint64_t hi,
		     uint32_t u)
{
	int err;

	if (hi <= lo || hi <= di->text_lo || lo > di->text_hi)
		return 0;
	if (lo < di->text_lo)
		lo = di->text_lo;
	err = vec_reserve(&c->v, &c->cap, c->nr + 1, sizeof(*c->v));
	if (err)
		return err;
	c->v[c->nr++] = (struct claim){.lo = lo, .hi = hi, .unit = u};
	return 0;
}

/* The unit whose DIE is at die_off, or NO_IDX. */
static uint32_t unit_at(const struct dwarf_index *di, Dwarf_Off die_off)
{
	size_t lo = search_prefix(0, di->nr_units, i, di->units[i].die < die_off);

	return lo < di->nr_units && di->units[lo].die == die_off ? (uint32_t)lo : NO_IDX;
}

/* What .debug_aranges says, for the units it lists. */
int dwidx_claim_aranges(struct dwarf_index *di, struct claims *c)
{
	Dwarf_Aranges *ar;
	size_t n, i;
	int err;

	if (dwarf_getaranges(di->lz->dw, &ar, &n) != 0)
		return 0; /* none, or unreadable: the unit DIEs tell */
	for (i = 0; i < n; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		uint32_t u;

		if (!a || dwarf_getarangeinfo(a, &addr, &len, &off) != 0)
			continue;
		u = unit_at(di, off);
		if (u == NO_IDX)
			continue;
		di->units[u].has_ranges = true;
		if (len > UINT64_MAX - addr)
			len = UINT64_MAX - addr;
		err = add_claim(di, c, addr, addr + len, u);
		if (err)
			return err;
	}
	return 0;
}

/* Where a compile unit with neither ranges nor a line table has code: its scopes' ranges. */
static int claim_by_indexing(struct dwarf_index *di, struct claims *c, Dwarf_Die *cudie, uint32_t u)
{
	struct builder b;
	size_t i;
	int err;

	dwidx_builder_init(&b, di);
	err = dwidx_index_cu(&b, cudie);
	for (i = 0; !err && i < b.nr_ranges; i++)
		err = add_claim(di, c, b.ranges[i].lo, b.ranges[i].hi, u);
	dwidx_builder_free(&b);
	return err;
}

/*
 * Each compile unit's line table, and where its code is when .debug_aranges does not list it:
 * from its DIE. A unit with no ranges holds code only where its line table has rows; without a
 * line table either, indexing it tells.
 */
int dwidx_claim_from_dies(struct dwarf_index *di, struct claims *c)
{
	struct raw info = dwidx_section_bytes(di->lz->elf, "info");
	struct raw abbrev = dwidx_section_bytes(di->lz->elf, "abbrev");
	size_t i;
	int err;

	for (i = 0; i < di->nr_units; i++) {
		struct unit *u = &di->units[i];
		Dwarf_Addr base, lo, hi;
		unsigned int tag = 0;
		Dwarf_Attribute a;
		ptrdiff_t off = 0;
		Dwarf_Die cudie;
		uint64_t lines;
		bool has_pc;
		Dwarf_Word w;

		if (dwidx_read_unit_die(&info, &abbrev, u, &tag, &lines, &has_pc)) {
			if (tag != DW_TAG_compile_unit)
				continue;
			u->lines = lines;
			if (u->has_ranges || (!has_pc && lines != NO_LINES))
				continue;
		}
		if (!dwarf_offdie(di->lz->dw, u->die, &cudie) ||
		    dwarf_tag(&cudie) != DW_TAG_compile_unit)
			continue;
		if (dwarf_formudata(dwarf_attr(&cudie, DW_AT_stmt_list, &a), &w) == 0)
			u->lines = w;
		if (u->has_ranges)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			u->has_ranges = true;
			err = add_claim(di, c, lo, hi, (uint32_t)i);
			if (err)
				return err;
		}
		if (!u->has_ranges && u->lines == NO_LINES) {
			err = claim_by_indexing(di, c, &cudie, (uint32_t)i);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * The spans of the sequences of the line program at off (from the first row to the end row), for
 * unit u: a unit's rows lie there even outside its ranges (gcc's ASan module destructors have
 * rows and no range).
 */
static int claim_line_program(const struct dwarf_index *di, struct claims *c, const struct raw *sec,
			      uint64_t off, uint32_t u)
{
	struct dwcursor r = dwc_make(sec->p + off, sec->p + sec->size);
	uint64_t lo = 0, last = 0;
	struct line_program lp;
	enum line_event ev;
	bool in_seq = false;
	int err = 0;

	if (off >= sec->size || !line_program__begin(&lp, &r))
		return 0;
	while (!err && (ev = line_program__next(&lp)) != LINE_DONE) {
		if (ev == LINE_ROW) {
			lo = in_seq ? lo : lp.at;
			last = lp.at;
			in_seq = true;
			continue;
		}
		/* A row at the end (or a lone end row, cutting another unit's row short) reaches
		 * past it. */
		err = add_claim(di, c, in_seq ? lo : lp.at, lp.at + (!in_seq || last == lp.at), u);
		in_seq = false;
	}
	if (!err && in_seq) /* no end row: up to the last row */
		err = add_claim(di, c, lo, lp.at + 1, u);
	return err;
}

/* The line sequences of every compile unit. */
int dwidx_claim_lines(struct dwarf_index *di, struct claims *c)
{
	struct raw sec = dwidx_section_bytes(di->lz->elf, "line");
	size_t i;
	int err;

	for (i = 0; sec.p && i < di->nr_units; i++) {
		if (di->units[i].lines == NO_LINES)
			continue;
		err = claim_line_program(di, c, &sec, di->units[i].lines, (uint32_t)i);
		if (err)
			return err;
	}
	return 0;
}

static int claim_cmp(const void *pa, const void *pb)
{
	const struct claim *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Groups of units that share code: sorted by start, each claim overlapping the run before it
 * joins that run's units. */
int dwidx_make_groups(struct dwarf_index *di, struct claims *c)
{
	struct lazy *lz = di->lz;
	uint32_t *parent, *gid, *fill = NULL, u, g;
	uint64_t hi = 0;
	size_t i, cur = 0;
	int err = -ENOMEM;

	if (c->nr) /* c->v is NULL when no unit claims code, and qsort's array must not be */
		qsort(c->v, c->nr, sizeof(*c->v), claim_cmp);
	parent = calloc(di->nr_units ? di->nr_units : 1, sizeof(*parent));
	gid = calloc(di->nr_units ? di->nr_units : 1, sizeof(*gid));
	if (!parent || !gid)
		goto cleanup;
	for (u = 0; u < di->nr_units; u++) {
		parent[u] = u;
		gid[u] = NO_IDX;
	}
	for (i = 0; i < c->nr; i++) {
		if (i && c->v[i].lo < hi)
			parent[uf_find(parent, c->v[i].unit)] = uf_find(parent, c->v[cur].unit);
		if (!i || c->v[i].hi > hi) {
			hi = c->v[i].hi;
			cur = i;
		}
	}
	/* Number the groups in .debug_info order of their first unit. */
	for (i = 0; i < c->nr; i++)
		di->units[c->v[i].unit].group = 0; /* has code */
	for (u = 0; u < di->nr_units; u++) {
		uint32_t root = uf_find(parent, u);

		if (di->units[u].group == NO_IDX)
			continue;
		if (gid[root] == NO_IDX)
			gid[root] = (uint32_t)lz->nr_groups++;
		di->units[u].group = gid[root];
	}
	lz->groups = calloc(lz->nr_groups ? lz->nr_groups : 1, sizeof(*lz->groups));
	di->members = calloc(di->nr_units ? di->nr_units : 1, sizeof(*di->members));
	fill = calloc(lz->nr_groups ? lz->nr_groups : 1, sizeof(*fill));
	if (!lz->groups || !di->members || !fill)
		goto cleanup;
	for (u = 0; u < di->nr_units; u++) {
		if ((g = di->units[u].group) == NO_IDX)
			continue;
		lz->groups[g].nr++;
		lz->groups[g].cost += di->units[u].size;
	}
	for (g = 1; g < lz->nr_groups; g++)
		lz->groups[g].first = lz->groups[g - 1].first + lz->groups[g - 1].nr;
	for (u = 0; u < di->nr_units; u++) {
		if ((g = di->units[u].group) != NO_IDX)
			di->members[lz->groups[g].first + fill[g]++] = u;
	}
	err = 0;
cleanup:
	free(fill);
	free(gid);
	free(parent);
	return err;
}

/* The map from addresses to groups: one entry per run of overlapping claims, entries of one group
 * in a row joined. */
int dwidx_make_map(struct dwarf_index *di, const struct claims *c)
{
	uint64_t hi = 0;
	size_t i, n = 0;

	di->map_lo = calloc(c->nr ? c->nr : 1, sizeof(*di->map_lo));
	di->map_group = calloc(c->nr ? c->nr : 1, sizeof(*di->map_group));
	if (!di->map_lo || !di->map_group)
		return -ENOMEM;
	for (i = 0; i < c->nr; i++) {
		const struct claim *cl = &c->v[i];
		uint32_t g = di->units[cl->unit].group;
		bool same_run = i && cl->lo < hi;

		if (!i || cl->hi > hi)
			hi = cl->hi;
		if (same_run || (n && di->map_group[n - 1] == g))
			continue;
		di->map_lo[n] = cl->lo;
		di->map_group[n] = g;
		n++;
	}
	di->nr_map = n;
	return 0;
}

bool dwidx_sub_empty(const struct sub_index *s)
{
	return !s->nr_segs && !s->nr_lines;
}

/*
 * Is there any code the DWARF describes? Index groups, cheapest first, until one holds some: the
 * first usually does, and the next lookup may well fall in it.
 */
int dwidx_find_code(const struct dwarf_index *di)
{
	struct lazy *lz = di->lz;
	size_t i, best;
	int err;

	for (;;) {
		best = lz->nr_groups;
		for (i = 0; i < lz->nr_groups; i++) {
			if (!lz->groups[i].sub &&
			    (best == lz->nr_groups || lz->groups[i].cost < lz->groups[best].cost))
				best = i;
		}
		if (best == lz->nr_groups)
			return -ENODATA;
		err = dwidx_group_build(di, &lz->groups[best]);
		if (err)
			return err;
		if (!dwidx_sub_empty(lz->groups[best].sub))
			return 0;
	}
}
