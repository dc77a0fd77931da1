/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a module's DWARF is: in the module itself, or in a separate debug file found the way
 * Debian installs them (-dbg and -dbgsym packages) and GDB looks for them. Internal to
 * symbolize/.
 */
#ifndef PERCH_DEBUGINFO_H
#define PERCH_DEBUGINFO_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the search needs to know about the module. */
struct debuginfo_query {
	Elf *elf;		 /* the module; its .gnu_debuglink is read from here */
	int fd;			 /* the module's open file: never taken for its own debug file */
	const uint8_t *build_id; /* NT_GNU_BUILD_ID, or NULL */
	size_t build_id_len;
	const char *const *dirs; /* directories the module was seen in, NULL-terminated */
	const char *root;	 /* the global debug directory, normally /usr/lib/debug */
};

/* The section of elf called name that has contents (sh: its header), or NULL. */
Elf_Scn *debuginfo__section(Elf *elf, const char *name, GElf_Shdr *sh);

/* Whether elf carries DWARF itself: a .debug_info section with contents. */
bool debuginfo__has_dwarf(Elf *elf);

/*
 * Open the separate debug file of the module. Tried in order: ROOT/.build-id/xx/rest.debug
 * (its build-id must match), then the .gnu_debuglink name in each of DIR, DIR/.debug and
 * ROOT/DIR (its CRC must match). Returns an open fd and sets *path (malloc'd, the caller frees
 * it), or -ENOENT when none is found, -ENOMEM.
 */
int debuginfo__open(const struct debuginfo_query *q, char **path);

#endif /* PERCH_DEBUGINFO_H */
