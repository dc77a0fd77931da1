// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF index of one module (see dwarf_index.h), built lazily, one group of compile units at a
 * time. This part owns the map from addresses to groups, the groups' sub-indexes, the strings
 * they name (function names raw and demangled, source file paths: copied out of libdw and
 * interned once per module, so a name handed out lives as long as the index) and, until every
 * group is built, its own Elf and Dwarf of the file.
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

#include "lib/vec.h"
#include "demangle.h"
#include "dwarf_index.h"
#include "line_program.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/dwcursor.h"
#include "lib/search.h"

#define NO_IDX	      UINT32_MAX
#define NO_LINES      UINT64_MAX
#define MAX_DIE_DEPTH 256 /* deeper nesting than any compiler emits: a corrupt file */
#define ARENA_CHUNK   (64 * 1024)
/* Bytes of units indexed through one Dwarf handle before a fresh one drops libdw's caches. */
#define RECYCLE_BYTES (2u << 20)

/* A DW_TAG_subprogram or DW_TAG_inlined_subroutine that covers code. */
struct scope {
	uint32_t name;	    /* index into names, NO_IDX when it has none */
	uint32_t parent;    /* the scope it was inlined into; NO_IDX for an out-of-line function */
	uint32_t call_file; /* DW_AT_call_file as an index into files, NO_IDX when none */
	uint32_t call_line; /* DW_AT_call_line, 0 when none */
};

struct line_info {
	uint32_t file; /* index into files; NO_IDX: no line here (end of a sequence) */
	uint32_t line;
};

struct arena_chunk {
	struct arena_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

/* Open addressing; key 0 marks an empty slot. */
struct hmap {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap; /* a power of two, or 0 */
	size_t nr;
};

/* Interned strings: strs[i], looked up by hash in map. */
struct strtab {
	const char **strs;
	size_t nr;
	size_t cap;
	struct hmap map;
};

/* Strings of every group, interned once per module. The arena never moves a string. */
struct strings {
	struct strtab names;
	const char **name_dem; /* the demangled name, or names' when it is not mangled */
	size_t cap_dem;
	struct strtab files;
	struct hmap name_by_ptr; /* libdw's string pointer -> names index, while libdw is open */
	struct arena_chunk *arena;
};

/* One group's part of the index: what the eager index held for the whole module. */
struct sub_index {
	/* Segment i covers [seg_start[i], seg_start[i + 1]) and names seg_scope[i] (or NO_IDX). */
	uint64_t *seg_start;
	uint32_t *seg_scope;
	size_t nr_segs;
	/* Row i covers [line_addr[i], line_addr[i + 1]). */
	uint64_t *line_addr;
	struct line_info *line_info;
	size_t nr_lines;
	struct scope *scopes; /* indexes into strings: names and files */
};

/* A unit of .debug_info. */
struct unit {
	Dwarf_Off die;	  /* offset of its DIE */
	Dwarf_Off size;	  /* its bytes: roughly what indexing it costs */
	Dwarf_Off abbrev; /* offset of its abbreviations */
	Dwarf_Off lines;  /* DW_AT_stmt_list of a compile unit, NO_LINES when none */
	uint32_t group;	  /* NO_IDX when it covers no code */
	uint16_t version;
	uint8_t addr_size;
	uint8_t off_size;
	bool has_ranges; /* .debug_aranges or its DIE says where its code is */
};

/* Units whose code overlaps, indexed together on the first lookup among them. */
struct group {
	struct sub_index *sub; /* NULL until built */
	uint32_t first;	       /* its units: members[first .. first + nr), in .debug_info order */
	uint32_t nr;
	uint64_t cost; /* bytes of its units */
};

/* An address range a unit says its code is in. */
struct claim {
	uint64_t lo;
	uint64_t hi; /* exclusive */
	uint32_t unit;
};

struct claims {
	struct claim *v;
	size_t nr, cap;
};

/*
 * What lookups change, behind a pointer so that they keep taking a const index (not thread-safe,
 * like the rest of the symbolizer): the libdw handle, and the strings and groups built so far.
 */
struct lazy {
	int fd;	   /* ours, or -1 */
	Elf *elf;  /* ours, or NULL when dw reads the caller's Elf (eager) */
	Dwarf *dw; /* NULL once every group is built */
	struct strings str;
	struct hmap pu_empty; /* partial units (by DIE address) known to hold no code */
	struct group *groups;
	size_t nr_groups;
	size_t nr_built;
	uint64_t since_begin; /* bytes of units indexed through dw */
	bool recycle;	      /* dw may be replaced: ours, and no alt file to reopen */
};

struct dwarf_index {
	char *path; /* for log lines */
	uint64_t text_lo;
	uint64_t text_hi;
	/*
	 * Entry i, [map_lo[i], map_lo[i + 1]), starts with code of group map_group[i]; what lies
	 * between that code and the next entry is in no unit's ranges. Below map_lo[0]: nothing.
	 */
	uint64_t *map_lo;
	uint32_t *map_group;
	size_t nr_map;
	struct unit *units; /* in .debug_info order */
	size_t nr_units, cap_units;
	uint32_t *members; /* units by group */
	struct lazy *lz;
};

struct range {
	uint64_t lo;
	uint64_t hi; /* exclusive */
	uint32_t scope;
	uint32_t depth; /* 0 for a function, its caller's depth + 1 for an inlined call */
};

struct row {
	uint64_t addr;
	uint32_t file;
	uint32_t line;
	uint32_t order; /* position in the input, so that qsort keeps libdw's order of ties */
	bool end;
};

/* The unit whose DIEs are being walked: a compile unit, or a partial unit it imports. */
struct unit_ctx {
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t *map; /* its file index -> files index, NO_IDX until first used */
	size_t cap_map;
	const char *comp_dir; /* DW_AT_comp_dir, or NULL */
	unsigned int version;
	bool is_c; /* C has no functions inside types: their members need no walk */
};

struct builder {
	struct strings *str;
	struct hmap *pu_empty;
	uint64_t text_lo;
	uint64_t text_hi;
	struct range *ranges;
	size_t nr_ranges, cap_ranges;
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct scope *scopes;
	size_t nr_scopes, cap_scopes;
	struct unit_ctx cu;
	const void **imported; /* partial units walked for the current compile unit */
	size_t nr_imported, cap_imported;
	size_t nr_imports; /* DW_TAG_imported_unit DIEs met */
	char *path_buf;	   /* scratch for joining paths */
	size_t cap_path_buf;
};

static int vec_reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	return vec_grow(pv, cap, need, elem, 16);
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = fnv64_str(FNV64_OFFSET, s);

	return h ? h : 1;
}

static void hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

static void hmap_insert(struct hmap *h, uint64_t key, uint32_t val)
{
	size_t i = mix64(key) & (h->cap - 1);

	while (h->keys[i])
		i = (i + 1) & (h->cap - 1);
	h->keys[i] = key;
	h->vals[i] = val;
	h->nr++;
}

static int hmap_put(struct hmap *h, uint64_t key, uint32_t val)
{
	if ((h->nr + 1) * 2 > h->cap) {
		struct hmap old = *h;
		size_t i;

		h->cap = old.cap ? old.cap * 2 : 256;
		h->nr = 0;
		h->keys = calloc(h->cap, sizeof(*h->keys));
		h->vals = calloc(h->cap, sizeof(*h->vals));
		if (!h->keys || !h->vals) {
			free(h->keys);
			free(h->vals);
			*h = old;
			return -ENOMEM;
		}
		for (i = 0; i < old.cap; i++) {
			if (old.keys[i])
				hmap_insert(h, old.keys[i], old.vals[i]);
		}
		hmap_free(&old);
	}
	hmap_insert(h, key, val);
	return 0;
}

/* The value of key; with strs, the value whose string equals str among those under key. */
static uint32_t hmap_get(const struct hmap *h, uint64_t key, const char *str,
			 const char *const *strs)
{
	size_t i;

	if (!h->cap)
		return NO_IDX;
	for (i = mix64(key) & (h->cap - 1); h->keys[i]; i = (i + 1) & (h->cap - 1)) {
		if (h->keys[i] == key && (!strs || strcmp(strs[h->vals[i]], str) == 0))
			return h->vals[i];
	}
	return NO_IDX;
}

static const char *arena_dup(struct arena_chunk **head, const char *s)
{
	size_t len = strlen(s) + 1;
	struct arena_chunk *c = *head;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = *head;
		*head = c;
	}
	memcpy(c->data + c->used, s, len);
	c->used += len;
	return c->data + c->used - len;
}

/*
 * Index of s in t, copying it into the arena the first time; *added says it was new. A failure
 * leaves t as it was: the tables outlive a group whose indexing failed.
 */
static int strtab_intern(struct strings *str, struct strtab *t, const char *s, uint32_t *out,
			 bool *added)
{
	uint64_t h = str_hash(s);
	uint32_t idx = hmap_get(&t->map, h, s, t->strs);
	const char *copy;
	int err;

	*added = false;
	if (idx != NO_IDX) {
		*out = idx;
		return 0;
	}
	if (t->nr >= NO_IDX - 1)
		return -E2BIG;
	err = vec_reserve(&t->strs, &t->cap, t->nr + 1, sizeof(*t->strs));
	if (err)
		return err;
	copy = arena_dup(&str->arena, s);
	if (!copy)
		return -ENOMEM;
	t->strs[t->nr] = copy;
	err = hmap_put(&t->map, h, (uint32_t)t->nr);
	if (err)
		return err;
	*out = (uint32_t)t->nr++;
	*added = true;
	return 0;
}

static void strtab_free(struct strtab *t)
{
	free(t->strs);
	hmap_free(&t->map);
}

static void strings_free(struct strings *str)
{
	struct arena_chunk *c, *next;

	strtab_free(&str->names);
	free(str->name_dem);
	strtab_free(&str->files);
	hmap_free(&str->name_by_ptr);
	for (c = str->arena; c; c = next) {
		next = c->next;
		free(c);
	}
}

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
	err = strtab_intern(b->str, &b->str->files, name, out, &added);
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
	bool added;
	int err;

	*out = NO_IDX;
	if (!raw)
		return 0;
	/* Names come from one string table: the same pointer is the same name, without hashing. */
	*out = hmap_get(&str->name_by_ptr, (uint64_t)(uintptr_t)raw, NULL, NULL);
	if (*out != NO_IDX)
		return 0;
	/* Room for the demangled form first, so that every interned name has one. */
	err = vec_reserve(&str->name_dem, &str->cap_dem, str->names.nr + 1, sizeof(*str->name_dem));
	if (!err)
		err = strtab_intern(str, &str->names, raw, out, &added);
	if (err)
		return err;
	if (added) {
		str->name_dem[*out] = str->names.strs[*out];
		demangled = demangle__name(raw);
		if (demangled) {
			dem = arena_dup(&str->arena, demangled);
			free(demangled);
			if (!dem)
				return -ENOMEM;
			str->name_dem[*out] = dem;
		}
	}
	return hmap_put(&str->name_by_ptr, (uint64_t)(uintptr_t)raw, *out);
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
	uint64_t key;
	int err;

	b->nr_imports++;
	if (!dwarf_attr(die, DW_AT_import, &a) || !dwarf_formref_die(&a, &pu) ||
	    dwarf_tag(&pu) != DW_TAG_partial_unit)
		return 0;
	key = (uint64_t)(uintptr_t)pu.addr;
	if (hmap_get(b->pu_empty, key, NULL, NULL) != NO_IDX)
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
		return hmap_put(b->pu_empty, key, 1);
	return 0;
}

static int index_cu(struct builder *b, Dwarf_Die *cudie)
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
static int build_segments(struct builder *b, struct sub_index *s)
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
static int build_lines(struct builder *b, struct sub_index *s, const uint64_t *starts,
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
static void builder_finish(struct builder *b, struct sub_index *s)
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

static void builder_init(struct builder *b, const struct dwarf_index *di)
{
	*b = (struct builder){
		.str = &di->lz->str,
		.pu_empty = &di->lz->pu_empty,
		.text_lo = di->text_lo,
		.text_hi = di->text_hi,
	};
}

static void builder_free(struct builder *b)
{
	free(b->ranges);
	free(b->rows);
	free(b->scopes);
	free(b->cu.map);
	free(b->imported);
	free(b->path_buf);
}

static void sub_free(struct sub_index *s)
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
	hmap_free(&lz->str.name_by_ptr);
	hmap_free(&lz->pu_empty);
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
	hmap_free(&lz->str.name_by_ptr);
	hmap_free(&lz->pu_empty);
}

/* Index the units of group g. */
static int group_build(const struct dwarf_index *di, struct group *g)
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
	builder_init(&b, di);
	for (i = 0; i < g->nr && !err; i++) {
		const struct unit *u = &di->units[di->members[g->first + i]];
		Dwarf_Die cudie;

		/* Type units, partial units and split-DWARF skeletons hold no code to index. */
		if (dwarf_offdie(lz->dw, u->die, &cudie) &&
		    dwarf_tag(&cudie) == DW_TAG_compile_unit)
			err = index_cu(&b, &cudie);
	}
	if (!err)
		err = build_segments(&b, s);
	if (!err)
		err = build_lines(&b, s, starts, nr_starts);
	free(starts);
	if (err) {
		builder_free(&b);
		sub_free(s);
		return err;
	}
	builder_finish(&b, s);
	builder_free(&b);
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
			sub_free(di->lz->groups[i].sub);
		free(di->lz->groups);
		strings_free(&di->lz->str);
		free(di->lz);
	}
	free(di->map_lo);
	free(di->map_group);
	free(di->units);
	free(di->members);
	free(di->path);
	free(di);
}

/* Every unit of .debug_info, in order. A damaged one ends the list: a partial index beats none. */
static int list_units(struct dwarf_index *di, Dwarf *dw)
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
static int claim_aranges(struct dwarf_index *di, struct claims *c)
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

	builder_init(&b, di);
	err = index_cu(&b, cudie);
	for (i = 0; !err && i < b.nr_ranges; i++)
		err = add_claim(di, c, b.ranges[i].lo, b.ranges[i].hi, u);
	builder_free(&b);
	return err;
}

/* The bytes of a DWARF section as libdw reads them (decompressed); p is NULL when there are none. */
struct raw {
	const unsigned char *p;
	size_t size;
};

static struct raw section_bytes(Elf *elf, const char *name)
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
static bool read_unit_die(const struct raw *info, const struct raw *abbrev, const struct unit *u,
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

/*
 * Each compile unit's line table, and where its code is when .debug_aranges does not list it:
 * from its DIE. A unit with no ranges holds code only where its line table has rows; without a
 * line table either, indexing it tells.
 */
static int claim_from_dies(struct dwarf_index *di, struct claims *c)
{
	struct raw info = section_bytes(di->lz->elf, "info");
	struct raw abbrev = section_bytes(di->lz->elf, "abbrev");
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

		if (read_unit_die(&info, &abbrev, u, &tag, &lines, &has_pc)) {
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
static int claim_lines(struct dwarf_index *di, struct claims *c)
{
	struct raw sec = section_bytes(di->lz->elf, "line");
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
static int make_groups(struct dwarf_index *di, struct claims *c)
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
static int make_map(struct dwarf_index *di, const struct claims *c)
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

static bool sub_empty(const struct sub_index *s)
{
	return !s->nr_segs && !s->nr_lines;
}

/*
 * Is there any code the DWARF describes? Index groups, cheapest first, until one holds some: the
 * first usually does, and the next lookup may well fall in it.
 */
static int find_code(const struct dwarf_index *di)
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
		err = group_build(di, &lz->groups[best]);
		if (err)
			return err;
		if (!sub_empty(lz->groups[best].sub))
			return 0;
	}
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
	err = list_units(di, lz->dw);
	if (!err)
		err = claim_aranges(di, &c);
	if (!err)
		err = claim_from_dies(di, &c);
	if (!err)
		err = claim_lines(di, &c);
	if (!err)
		err = make_groups(di, &c);
	if (!err)
		err = make_map(di, &c);
	free(c.v);
	return err ? err : find_code(di);
}

/* All units as one group, indexed now: for a file the index cannot keep open. */
static int index_eagerly(struct dwarf_index *di)
{
	struct lazy *lz = di->lz;
	uint32_t u;
	int err;

	err = list_units(di, lz->dw);
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
	err = group_build(di, &lz->groups[0]);
	if (!err && sub_empty(lz->groups[0].sub))
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
		err = group_build(di, g);
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
