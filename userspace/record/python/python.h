/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython in the profiled processes: which process runs an interpreter, of which version, and
 * where; told to the sampler (its py_procs map: the BPF walk of the Python frames, perch_bpf.h)
 * and asked by the collector, which names the walked frames and splices them into the native
 * stack where the interpreter's loop ran them.
 *
 * Versions 3.11 and 3.12 by offsets derived from their headers (python_find.c says how), 3.13
 * and later from the _Py_DebugOffsets the interpreter publishes at the start of _PyRuntime. A
 * free-threaded build is not walked: counted and named in the report.
 */
#ifndef PERCH_RECORD_PYTHON_H
#define PERCH_RECORD_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include "record/procs.h"

struct python;

enum python_stat {
	PYTHON_PROCS = 0,	/* processes with an interpreter perch walks */
	PYTHON_UNSUPPORTED,	/* ...with one it does not (version, free-threaded build) */
	PYTHON_FRAMES_UNNAMED,	/* Python frames whose code object could not be read or was gone */
	PYTHON_FRAMES_UNPLACED, /* Python frames with no interpreter loop activation left in the
				 * native stack to stand in (kept at its root end) */
	PYTHON_SAMPLES_LOST,	/* samples of Python threads whose Python frames are missing or cut
				 * (unreadable, too deep, not kept) */
	PYTHON_STAT_MAX,
};

/* procs_fd: the sampler's py_procs map. Listens to ps (borrowed, outlives it). NULL + errno. */
struct python *python__new(int procs_fd, struct procs *ps);
void python__free(struct python *py);

/* The interpreter loop's code in pid: [start, end) of _PyEval_EvalFrameDefault; false when pid
 * runs no interpreter perch walks. */
bool python__eval_range(struct python *py, uint32_t pid, uint64_t *start, uint64_t *end);

/* A walked frame of pid (code object, tag, instruction offset from the code object): its
 * qualified name, file and line (-1 unknown); false when it cannot be named (counted). The
 * strings live until python__free(). */
bool python__name(struct python *py, uint32_t pid, uint64_t code, uint64_t tag, uint32_t instr,
		  const char **qualname, const char **file, int *line);

void python__count(struct python *py, enum python_stat which, uint64_t n);
uint64_t python__stat(const struct python *py, enum python_stat which);

#endif /* PERCH_RECORD_PYTHON_H */
