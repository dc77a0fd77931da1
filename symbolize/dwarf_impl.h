/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to symbolize/: what the parts of the DWARF index share (see dwarf_index.c for the
 * design). dwarf_index.c owns the index, its lazy groups and the lookups; dwarf_claims.c where
 * each unit's code is and the groups and address map made from that; dwarf_unitdie.c the unit
 * DIEs read straight from the section bytes; dwarf_scopes.c one group's sub-index (scopes and
 * the merged line table); dwarf_strings.c the interned names and files.
 */
#ifndef PERCH_DWARF_IMPL_H
#define PERCH_DWARF_IMPL_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/idxtab.h"
#include "lib/u64map.h"
#include "lib/vec.h"

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

/* Interned strings: strs[i], found by hash32(fnv64(string)) through map (lib/idxtab.h). */
struct strtab {
	const char **strs;
	size_t nr;
	size_t cap;
	struct idxtab map;
};

/* Strings of every group, interned once per module. The arena never moves a string. */
struct strings {
	struct strtab names;
	const char **name_dem; /* the demangled name, or names' when it is not mangled */
	size_t cap_dem;
	struct strtab files;
	struct u64map name_by_ptr; /* libdw's string pointer -> names index, while libdw is open */
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
	struct u64map pu_empty; /* a set: partial units (by DIE address) known to hold no code */
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
	struct u64map *pu_empty;
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

static inline int vec_reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	return vec_grow(pv, cap, need, elem, 16);
}

/* The bytes of a DWARF section as libdw reads them (decompressed); p is NULL when there are none. */
struct raw {
	const unsigned char *p;
	size_t size;
};

const char *dwidx_arena_dup(struct arena_chunk **head, const char *s);
int dwidx_strtab_intern(struct strings *str, struct strtab *t, const char *s, uint32_t *out,
			bool *added);
void dwidx_strings_free(struct strings *str);
int dwidx_index_cu(struct builder *b, Dwarf_Die *cudie);
int dwidx_build_segments(struct builder *b, struct sub_index *s);
int dwidx_build_lines(struct builder *b, struct sub_index *s, const uint64_t *starts,
		      size_t nr_starts);
void dwidx_builder_finish(struct builder *b, struct sub_index *s);
void dwidx_builder_init(struct builder *b, const struct dwarf_index *di);
void dwidx_builder_free(struct builder *b);
void dwidx_sub_free(struct sub_index *s);
int dwidx_group_build(const struct dwarf_index *di, struct group *g);
int dwidx_list_units(struct dwarf_index *di, Dwarf *dw);
int dwidx_claim_aranges(struct dwarf_index *di, struct claims *c);
struct raw dwidx_section_bytes(Elf *elf, const char *name);
bool dwidx_read_unit_die(const struct raw *info, const struct raw *abbrev, const struct unit *u,
			 unsigned int *tag, uint64_t *lines, bool *has_pc);
int dwidx_claim_from_dies(struct dwarf_index *di, struct claims *c);
int dwidx_claim_lines(struct dwarf_index *di, struct claims *c);
int dwidx_make_groups(struct dwarf_index *di, struct claims *c);
int dwidx_make_map(struct dwarf_index *di, const struct claims *c);
bool dwidx_sub_empty(const struct sub_index *s);
int dwidx_find_code(const struct dwarf_index *di);

#endif /* PERCH_DWARF_IMPL_H */
