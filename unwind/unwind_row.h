/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One row of a module's unwind table: the layout the userspace builder (unwind/unwind_table.c)
 * writes and the BPF unwinder will binary-search in an array map. Fixed-width types only, no
 * pointers; the includer provides __u32 and friends (vmlinux.h in BPF, <linux/types.h> in
 * userspace).
 *
 * A row covers [base + pc, base + next row's pc) in the module's ELF virtual address space,
 * where base is the table's first address (kept next to the table, not in the rows): code of
 * one module spans far less than 4 GiB, so a 32-bit offset is enough and a row is 12 bytes with
 * every field naturally aligned. The last row of a table is always UNWIND_CFA_NONE.
 *
 * x86-64 only. Unwinding one frame with a row (CFA: the canonical frame address, the caller's
 * RSP):
 *
 *   UNWIND_CFA_RSP        CFA = RSP + cfa_off
 *   UNWIND_CFA_RBP        CFA = RBP + cfa_off
 *   UNWIND_CFA_PLT        CFA = RSP + cfa_off + ((RIP & 15) >= plt_k ? 8 : 0): the expression the
 *                         linker writes for lazy PLT stubs (cfa_off 8, plt_k 11; 10 with IBT)
 *       then: caller's RIP = *(CFA - 8), caller's RSP = CFA,
 *             caller's RBP = rbp_off ? *(CFA + rbp_off) : RBP (PLT rows: always RBP)
 *   UNWIND_CFA_SIGNAL     a signal trampoline (__restore_rt): the kernel's ucontext_t is at
 *                         RSP + cfa_off; the interrupted RIP, RSP and RBP are its
 *                         uc_mcontext.gregs[REG_RIP], [REG_RSP] and [REG_RBP]
 *   UNWIND_CFA_OUTERMOST  the return address is undefined (_start, a thread's start): the stack
 *                         is complete here
 *   UNWIND_CFA_NONE       no CFI covers the address (between FDEs, outside them)
 *   UNWIND_CFA_UNSUPPORTED CFI exists but says something these rows cannot: unwinding stops
 *                         and the sample is counted as truncated
 *
 * The builder verifies that the return address is saved at CFA - 8 and the caller's RSP is the
 * CFA for every RSP/RBP/PLT row; rows where it is not are UNSUPPORTED. cfa_off and rbp_off are
 * 0 in rows of the other kinds, so equal rules give equal rows and adjacent ones merge.
 */
#ifndef PERCH_UNWIND_ROW_H
#define PERCH_UNWIND_ROW_H

enum unwind_cfa {
	UNWIND_CFA_NONE = 0,
	UNWIND_CFA_RSP,
	UNWIND_CFA_RBP,
	UNWIND_CFA_PLT,
	UNWIND_CFA_SIGNAL,
	UNWIND_CFA_OUTERMOST,
	UNWIND_CFA_UNSUPPORTED,
	UNWIND_CFA_MAX,
};

enum unwind_row_flags {
	/* From a CIE with the 'S' augmentation: the caller's RIP is the exact interrupted
	 * instruction, not a return address (symbolize it as is, not RIP - 1). */
	UNWIND_ROW_F_SIGNAL = 1 << 0,
	/* Read from .debug_frame: no .eh_frame entry covers the address. */
	UNWIND_ROW_F_DEBUG_FRAME = 1 << 1,
};

struct unwind_row {
	__u32 pc;      /* first address covered, as an offset from the table's base */
	__s32 cfa_off; /* see the kinds above */
	union {
		__s16 rbp_off; /* RSP/RBP rows: caller's RBP is saved at CFA + rbp_off; 0: unchanged */
		__s16 plt_k; /* PLT rows: the (RIP & 15) threshold */
	};
	__u8 cfa;   /* enum unwind_cfa */
	__u8 flags; /* enum unwind_row_flags */
};

#endif /* PERCH_UNWIND_ROW_H */
