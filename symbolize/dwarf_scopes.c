// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One group's sub-index of the DWARF index (see dwarf_index.c): its units' DIEs walked for the
 * scopes with code (functions and inlined calls) and their names and call sites, the nesting of
 * their ranges swept into a partition of the address space, and their line tables merged and
 * folded into one table of rows.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "dwarf_impl.h"

/* A file of the line program as an index into files (NO_IDX when it names none). */
static int file_index(struct builder *b, Dwarf_Files *files, size_t idx, uint32_t *out)
{
	bool cacheable = files == b->cu.files && idx < b->cu.nfiles, added;
	const char *name;
	int err;

	*out = NO_IDX;
	if (cacheable && b->cu.map[idx] != NO_IDX) {
		*out = b->cu.map[idx];
		return 0;
	}
	/* Before DWARF 5, file 0 means "no file". */
	if (idx == 0 && b->cu.version < 5)
		return 0;
	name = dwarf_filesrc(files, idx, NULL, NULL);
	if (!name)
		return 0;
	/* A relative name is relative to the compilation directory: show it joined, as addr2line,
	 * eu-addr2line and llvm-symbolizer do. */
	if (name[0] != '/' && b->cu.comp_dir && b->cu.comp_dir[0]) {
		size_t a = strlen(b->cu.comp_dir), n = strlen(name);

		err = vec_reserve(&b->path_buf, &b->cap_path_buf, a + n + 2, 1);
		if (err)
			return err;
		memcpy(b->path_buf, b->cu.comp_dir, a);
		b->path_buf[a] = '/';
		memcpy(b->path_buf + a + 1, name, n + 1);
		name = b->path_buf;
	}
	err = dwidx_strtab_intern(b->str, &b->str->files, name, out, &added);
	if (err)
		return err;
	if (cacheable)
		b->cu.map[idx] = *out;
	return 0;
}

static int add_lines(struct builder *b, Dwarf_Lines *lines, size_t nlines)
{
	size_t i;
	int err;

	err = vec_reserve(&b->rows, &b->cap_rows, b->nr_rows + nlines, sizeof(*b->rows));
	if (err)
		return err;
	for (i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct row *r = &b->rows[b->nr_rows];
		Dwarf_Files *files;
		Dwarf_Addr addr;
		size_t idx;
		bool end;
		int lineno;

		if (!l || dwarf_lineaddr(l, &addr) || dwarf_lineendsequence(l, &end))
			continue;
		/* The end row of the last sequence sits at text_hi itself. */
		if (addr < b->text_lo || addr > b->text_hi)
			continue;
		r->addr = addr;
		r->end = end;
		r->order = (uint32_t)b->nr_rows;
		r->file = NO_IDX;
		r->line = 0;
		if (!end) {
			if (dwarf_lineno(l, &lineno) == 0 && lineno > 0)
				r->line = (uint32_t)lineno;
			if (dwarf_line_file(l, &files, &idx) == 0) {
				err = file_index(b, files, idx, &r->file);
				if (err)
					return err;
			}
		}
		b->nr_rows++;
	}
	return 0;
}

/* The name a DIE shows as: its linkage name (C++), else its name, following DW_AT_abstract_origin
 * and DW_AT_specification to where the attribute is. */
static const char *die_raw_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		name = dwarf_formstring(&a);
	if (!name && dwarf_attr_integrate(die, DW_AT_name, &a))
		name = dwarf_formstring(&a);
	return name;
}

static int scope_name(struct builder *b, Dwarf_Die *die, uint32_t *out)
{
	struct strings *str = b->str;
	const char *raw = die_raw_name(die), *dem;
	char *demangled;
	uint64_t idx;
	bool added;
	int err;

	*out = NO_IDX;
	if (!raw)
		return 0;
	/* Names come from one string table: the same pointer is the same name, without hashing. */
	if (u64map__get(&str->name_by_ptr, (uint64_t)(uintptr_t)raw, &idx)) {
		*out = (uint32_t)idx;
		return 0;
	}
	/* Room for the demangled form first, so that every interned name has one. */
	err = vec_reserve(&str->name_dem, &str->cap_dem, str->names.nr + 1, sizeof(*str->name_dem));
	if (!err)
		err = dwidx_strtab_intern(str, &str->names, raw, out, &added);
	if (err)
		return err;
	if (added) {
		str->name_dem[*out] = str->names.strs[*out];
		demangled = demangle__name(raw);
		if (demangled) {
			dem = dwidx_arena_dup(&str->arena, demangled);
			free(demangled);
			if (!dem)
				return -ENOMEM;
			str->name_dem[*out] = dem;
		}
	}
	return u64map__put(&str->name_by_ptr, (uint64_t)(uintptr_t)raw, *out);
}

/* Record die as a scope if it covers code; *out is its index, or NO_IDX when it covers none. */
static int add_scope(struct builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		     uint32_t *out)
{
	size_t first = b->nr_ranges;
	uint32_t id = (uint32_t)b->nr_scopes;
	Dwarf_Addr base, lo, hi;
	Dwarf_Attribute a;
	Dwarf_Word w;
	ptrdiff_t off = 0;
	struct scope *sc;
	int err;

	*out = NO_IDX;
	if (b->nr_scopes >= NO_IDX - 1)
		return -E2BIG;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo || lo < b->text_lo || lo >= b->text_hi)
			continue;
		err = vec_reserve(&b->ranges, &b->cap_ranges, b->nr_ranges + 1, sizeof(*b->ranges));
		if (err)
			return err;
		b->ranges[b->nr_ranges++] =
			(struct range){.lo = lo, .hi = hi, .scope = id, .depth = depth};
	}
	if (b->nr_ranges == first)
		return 0; /* a declaration or an abstract instance: no code of its own */
	err = vec_reserve(&b->scopes, &b->cap_scopes, b->nr_scopes + 1, sizeof(*b->scopes));
	if (err)
		return err;
	sc = &b->scopes[b->nr_scopes];
	sc->parent = parent;
	sc->call_file = NO_IDX;
	sc->call_line = 0;
	if (parent != NO_IDX) {
		if (dwarf_attr(die, DW_AT_call_file, &a) && dwarf_formudata(&a, &w) == 0 &&
		    b->cu.files) {
			err = file_index(b, b->cu.files, w, &sc->call_file);
			if (err)
				return err;
		}
		if (dwarf_attr(die, DW_AT_call_line, &a) && dwarf_formudata(&a, &w) == 0)
			sc->call_line = w > UINT32_MAX ? 0 : (uint32_t)w;
	}
	err = scope_name(b, die, &sc->name);
	if (err)
		return err;
	b->nr_scopes++;
	*out = id;
	return 0;
}

static int walk_import(struct builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		       unsigned int level);

/*
 * The children of die that may hold code: functions, inlined calls, and what can contain them
 * (blocks, namespaces, in C++ the types whose member functions are defined inside them, and the
 * partial units imported there).
 */
static int walk(struct builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		unsigned int level)
{
	Dwarf_Die child;
	uint32_t sc;
	int err = 0;

	if (level > MAX_DIE_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			/* A function is never "inlined into" the function it is nested in. */
			err = add_scope(b, &child, NO_IDX, 0, &sc);
			if (!err && sc != NO_IDX)
				err = walk(b, &child, sc, 1, level + 1);
			break;
		case DW_TAG_inlined_subroutine:
			err = add_scope(b, &child, parent, parent == NO_IDX ? 0 : depth, &sc);
			if (!err && sc != NO_IDX)
				err = walk(b, &child, sc, depth + 1, level + 1);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (!b->cu.is_c)
				err = walk(b, &child, parent, depth, level + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
			err = walk(b, &child, parent, depth, level + 1);
			break;
		case DW_TAG_imported_unit:
			err = walk_import(b, &child, parent, depth, level + 1);
			break;
		default:
			break;
		}
		if (err)
			return err;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static bool lang_is_c(int lang)
{
	switch (lang) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
		return true;
	default:
		return false;
	}
}

/*
 * Make udie's unit the one file numbers refer to, and add its line rows. A unit without
 * DW_AT_language (a partial unit) is taken to be in the language of the one importing it.
 */
static int unit_begin(struct builder *b, Dwarf_Die *udie, bool is_c)
{
	Dwarf_Half version = 0;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	Dwarf_Attribute a;
	size_t nlines, nfiles, i;
	int lang, err;

	b->cu.comp_dir = dwarf_formstring(dwarf_attr(udie, DW_AT_comp_dir, &a));
	dwarf_cu_info(udie->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL);
	b->cu.version = version;
	b->cu.files = NULL;
	b->cu.nfiles = 0;
	lang = dwarf_srclang(udie);
	b->cu.is_c = lang < 0 ? is_c : lang_is_c(lang);
	/* Lines first: libdw then builds the file table with the lines (relative directories
	 * joined with DW_AT_comp_dir), and dwarf_getsrcfiles() returns that same table. */
	if (dwarf_getsrclines(udie, &lines, &nlines) != 0)
		nlines = 0;
	if (dwarf_getsrcfiles(udie, &files, &nfiles) == 0) {
		err = vec_reserve(&b->cu.map, &b->cu.cap_map, nfiles, sizeof(*b->cu.map));
		if (err)
			return err;
		for (i = 0; i < nfiles; i++)
			b->cu.map[i] = NO_IDX;
		b->cu.files = files;
		b->cu.nfiles = nfiles;
	}
	return nlines ? add_lines(b, lines, nlines) : 0;
}

/*
 * A DW_TAG_imported_unit: the partial unit it names is part of the unit importing it, its
 * children as if they were the importer's. Each is walked once per compile unit; one found to
 * hold no code (what dwz shares: types and abstract instances) is remembered and skipped.
 */
static int walk_import(struct builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth,
		       unsigned int level)
{
	size_t nr_ranges = b->nr_ranges, nr_rows = b->nr_rows, nr_imports, i;
	struct unit_ctx outer = b->cu;
	Dwarf_Attribute a;
	Dwarf_Die pu;
	uint64_t key, unused;
	int err;

	b->nr_imports++;
	if (!dwarf_attr(die, DW_AT_import, &a) || !dwarf_formref_die(&a, &pu) ||
	    dwarf_tag(&pu) != DW_TAG_partial_unit)
		return 0;
	key = (uint64_t)(uintptr_t)pu.addr;
	if (u64map__get(b->pu_empty, key, &unused))
		return 0;
	for (i = 0; i < b->nr_imported; i++) {
		if (b->imported[i] == pu.addr)
			return 0;
	}
	err = vec_reserve(&b->imported, &b->cap_imported, b->nr_imported + 1, sizeof(*b->imported));
	if (err)
		return err;
	b->imported[b->nr_imported++] = pu.addr;
	nr_imports = b->nr_imports;
	b->cu = (struct unit_ctx){0};
	err = unit_begin(b, &pu, outer.is_c);
	if (!err)
		err = walk(b, &pu, parent, depth, level);
	free(b->cu.map);
	b->cu = outer;
	if (err)
		return err;
	/* With imports inside, "nothing" may only mean they were walked already. */
	if (b->nr_ranges == nr_ranges && b->nr_rows == nr_rows && b->nr_imports == nr_imports)
		return u64map__put(b->pu_empty, key, 1);
	return 0;
}

int dwidx_index_cu(struct builder *b, Dwarf_Die *cudie)
{
	int err;

	b->nr_imported = 0;
	err = unit_begin(b, cudie, false);
	if (!err)
		err = walk(b, cudie, NO_IDX, 0, 0);
	return err;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1;
	return a->scope < b->scope ? -1 : a->scope > b->scope;
}

/* Segment [addr, next) names scope. A later segment at the same address replaces the earlier;
 * one naming the same scope as the segment before it is not needed. */
static void emit_seg(struct sub_index *s, uint64_t addr, uint32_t scope)
{
	size_t n = s->nr_segs;

	if (n && s->seg_start[n - 1] == addr) {
		s->seg_scope[n - 1] = scope;
		if (n > 1 && s->seg_scope[n - 2] == scope)
			s->nr_segs--;
		return;
	}
	if (n && s->seg_scope[n - 1] == scope)
		return;
	s->seg_start[n] = addr;
	s->seg_scope[n] = scope;
	s->nr_segs++;
}

/*
 * Sweep the ranges in (start, outer first) order with a stack of the open ones: every start and
 * every end changes which scope is innermost. A range that runs past the one it is nested in
 * (bad DWARF) is cut at its end, so the stack's ends never increase going up.
 */
int dwidx_build_segments(struct builder *b, struct sub_index *s)
{
	struct range *stack = NULL;
	size_t i, sp = 0, cap = 0;
	int err = 0;

	if (!b->nr_ranges)
		return 0;
	qsort(b->ranges, b->nr_ranges, sizeof(*b->ranges), range_cmp);
	/* Each range starts one segment and ends at most one. */
	s->seg_start = calloc(2 * b->nr_ranges, sizeof(*s->seg_start));
	s->seg_scope = calloc(2 * b->nr_ranges, sizeof(*s->seg_scope));
	if (!s->seg_start || !s->seg_scope)
		return -ENOMEM;
	for (i = 0; i < b->nr_ranges; i++) {
		struct range r = b->ranges[i];

		while (sp && stack[sp - 1].hi <= r.lo) {
			sp--;
			emit_seg(s, stack[sp].hi, sp ? stack[sp - 1].scope : NO_IDX);
		}
		if (sp && r.hi > stack[sp - 1].hi)
			r.hi = stack[sp - 1].hi;
		err = vec_reserve(&stack, &cap, sp + 1, sizeof(*stack));
		if (err)
			goto cleanup;
		stack[sp++] = r;
		emit_seg(s, r.lo, r.scope);
	}
	while (sp) {
		sp--;
		emit_seg(s, stack[sp].hi, sp ? stack[sp - 1].scope : NO_IDX);
	}
cleanup:
	free(stack);
	return err;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->end != b->end)
		return a->end ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

static bool same_line(const struct line_info *a, const struct line_info *b)
{
	return a->file == b->file && a->line == b->line;
}

/*
 * Like emit_seg(): the last row at an address wins; a row repeating the one before is dropped,
 * except the one at index pin: the first of a map entry, which line_at() looks for.
 */
static void emit_row(struct sub_index *s, const struct row *r, size_t pin)
{
	struct line_info li = {.file = r->end ? NO_IDX : r->file, .line = r->end ? 0 : r->line};
	size_t n = s->nr_lines;

	if (li.file == NO_IDX)
		li.line = 0;
	if (n && s->line_addr[n - 1] == r->addr) {
		s->line_info[n - 1] = li;
		if (n > 1 && n - 1 != pin && same_line(&s->line_info[n - 2], &li))
			s->nr_lines--;
		return;
	}
	if (n && n != pin && same_line(&s->line_info[n - 1], &li))
		return;
	s->line_addr[n] = r->addr;
	s->line_info[n] = li;
	s->nr_lines++;
}

/* Merge the rows; starts[0..nr_starts) are where the group's map entries begin, ascending. */
int dwidx_build_lines(struct builder *b, struct sub_index *s, const uint64_t *starts,
		      size_t nr_starts)
{
	size_t i, e = 0, pin = SIZE_MAX;

	if (!b->nr_rows)
		return 0;
	qsort(b->rows, b->nr_rows, sizeof(*b->rows), row_cmp);
	s->line_addr = calloc(b->nr_rows, sizeof(*s->line_addr));
	s->line_info = calloc(b->nr_rows, sizeof(*s->line_info));
	if (!s->line_addr || !s->line_info)
		return -ENOMEM;
	for (i = 0; i < b->nr_rows; i++) {
		if (e < nr_starts && starts[e] <= b->rows[i].addr) {
			while (e < nr_starts && starts[e] <= b->rows[i].addr)
				e++;
			pin = s->nr_lines;
		}
		emit_row(s, &b->rows[i], pin);
	}
	return 0;
}

/* Hand the builder's scopes to s, and trim its arrays to size. */
void dwidx_builder_finish(struct builder *b, struct sub_index *s)
{
	void *p;

	s->scopes = b->scopes;
	b->scopes = NULL;
	if (s->nr_segs && (p = reallocarray(s->seg_start, s->nr_segs, sizeof(uint64_t))))
		s->seg_start = p;
	if (s->nr_segs && (p = reallocarray(s->seg_scope, s->nr_segs, sizeof(uint32_t))))
		s->seg_scope = p;
	if (s->nr_lines && (p = reallocarray(s->line_addr, s->nr_lines, sizeof(uint64_t))))
		s->line_addr = p;
	if (s->nr_lines && (p = reallocarray(s->line_info, s->nr_lines, sizeof(struct line_info))))
		s->line_info = p;
}

void dwidx_builder_init(struct builder *b, const struct dwarf_index *di)
{
	*b = (struct builder){
		.str = &di->lz->str,
		.pu_empty = &di->lz->pu_empty,
		.text_lo = di->text_lo,
		.text_hi = di->text_hi,
	};
}

void dwidx_builder_free(struct builder *b)
{
	free(b->ranges);
	free(b->rows);
	free(b->scopes);
	free(b->cu.map);
	free(b->imported);
	free(b->path_buf);
}

void dwidx_sub_free(struct sub_index *s)
{
	if (!s)
		return;
	free(s->seg_start);
	free(s->seg_scope);
	free(s->line_addr);
	free(s->line_info);
	free(s->scopes);
	free(s);
}
