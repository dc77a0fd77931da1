/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to symbolize/: one module of the symbolizer (struct sym_module, the handle
 * symbolizer.h hands out) as its parts see it. symbolizer.c owns the module cache and the
 * queries; elfsyms.c fills a module's ELF symbol index (functions, PT_LOAD segments, build-id);
 * linediscs.c reads its line-table discriminators; fdesyms.c its function bounds from .eh_frame;
 * minidebug.c the symbols of its .gnu_debugdata.
 */
#ifndef PERCH_SYMBOLIZE_MODULE_H
#define PERCH_SYMBOLIZE_MODULE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "linediscs.h"

struct symbolizer;
struct dwarf_index;

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_DIRS	   2
#define NO_SRC		   UINT32_MAX

struct func_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
	uint32_t src; /* index into the module's srcs (its STT_FILE name), or NO_SRC */
};

/* A local name of a global function at the same address (see elfsyms.c's hidden_alias()). */
struct sym_alias {
	uint64_t start;
	const char *name;
};

struct load_seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct sym_module {
	struct symbolizer *s; /* the symbolizer it belongs to (NULL for debug_syms) */
	uint64_t dev;
	uint64_t inode;
	char *path; /* the key when inode == 0, else NULL */
	char *name; /* the path it was first seen under: where its own DWARF is said to come from */
	int err;    /* cached failure (-ENOENT, -ENOEXEC), or 0 */
	int fd;
	struct func_sym *syms; /* sorted by start, no two with the same start */
	size_t nr_syms;
	struct load_seg *segs;
	size_t nr_segs;
	struct sym_alias *aliases; /* sorted by start */
	size_t nr_aliases;
	char *names;	  /* one arena holding every name in syms and aliases */
	uint64_t text_lo; /* executable segments span [text_lo, text_hi] */
	uint64_t text_hi;
	uint8_t *build_id;
	size_t build_id_len;
	char *build_id_hex;
	char *dirs[MAX_DIRS + 1]; /* where the module was seen, for .gnu_debuglink; NULL-ended */
	bool dwarf_tried;
	struct dwarf_index *dwarf; /* NULL when no DWARF was found */
	char *debug_path;	   /* the file the DWARF index was built from */
	const char **sym_dem;	   /* demangled names of syms, built on first use */
	bool has_symtab;	   /* .symtab, not only .dynsym */
	/* The .symtab of the separate debug file when the module has none (distributions move it
	 * there): a module of its own so find_sym() and sym_name() serve both. */
	struct sym_module *debug_syms;
	bool debug_syms_tried; /* the debug file was looked for (by either path) */
	const char **srcs;     /* STT_FILE names that symbols refer to */
	size_t nr_srcs;
	char *src_names;	  /* one arena holding every name in srcs */
	struct line_discs *discs; /* line-table discriminators, read on first use */
	bool discs_tried;
	struct disc_job *disc_job; /* their read running beside the DWARF index build */
	bool dwarf_separate;	   /* the DWARF index came from a separate debug file */
	/* Function bounds from .eh_frame for code no symbol covers, named MODULE+0xSTART? (fdesyms.c),
	 * read on the first address no table names. */
	struct sym_module *fde_syms;
	bool fde_tried;
	/* The .symtab of its .gnu_debugdata (MiniDebugInfo, minidebug.c), read on the first address
	 * the module's own tables leave unnamed. */
	struct sym_module *mini_syms;
	bool mini_tried;
};

/* Index the ELF file at fd (path: for log lines) into m: PT_LOAD segments, function symbols,
 * build-id. 0, -ENOEXEC, -ENOMEM. */
int elfsyms_load(struct sym_module *m, int fd, const char *path);

/* The function symbols of elf (.symtab and .dynsym) into m. 0, -ENOEXEC, -ENOMEM. */
int elfsyms_index_symbols(struct sym_module *m, Elf *elf, const char *path);

/* The FDEs of elf's .eh_frame (the ELF file of m; base: m's base name) as symbols of d, each
 * named base+0xSTART? once fdesyms_name() has named it. 0 (d->nr_syms may be 0: no .eh_frame),
 * -ENOMEM. */
int fdesyms_load(struct sym_module *m, Elf *elf, const char *base, struct sym_module *d);

/* Write the name of f, a symbol of d (m's fde_syms), on its first lookup. */
void fdesyms_name(struct sym_module *m, struct sym_module *d, const struct func_sym *f);

/* The function symbols of the xz-compressed ELF file in elf's .gnu_debugdata into d (path: for
 * log lines). 0 (d->nr_syms is 0 when there is no such section), -EBADMSG (corrupt: logged),
 * -EFBIG, -ENOMEM. */
int minidebug_load(Elf *elf, const char *path, struct sym_module *d);

#endif /* PERCH_SYMBOLIZE_MODULE_H */
