/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A module's file, for the parts that look inside it for something of their own (the region
 * runtime's registry, CPython's interpreter): opened as the process sees it, and its loadable
 * segments, to place a file address in the process through one of its mappings.
 */
#ifndef PERCH_RECORD_MODFILE_H
#define PERCH_RECORD_MODFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <libelf.h>
#include "proc.h"

#define MODFILE_LOADS 8

struct modfile_loads {
	uint32_t n;
	struct {
		uint64_t vaddr, offset, filesz;
	} load[MODFILE_LOADS];
};

/* scan(ctx, e) on the ELF file of mapping m of pid: through /proc/PID/map_files (the process's
 * own file, whatever its mount namespace), then through m's path when that found nothing (scan
 * returns whether it found what it looks for). */
void modfile_scan(uint32_t pid, const struct proc_map *m, bool (*scan)(void *ctx, Elf *e),
		  void *ctx);

/* The file's PT_LOAD segments (the first MODFILE_LOADS). */
void modfile_loads(Elf *e, struct modfile_loads *out);

/* The process address of file address vaddr, through the file's mapping m; false when no
 * segment holds m's offset. */
bool modfile_place(const struct modfile_loads *l, const struct proc_map *m, uint64_t vaddr,
		   uint64_t *addr);

#endif /* PERCH_RECORD_MODFILE_H */
