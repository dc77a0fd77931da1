/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to record/python/: python.c is the listener on the process table and the API of
 * python.h; python_find.c finds an interpreter in a module's ELF file and its version's layout
 * in the process.
 */
#ifndef PERCH_RECORD_PYTHON_IMPL_H
#define PERCH_RECORD_PYTHON_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "bpf/perch_bpf.h"
#include "python.h"
#include "record/modfile.h"
#include "record/pycode.h"

/* What a module's file holds (its module slot): the interpreter's symbols, file addresses. */
struct pymodule {
	bool has; /* _PyRuntime and _PyEval_EvalFrameDefault both */
	uint64_t runtime, version, code_type, eval, eval_size;
	struct modfile_loads loads;
};

/* A process running an interpreter perch walks (its process slot). */
struct pyproc {
	struct perch_py_proc bpf; /* what the sampler walks it with */
	struct py_layout layout;  /* what naming its code objects needs */
	uint64_t eval_start, eval_end;
	struct pycode_cache *codes;
};

/* python_find.c: the module of mapping m of pid, scanned once (NULL: none, or no memory). */
const struct pymodule *python_module(int id, uint32_t pid, const struct proc_map *m,
				     struct procs_module *pm);
/* The interpreter of module mod mapped at m in pid, read from the process: 0 and *out filled,
 * -ENOTSUP for a version or build perch does not walk, -EIO when the process cannot be read. */
int python_layout(uint32_t pid, const struct pymodule *mod, const struct proc_map *m,
		  struct pyproc *out);

#endif /* PERCH_RECORD_PYTHON_IMPL_H */
