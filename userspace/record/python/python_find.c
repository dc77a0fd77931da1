// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython: finding an interpreter in a module's ELF file (its symbols, in the module's slot of the
 * process table, so a library many processes map is read once) and its version's layout in the
 * process.
 *
 * Every CPython from 3.11 on exports _PyRuntime (the runtime state), Py_Version (PY_VERSION_HEX)
 * and _PyEval_EvalFrameDefault (the interpreter's loop: one C activation runs a chain of Python
 * frames), in the dynamic symbol table of a shared libpython and of a statically linked
 * executable alike (both link with --export-dynamic), so a stripped distribution binary has them.
 *
 * The offsets of 3.11 and 3.12 were derived with offsetof() against each version's internal
 * headers (Py_BUILD_CORE: Debian's 3.11.2 and pyenv's 3.11.7 agree, 3.12.1), and are checked by
 * tests/integration/python.sh against a live interpreter. From 3.13 on the interpreter says
 * them itself: _PyRuntime starts with _Py_DebugOffsets (cookie "xdebugpy"), written for
 * out-of-process debuggers and profilers.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "python_impl.h"

enum pysym { SYM_RUNTIME, SYM_VERSION, SYM_CODE_TYPE, SYM_EVAL, SYM_MAX };

static const char *const sym_names[SYM_MAX] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_VERSION] = "Py_Version",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_EVAL] = "_PyEval_EvalFrameDefault",
};

static void scan_symbols(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, GElf_Sym *found)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P')) /* none of ours: skip the rest */
			continue;
		for (int k = 0; k < SYM_MAX; k++)
			if (!found[k].st_value && !strcmp(name, sym_names[k]))
				found[k] = sym;
	}
}

static bool scan_module(void *ctx, Elf *e)
{
	struct pymodule *mod = ctx;
	GElf_Sym found[SYM_MAX] = {0};
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;

		/* the dynamic symbols only: CPython exports all four there (a static build links
		 * with --export-dynamic), and every module's full symbol table would cost a
		 * profile of any program its start-up */
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNSYM)
			scan_symbols(e, scn, &sh, found);
	}
	mod->has = found[SYM_RUNTIME].st_value && found[SYM_EVAL].st_value &&
		   found[SYM_VERSION].st_value;
	mod->runtime = found[SYM_RUNTIME].st_value;
	mod->version = found[SYM_VERSION].st_value;
	mod->code_type = found[SYM_CODE_TYPE].st_value;
	mod->eval = found[SYM_EVAL].st_value;
	mod->eval_size = found[SYM_EVAL].st_size;
	if (mod->has)
		modfile_loads(e, &mod->loads);
	return mod->has;
}

const struct pymodule *python_module(int id, uint32_t pid, const struct proc_map *m,
				     struct procs_module *pm)
{
	struct pymodule **slot = (struct pymodule **)procs__module_slot(pm, id), *mod;

	if (*slot)
		return *slot;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	*slot = mod;
	modfile_scan(pid, m, scan_module, mod);
	return mod;
}

static int peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)addr, len};

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EIO;
}

/* 3.11 and 3.12: where the sampler finds a thread's frames, and the frames' fields. */
static const struct perch_py_proc walk_311 = {
	.interp_head = 40,
	.threads_head = 16,
	.ts_next = 8,
	.ts_native_tid = 160,
	.ts_frame = 56, /* cframe */
	.cframe_frame = 8,
	.fr_code = 32,
	.fr_previous = 48,
	.fr_instr = 56,
	.fr_owner = 69,
	.fr_is_entry = 68,
	.code_tag = 128,
	.owner_cstack = 0xff,
};

static const struct perch_py_proc walk_312 = {
	.interp_head = 40,
	.threads_head = 72,
	.ts_next = 8,
	.ts_native_tid = 144,
	.ts_frame = 56, /* cframe */
	.cframe_frame = 0,
	.fr_code = 0,
	.fr_previous = 8,
	.fr_instr = 56,
	.fr_owner = 70,
	.fr_is_entry = PERCH_PY_NONE,
	.code_tag = 128,
	.owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK */
};

/* The start of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), as far as perch
 * reads it: every field a u64. */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t rt_size, rt_finalizing, rt_interpreters_head;
	uint64_t is_size, is_id, is_next, is_threads_head, is_rest[9];
	uint64_t ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id,
		ts_native_thread_id, ts_datastack_chunk, ts_status;
	uint64_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
	uint64_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		co_argcount, co_localsplusnames, co_localspluskinds, co_code_adaptive;
	uint64_t ob_size, ob_type;
	uint64_t type_rest[4], tuple_rest[3], list_rest[3], dict_rest[3], float_rest[2],
		long_rest[3];
	uint64_t by_size, by_ob_size, by_ob_sval;
	uint64_t un_size, un_state, un_length, un_ascii_size;
};

/* Every offset a walk or a read uses lies in its object's first 64 KiB (the sizes say how big
 * the objects are, not where the fields are: the runtime state is bigger than that). */
static bool small(const uint64_t *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (*v[i] >= 65536)
			return false;
	return true;
}

static int layout_313(uint32_t pid, uint64_t runtime, struct pyproc *out)
{
	struct debug_offsets_313 d;
	struct perch_py_proc *w = &out->bpf;
	struct py_layout *l = &out->layout;
	const uint64_t *const used[] = {
		&d.rt_interpreters_head,
		&d.is_threads_head,
		&d.ts_next,
		&d.ts_current_frame,
		&d.ts_native_thread_id,
		&d.co_filename,
		&d.co_name,
		&d.co_qualname,
		&d.co_linetable,
		&d.co_firstlineno,
		&d.co_code_adaptive,
		&d.by_ob_size,
		&d.by_ob_sval,
		&d.un_state,
		&d.un_length,
		&d.un_ascii_size,
	};

	if (peek(pid, runtime, &d, sizeof(d)))
		return -EIO;
	if (memcmp(d.cookie, "xdebugpy", 8) || d.free_threaded)
		return -ENOTSUP;
	/* The frame's fields lie in the bytes the sampler reads of it at once. */
	if (!small(used, sizeof(used) / sizeof(used[0])) || d.fr_previous > 64 ||
	    d.fr_executable > 64 || d.fr_instr_ptr > 64 || d.fr_owner >= PERCH_PY_FRAME_READ)
		return -ENOTSUP;
	*w = (struct perch_py_proc){
		.interp_head = d.rt_interpreters_head,
		.threads_head = d.is_threads_head,
		.ts_next = d.ts_next,
		.ts_native_tid = d.ts_native_thread_id,
		.ts_frame = d.ts_current_frame,
		.cframe_frame = PERCH_PY_NONE,
		.fr_code = d.fr_executable,
		.fr_previous = d.fr_previous,
		.fr_instr = d.fr_instr_ptr,
		.fr_owner = d.fr_owner,
		.fr_is_entry = PERCH_PY_NONE,
		.code_tag = d.co_qualname,
		.owner_cstack = 3, /* FRAME_OWNED_BY_CSTACK */
	};
	*l = (struct py_layout){
		.version_hex = (uint32_t)d.version,
		.code_filename = d.co_filename,
		.code_name = d.co_name,
		.code_qualname = d.co_qualname,
		.code_firstlineno = d.co_firstlineno,
		.code_linetable = d.co_linetable,
		.code_adaptive = d.co_code_adaptive,
		.unicode_length = d.un_length,
		.unicode_state = d.un_state,
		.ascii_size = d.un_ascii_size,
		/* PyCompactUnicodeObject: PyASCIIObject, then utf8_length and utf8 */
		.compact_size = d.un_ascii_size + 16,
		.bytes_size = d.by_ob_size,
		.bytes_sval = d.by_ob_sval,
	};
	return 0;
}

int python_layout(uint32_t pid, const struct pymodule *mod, const struct proc_map *m,
		  struct pyproc *out)
{
	uint64_t bias, version = 0;
	unsigned int minor;
	int err = 0;

	if (!modfile_place(&mod->loads, m, 0, &bias)) /* file address 0: the load bias */
		return -ENOTSUP;
	if (peek(pid, bias + mod->version, &version, sizeof(version)))
		return -EIO;
	minor = (version >> 16) & 0xff;
	if ((version >> 24) != 3 || minor < 11)
		return -ENOTSUP;
	if (minor >= 13) {
		/* 3.14's _Py_DebugOffsets has fields 3.13's lacks before these: its own layout. */
		err = minor == 13 ? layout_313(pid, bias + mod->runtime, out) : -ENOTSUP;
	} else {
		out->bpf = minor == 11 ? walk_311 : walk_312;
		err = py_layout_for((uint32_t)version, &out->layout);
	}
	if (err)
		return err;
	out->bpf.runtime = bias + mod->runtime;
	out->bpf.version = (uint32_t)version;
	out->layout.code_type = mod->code_type ? bias + mod->code_type : 0;
	out->eval_start = bias + mod->eval;
	out->eval_end = out->eval_start + (mod->eval_size ? mod->eval_size : 1);
	return 0;
}
