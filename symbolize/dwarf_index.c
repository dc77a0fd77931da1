// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF index of one module (see dwarf_index.h). This part owns the flattened arrays and the
 * strings they name (function names raw and demangled, source file paths), copied out of libdw so
 * the Dwarf handle is closed as soon as the index is built.
 *
 * Scopes (DW_TAG_subprogram and DW_TAG_inlined_subroutine DIEs with code) nest: an inlined call's
 * ranges lie inside its caller's. Sorting every range by start address, outer before inner, and
 * sweeping them with a stack turns the nesting into a partition of the address space where each
 * segment names the innermost scope over it; the callers follow from parent links. The line tables
 * of all compile units are merged the way libdw orders one (by address, a sequence's end before
 * another's start at the same address, the last row at an address winning) and runs of rows with
 * the same file and line are folded.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "dwarf_index.h"

#define NO_IDX	      UINT32_MAX
#define MAX_DIE_DEPTH 256 /* deeper nesting than any compiler emits: a corrupt file */
#define ARENA_CHUNK   (64 * 1024)

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

struct dwarf_index {
	/* Segment i covers [seg_start[i], seg_start[i + 1]) and names seg_scope[i] (or NO_IDX). */
	uint64_t *seg_start;
	uint32_t *seg_scope;
	size_t nr_segs;
	/* Row i covers [line_addr[i], line_addr[i + 1]). */
	uint64_t *line_addr;
	struct line_info *line_info;
	size_t nr_lines;
	struct scope *scopes;
	const char **name_raw;
	const char **name_dem; /* the demangled name, or name_raw's when it is not mangled */
	const char **files;
	struct arena_chunk *arena;
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

struct builder {
	struct dwarf_index *di;
	const char *path;
	uint64_t text_lo;
	uint64_t text_hi;
	struct range *ranges;
	size_t nr_ranges, cap_ranges;
	struct row *rows;
	size_t nr_rows, cap_rows;
	struct scope *scopes;
	size_t nr_scopes, cap_scopes;
	struct strtab names;
	const char **name_dem;
	size_t cap_dem;
	struct strtab files;
	struct hmap name_by_ptr; /* libdw's string pointer -> names index: most lookups stop here */
	/* The compile unit being indexed. */
	Dwarf_Files *cu_files;
	size_t cu_nfiles;
	uint32_t *cu_map; /* its file index -> files index, NO_IDX until first used */
	size_t cap_cu_map;
	char *path_buf; /* scratch for joining paths */
	size_t cap_path_buf;
	const char *cu_comp_dir; /* DW_AT_comp_dir, or NULL */
	unsigned int cu_version;
	bool cu_is_c; /* C has no functions inside types: their members need no walk */
};

static int vec_reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	void **v = pv;
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = reallocarray(*v, n, elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
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

/* Index of s in t, copying it into the arena the first time; *added says it was new. */
static int strtab_intern(struct builder *b, struct strtab *t, const char *s, uint32_t *out,
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
	copy = arena_dup(&b->di->arena, s);
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

/* A file of the line program as an index into files (NO_IDX when it names none). */
static int file_index(struct builder *b, Dwarf_Files *files, size_t idx, uint32_t *out)
{
	bool cacheable = files == b->cu_files && idx < b->cu_nfiles, added;
	const char *name;
	int err;

	*out = NO_IDX;
	if (cacheable && b->cu_map[idx] != NO_IDX) {
		*out = b->cu_map[idx];
		return 0;
	}
	/* Before DWARF 5, file 0 means "no file". */
	if (idx == 0 && b->cu_version < 5)
		return 0;
	name = dwarf_filesrc(files, idx, NULL, NULL);
	if (!name)
		return 0;
	/* A relative name is relative to the compilation directory: show it joined, as addr2line,
	 * eu-addr2line and llvm-symbolizer do. */
	if (name[0] != '/' && b->cu_comp_dir && b->cu_comp_dir[0]) {
		size_t a = strlen(b->cu_comp_dir), n = strlen(name);

		err = vec_reserve(&b->path_buf, &b->cap_path_buf, a + n + 2, 1);
		if (err)
			return err;
		memcpy(b->path_buf, b->cu_comp_dir, a);
		b->path_buf[a] = '/';
		memcpy(b->path_buf + a + 1, name, n + 1);
		name = b->path_buf;
	}
	err = strtab_intern(b, &b->files, name, out, &added);
	if (err)
		return err;
	if (cacheable)
		b->cu_map[idx] = *out;
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
	const char *raw = die_raw_name(die), *dem;
	char *demangled;
	bool added;
	int err;

	*out = NO_IDX;
	if (!raw)
		return 0;
	/* Names come from one string table: the same pointer is the same name, without hashing. */
	*out = hmap_get(&b->name_by_ptr, (uint64_t)(uintptr_t)raw, NULL, NULL);
	if (*out != NO_IDX)
		return 0;
	err = strtab_intern(b, &b->names, raw, out, &added);
	if (!err)
		err = hmap_put(&b->name_by_ptr, (uint64_t)(uintptr_t)raw, *out);
	if (err || !added)
		return err;
	err = vec_reserve(&b->name_dem, &b->cap_dem, b->names.nr, sizeof(*b->name_dem));
	if (err)
		return err;
	dem = b->names.strs[*out];
	demangled = demangle__name(raw);
	if (demangled) {
		dem = arena_dup(&b->di->arena, demangled);
		free(demangled);
		if (!dem)
			return -ENOMEM;
	}
	b->name_dem[*out] = dem;
	return 0;
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
		    b->cu_files) {
			err = file_index(b, b->cu_files, w, &sc->call_file);
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

/*
 * The children of die that may hold code: functions, inlined calls, and what can contain them
 * (blocks, namespaces, and in C++ the types whose member functions are defined inside them).
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
			if (!b->cu_is_c)
				err = walk(b, &child, parent, depth, level + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
			err = walk(b, &child, parent, depth, level + 1);
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

static int index_cu(struct builder *b, Dwarf_Die *cudie, unsigned int version)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	Dwarf_Attribute a;
	size_t nlines, nfiles, i;
	int err;

	b->cu_comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
	b->cu_version = version;
	b->cu_files = NULL;
	b->cu_nfiles = 0;
	b->cu_is_c = lang_is_c(dwarf_srclang(cudie));
	/* Lines first: libdw then builds the file table with the lines (relative directories
	 * joined with DW_AT_comp_dir), and dwarf_getsrcfiles() returns that same table. */
	if (dwarf_getsrclines(cudie, &lines, &nlines) != 0)
		nlines = 0;
	if (dwarf_getsrcfiles(cudie, &files, &nfiles) == 0) {
		err = vec_reserve(&b->cu_map, &b->cap_cu_map, nfiles, sizeof(*b->cu_map));
		if (err)
			return err;
		for (i = 0; i < nfiles; i++)
			b->cu_map[i] = NO_IDX;
		b->cu_files = files;
		b->cu_nfiles = nfiles;
	}
	if (nlines) {
		err = add_lines(b, lines, nlines);
		if (err)
			return err;
	}
	return walk(b, cudie, NO_IDX, 0, 0);
}

static int index_units(struct builder *b, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	Dwarf_Half version;
	size_t hsize;
	int r, err;

	while ((r = dwarf_next_unit(dw, off, &next, &hsize, &version, NULL, NULL, NULL, NULL,
				    NULL)) == 0) {
		Dwarf_Die cudie;

		/* Type units and split-DWARF skeletons hold no code we can index here. */
		if (dwarf_offdie(dw, off + hsize, &cudie) &&
		    dwarf_tag(&cudie) == DW_TAG_compile_unit) {
			err = index_cu(b, &cudie, version);
			if (err)
				return err;
		}
		off = next;
	}
	if (r < 0) {
		/* Keep the units read before the damage: a partial index beats none. */
		fprintf(stderr, "symbolize: %s: read DWARF unit: %s\n", b->path, dwarf_errmsg(-1));
	}
	return 0;
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
static void emit_seg(struct dwarf_index *di, uint64_t addr, uint32_t scope)
{
	size_t n = di->nr_segs;

	if (n && di->seg_start[n - 1] == addr) {
		di->seg_scope[n - 1] = scope;
		if (n > 1 && di->seg_scope[n - 2] == scope)
			di->nr_segs--;
		return;
	}
	if (n && di->seg_scope[n - 1] == scope)
		return;
	di->seg_start[n] = addr;
	di->seg_scope[n] = scope;
	di->nr_segs++;
}

/*
 * Sweep the ranges in (start, outer first) order with a stack of the open ones: every start and
 * every end changes which scope is innermost. A range that runs past the one it is nested in
 * (bad DWARF) is cut at its end, so the stack's ends never increase going up.
 */
static int build_segments(struct builder *b)
{
	struct dwarf_index *di = b->di;
	struct range *stack = NULL;
	size_t i, sp = 0, cap = 0;
	int err = 0;

	if (!b->nr_ranges)
		return 0;
	qsort(b->ranges, b->nr_ranges, sizeof(*b->ranges), range_cmp);
	/* Each range starts one segment and ends at most one. */
	di->seg_start = calloc(2 * b->nr_ranges, sizeof(*di->seg_start));
	di->seg_scope = calloc(2 * b->nr_ranges, sizeof(*di->seg_scope));
	if (!di->seg_start || !di->seg_scope)
		return -ENOMEM;
	for (i = 0; i < b->nr_ranges; i++) {
		struct range r = b->ranges[i];

		while (sp && stack[sp - 1].hi <= r.lo) {
			sp--;
			emit_seg(di, stack[sp].hi, sp ? stack[sp - 1].scope : NO_IDX);
		}
		if (sp && r.hi > stack[sp - 1].hi)
			r.hi = stack[sp - 1].hi;
		err = vec_reserve(&stack, &cap, sp + 1, sizeof(*stack));
		if (err)
			goto cleanup;
		stack[sp++] = r;
		emit_seg(di, r.lo, r.scope);
	}
	while (sp) {
		sp--;
		emit_seg(di, stack[sp].hi, sp ? stack[sp - 1].scope : NO_IDX);
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

/* Like emit_seg(): the last row at an address wins; a row repeating the one before is dropped. */
static void emit_row(struct dwarf_index *di, const struct row *r)
{
	struct line_info li = {.file = r->end ? NO_IDX : r->file, .line = r->end ? 0 : r->line};
	size_t n = di->nr_lines;

	if (li.file == NO_IDX)
		li.line = 0;
	if (n && di->line_addr[n - 1] == r->addr) {
		di->line_info[n - 1] = li;
		if (n > 1 && same_line(&di->line_info[n - 2], &li))
			di->nr_lines--;
		return;
	}
	if (n && same_line(&di->line_info[n - 1], &li))
		return;
	di->line_addr[n] = r->addr;
	di->line_info[n] = li;
	di->nr_lines++;
}

static int build_lines(struct builder *b)
{
	struct dwarf_index *di = b->di;
	size_t i;

	if (!b->nr_rows)
		return 0;
	qsort(b->rows, b->nr_rows, sizeof(*b->rows), row_cmp);
	di->line_addr = calloc(b->nr_rows, sizeof(*di->line_addr));
	di->line_info = calloc(b->nr_rows, sizeof(*di->line_info));
	if (!di->line_addr || !di->line_info)
		return -ENOMEM;
	for (i = 0; i < b->nr_rows; i++)
		emit_row(di, &b->rows[i]);
	return 0;
}

/* Hand the builder's arrays to the index, trimmed to size. */
static void builder_finish(struct builder *b)
{
	struct dwarf_index *di = b->di;
	void *p;

	di->scopes = b->scopes;
	b->scopes = NULL;
	di->name_raw = b->names.strs;
	b->names.strs = NULL;
	di->name_dem = b->name_dem;
	b->name_dem = NULL;
	di->files = b->files.strs;
	b->files.strs = NULL;
	if (di->nr_segs && (p = reallocarray(di->seg_start, di->nr_segs, sizeof(uint64_t))))
		di->seg_start = p;
	if (di->nr_segs && (p = reallocarray(di->seg_scope, di->nr_segs, sizeof(uint32_t))))
		di->seg_scope = p;
	if (di->nr_lines && (p = reallocarray(di->line_addr, di->nr_lines, sizeof(uint64_t))))
		di->line_addr = p;
	if (di->nr_lines &&
	    (p = reallocarray(di->line_info, di->nr_lines, sizeof(struct line_info))))
		di->line_info = p;
}

static void builder_free(struct builder *b)
{
	free(b->ranges);
	free(b->rows);
	free(b->scopes);
	strtab_free(&b->names);
	free(b->name_dem);
	strtab_free(&b->files);
	hmap_free(&b->name_by_ptr);
	free(b->cu_map);
	free(b->path_buf);
}

void dwarf_index__free(struct dwarf_index *di)
{
	struct arena_chunk *c, *next;

	if (!di)
		return;
	free(di->seg_start);
	free(di->seg_scope);
	free(di->line_addr);
	free(di->line_info);
	free(di->scopes);
	free(di->name_raw);
	free(di->name_dem);
	free(di->files);
	for (c = di->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(di);
}

struct dwarf_index *dwarf_index__build(Elf *elf, const char *path, uint64_t text_lo,
				       uint64_t text_hi)
{
	struct builder b = {.path = path, .text_lo = text_lo, .text_hi = text_hi};
	Dwarf *dw;
	int err;

	dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw) {
		errno = ENODATA; /* no .debug_info, or one libdw will not read */
		return NULL;
	}
	b.di = calloc(1, sizeof(*b.di));
	if (!b.di) {
		err = -ENOMEM;
		goto err_out;
	}
	err = index_units(&b, dw);
	if (!err)
		err = build_segments(&b);
	if (!err)
		err = build_lines(&b);
	if (err)
		goto err_out;
	if (!b.di->nr_segs && !b.di->nr_lines) {
		err = -ENODATA;
		goto err_out;
	}
	builder_finish(&b);
	builder_free(&b);
	dwarf_end(dw);
	return b.di;
err_out:
	builder_free(&b);
	dwarf_index__free(b.di);
	dwarf_end(dw);
	errno = -err;
	return NULL;
}

/* Index of the last of a[0..n) that is <= key, or n when none is. */
static size_t last_at_or_below(const uint64_t *a, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

void dwarf_index__line(const struct dwarf_index *di, uint64_t vaddr, const char **file,
		       unsigned int *line)
{
	size_t i = last_at_or_below(di->line_addr, di->nr_lines, vaddr);

	*file = NULL;
	*line = 0;
	if (i == di->nr_lines || di->line_info[i].file == NO_IDX)
		return;
	*file = di->files[di->line_info[i].file];
	*line = di->line_info[i].line;
}

int dwarf_index__frames(const struct dwarf_index *di, uint64_t vaddr, bool demangle,
			struct sym_frame *frames, size_t max, size_t *n)
{
	size_t i = last_at_or_below(di->seg_start, di->nr_segs, vaddr), k = 0;
	const char *file;
	unsigned int line;
	uint32_t sc;

	*n = 0;
	if (i == di->nr_segs || di->seg_scope[i] == NO_IDX)
		return 0;
	sc = di->seg_scope[i];
	dwarf_index__line(di, vaddr, &file, &line);
	for (;;) {
		const struct scope *s = &di->scopes[sc];

		if (k == max) {
			*n = k;
			return -ENOSPC;
		}
		frames[k].function = NULL;
		if (s->name != NO_IDX)
			frames[k].function =
				demangle ? di->name_dem[s->name] : di->name_raw[s->name];
		frames[k].file = file;
		frames[k].line = file ? line : 0;
		frames[k].inlined = s->parent != NO_IDX;
		k++;
		if (s->parent == NO_IDX)
			break;
		/* The caller's frame is at the call site: where this scope was inlined. */
		file = s->call_file == NO_IDX ? NULL : di->files[s->call_file];
		line = s->call_line;
		sc = s->parent; /* parents are created before their children: no cycles */
	}
	*n = k;
	return 0;
}
