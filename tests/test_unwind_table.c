// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the unwind table builder (unwind/): each table is held against libdw's own CFI
 * answer (dwarf_cfi_addrframe, then dwarf_frame_cfa and dwarf_frame_register for RA, RBP and
 * RSP) at every byte of every executable section of the module. libdw's answer is turned into the
 * row it implies independently of the builder (from libdw's DWARF ops, not from the CFA
 * program), and the two must agree exactly: kind, CFA offset, RBP offset, PLT threshold, flags.
 * Where libdw cannot answer (no FDE, or CFI it cannot execute) the row must say so (NONE or
 * UNSUPPORTED).
 *
 * Modules: a fixture written and compiled here (-O2 -fomit-frame-pointer
 * -fasynchronous-unwind-tables, with a frame over 64 KiB, alloca, many saved registers, stack
 * realignment, early returns, PLT stubs and _start), the same with only .debug_frame for its own
 * code (plain, compressed, and split into a separate debug file), the same with an .eh_frame gap
 * that a hand-written .debug_frame FDE fills, this test binary, and Debian's libc.so.6, xz and
 * liblzma.so.5, built without frame pointers. Build times and table sizes are printed.
 *
 * Besides: the PLT row's formula is evaluated against libdw's DWARF expression at every PLT
 * address, and thousands of corrupted copies of the CFI sections must give well-formed tables
 * or a clean failure (run it under -fsanitize=address,undefined).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include "lib/ehframe.h"
#include "unwind/unwind_table.h"

#define CMD_MAX	       (4 * PATH_MAX)
#define MAX_SHOWN      10 /* mismatches printed per module */
#define DW_REG_RBP     6
#define DW_REG_RSP     7
#define DW_REG_RIP     16
#define UC_GREG(r)     ((int64_t)offsetof(ucontext_t, uc_mcontext.gregs[r]))
#define LIBC	       "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define XZ	       "/usr/bin/xz"
#define LIBLZMA	       "/usr/lib/x86_64-linux-gnu/liblzma.so.5"
#define MUTATIONS      3000
#define MAX_UNSUP_FRAC 0.01 /* of the code bytes of a distribution binary */

/* The fixture: each function gives the CFI a shape the table must get right. */
static const char fixture_src[] =
	"#include <alloca.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }\n"
	"/* more than 64 KiB of locals: CFA offsets past 16 bits */\n"
	"__attribute__((noinline)) int big_frame(int n)\n"
	"{\n"
	"	volatile char buf[70000];\n"
	"	for (int i = 0; i < n; i++)\n"
	"		buf[(i * 7) % sizeof(buf)] = (char)i;\n"
	"	return buf[n % sizeof(buf)] + leaf(n);\n"
	"}\n"
	"/* alloca keeps a frame pointer even with -fomit-frame-pointer: CFA = RBP + 16 */\n"
	"__attribute__((noinline)) int dyn_frame(int n)\n"
	"{\n"
	"	char *p = alloca(n + 16);\n"
	"	memset(p, n, n + 16);\n"
	"	return p[n / 2] + leaf(n);\n"
	"}\n"
	"/* values live across calls: callee-saved registers pushed, a row per push and pop */\n"
	"__attribute__((noinline)) long many_saves(long a, long b, long c)\n"
	"{\n"
	"	long x = leaf(a), y = leaf(b), z = leaf(c), w = leaf(a + b), v = leaf(b + c);\n"
	"	return x * y + z * w + v * leaf(x + y + z);\n"
	"}\n"
	"/* over-aligned local, arguments on the stack: realignment through a DRAP register */\n"
	"__attribute__((noinline)) int realigned(int a, int b, int c, int d, int e, int f, int g,\n"
	"					int h)\n"
	"{\n"
	"	__attribute__((aligned(64))) volatile int v[16];\n"
	"	char *p = alloca(a & 63);\n"
	"	for (int i = 0; i < 16; i++)\n"
	"		v[i] = a + b + c + d + e + f + g + h + i;\n"
	"	p[0] = 1;\n"
	"	return v[a & 15] + leaf(g + h) + p[0];\n"
	"}\n"
	"/* returns from the middle of a frame: remember_state / restore_state */\n"
	"__attribute__((noinline)) int early_exit(int n)\n"
	"{\n"
	"	if (n < 0)\n"
	"		return leaf(-n);\n"
	"	if (n > 1000)\n"
	"		return many_saves(n, n, n) > 0;\n"
	"	return leaf(n) + leaf(n + 1);\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"	int n = argc > 1 ? atoi(argv[1]) : 10;\n"
	"	printf(\"%d\\n\", big_frame(n) + dyn_frame(n) + (int)many_saves(n, 2, 3) +\n"
	"	       realigned(n, 1, 2, 3, 4, 5, 6, 7) + early_exit(n));\n"
	"	puts(argv[0]);\n"
	"	return 0;\n"
	"}\n";

/*
 * Code whose .eh_frame leaves a gap that a hand-written .debug_frame FDE covers, together with
 * parts of the functions on either side: the table must take .eh_frame where it has an entry and
 * the .debug_frame rules in force at each address of the gap. The FDE also uses what compilers
 * do not emit (DW_CFA_set_loc, advance_loc2/4).
 */
static const char mixed_src[] = "	.text\n"
				"	.globl ov_a\n"
				"	.type ov_a, @function\n"
				"ov_a:\n"
				"	.cfi_startproc\n"
				"	push %rbp\n"
				"	.cfi_def_cfa_offset 16\n"
				"	.cfi_offset rbp, -16\n"
				"	.skip 20, 0x90\n"
				"	pop %rbp\n"
				"	.cfi_def_cfa_offset 8\n"
				"	ret\n"
				"	.cfi_endproc\n"
				"	.size ov_a, .-ov_a\n"
				"	.globl ov_gap\n"
				"ov_gap:\n"
				"	.skip 32, 0x90\n"
				"	.globl ov_b\n"
				"	.type ov_b, @function\n"
				"ov_b:\n"
				"	.cfi_startproc\n"
				"	sub $24, %rsp\n"
				"	.cfi_def_cfa_offset 32\n"
				"	.skip 8, 0x90\n"
				"	add $24, %rsp\n"
				"	.cfi_def_cfa_offset 8\n"
				"	ret\n"
				"	.cfi_endproc\n"
				"	.size ov_b, .-ov_b\n"
				"	.section .debug_frame, \"\", @progbits\n"
				".Lcie:\n"
				"	.long .Lcie_end - .Lcie_id\n"
				".Lcie_id:\n"
				"	.long 0xffffffff	# CIE id\n"
				"	.byte 1	# version\n"
				"	.string \"\"	# augmentation\n"
				"	.uleb128 1	# code alignment\n"
				"	.sleb128 -8	# data alignment\n"
				"	.byte 16	# return address column\n"
				"	.byte 0x0c, 7, 8	# def_cfa rsp+8\n"
				"	.byte 0x90, 1	# offset rip at cfa-8\n"
				"	.balign 8, 0\n"
				".Lcie_end:\n"
				"	.long .Lfde_end - .Lfde_id\n"
				".Lfde_id:\n"
				"	.long .Lcie\n"
				"	.quad ov_a + 4\n"
				"	.quad ov_b + 8 - (ov_a + 4)\n"
				"	.byte 0x44	# advance_loc 4\n"
				"	.byte 0x0e, 16	# def_cfa_offset 16\n"
				"	.byte 0x01	# set_loc\n"
				"	.quad ov_gap + 4\n"
				"	.byte 0x0e, 24\n"
				"	.byte 0x02, 8	# advance_loc1 8\n"
				"	.byte 0x0e, 32\n"
				"	.byte 0x86, 2	# offset rbp at cfa-16\n"
				"	.byte 0x03	# advance_loc2\n"
				"	.short 8\n"
				"	.byte 0x0c, 6, 16	# def_cfa rbp+16\n"
				"	.byte 0x04	# advance_loc4\n"
				"	.long 12\n"
				"	.byte 0x0a	# remember_state\n"
				"	.byte 0x0e, 48\n"
				"	.byte 0x0b	# restore_state\n"
				"	.balign 8, 0\n"
				".Lfde_end:\n"
				"	.section .note.GNU-stack, \"\", @progbits\n";

static char tmpdir[PATH_MAX - 64];
static char fx_eh[PATH_MAX];	   /* -fasynchronous-unwind-tables: .eh_frame */
static char fx_debug[PATH_MAX];	   /* -g -fno-asynchronous-unwind-tables: .debug_frame */
static char fx_debugz[PATH_MAX];   /* the same with -gz: .debug_frame compressed */
static char fx_stripped[PATH_MAX]; /* fx_debug without its DWARF ... */
static char fx_dbgfile[PATH_MAX];  /* ... which is here */
static char fx_nocfi[PATH_MAX];	   /* fx_eh without .eh_frame */
static char fx_mixed[PATH_MAX];	   /* fx_eh and mixed_src */
static char fx_termcfi[PATH_MAX];  /* a library whose .eh_frame is a zero terminator alone */
static double total_check_s;

/* libdw's CFI of a module: .eh_frame, and .debug_frame from the module or its debug file. */
struct ref {
	int fd, dbg_fd;
	Elf *elf, *dbg_elf;
	Dwarf_CFI *eh;
	Dwarf *dw;
	Dwarf_CFI *debug;
	int no_match; /* libdw's error code for "no FDE covers the address" */
};

/* What libdw says at an address. */
enum answer {
	ANSWER_FRAME,	 /* a frame */
	ANSWER_NO_MATCH, /* no FDE covers it: the row must be NONE */
	ANSWER_ERROR,	 /* CFI libdw cannot execute: the row must be UNSUPPORTED */
};

/* What one module's comparison found. */
struct result {
	size_t addrs;	      /* addresses compared */
	size_t mismatches;    /* the row differs from libdw's answer */
	size_t no_match;      /* libdw found no FDE */
	size_t errors;	      /* libdw failed on the CFI */
	uint64_t unsupported; /* addresses with an UNSUPPORTED row */
	uint64_t code_bytes;
	size_t kind_rows[UNWIND_CFA_MAX];
	size_t debug_frame_rows;
};

__attribute__((format(printf, 3, 4))) static void fmt_path(char *buf, size_t size, const char *fmt,
							   ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < size);
}

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[CMD_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	n = system(cmd);
	if (n)
		print_message("command failed (%d): %s\n", n, cmd);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int group_setup(void **state)
{
	const char *cc = getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	char src[PATH_MAX], asm_src[PATH_MAX];
	FILE *f;

	(void)state;
	elf_version(EV_CURRENT);
	fmt_path(tmpdir, sizeof(tmpdir), "%s/perch-unwind-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir))
		return -1;
	fmt_path(src, sizeof(src), "%s/fx.c", tmpdir);
	fmt_path(fx_eh, sizeof(fx_eh), "%s/fx_eh", tmpdir);
	fmt_path(fx_debug, sizeof(fx_debug), "%s/fx_debug", tmpdir);
	fmt_path(fx_debugz, sizeof(fx_debugz), "%s/fx_debugz", tmpdir);
	fmt_path(fx_stripped, sizeof(fx_stripped), "%s/fx_stripped", tmpdir);
	fmt_path(fx_dbgfile, sizeof(fx_dbgfile), "%s/fx_debug.debug", tmpdir);
	fmt_path(fx_nocfi, sizeof(fx_nocfi), "%s/fx_nocfi", tmpdir);
	fmt_path(asm_src, sizeof(asm_src), "%s/mixed.s", tmpdir);
	fmt_path(fx_mixed, sizeof(fx_mixed), "%s/fx_mixed", tmpdir);
	fmt_path(fx_termcfi, sizeof(fx_termcfi), "%s/fx_termcfi.so", tmpdir);
	f = fopen(src, "w");
	if (!f || fputs(fixture_src, f) < 0 || fclose(f))
		return -1;
	f = fopen(asm_src, "w");
	if (!f || fputs(mixed_src, f) < 0 || fclose(f))
		return -1;
	if (run("%s -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -o '%s' '%s'", cc, fx_eh,
		src) ||
	    run("%s -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables "
		"-o '%s' '%s'",
		cc, fx_debug, src) ||
	    run("%s -O2 -g -gz=zlib -fomit-frame-pointer -fno-asynchronous-unwind-tables "
		"-fno-unwind-tables -o '%s' '%s'",
		cc, fx_debugz, src) ||
	    run("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug '%s' '%s'", fx_debug,
		fx_dbgfile, fx_debug, fx_stripped) ||
	    run("objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr '%s' '%s'",
		fx_eh, fx_nocfi) ||
	    run("%s -O2 -fomit-frame-pointer -o '%s' '%s' '%s'", cc, fx_mixed, src, asm_src) ||
	    run("echo 'const char data[64] = {1};' | %s -x c - -shared -fPIC "
		"-fno-asynchronous-unwind-tables -fno-unwind-tables -o '%s'",
		cc, fx_termcfi))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	print_message("libdw comparisons took %.2f s in all\n", total_check_s);
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	return 0;
}

static void ref_close(struct ref *r)
{
	if (r->eh)
		dwarf_cfi_end(r->eh);
	dwarf_end(r->dw);
	elf_end(r->dbg_elf);
	elf_end(r->elf);
	if (r->dbg_fd >= 0)
		close(r->dbg_fd);
	if (r->fd >= 0)
		close(r->fd);
}

static void ref_open(struct ref *r, const char *path, const char *debug_path)
{
	memset(r, 0, sizeof(*r));
	r->dbg_fd = -1;
	r->fd = open(path, O_RDONLY);
	assert_true(r->fd >= 0);
	r->elf = elf_begin(r->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(r->elf);
	r->eh = dwarf_getcfi_elf(r->elf);
	if (debug_path) {
		r->dbg_fd = open(debug_path, O_RDONLY);
		assert_true(r->dbg_fd >= 0);
		r->dbg_elf = elf_begin(r->dbg_fd, ELF_C_READ_MMAP, NULL);
		assert_non_null(r->dbg_elf);
	}
	/* Fails without DWARF (libc, xz): then there is no .debug_frame either. */
	r->dw = dwarf_begin_elf(r->dbg_elf ? r->dbg_elf : r->elf, DWARF_C_READ, NULL);
	r->debug = r->dw ? dwarf_getcfi(r->dw) : NULL;
	/* libdw's code for "no FDE here" is internal: learn it at address 0, which no FDE of a
	 * linked module covers. */
	r->no_match = -1;
	if (r->eh || r->debug) {
		Dwarf_Frame *f;

		assert_int_not_equal(dwarf_cfi_addrframe(r->eh ? r->eh : r->debug, 0, &f), 0);
		r->no_match = dwarf_errno();
	}
}

/* ops == [DW_OP_call_frame_cfa, DW_OP_plus_uconst off]: "saved at CFA + off". */
static bool ops_saved_at_cfa(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	if (n != 2 || ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_plus_uconst)
		return false;
	*off = (int64_t)ops[1].number;
	return true;
}

/*
 * A DW_CFA_expression rule "saved at RSP + off": libdw gives [DW_OP_call_frame_cfa,
 * DW_OP_breg7 off], the CFA being pushed before the rule's own expression runs.
 */
static bool ops_saved_at_rsp(const Dwarf_Op *ops, size_t n, int64_t off)
{
	return n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_breg7 &&
	       (int64_t)ops[1].number == off;
}

/* The binutils lazy PLT expression, read from libdw's ops; its offset and threshold. */
static bool ops_plt(const Dwarf_Op *ops, size_t n, int64_t *off, int *k)
{
	if (n != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 || ops[1].number ||
	    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and || ops[4].atom < DW_OP_lit0 ||
	    ops[4].atom > DW_OP_lit31 || ops[5].atom != DW_OP_ge || ops[6].atom != DW_OP_lit3 ||
	    ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus)
		return false;
	*off = (int64_t)ops[0].number;
	*k = ops[4].atom - DW_OP_lit0;
	return true;
}

/* libdw's rule for reg at frame f; false when libdw fails. */
static bool reg_rule(Dwarf_Frame *f, int reg, Dwarf_Op mem[3], Dwarf_Op **ops, size_t *n)
{
	return dwarf_frame_register(f, reg, mem, ops, n) == 0;
}

/* Signal frame: the CFA and RIP/RBP/RSP where the kernel's ucontext_t keeps them. */
static bool libdw_sigframe(Dwarf_Frame *f)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	if (dwarf_frame_cfa(f, &ops, &n) || n != 2 || ops[0].atom != DW_OP_breg7 ||
	    (int64_t)ops[0].number != UC_GREG(REG_RSP) || ops[1].atom != DW_OP_deref)
		return false;
	if (!reg_rule(f, DW_REG_RIP, mem, &ops, &n) || !ops_saved_at_rsp(ops, n, UC_GREG(REG_RIP)))
		return false;
	if (!reg_rule(f, DW_REG_RBP, mem, &ops, &n) || !ops_saved_at_rsp(ops, n, UC_GREG(REG_RBP)))
		return false;
	/* The caller's RSP: the CFA (the ABI default), or its ucontext slot. */
	return reg_rule(f, DW_REG_RSP, mem, &ops, &n) &&
	       (ops_saved_at_rsp(ops, n, UC_GREG(REG_RSP)) ||
		(n == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
		 ops[1].atom == DW_OP_stack_value));
}

/* The CFA part of the row libdw's frame implies; false when the rows cannot say it. */
static bool libdw_cfa(Dwarf_Frame *f, struct unwind_row *row)
{
	Dwarf_Op *ops;
	int64_t off;
	size_t n;
	int k;

	if (dwarf_frame_cfa(f, &ops, &n))
		return false;
	if (n == 1 && ops[0].atom == DW_OP_bregx) {
		off = (int64_t)ops[0].number2;
		if ((ops[0].number != DW_REG_RSP && ops[0].number != DW_REG_RBP) ||
		    off < INT32_MIN || off > INT32_MAX)
			return false;
		row->cfa = ops[0].number == DW_REG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		row->cfa_off = (int32_t)off;
		return true;
	}
	if (!ops_plt(ops, n, &off, &k) || off < INT32_MIN || off > INT32_MAX)
		return false;
	row->cfa = UNWIND_CFA_PLT;
	row->cfa_off = (int32_t)off;
	row->plt_k = (int16_t)k;
	return true;
}

/* RA at CFA - 8, caller's RSP = CFA, RBP unchanged or at CFA + off; false when not. */
static bool libdw_regs(Dwarf_Frame *f, int ra, struct unwind_row *row)
{
	Dwarf_Op mem[3], *ops;
	int64_t off;
	size_t n;

	if (ra != DW_REG_RIP || !reg_rule(f, ra, mem, &ops, &n) ||
	    !ops_saved_at_cfa(ops, n, &off) || off != -8)
		return false;
	if (!reg_rule(f, DW_REG_RSP, mem, &ops, &n) || n != 2 ||
	    ops[0].atom != DW_OP_call_frame_cfa || ops[1].atom != DW_OP_stack_value)
		return false;
	if (!reg_rule(f, DW_REG_RBP, mem, &ops, &n))
		return false;
	if (n == 0)
		return true; /* same value (the ABI's default) or undefined: RBP unchanged */
	if (!ops_saved_at_cfa(ops, n, &off) || !off || off < INT16_MIN || off > INT16_MAX ||
	    row->cfa == UNWIND_CFA_PLT)
		return false;
	row->rbp_off = (int16_t)off;
	return true;
}

/* The row libdw's frame f implies. */
static struct unwind_row libdw_row(Dwarf_Frame *f, bool from_debug)
{
	struct unwind_row row = {0};
	Dwarf_Op mem[3], *ops;
	Dwarf_Addr start, end;
	bool signal;
	size_t n;
	int ra;

	ra = dwarf_frame_info(f, &start, &end, &signal);
	row.flags =
		(signal ? UNWIND_ROW_F_SIGNAL : 0) | (from_debug ? UNWIND_ROW_F_DEBUG_FRAME : 0);
	if (signal && libdw_sigframe(f)) {
		row.cfa = UNWIND_CFA_SIGNAL;
		return row;
	}
	/* No ops, ops set: "undefined" (no ops, ops NULL is "same value"). */
	if (ra == DW_REG_RIP && reg_rule(f, ra, mem, &ops, &n) && n == 0 && ops) {
		row.cfa = UNWIND_CFA_OUTERMOST;
		return row;
	}
	if (!libdw_cfa(f, &row) || !libdw_regs(f, ra, &row))
		row = (struct unwind_row){.cfa = UNWIND_CFA_UNSUPPORTED, .flags = row.flags};
	return row;
}

/* libdw's answer at pc: .eh_frame first, .debug_frame where it has no entry. */
static enum answer libdw_at(struct ref *r, uint64_t pc, struct unwind_row *row)
{
	Dwarf_Frame *f = NULL;
	bool from_debug = false;
	int err;

	if (!r->eh || dwarf_cfi_addrframe(r->eh, pc, &f)) {
		err = r->eh ? dwarf_errno() : r->no_match;
		if (err != r->no_match)
			return ANSWER_ERROR;
		if (!r->debug)
			return ANSWER_NO_MATCH;
		if (dwarf_cfi_addrframe(r->debug, pc, &f))
			return dwarf_errno() == r->no_match ? ANSWER_NO_MATCH : ANSWER_ERROR;
		from_debug = true;
	}
	*row = libdw_row(f, from_debug);
	free(f);
	return ANSWER_FRAME;
}

static bool rows_equal(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off &&
	       a->flags == b->flags;
}

static void show_mismatch(uint64_t pc, const struct unwind_row *want, const struct unwind_row *got)
{
	print_message("0x%" PRIx64 ": libdw %s%+d rbp %+d flags %x; table %s%+d rbp %+d flags %x\n",
		      pc, want ? unwind_cfa__name(want->cfa) : "(no frame)",
		      want ? want->cfa_off : 0, want ? want->rbp_off : 0, want ? want->flags : 0,
		      got ? unwind_cfa__name(got->cfa) : "(no row)", got ? got->cfa_off : 0,
		      got ? got->rbp_off : 0, got ? got->flags : 0);
}

/* Compare the table's row with libdw's answer at one address. */
static void check_addr(const struct unwind_table *t, struct ref *r, uint64_t pc, struct result *res)
{
	const struct unwind_row *got = unwind_table__find(t, pc);
	struct unwind_row want;
	enum answer a = libdw_at(r, pc, &want);
	bool ok;

	res->addrs++;
	if (got && got->cfa == UNWIND_CFA_UNSUPPORTED)
		res->unsupported++;
	switch (a) {
	case ANSWER_FRAME:
		ok = got && rows_equal(&want, got);
		break;
	case ANSWER_NO_MATCH:
		res->no_match++;
		ok = !got || got->cfa == UNWIND_CFA_NONE;
		break;
	default:
		res->errors++;
		ok = got && got->cfa == UNWIND_CFA_UNSUPPORTED;
		break;
	}
	if (!ok && res->mismatches++ < MAX_SHOWN)
		show_mismatch(pc, a == ANSWER_FRAME ? &want : NULL, got);
}

/* Sorted, starting at 0, closed by a NONE row, merged, fields zero where the kind has none. */
static void assert_well_formed(const struct unwind_table *t)
{
	const struct unwind_stats *st = unwind_table__stats(t);
	const struct unwind_row *rows;
	size_t i, nr;

	rows = unwind_table__rows(t, &nr);
	assert_true(nr > 0);
	assert_int_equal(rows[0].pc, 0);
	assert_int_equal(rows[nr - 1].cfa, UNWIND_CFA_NONE);
	assert_int_equal(st->rows, nr);
	assert_int_equal(st->bytes, nr * sizeof(*rows));
	for (i = 0; i < nr; i++) {
		const struct unwind_row *row = &rows[i];

		assert_true(row->cfa < UNWIND_CFA_MAX);
		if (i) {
			assert_true(row->pc > rows[i - 1].pc);
			assert_false(rows_equal(row, &rows[i - 1]));
		}
		if (row->cfa == UNWIND_CFA_PLT)
			assert_true(row->plt_k >= 0 && row->plt_k <= 31);
		if (row->cfa != UNWIND_CFA_RSP && row->cfa != UNWIND_CFA_RBP &&
		    row->cfa != UNWIND_CFA_PLT)
			assert_true(row->cfa_off == 0 && row->rbp_off == 0);
	}
}

/* Every byte of every executable section, against libdw. */
static void check_module(const char *name, const char *path, const char *debug_path,
			 const struct unwind_table *t, struct result *res)
{
	const struct unwind_row *rows;
	Elf_Scn *scn = NULL;
	struct ref r;
	double t0 = now_s();
	GElf_Shdr sh;
	size_t i, nr;
	uint64_t pc;

	memset(res, 0, sizeof(*res));
	assert_well_formed(t);
	rows = unwind_table__rows(t, &nr);
	for (i = 0; i < nr; i++) {
		res->kind_rows[rows[i].cfa]++;
		res->debug_frame_rows += !!(rows[i].flags & UNWIND_ROW_F_DEBUG_FRAME);
	}
	ref_open(&r, path, debug_path);
	while ((scn = elf_nextscn(r.elf, scn))) {
		assert_non_null(gelf_getshdr(scn, &sh));
		if (!(sh.sh_flags & SHF_EXECINSTR) || sh.sh_type == SHT_NOBITS)
			continue;
		res->code_bytes += sh.sh_size;
		for (pc = sh.sh_addr; pc < sh.sh_addr + sh.sh_size; pc++)
			check_addr(t, &r, pc, res);
	}
	ref_close(&r);
	total_check_s += now_s() - t0;
	print_message(
		"%s: %zu addresses against libdw in %.0f ms: %zu mismatches; libdw: %zu without "
		"FDE, %zu failing; table: %" PRIu64 " unsupported (%.3f%% of %" PRIu64
		" code bytes)\n",
		name, res->addrs, (now_s() - t0) * 1e3, res->mismatches, res->no_match, res->errors,
		res->unsupported, 100.0 * (double)res->unsupported / (double)res->code_bytes,
		res->code_bytes);
	assert_true(res->addrs > 0);
	assert_int_equal(res->mismatches, 0);
}

static void print_stats(const char *name, const struct unwind_table *t, double build_ms)
{
	const struct unwind_stats *st = unwind_table__stats(t);
	char why[512];
	size_t len = 0;
	int i;

	why[0] = 0;
	for (i = 0; i < UNWIND_WHY_MAX; i++) {
		if (st->unsupported_bytes[i])
			len += (size_t)snprintf(why + len, sizeof(why) - len, " %s %" PRIu64,
						unwind_why__name(i), st->unsupported_bytes[i]);
	}
	print_message("%s: built in %.2f ms: %zu rows (%zu before merging), %zu bytes; %zu CIEs, "
		      "%zu+%zu FDEs (.eh_frame+.debug_frame), %zu skipped, %zu overlapping\n",
		      name, build_ms, st->rows, st->rows_unmerged, st->bytes, st->cies, st->fdes_eh,
		      st->fdes_debug, st->fdes_skipped, st->fdes_overlapping);
	print_message("%s: rows/bytes by kind:", name);
	for (i = 0; i < UNWIND_CFA_MAX; i++)
		print_message(" %s %zu/%" PRIu64, unwind_cfa__name(i), st->kind_rows[i],
			      st->kind_bytes[i]);
	print_message("; unsupported by reason:%s\n", why[0] ? why : " none");
}

static struct unwind_table *build_timed(const char *name, const char *path)
{
	struct unwind_table *t;
	double t0 = now_s(), ms;

	t = unwind_table__build(path);
	ms = (now_s() - t0) * 1e3;
	if (!t)
		print_message("%s: unwind_table__build: %s\n", name, strerror(errno));
	assert_non_null(t);
	print_stats(name, t, ms);
	return t;
}

static struct unwind_table *build_with_debug_file(const char *path, const char *debug_path)
{
	int fd = open(path, O_RDONLY), dfd = open(debug_path, O_RDONLY);
	Elf *elf, *dbg;
	struct unwind_table *t;

	assert_true(fd >= 0 && dfd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dbg = elf_begin(dfd, ELF_C_READ_MMAP, NULL);
	t = unwind_table__build_elf(elf, dbg);
	elf_end(dbg);
	elf_end(elf);
	close(dfd);
	close(fd);
	assert_non_null(t);
	return t;
}

/* A distribution binary: every byte matches, and next to nothing is unsupported. */
static void check_system_module(const char *name, const char *path)
{
	struct unwind_table *t;
	struct result res;

	if (access(path, R_OK)) {
		print_message("%s is not installed; not checked\n", path);
		skip();
	}
	t = build_timed(name, path);
	check_module(name, path, NULL, t, &res);
	assert_true((double)res.unsupported < MAX_UNSUP_FRAC * (double)res.code_bytes);
	assert_true(res.kind_rows[UNWIND_CFA_RSP] > 0);
	unwind_table__free(t);
}

static void unwind_table_matches_libdw_at_every_byte_of_fixture(void **state)
{
	const struct unwind_stats *st;
	struct unwind_table *t;
	const struct unwind_row *rows;
	struct result res;
	bool big = false;
	size_t i, nr;

	(void)state;
	t = build_timed("fixture", fx_eh);
	check_module("fixture", fx_eh, NULL, t, &res);
	/* Every shape the fixture was written for is there. */
	rows = unwind_table__rows(t, &nr);
	for (i = 0; i < nr; i++)
		big |= rows[i].cfa == UNWIND_CFA_RSP && rows[i].cfa_off > 65536;
	assert_true(big);
	assert_true(res.kind_rows[UNWIND_CFA_RBP] > 0);
	assert_true(res.kind_rows[UNWIND_CFA_PLT] > 0);
	assert_true(res.kind_rows[UNWIND_CFA_OUTERMOST] > 0);
	assert_true(res.kind_rows[UNWIND_CFA_UNSUPPORTED] > 0);
	st = unwind_table__stats(t);
	assert_true(st->unsupported_bytes[UNWIND_WHY_CFA_REG] > 0);  /* DRAP: CFA = r10 */
	assert_true(st->unsupported_bytes[UNWIND_WHY_CFA_EXPR] > 0); /* CFA = *(RBP - 8) */
	assert_int_equal(res.debug_frame_rows, 0);
	unwind_table__free(t);
}

static void unwind_table_matches_libdw_at_every_byte_of_this_test_binary(void **state)
{
	(void)state;
	check_system_module("test binary", "/proc/self/exe");
}

static void unwind_table_matches_libdw_at_every_byte_of_libc(void **state)
{
	struct unwind_table *t;
	const struct unwind_row *rows;
	size_t i, nr, signal = 0;

	(void)state;
	check_system_module("libc.so.6", LIBC);
	/* __restore_rt: the signal trampoline the kernel returns through. */
	t = unwind_table__build(LIBC);
	assert_non_null(t);
	rows = unwind_table__rows(t, &nr);
	for (i = 0; i < nr; i++)
		signal += rows[i].cfa == UNWIND_CFA_SIGNAL && (rows[i].flags & UNWIND_ROW_F_SIGNAL);
	assert_true(signal >= 1);
	unwind_table__free(t);
}

static void unwind_table_matches_libdw_at_every_byte_of_xz_and_liblzma(void **state)
{
	(void)state;
	check_system_module("xz", XZ);
	check_system_module("liblzma.so.5", LIBLZMA);
}

static void unwind_table_reads_debug_frame_where_eh_frame_has_no_entry(void **state)
{
	struct unwind_table *t;
	struct result res;

	(void)state;
	t = build_timed("fixture (.debug_frame)", fx_debug);
	check_module("fixture (.debug_frame)", fx_debug, NULL, t, &res);
	assert_true(res.debug_frame_rows > 0);
	assert_true(res.kind_rows[UNWIND_CFA_PLT] > 0); /* the linker's .eh_frame still counts */
	unwind_table__free(t);
}

/* The same table from a compressed .debug_frame (SHF_COMPRESSED, gcc -gz). */
static void unwind_table_reads_compressed_debug_frame(void **state)
{
	struct unwind_table *plain, *z;
	const struct unwind_row *a, *b;
	struct result res;
	size_t na, nb;

	(void)state;
	plain = unwind_table__build(fx_debug);
	z = build_timed("fixture (compressed .debug_frame)", fx_debugz);
	check_module("fixture (compressed .debug_frame)", fx_debugz, NULL, z, &res);
	a = unwind_table__rows(plain, &na);
	b = unwind_table__rows(z, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na * sizeof(*a));
	unwind_table__free(z);
	unwind_table__free(plain);
}

static void unwind_table_reads_debug_frame_from_separate_debug_file(void **state)
{
	struct unwind_table *whole, *split;
	const struct unwind_row *a, *b;
	struct result res;
	size_t na, nb;

	(void)state;
	whole = unwind_table__build(fx_debug);
	split = build_with_debug_file(fx_stripped, fx_dbgfile);
	check_module("fixture (stripped + debug file)", fx_stripped, fx_dbgfile, split, &res);
	assert_true(res.debug_frame_rows > 0);
	a = unwind_table__rows(whole, &na);
	b = unwind_table__rows(split, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na * sizeof(*a));
	assert_int_equal(unwind_table__base(whole), unwind_table__base(split));
	unwind_table__free(split);
	unwind_table__free(whole);
}

/* The address of a function in the module's .symtab. */
static uint64_t symbol_addr(const char *path, const char *want)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	uint64_t addr = 0;
	GElf_Shdr sh;
	GElf_Sym sym;
	Elf *elf;
	size_t i;

	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	while (!addr && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			if (gelf_getsym(d, (int)i, &sym) &&
			    strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), want) == 0)
				addr = sym.st_value;
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(addr != 0);
	return addr;
}

static void unwind_table_fills_eh_frame_gaps_from_debug_frame(void **state)
{
	uint64_t a = symbol_addr(fx_mixed, "ov_a"), gap = symbol_addr(fx_mixed, "ov_gap");
	uint64_t b = symbol_addr(fx_mixed, "ov_b");
	const struct unwind_row *row;
	struct unwind_table *t;
	struct result res;

	(void)state;
	t = build_timed("fixture (.eh_frame gap)", fx_mixed);
	check_module("fixture (.eh_frame gap)", fx_mixed, NULL, t, &res);
	assert_int_equal(res.errors, 0);
	/* .eh_frame wins inside the functions; .debug_frame rules fill the gap. */
	row = unwind_table__find(t, a + 8);
	assert_true(row->cfa == UNWIND_CFA_RSP && row->cfa_off == 16 && !row->flags);
	row = unwind_table__find(t, gap);
	assert_true(row->cfa == UNWIND_CFA_RSP && row->cfa_off == 16 &&
		    row->flags == UNWIND_ROW_F_DEBUG_FRAME);
	row = unwind_table__find(t, gap + 12);
	assert_true(row->cfa == UNWIND_CFA_RSP && row->cfa_off == 32 && row->rbp_off == -16);
	row = unwind_table__find(t, gap + 20);
	assert_true(row->cfa == UNWIND_CFA_RBP && row->cfa_off == 16 && row->rbp_off == -16);
	row = unwind_table__find(t, b + 4);
	assert_true(row->cfa == UNWIND_CFA_RSP && row->cfa_off == 32 && !row->flags);
	unwind_table__free(t);
}

/* A DWARF stack machine for the ops of the PLT expression, with the given RSP and RIP. */
static bool eval_plt_ops(const Dwarf_Op *ops, size_t n, uint64_t rsp, uint64_t rip, uint64_t *out)
{
	uint64_t stack[8];
	size_t sp = 0, i;

	for (i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;

		if (a == DW_OP_breg7 || a == DW_OP_breg16) {
			stack[sp++] = (a == DW_OP_breg7 ? rsp : rip) + ops[i].number;
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			stack[sp++] = a - DW_OP_lit0;
		} else if (sp >= 2 &&
			   (a == DW_OP_and || a == DW_OP_ge || a == DW_OP_shl || a == DW_OP_plus)) {
			uint64_t y = stack[--sp], x = stack[--sp];

			stack[sp++] = a == DW_OP_and   ? x & y
				      : a == DW_OP_ge  ? (int64_t)x >= (int64_t)y
				      : a == DW_OP_shl ? x << y
						       : x + y;
		} else {
			return false;
		}
		if (sp == 8)
			return false;
	}
	if (sp != 1)
		return false;
	*out = stack[0];
	return true;
}

/* For every byte of every PLT row: the row's formula gives what libdw's expression gives. */
static void check_plt_formula(const char *path)
{
	struct unwind_table *t = unwind_table__build(path);
	const uint64_t rsp = 0x7ffc0000f000;
	const struct unwind_row *rows;
	size_t i, nr, checked = 0;
	uint64_t base, pc, want;
	struct ref r;

	assert_non_null(t);
	ref_open(&r, path, NULL);
	rows = unwind_table__rows(t, &nr);
	base = unwind_table__base(t);
	for (i = 0; i + 1 < nr; i++) {
		if (rows[i].cfa != UNWIND_CFA_PLT)
			continue;
		for (pc = base + rows[i].pc; pc < base + rows[i + 1].pc; pc++) {
			Dwarf_Frame *f;
			Dwarf_Op *ops;
			size_t n;

			assert_int_equal(dwarf_cfi_addrframe(r.eh, pc, &f), 0);
			assert_int_equal(dwarf_frame_cfa(f, &ops, &n), 0);
			assert_true(eval_plt_ops(ops, n, rsp, pc, &want));
			assert_int_equal(want,
					 rsp + (uint64_t)rows[i].cfa_off +
						 ((pc & 15) >= (uint64_t)rows[i].plt_k ? 8 : 0));
			free(f);
			checked++;
		}
	}
	ref_close(&r);
	unwind_table__free(t);
	print_message("%s: PLT formula equals the DWARF expression at %zu addresses\n", path,
		      checked);
	assert_true(checked > 0);
}

static void unwind_table_plt_rule_equals_the_dwarf_expression(void **state)
{
	(void)state;
	check_plt_formula(fx_eh);
	check_plt_formula(LIBC);
}

static void unwind_table_ends_the_stack_at_start(void **state)
{
	struct unwind_table *t = unwind_table__build(fx_eh);
	uint64_t start = symbol_addr(fx_eh, "_start");
	const struct unwind_row *row;

	(void)state;
	assert_non_null(t);
	row = unwind_table__find(t, start);
	assert_non_null(row);
	assert_int_equal(row->cfa, UNWIND_CFA_OUTERMOST);
	row = unwind_table__find(t, symbol_addr(fx_eh, "many_saves"));
	assert_int_equal(row->cfa, UNWIND_CFA_RSP);
	assert_int_equal(row->cfa_off, 8);
	assert_int_equal(row->rbp_off, 0);
	unwind_table__free(t);
}

static void unwind_table_lookup_edges(void **state)
{
	struct unwind_table *t = unwind_table__build(fx_eh);
	const struct unwind_row *rows;
	uint64_t base;
	size_t nr;

	(void)state;
	assert_non_null(t);
	rows = unwind_table__rows(t, &nr);
	base = unwind_table__base(t);
	assert_null(unwind_table__find(t, base - 1));
	assert_ptr_equal(unwind_table__find(t, base), &rows[0]);
	assert_ptr_equal(unwind_table__find(t, base + rows[nr - 1].pc), &rows[nr - 1]);
	assert_ptr_equal(unwind_table__find(t, UINT64_MAX), &rows[nr - 1]);
	if (nr > 2) {
		assert_ptr_equal(unwind_table__find(t, base + rows[1].pc - 1), &rows[0]);
		assert_ptr_equal(unwind_table__find(t, base + rows[1].pc), &rows[1]);
	}
	unwind_table__free(t);
}

static void unwind_table_rejects_what_it_cannot_read(void **state)
{
	char path[PATH_MAX];
	FILE *f;

	(void)state;
	unwind_table__free(NULL);
	errno = 0;
	assert_null(unwind_table__build("/nonexistent/perch-unwind"));
	assert_int_equal(errno, ENOENT);
	fmt_path(path, sizeof(path), "%s/not-elf", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not an ELF file\n", f);
	fclose(f);
	errno = 0;
	assert_null(unwind_table__build(path));
	assert_int_equal(errno, ENOEXEC);
	errno = 0;
	assert_null(unwind_table__build(fx_nocfi));
	assert_int_equal(errno, ENODATA);
}

/* Read a whole file into memory. */
static char *slurp(const char *path, size_t *size)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return buf;
}

/* Where section name is in the file. */
static void section_extent(char *image, size_t size, const char *name, size_t *off, size_t *len)
{
	Elf *elf = elf_memory(image, size);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	*len = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		assert_non_null(gelf_getshdr(scn, &sh));
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name) == 0) {
			*off = sh.sh_offset;
			*len = sh.sh_size;
		}
	}
	elf_end(elf);
	assert_true(*len > 0);
}

/* Random bytes of section name of path overwritten, MUTATIONS times: tables, when built, are
 * well formed, and nothing reads outside the section (the sanitizer build checks that). */
static void mutate_section(const char *path, const char *name)
{
	size_t size, off = 0, len, i, built = 0;
	char *orig = slurp(path, &size), *image = malloc(size);
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	assert_non_null(image);
	section_extent(orig, size, name, &off, &len);
	for (i = 0; i < MUTATIONS; i++) {
		struct unwind_table *t;
		int j, flips;
		Elf *elf;

		memcpy(image, orig, size);
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		flips = 1 + (int)((seed >> 60) & 7);
		for (j = 0; j < flips; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			image[off + (seed >> 33) % len] = (char)(seed >> 17);
		}
		elf = elf_memory(image, size);
		assert_non_null(elf);
		t = unwind_table__build_elf(elf, NULL);
		if (t) {
			assert_well_formed(t);
			built++;
		}
		unwind_table__free(t);
		elf_end(elf);
	}
	print_message("%d corrupted copies of %s: %zu gave a table\n", MUTATIONS, name, built);
	free(image);
	free(orig);
}

/* Code (crt's) under an .eh_frame that holds crtend.o's zero terminator alone, as ICU's
 * libicudata: no FDE, so no table (ENODATA), not damage (EBADMSG). */
static void unwind_table_terminator_only_eh_frame_is_no_cfi_not_damage(void **state)
{
	static const uint8_t term[4],
		cie_only[] = {0x10, 0,	  0,	0, 0,	 0, 0, 0, 1, 'z', 'R', 0,
			      1,    0x78, 0x10, 1, 0x1b, 0, 0, 0, 0, 0,	  0,   0};
	static const uint8_t bad_len[] = {0xf5, 0xff, 0xff, 0xff, 0, 0, 0, 0};
	size_t size, off = 0, len;
	char *image = slurp(fx_termcfi, &size);

	(void)state;
	section_extent(image, size, ".eh_frame", &off, &len);
	assert_int_equal(len, 4); /* the fixture is what it claims to be */
	free(image);
	errno = 0;
	assert_null(unwind_table__build(fx_termcfi));
	assert_int_equal(errno, ENODATA);
	/* the parser's verdict on sections alone */
	assert_false(eh_holds_fdes(&(struct eh_section){NULL, 0, 0, true}));
	assert_false(eh_holds_fdes(&(struct eh_section){term, sizeof(term), 0x1000, true}));
	assert_false(eh_holds_fdes(&(struct eh_section){cie_only, sizeof(cie_only), 0x1000, true}));
	assert_true(eh_holds_fdes(&(struct eh_section){bad_len, sizeof(bad_len), 0x1000, true}));
}

static void unwind_table_survives_corrupted_cfi(void **state)
{
	(void)state;
	mutate_section(fx_eh, ".eh_frame");
	mutate_section(fx_mixed, ".debug_frame");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unwind_table_matches_libdw_at_every_byte_of_fixture),
		cmocka_unit_test(unwind_table_matches_libdw_at_every_byte_of_this_test_binary),
		cmocka_unit_test(unwind_table_matches_libdw_at_every_byte_of_libc),
		cmocka_unit_test(unwind_table_matches_libdw_at_every_byte_of_xz_and_liblzma),
		cmocka_unit_test(unwind_table_reads_debug_frame_where_eh_frame_has_no_entry),
		cmocka_unit_test(unwind_table_reads_compressed_debug_frame),
		cmocka_unit_test(unwind_table_reads_debug_frame_from_separate_debug_file),
		cmocka_unit_test(unwind_table_fills_eh_frame_gaps_from_debug_frame),
		cmocka_unit_test(unwind_table_plt_rule_equals_the_dwarf_expression),
		cmocka_unit_test(unwind_table_ends_the_stack_at_start),
		cmocka_unit_test(unwind_table_lookup_edges),
		cmocka_unit_test(unwind_table_rejects_what_it_cannot_read),
		cmocka_unit_test(unwind_table_terminator_only_eh_frame_is_no_cfi_not_damage),
		cmocka_unit_test(unwind_table_survives_corrupted_cfi),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
