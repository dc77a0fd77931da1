// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The .debug_line opcode decoder (see line_program.h). */
#include <dwarf.h>
#include <stddef.h>
#include <string.h>

#include "line_program.h"

/* The header fields after the unit length; lp->c ends at the unit's end. False when libdw could
 * not read it either. */
static bool read_header(struct line_program *lp, struct dwcursor *u, size_t off_size)
{
	unsigned int version = dwc_u16(u), line_range, q = 0, rem = 0;
	const uint8_t *prog;
	uint64_t hlen;

	if (version < 2 || version > 5)
		return false;
	if (version >= 5)
		dwc_skip(u, 2); /* address_size, segment_selector_size */
	hlen = dwc_offset(u, off_size);
	if (u->bad || hlen > dwc_left(u))
		return false;
	prog = u->p + hlen;
	lp->min_inst = dwc_u8(u);
	lp->max_ops = version >= 4 ? dwc_u8(u) : 1;
	dwc_skip(u, 2); /* default_is_stmt, line_base */
	line_range = dwc_u8(u);
	lp->opcode_base = dwc_u8(u);
	lp->std_lengths = u->p;
	/* The operand counts lie between here and the first opcode. */
	if (u->bad || !lp->max_ops || !line_range || !lp->opcode_base || prog < u->p ||
	    (size_t)(prog - u->p) < (size_t)lp->opcode_base - 1)
		return false;
	/* A special opcode's operation advance, (op - opcode_base) / line_range, without dividing. */
	for (unsigned int op = lp->opcode_base; op < 256; op++) {
		lp->special[op] = (uint8_t)q;
		if (++rem == line_range) {
			rem = 0;
			q++;
		}
	}
	lp->c = (struct dwcursor){.p = prog, .end = u->end, .msb = u->msb};
	return true;
}

bool line_program__begin(struct line_program *lp, struct dwcursor *c)
{
	struct dwcursor u = *c;
	size_t off_size;
	uint64_t len = dwc_unit_length(&u, &off_size);

	memset(lp, 0, sizeof(*lp));
	if (u.bad || len > dwc_left(&u)) {
		dwc_fail(c);
		return false;
	}
	u.end = u.p + len;
	c->p = u.end;
	return read_header(lp, &u, off_size);
}

static void advance(struct line_program *lp, uint64_t adv)
{
	if (lp->max_ops == 1) {
		lp->addr += lp->min_inst * adv;
	} else {
		lp->addr += lp->min_inst * ((lp->op_index + adv) / lp->max_ops);
		lp->op_index = (lp->op_index + adv) % lp->max_ops;
	}
}

static enum line_event row(struct line_program *lp)
{
	lp->at = lp->addr;
	lp->at_disc = lp->disc;
	lp->disc = 0;
	return LINE_ROW;
}

/* An extended opcode at lp->c: 1 when it ends the sequence, 0 when the program goes on, -1 when
 * it cannot be read. */
static int extended(struct line_program *lp)
{
	uint64_t len = dwc_uleb(&lp->c);
	struct dwcursor a;
	uint8_t sub;

	if (lp->c.bad || !len || len > dwc_left(&lp->c))
		return -1;
	a = (struct dwcursor){.p = lp->c.p + 1, .end = lp->c.p + len, .msb = lp->c.msb};
	sub = *lp->c.p;
	lp->c.p += len;
	if (sub == DW_LNE_set_address) {
		lp->addr = dwc_u(&a, len - 1 <= 8 ? len - 1 : 8);
		lp->op_index = 0;
	} else if (sub == DW_LNE_set_discriminator) {
		lp->disc = (uint32_t)dwc_uleb(&a);
	} else if (sub == DW_LNE_end_sequence) {
		lp->at = lp->addr;
		lp->addr = lp->op_index = lp->disc = 0;
		return 1;
	}
	return 0;
}

/* A standard opcode other than the ones that move the address: its LEB128 operands, skipped. */
static void skip_operands(struct line_program *lp, unsigned int op)
{
	const uint8_t *p = lp->c.p, *end = lp->c.end;

	for (unsigned int i = lp->std_lengths[op - 1]; i && p < end; p++)
		i -= !(*p & 0x80);
	lp->c.p = p;
}

enum line_event line_program__next(struct line_program *lp)
{
	int ext;

	while (lp->c.p < lp->c.end) {
		unsigned int op = *lp->c.p++;

		if (op >= lp->opcode_base) {
			advance(lp, lp->special[op]);
			return row(lp);
		}
		switch (op) {
		case 0:
			ext = extended(lp);
			if (ext > 0)
				return LINE_END_SEQUENCE;
			if (ext < 0)
				goto done;
			break;
		case DW_LNS_copy:
			return row(lp);
		case DW_LNS_advance_pc:
			advance(lp, dwc_uleb(&lp->c));
			break;
		case DW_LNS_const_add_pc:
			advance(lp, lp->special[255]);
			break;
		case DW_LNS_fixed_advance_pc:
			lp->addr += dwc_u16(&lp->c);
			lp->op_index = 0;
			break;
		default:
			skip_operands(lp, op);
			break;
		}
	}
done:
	lp->at = lp->addr;
	return LINE_DONE;
}
