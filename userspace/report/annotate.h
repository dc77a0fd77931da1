/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside `perch annotate` (report/ only): the samples that have no source line, by module and
 * file offset, and their disassembly view (report/annotate_asm.c).
 */
#ifndef PERCH_REPORT_ANNOTATE_H
#define PERCH_REPORT_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct annot_pc {
	const char *module; /* path, as the frames name it; valid while the recording lives */
	const char *symbol; /* the frame's symbol, as the module's symbol table spells it */
	uint64_t offset;    /* file offset of the sampled instruction */
	uint64_t count;
};

/* The function of each module pcs name (its symbol: the pcs' symbol), disassembled from the
 * module file (bounds from its symbol table) with the samples of each instruction; all: the function's self samples, for
 * percentages. 0, or -ENODATA when no module's code could be read (logged). */
int annotate_asm(const char *name, const struct annot_pc *pcs, size_t n, uint64_t all, FILE *out);

/* report/annotate_src.c: whose rights a source file is opened with: the owner (and its group in
 * *gid) of the binaries modules[0..n) when they are regular files of one owner, reached from "/"
 * through no symlink; else nobody (65534). */
uid_t annotate_src_owner(const char *const *modules, size_t n, gid_t *gid);
/* The source file at path (a name from the target's debug info) for reading: a regular file
 * reached without a symlink as its last component, opened without blocking and with the file
 * system checks of uid and gid. NULL with *why, a few words saying why it is not shown. */
FILE *annotate_src_open(const char *path, uid_t uid, gid_t gid, const char **why);

#endif /* PERCH_REPORT_ANNOTATE_H */
