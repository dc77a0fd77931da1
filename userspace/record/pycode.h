/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython code objects read from a live process: a code object's qualified name, file, first
 * line and line table, each read once per (address, tag) and kept for the recording (at most
 * PYCODE_PROC_BUDGET bytes of them per process). Everything read comes from the profiled process:
 * its type is checked against the interpreter's PyCode_Type, every length is bounded, strings
 * are decoded from the interpreter's compact unicode objects (PEP 393) to UTF-8.
 *
 * The tag: the 8 bytes at code_qualname (the co_qualname pointer) as the sampler read them at
 * the tick (bpf/python.bpf.h). A code object freed and its memory given to another code object
 * by the time perch reads it has another co_qualname (or another type): it is not named as the
 * new one.
 */
#ifndef PERCH_RECORD_PYCODE_H
#define PERCH_RECORD_PYCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PYCODE_NAME_MAX	   1024	       /* characters of a qualified name kept */
#define PYCODE_PATH_MAX	   4096	       /* characters of a file name kept */
#define PYCODE_TABLE_MAX   65536       /* bytes of a line table read */
#define PYCODE_PROC_BUDGET (64u << 20) /* bytes of names and tables kept per process */

/* The offsets naming a code object needs, of one CPython version (python_find.c). */
struct py_layout {
	uint32_t version_hex; /* PY_VERSION_HEX */
	uint32_t code_filename, code_name, code_qualname, code_firstlineno, code_linetable,
		code_adaptive;			/* PyCodeObject */
	uint32_t unicode_length, unicode_state; /* PyASCIIObject */
	uint32_t ascii_size, compact_size;	/* sizeof PyASCIIObject, PyCompactUnicodeObject */
	uint32_t bytes_size, bytes_sval;	/* PyBytesObject: ob_size, ob_sval */
	uint64_t code_type; /* PyCode_Type in the process: a code object's ob_type; 0: unchecked */
};

struct py_code {
	char *qualname, *filename; /* UTF-8, NUL-terminated */
	int firstlineno;
	uint8_t *linetable;
	size_t nlinetable;
};

/* 3.11 and 3.12's offsets (derived from their headers: python_find.c); -ENOTSUP for another. */
int py_layout_for(uint32_t version_hex, struct py_layout *out);

struct pycode_cache;
/* Code objects of process pid, laid out as l says (copied). NULL + errno. */
struct pycode_cache *pycode_cache__new(pid_t pid, const struct py_layout *l);
void pycode_cache__free(struct pycode_cache *c);
/* The code object at addr with tag; NULL + errno when it cannot be read (EIO, or the process is
 * gone: ESRCH), is not a code object or has another tag (ESTALE), or the process's budget is
 * spent (ENOSPC). A failure is kept too: asked again, the same answer without a read. */
const struct py_code *pycode_cache__get(struct pycode_cache *c, uint64_t addr, uint64_t tag);
/* The line of code unit `unit` of code (symbolize/pyline.h); -1 when none. */
int pycode_line(const struct py_code *code, uint32_t unit);

#endif /* PERCH_RECORD_PYCODE_H */
