/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space symbolization: file offset inside an ELF module -> function name.
 *
 * One index per module, built once with libelf from .symtab (or .dynsym when the binary is
 * stripped) and searched by binary search. Modules are cached by the (device, inode) the caller
 * saw in /proc/PID/maps, so processes that map the same library share one index and a cache hit
 * opens no file.
 */
#ifndef PERCH_SYMBOLIZER_H
#define PERCH_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;

struct sym_result {
	const char *name;   /* function name, or NULL when none covers the address; owned by the
			     * symbolizer, valid until symbolizer__free() */
	uint64_t vaddr;	    /* the address as an ELF virtual address of the module */
	uint64_t sym_start; /* ELF virtual address where the function starts (0 when name==NULL) */
	uint64_t sym_file_offset; /* file offset of the function's first byte (0 when name==NULL) */
};

/* Identity of a module as a mapping shows it. inode == 0 (no inode known): keyed by path. */
struct sym_module_id {
	uint64_t dev; /* makedev(major, minor) */
	uint64_t inode;
	const char *path; /* the path the process mapped; borrowed for the call */
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *s);

/*
 * Resolve file_offset (address - mapping start + mapping page offset) inside the module that
 * open_path names. open_path is what the profiler can open (for a live process
 * /proc/PID/map_files/START-END or /proc/PID/root/PATH); it is only used the first time the
 * module is seen. Returns 0 (out->name may still be NULL: no symbol covers it), -ENOENT when the
 * file cannot be opened, -ENOEXEC when it is not an ELF file we can read.
 */
int symbolizer__resolve(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
			uint64_t file_offset, struct sym_result *out);

/* Read len bytes at file_offset of the module (used to inspect function prologues and call
 * sites). Returns 0, or -errno. */
int symbolizer__read(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		     uint64_t file_offset, void *buf, size_t len);

#endif /* PERCH_SYMBOLIZER_H */
