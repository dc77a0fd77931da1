// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * record/python/python_find.c: an interpreter's layout read from a process, here this test's own
 * memory laid out as an interpreter's would be: Py_Version, and for 3.13 the _Py_DebugOffsets at
 * _PyRuntime. 3.11 and 3.12 take the derived tables; 3.13 takes what the interpreter says, checked
 * (a free-threaded build, a wrong cookie, an offset outside the bytes the sampler reads of a
 * frame, a version perch does not walk: refused, never walked wrong); unreadable memory is -EIO.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "record/python/python_impl.h"

/* 3.13's _Py_DebugOffsets as far as perch reads it (python_find.c's struct, field by field). */
struct fake_runtime {
	char cookie[8];
	uint64_t version, free_threaded;
	uint64_t rt[3];	 /* size, finalizing, interpreters_head */
	uint64_t is[13]; /* size, id, next, threads_head, ... */
	uint64_t ts[9];	 /* size, prev, next, interp, current_frame, thread_id, native_thread_id */
	uint64_t fr[6];	 /* size, previous, executable, instr_ptr, localsplus, owner */
	uint64_t co[10]; /* size, filename, name, qualname, linetable, firstlineno, ... adaptive */
	uint64_t ob[2];	 /* size, ob_type */
	uint64_t rest[18]; /* type, tuple, list, dict, float, long */
	uint64_t by[3];	   /* size, ob_size, ob_sval */
	uint64_t un[4];	   /* size, state, length, asciiobject_size */
};

static uint64_t version;
static struct fake_runtime runtime;

/* The values 3.13.0 publishes (its Include/internal/pycore_runtime.h, offsetof on x86-64). */
static void fill_313(void)
{
	memset(&runtime, 0, sizeof(runtime));
	memcpy(runtime.cookie, "xdebugpy", 8);
	runtime.version = version = 0x030d00f0;
	runtime.rt[2] = 632;
	runtime.is[3] = 7344;
	runtime.ts[2] = 8;
	runtime.ts[4] = 72;
	runtime.ts[6] = 160;
	runtime.fr[1] = 8;
	runtime.fr[2] = 0;
	runtime.fr[3] = 56;
	runtime.fr[5] = 70;
	runtime.co[1] = 112;
	runtime.co[2] = 120;
	runtime.co[3] = 128;
	runtime.co[4] = 136;
	runtime.co[5] = 68;
	runtime.co[9] = 200;
	runtime.by[1] = 16;
	runtime.by[2] = 32;
	runtime.un[1] = 32;
	runtime.un[2] = 16;
	runtime.un[3] = 40;
}

/* A module whose one load maps file addresses to these same addresses (bias 0). */
static int layout(struct pyproc *out)
{
	struct pymodule mod = {
		.has = true,
		.runtime = (uint64_t)(uintptr_t)&runtime,
		.version = (uint64_t)(uintptr_t)&version,
		.eval = 0x1000,
		.eval_size = 0x2000,
		.loads = {.n = 1, .load = {{.vaddr = 0, .offset = 0, .filesz = UINT64_MAX / 2}}},
	};
	struct proc_map m = {.start = 0, .end = 0x1000, .pgoff = 0};

	memset(out, 0, sizeof(*out));
	return python_layout((uint32_t)getpid(), &mod, &m, out);
}

static void test_311_table(void **state)
{
	struct pyproc p;

	(void)state;
	version = 0x030b02f0; /* 3.11.2 */
	assert_int_equal(layout(&p), 0);
	assert_int_equal(p.bpf.version, 0x030b02f0);
	assert_int_equal(p.bpf.ts_native_tid, 160);
	assert_int_equal(p.bpf.fr_is_entry, 68);
	assert_int_equal(p.bpf.owner_cstack, 0xff);
	assert_int_equal(p.bpf.runtime, (uint64_t)(uintptr_t)&runtime);
	assert_int_equal(p.eval_start, 0x1000);
	assert_int_equal(p.eval_end, 0x3000);
	assert_int_equal(p.layout.code_qualname, 128);
}

static void test_312_table(void **state)
{
	struct pyproc p;

	(void)state;
	version = 0x030c01f0; /* 3.12.1 */
	assert_int_equal(layout(&p), 0);
	assert_int_equal(p.bpf.threads_head, 72);
	assert_int_equal(p.bpf.fr_is_entry, PERCH_PY_NONE);
	assert_int_equal(p.bpf.owner_cstack, 3);
}

static void test_313_debug_offsets(void **state)
{
	struct pyproc p;

	(void)state;
	fill_313();
	assert_int_equal(layout(&p), 0);
	assert_int_equal(p.bpf.interp_head, 632);
	assert_int_equal(p.bpf.threads_head, 7344);
	assert_int_equal(p.bpf.ts_frame, 72);
	assert_int_equal(p.bpf.cframe_frame, PERCH_PY_NONE);
	assert_int_equal(p.bpf.fr_instr, 56);
	assert_int_equal(p.bpf.fr_owner, 70);
	assert_int_equal(p.layout.code_adaptive, 200);
	assert_int_equal(p.layout.compact_size, 56);
	assert_int_equal(p.layout.version_hex, 0x030d00f0);
}

static void test_313_refused(void **state)
{
	struct pyproc p;

	(void)state;
	fill_313();
	runtime.free_threaded = 1;
	assert_int_equal(layout(&p), -ENOTSUP);
	fill_313();
	runtime.cookie[0] = 'X';
	assert_int_equal(layout(&p), -ENOTSUP);
	fill_313();
	runtime.fr[5] = 72; /* owner past the 72 bytes the sampler reads of a frame */
	assert_int_equal(layout(&p), -ENOTSUP);
	fill_313();
	runtime.co[3] = 1u << 20;
	assert_int_equal(layout(&p), -ENOTSUP);
	fill_313();
	version = 0x030e00f0; /* 3.14: its own layout */
	assert_int_equal(layout(&p), -ENOTSUP);
	version = 0x030a0cf0; /* 3.10: no _PyInterpreterFrame */
	assert_int_equal(layout(&p), -ENOTSUP);
	version = 0x020718f0;
	assert_int_equal(layout(&p), -ENOTSUP);
}

static void test_unreadable(void **state)
{
	struct pymodule mod = {
		.has = true,
		.runtime = 8,
		.version = 16,
		.loads = {.n = 1, .load = {{.vaddr = 0, .offset = 0, .filesz = 1 << 20}}},
	};
	struct proc_map m = {.start = 0, .end = 0x1000, .pgoff = 0};
	struct pyproc p;

	(void)state;
	assert_int_equal(python_layout((uint32_t)getpid(), &mod, &m, &p), -EIO);
	mod.loads.n = 0; /* no load holds the mapping: not placed */
	assert_int_equal(python_layout((uint32_t)getpid(), &mod, &m, &p), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_311_table),	  cmocka_unit_test(test_312_table),
		cmocka_unit_test(test_313_debug_offsets), cmocka_unit_test(test_313_refused),
		cmocka_unit_test(test_unreadable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
