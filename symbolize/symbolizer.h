/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space symbolization: file offset inside an ELF module -> function name, and with DWARF the
 * source file, line and chain of inlined calls.
 *
 * One index per module, built once with libelf from .symtab (or .dynsym when the binary is
 * stripped) and searched by binary search. Modules are cached by the (device, inode) the caller
 * saw in /proc/PID/maps, so processes that map the same library share one index and a cache hit
 * opens no file. The DWARF index (functions, inlined calls, line table) is built with libdw on the
 * first sym_module__resolve_inline() of a module, from the module itself or its separate debug
 * file, and is searched the same way.
 *
 * As libdwfl's dwfl_addrmodule() -> Dwfl_Module *: symbolizer__module() finds (or loads) the
 * module once and hands back a struct sym_module, and every query takes that handle, so a caller
 * that asks several things of one mapping looks the module up once.
 */
#ifndef PERCH_SYMBOLIZER_H
#define PERCH_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The rules that name a function (which alias, symbol versions, inferred bounds), as a string.
 * Names resolved once are kept across runs (record/linecache.c files them under it): raise it
 * whenever a rule changes, or a cache filled under the old rules keeps giving the old names.
 * 2: no symbol versions (2026-11-28).
 */
#define SYMBOLIZER_NAMING "2"

struct symbolizer;

struct sym_result {
	const char *name;   /* function name, or NULL when none covers the address; owned by the
			     * symbolizer, valid until symbolizer__free() */
	uint64_t vaddr;	    /* the address as an ELF virtual address of the module */
	uint64_t sym_start; /* ELF virtual address where the function starts (0 when name==NULL) */
	uint64_t sym_file_offset; /* file offset of the function's first byte (0 when name==NULL) */
	bool inferred; /* no symbol covers it: name is "MODULE+0xSTART?", the function bounds of the
			* .eh_frame FDE that covers it (symbolizer__set_infer_bounds()) */
};

/* Identity of a module as a mapping shows it. inode == 0 (no inode known): keyed by path. */
struct sym_module_id {
	uint64_t dev; /* makedev(major, minor) */
	uint64_t inode;
	const char *path; /* the path the process mapped; borrowed for the call */
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/* One module of a symbolizer: borrowed, valid until symbolizer__free(). */
struct sym_module;

/*
 * The module id names, loaded the first time it is seen, in *out. open_path is what the profiler
 * can open (for a live process /proc/PID/map_files/START-END or /proc/PID/root/PATH); it is only
 * used the first time the module is seen (NULL: only a module already cached is found). A module
 * without .symtab is named from the .symtab of its separate debug file when one is found
 * (build-id or .gnu_debuglink, as for DWARF), read once without its DWARF. Failures are cached
 * with the module: a module that cannot be read is tried once. Returns 0; -ENOENT when the file
 * cannot be opened, -ENOEXEC when it is not an ELF file we can read, -ENOMEM, -EINVAL.
 */
int symbolizer__module(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		       struct sym_module **out);

/*
 * Resolve file_offset (address - mapping start + mapping page offset) inside the module.
 * Returns 0 (out->name may still be NULL: no symbol covers it), -EINVAL.
 */
int sym_module__resolve(struct sym_module *m, uint64_t file_offset, struct sym_result *out);

/* Read len bytes at file_offset of the module (used to inspect function prologues and call
 * sites). Returns 0, or -errno (-ERANGE when the file ends before len bytes). */
int sym_module__read(struct sym_module *m, uint64_t file_offset, void *buf, size_t len);

/* One frame of an inline chain. Strings are owned by the symbolizer, valid until
 * symbolizer__free(). */
struct sym_frame {
	const char *function; /* NULL when nothing names it */
	const char *file;     /* source file, NULL when no line information covers it */
	unsigned int line;    /* 0 when file is NULL */
	bool inlined;	      /* this frame's code was inlined into frames[i + 1] */
};

/*
 * Resolve file_offset (as for sym_module__resolve()) to the chain of functions at that address:
 * frames[0] is the innermost, the inlined function the address is in, with the file:line of the
 * address; each next frame is the function it was inlined into, with the file:line of the call
 * site (DW_AT_call_file/DW_AT_call_line); the last is the out-of-line function (inlined false).
 * The order and content of `addr2line -f -i`. Without DWARF for the address: one frame named from
 * the symbol table (file from the line table if one covers it, else NULL and line 0). *n = 0 when
 * nothing names the address. The first call for a module builds its DWARF index.
 * Returns 0; -ENOSPC when the chain is longer than max (the innermost max frames are written and
 * *n = max); -EINVAL.
 */
int sym_module__resolve_inline(struct sym_module *m, uint64_t file_offset, struct sym_frame *frames,
			       size_t max, size_t *n);

/*
 * The module's GNU build-id (NT_GNU_BUILD_ID) as lowercase hex in *hex, owned by the symbolizer.
 * Returns 0, -ENODATA when the module has none, -EINVAL.
 */
int sym_module__build_id(struct sym_module *m, const char **hex);

/*
 * The file the module's DWARF was read from in *path (the path the module was first seen under,
 * or the separate debug file), owned by the symbolizer; builds the DWARF index if not yet built.
 * Returns 0, -ENODATA when no DWARF was found, -EINVAL.
 */
int sym_module__debug_path(struct sym_module *m, const char **path);

/*
 * The file offset of an ELF virtual address of the module (what addr2line and nm show; for a PIE
 * or shared object the link-time address), through its PT_LOAD segments. Returns 0; -ERANGE when
 * no segment holds file bytes at vaddr; -EINVAL.
 */
int sym_module__vaddr_to_offset(struct sym_module *m, uint64_t vaddr, uint64_t *off);

/*
 * The source file the symbol table ties the function at file_offset to, in *file (owned by the
 * symbolizer; NULL when none): the name of the STT_FILE entry it follows, for local symbols and
 * for global ones of a table with a single file, as GNU addr2line reports it where no line table
 * covers an address. Returns 0, -EINVAL.
 */
int sym_module__symbol_file(struct sym_module *m, uint64_t file_offset, const char **file);

/*
 * The DWARF line-table discriminator of the row covering file_offset in *disc (0 when there is
 * none, or no DWARF), as addr2line prints it. The first call for a module reads the discriminators
 * of its .debug_line (the DWARF index keeps none); later calls are two binary searches. Returns 0,
 * -EINVAL.
 */
int sym_module__discriminator(struct sym_module *m, uint64_t file_offset, unsigned int *disc);

/* Show C++ names demangled (the default) or as the linker sees them. Takes effect at once, for
 * every module. */
void symbolizer__set_demangle(struct symbolizer *s, bool demangle);

/*
 * How many modules had a .gnu_debugdata section (MiniDebugInfo: an xz-compressed ELF file whose
 * .symtab names the functions .dynsym leaves out, read for code no other table of the module
 * names) that could not be read: not xz, truncated, or not an ELF file inside. Such a section is
 * ignored, with one log line.
 */
size_t symbolizer__bad_minidebug(const struct symbolizer *s);

/*
 * Prefer the public alias, as perf does (on by default): where DWARF names an out-of-line function
 * by a local alias of the global symbol at its address (glibc's __GI___libc_malloc, from a
 * hidden_def), sym_module__resolve_inline() names it after that symbol (malloc). Off: the DWARF
 * name, as addr2line prints it. Takes effect at once, for every module.
 */
void symbolizer__set_public_names(struct symbolizer *s, bool on);

/*
 * Name code that no symbol covers after the .eh_frame FDE that covers it (on by default): one
 * function "MODULE+0xSTART?" per FDE (START its first byte's file offset, "?" marking the name as
 * inferred), so a stripped binary's internal functions group into one row each, for both
 * sym_module__resolve() and sym_module__resolve_inline(). Off: such code stays unnamed, as
 * addr2line leaves it. Takes effect at once, for every module.
 */
void symbolizer__set_infer_bounds(struct symbolizer *s, bool on);

/*
 * Read each module's discriminators in a thread of their own while its DWARF index is built (for
 * modules indexed after this call), for a caller that will ask sym_module__discriminator() of most
 * modules, as `perch symbolize` does. Off by default: then they are read on first use.
 */
void symbolizer__prefetch_discriminators(struct symbolizer *s, bool on);

/*
 * The global debug directory for separate debug files (default /usr/lib/debug): ROOT/.build-id/
 * and ROOT/<directory of the module>/ are searched. Applies to modules whose DWARF index is not
 * built yet. Returns 0, -EINVAL, -ENOMEM.
 */
int symbolizer__set_debug_root(struct symbolizer *s, const char *root);

/*
 * Where to keep decompressed copies of separate debug files whose DWARF is compressed (see
 * debugcache.h); NULL (the default): none, such files are inflated in memory each time. The
 * directory must exist. Returns 0, -EINVAL, -ENOMEM.
 */
int symbolizer__set_debug_cache(struct symbolizer *s, const char *dir);

#endif /* PERCH_SYMBOLIZER_H */
