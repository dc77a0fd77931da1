// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF index of one module (see dwarf_index.h), built lazily, one group of compile units at a
 * time. This part owns the index: the map from addresses to groups, building a group's sub-index
 * (dwarf_scopes.c) on the first lookup there, the lookups and, until every group is built, its
 * own Elf and Dwarf of the file. dwarf_claims.c finds where each unit's code is, dwarf_unitdie.c
 * reads unit DIEs from the section bytes, and dwarf_strings.c keeps the strings the groups name
 * (function names raw and demangled, source file paths: copied out of libdw and interned once per
 * module, so a name handed out lives as long as the index).
 *
 * Building reads only where each compile unit's code is: .debug_aranges where the producer wrote
 * it, else the unit DIE's DW_AT_low_pc/high_pc or DW_AT_ranges, and the span of every sequence of
 * its line table (rows lie outside a unit's ranges too: gcc's ASan module destructors), followed
 * opcode by opcode without making rows. Unit DIEs are read straight from the section bytes where
 * they can be: through libdw, that alone would set up every unit. A unit with neither ranges nor
 * a line table is indexed on the spot to learn what it covers. Units whose spans overlap form one
 * group, indexed together as the eager index merged them, and each run of overlapping spans is
 * one map entry, reaching up to the next. The first lookup in an entry indexes its group's units,
 * in .debug_info order, into a sub-index (below). Scopes lie in their unit's ranges and rows in
 * its sequences, so the entry's group alone answers there, but for two things the merged table
 * of the eager index does. A row at its sequence's end address (gcc leaves an empty one there at
 * times) stays in force past it, up to the next row of any unit, and wins over another unit's
 * first row at that address when its unit comes later: such a sequence spans one byte more, so
 * that a unit starting there joins its group. And a line lookup finding no row of the entry's
 * group from the entry's start to the address goes on in the entries below, where the last row
 * of the merged table is. Answers are the eager index's, address for address. Code that a
 * partial unit describes must lie in the spans of the units importing it (dwz never moves code
 * there).
 *
 * Scopes (DW_TAG_subprogram and DW_TAG_inlined_subroutine DIEs with code) nest: an inlined call's
 * ranges lie inside its caller's. Sorting every range by start address, outer before inner, and
 * sweeping them with a stack turns the nesting into a partition of the address space where each
 * segment names the innermost scope over it; the callers follow from parent links. The line tables
 * of the group's units are merged the way libdw orders one (by address, a sequence's end before
 * another's start at the same address, the last row at an address winning) and runs of rows with
 * the same file and line are folded. Partial units a unit imports (DW_TAG_imported_unit, as dwz
 * writes them) are walked as part of it; names reached through DW_AT_abstract_origin or
 * DW_AT_specification in another unit, or in the dwz alt file, are read through libdw.
 *
 * The index opens the file again for this, and keeps a private Elf (mapped) and Dwarf of it;
 * libdw's caches grow with every unit read, so a fresh Dwarf replaces it now and then. When the
 * file cannot be opened again, or is no longer the file elf was read from, the index is built
 * eagerly from elf, as one group.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demangle.h"
#include "dwarf_impl.h"
#include "dwarf_index.h"
#include "lib/log.h"
#include "lib/search.h"

/* Close the file once nothing is left to read from it; libdw's pointers die with it. */
static void lazy_release(struct lazy *lz)
{
	dwarf_end(lz->dw);
	lz->dw = NULL;
	elf_end(lz->elf);
	lz->elf = NULL;
	if (lz->fd >= 0)
		close(lz->fd);
	lz->fd = -1;
	u64map__clear(&lz->str.name_by_ptr);
	u64map__clear(&lz->pu_empty);
}

/* Where the map entries of group g begin, ascending; *n of them (a NULL array when none). */
static uint64_t *group_starts(const struct dwarf_index *di, uint32_t g, size_t *n)
{
	uint64_t *starts;
	size_t i;

	*n = 0;
	for (i = 0; i < di->nr_map; i++)
		*n += di->map_group[i] == g;
	starts = calloc(*n ? *n : 1, sizeof(*starts));
	if (!starts)
		return NULL;
	for (*n = 0, i = 0; i < di->nr_map; i++) {
		if (di->map_group[i] == g)
			starts[(*n)++] = di->map_lo[i];
	}
	return starts;
}

/*
 * libdw keeps what it read of every unit (DIE and abbreviation tables, line tables) until
 * dwarf_end(), several times the units' size: over a long profile that would be most of the
 * module. A fresh handle on the same Elf costs little, the sections are already decompressed.
 */
static void lazy_recycle(struct lazy *lz)
{
	Dwarf *dw;

	if (!lz->recycle || lz->since_begin < RECYCLE_BYTES || lz->nr_built == lz->nr_groups)
		return;
	dw = dwarf_begin_elf(lz->elf, DWARF_C_READ, NULL);
	if (!dw)
		return; /* keep the one we have */
	dwarf_end(lz->dw);
	lz->dw = dw;
	lz->since_begin = 0;
	/* Keyed by addresses inside the old handle. */
	u64map__clear(&lz->str.name_by_ptr);
	u64map__clear(&lz->pu_empty);
}

/* Index the units of group g. */
int dwidx_group_build(const struct dwarf_index *di, struct group *g)
{
	struct lazy *lz = di->lz;
	struct sub_index *s;
	struct builder b;
	uint64_t *starts;
	size_t nr_starts;
	uint32_t i;
	int err = 0;

	s = calloc(1, sizeof(*s));
	starts = group_starts(di, (uint32_t)(g - lz->groups), &nr_starts);
	if (!s || !starts) {
		free(s);
		free(starts);
		return -ENOMEM;
	}
	dwidx_builder_init(&b, di);
	for (i = 0; i < g->nr && !err; i++) {
		const struct unit *u = &di->units[di->members[g->first + i]];
		Dwarf_Die cudie;

		/* Type units, partial units and split-DWARF skeletons hold no code to index. */
		if (dwarf_offdie(lz->dw, u->die, &cudie) &&
		    dwarf_tag(&cudie) == DW_TAG_compile_unit)
			err = dwidx_index_cu(&b, &cudie);
	}
	if (!err)
		err = dwidx_build_segments(&b, s);
	if (!err)
		err = dwidx_build_lines(&b, s, starts, nr_starts);
	free(starts);
	if (err) {
		dwidx_builder_free(&b);
		dwidx_sub_free(s);
		return err;
	}
	dwidx_builder_finish(&b, s);
	dwidx_builder_free(&b);
	g->sub = s;
	lz->since_begin += g->cost;
	if (++lz->nr_built == lz->nr_groups)
		lazy_release(lz);
	else
		lazy_recycle(lz);
	return 0;
}

void dwarf_index__free(struct dwarf_index *di)
{
	size_t i;

	if (!di)
		return;
	if (di->lz) {
		lazy_release(di->lz);
		for (i = 0; i < di->lz->nr_groups; i++)
			dwidx_sub_free(di->lz->groups[i].sub);
		free(di->lz->groups);
		dwidx_strings_free(&di->lz->str);
		free(di->lz);
	}
	free(di->map_lo);
	free(di->map_group);
	free(di->units);
	free(di->members);
	free(di->path);
	free(di);
}

static int index_lazily(struct dwarf_index *di)
{
	struct lazy *lz = di->lz;
	struct claims c = {0};
	int err;

	/* Shared entries of a dwz'd file live in its alt file: open that now, as the eager index
	 * did, not at some later lookup. libdw owns it, and a fresh handle would open it again. */
	lz->recycle = !dwarf_getalt(lz->dw);
	/* The file is mapped (or read, where it cannot be): the descriptor is not needed again. */
	if (elf_cntl(lz->elf, ELF_C_FDREAD) == 0) {
		close(lz->fd);
		lz->fd = -1;
	}
	err = dwidx_list_units(di, lz->dw);
	if (!err)
		err = dwidx_claim_aranges(di, &c);
	if (!err)
		err = dwidx_claim_from_dies(di, &c);
	if (!err)
		err = dwidx_claim_lines(di, &c);
	if (!err)
		err = dwidx_make_groups(di, &c);
	if (!err)
		err = dwidx_make_map(di, &c);
	free(c.v);
	return err ? err : dwidx_find_code(di);
}

/* All units as one group, indexed now: for a file the index cannot keep open. */
static int index_eagerly(struct dwarf_index *di)
{
	struct lazy *lz = di->lz;
	uint32_t u;
	int err;

	err = dwidx_list_units(di, lz->dw);
	if (err)
		return err;
	lz->groups = calloc(1, sizeof(*lz->groups));
	di->members = calloc(di->nr_units ? di->nr_units : 1, sizeof(*di->members));
	di->map_lo = calloc(1, sizeof(*di->map_lo));
	di->map_group = calloc(1, sizeof(*di->map_group));
	if (!lz->groups || !di->members || !di->map_lo || !di->map_group)
		return -ENOMEM;
	for (u = 0; u < di->nr_units; u++)
		di->members[u] = u;
	lz->groups[0].nr = (uint32_t)di->nr_units;
	lz->nr_groups = 1;
	di->nr_map = 1;
	err = dwidx_group_build(di, &lz->groups[0]);
	if (!err && dwidx_sub_empty(lz->groups[0].sub))
		err = -ENODATA;
	return err;
}

/* Do the file regions [off, off + len) of two images of one size hold the same bytes? */
static bool same_region(const char *a, const char *b, size_t size, uint64_t off, uint64_t len)
{
	if (off > size || len > size - off)
		return false;
	return memcmp(a + off, b + off, len) == 0;
}

/*
 * Is own (opened again from the path) the file elf was read from? The path may name another file
 * by now, or in our mount namespace. Same size, ELF header and section headers, and build-id;
 * without a build-id, the same line tables.
 */
static bool same_file(Elf *elf, Elf *own)
{
	const void *id1, *id2;
	size_t n1, n2, shnum, shstrndx;
	char *r1 = elf_rawfile(elf, &n1), *r2 = elf_rawfile(own, &n2);
	Elf_Scn *scn = NULL;
	ssize_t l1, l2;
	GElf_Ehdr eh;

	if (!r1 || !r2 || n1 != n2 || !gelf_getehdr(own, &eh) || elf_getshdrnum(own, &shnum) ||
	    !same_region(r1, r2, n1, 0, eh.e_ehsize) ||
	    !same_region(r1, r2, n1, eh.e_shoff, (uint64_t)shnum * eh.e_shentsize))
		return false;
	l1 = dwelf_elf_gnu_build_id(elf, &id1);
	l2 = dwelf_elf_gnu_build_id(own, &id2);
	if (l1 > 0 || l2 > 0)
		return l1 == l2 && memcmp(id1, id2, (size_t)l1) == 0;
	if (elf_getshdrstrndx(own, &shstrndx))
		return false;
	while ((scn = elf_nextscn(own, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(own, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".debug_line") == 0)
			return same_region(r1, r2, n1, sh.sh_offset, sh.sh_size);
	}
	return true;
}

bool dwarf_index__unused_section(const char *name)
{
	static const char *const unused[] = {"loc",	 "loclists", "frame", "pubnames",
					     "pubtypes", "macinfo",  "macro"};

	if (strncmp(name, ".debug_", 7) == 0)
		name += 7;
	else if (strncmp(name, ".zdebug_", 8) == 0)
		name += 8;
	else
		return false;
	for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
		if (strcmp(name, unused[i]) == 0)
			return true;
	}
	return false;
}

/*
 * dwarf_begin_elf() decompresses every DWARF section it knows, most of the time to first answer
 * in a distribution's debug file. The sections the index never reads become SHT_NOBITS in our
 * own Elf (the file is never written), which libdw skips.
 */
static void hide_unused_sections(Elf *own)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(own, &shstrndx))
		return;
	while ((scn = elf_nextscn(own, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(own, shstrndx, sh.sh_name)) ||
		    !dwarf_index__unused_section(name))
			continue;
		sh.sh_type = SHT_NOBITS;
		gelf_update_shdr(scn, &sh); /* failing that, libdw reads it */
	}
}

static bool little_endian(Elf *elf)
{
	const char *ident = elf_getident(elf, NULL);

	return ident && ident[EI_DATA] == ELFDATA2LSB;
}

/* Open path again for the index to keep: 0, or -errno (the index is then built eagerly). */
static int open_own(struct lazy *lz, Elf *elf, const char *path)
{
	struct stat st;

	/* O_NONBLOCK: a FIFO where the file used to be must not hang us. */
	lz->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (lz->fd < 0)
		return -errno;
	if (fstat(lz->fd, &st) == 0 && S_ISREG(st.st_mode))
		lz->elf = elf_begin(lz->fd, ELF_C_READ_MMAP, NULL);
	/* What is read here without libdw is read little-endian: a big-endian file (not one
	 * perch runs on) is indexed eagerly. */
	if (!lz->elf || elf_kind(lz->elf) != ELF_K_ELF || !little_endian(lz->elf) ||
	    !same_file(elf, lz->elf)) {
		elf_end(lz->elf);
		lz->elf = NULL;
		close(lz->fd);
		lz->fd = -1;
		return -ESTALE;
	}
	hide_unused_sections(lz->elf);
	return 0;
}

static struct dwarf_index *build(Elf *elf, const char *path, uint64_t text_lo, uint64_t text_hi,
				 bool try_lazy)
{
	struct dwarf_index *di;
	bool lazy;
	int err = -ENOMEM;

	di = calloc(1, sizeof(*di));
	if (!di)
		goto err_out;
	di->lz = calloc(1, sizeof(*di->lz));
	if (di->lz)
		di->lz->fd = -1;
	di->text_lo = text_lo;
	di->text_hi = text_hi;
	di->path = strdup(path ? path : "(module)");
	if (!di->path || !di->lz)
		goto err_out;
	lazy = try_lazy && path && open_own(di->lz, elf, path) == 0;
	di->lz->dw = dwarf_begin_elf(lazy ? di->lz->elf : elf, DWARF_C_READ, NULL);
	if (!di->lz->dw) {
		err = -ENODATA; /* no .debug_info, or one libdw will not read */
		goto err_out;
	}
	err = lazy ? index_lazily(di) : index_eagerly(di);
	if (err)
		goto err_out;
	/* The caller's Elf is not ours to keep reading. */
	if (!lazy)
		lazy_release(di->lz);
	return di;
err_out:
	dwarf_index__free(di);
	errno = -err;
	return NULL;
}

struct dwarf_index *dwarf_index__build(Elf *elf, const char *path, uint64_t text_lo,
				       uint64_t text_hi)
{
	return build(elf, path, text_lo, text_hi, true);
}

struct dwarf_index *dwarf_index__build_eager(Elf *elf, const char *path, uint64_t text_lo,
					     uint64_t text_hi)
{
	return build(elf, path, text_lo, text_hi, false);
}

/* Index of the last of a[0..n) that is <= key, or n when none is. */
static size_t last_at_or_below(const uint64_t *a, size_t n, uint64_t key)
{
	size_t lo = search_prefix(0, n, i, a[i] <= key);

	return lo ? lo - 1 : n;
}

/* The sub-index of map entry e's group, indexed on first use; NULL when that failed. */
static const struct sub_index *entry_sub(const struct dwarf_index *di, size_t e)
{
	struct group *g = &di->lz->groups[di->map_group[e]];
	int err;

	if (!g->sub && di->lz->dw) {
		err = dwidx_group_build(di, g);
		if (err) /* tried again at the next lookup there */
			log_warn("symbolize: %s: index DWARF units: %s", di->path, strerror(-err));
	}
	return g->sub;
}

/*
 * The line of the last row at or below vaddr, vaddr in map entry e (nr_map: below them all), as
 * one table merged from every unit would have it. Rows in an entry are its group's alone; when
 * the group has none from the entry's start to vaddr, the last row is in an entry below (most
 * often an end of sequence: no line).
 */
static void line_at(const struct dwarf_index *di, size_t e, uint64_t vaddr, const char **file,
		    unsigned int *line)
{
	const struct sub_index *s;
	size_t i;

	*file = NULL;
	*line = 0;
	if (e == di->nr_map)
		return;
	for (;; e--) {
		s = entry_sub(di, e);
		if (!s)
			return;
		i = last_at_or_below(s->line_addr, s->nr_lines, vaddr);
		if (i != s->nr_lines && s->line_addr[i] >= di->map_lo[e])
			break;
		if (e == 0)
			return;
	}
	if (s->line_info[i].file != NO_IDX) {
		*file = di->lz->str.files.strs[s->line_info[i].file];
		*line = s->line_info[i].line;
	}
}

void dwarf_index__line(const struct dwarf_index *di, uint64_t vaddr, const char **file,
		       unsigned int *line)
{
	line_at(di, last_at_or_below(di->map_lo, di->nr_map, vaddr), vaddr, file, line);
}

int dwarf_index__frames(const struct dwarf_index *di, uint64_t vaddr, bool demangle,
			struct sym_frame *frames, size_t max, size_t *n)
{
	size_t e = last_at_or_below(di->map_lo, di->nr_map, vaddr), i, k = 0;
	const struct strings *str = &di->lz->str;
	const struct sub_index *s;
	const char *file;
	unsigned int line;
	uint32_t sc;

	*n = 0;
	if (e == di->nr_map || !(s = entry_sub(di, e)))
		return 0;
	i = last_at_or_below(s->seg_start, s->nr_segs, vaddr);
	if (i == s->nr_segs || s->seg_scope[i] == NO_IDX)
		return 0;
	sc = s->seg_scope[i];
	line_at(di, e, vaddr, &file, &line);
	for (;;) {
		const struct scope *p = &s->scopes[sc];

		if (k == max) {
			*n = k;
			return -ENOSPC;
		}
		frames[k].function = NULL;
		if (p->name != NO_IDX)
			frames[k].function =
				demangle ? str->name_dem[p->name] : str->names.strs[p->name];
		frames[k].file = file;
		frames[k].line = file ? line : 0;
		frames[k].inlined = p->parent != NO_IDX;
		k++;
		if (p->parent == NO_IDX)
			break;
		/* The caller's frame is at the call site: where this scope was inlined. */
		file = p->call_file == NO_IDX ? NULL : str->files.strs[p->call_file];
		line = p->call_line;
		sc = p->parent; /* parents are created before their children: no cycles */
	}
	*n = k;
	return 0;
}
