/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to symbolize/. The one .debug_line decoder, for the two readers that go straight to
 * the section bytes instead of through libdw: the DWARF index, for where each unit's code is
 * (the span of every sequence), and the line discriminators (linediscs.c). Only addresses and
 * discriminators are followed, not files or lines: both read every line table of a module, so
 * the opcode loop is kept tight. The rows libdw makes of the same program are at the same
 * addresses.
 */
#ifndef PERCH_LINE_PROGRAM_H
#define PERCH_LINE_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/dwcursor.h"

struct line_program {
	struct dwcursor c; /* the opcodes, up to the unit's end */
	unsigned int min_inst, max_ops, opcode_base;
	const uint8_t *std_lengths; /* operand counts of opcodes 1 .. opcode_base - 1 */
	uint8_t special[256];	    /* operation advance of each special opcode */
	uint64_t addr;		    /* the state machine's address register */
	uint64_t op_index;	    /* VLIW only: 0 where max_ops is 1 */
	uint32_t disc;		    /* the discriminator register */
	uint64_t at;		    /* the address of the event line_program__next() returned */
	uint32_t at_disc;	    /* the discriminator of the row it returned */
};

/*
 * Start the line-program unit at c, and leave c at the next unit. False for a unit that cannot be
 * read (c is then bad when the rest of the section cannot be read either).
 */
bool line_program__begin(struct line_program *lp, struct dwcursor *c);

enum line_event {
	LINE_DONE,	   /* the program ended, or a byte was not understood */
	LINE_ROW,	   /* a row at lp->at, with discriminator lp->at_disc */
	LINE_END_SEQUENCE, /* the sequence ends at lp->at */
};

/* The next row or end of sequence of the program. At LINE_DONE, lp->at is where the address
 * register stood. */
enum line_event line_program__next(struct line_program *lp);

#endif /* PERCH_LINE_PROGRAM_H */
