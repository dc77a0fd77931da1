// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * .eh_frame and .debug_frame reader and CFA program interpreter (see cfi.h).
 *
 * A first pass reads every CIE of the section (augmentation, alignment factors, pointer encoding,
 * the state its initial instructions leave); a second pass executes each FDE's program from its
 * CIE's state and writes one row each time the location advances, exactly where libdw's
 * execute_cfi starts a new row, so both answer the same at every address. Only the rules an
 * x86-64 frame walk needs are kept (CFA, RBP, RSP, return address); the others are parsed and
 * dropped.
 *
 * Every read is bounds-checked against the section: corrupt CFI gives skipped FDEs or BAD_CFI
 * rows, never a read outside it.
 */
#include <dwarf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>

#include "cfi.h"
#include "lib/dwcursor.h"
#include "lib/ehframe.h"
#include "lib/search.h"
#include "lib/vec.h"

/* DWARF register numbers on x86-64. */
#define DW_REG_RBP 6
#define DW_REG_RSP 7
#define DW_REG_RIP 16

/* Deeper DW_CFA_remember_state nesting is treated as corrupt (compilers nest one or two). */
#define STATE_STACK_MAX 32

/* Where the kernel's signal frame keeps the interrupted registers, relative to RSP in
 * __restore_rt (the ucontext_t comes right after the popped return address). */
#define UC_GREG(r) ((int64_t)offsetof(ucontext_t, uc_mcontext.gregs[r]))

enum rule_kind {
	RULE_UNSPEC = 0, /* no instruction named the register */
	RULE_UNDEF,
	RULE_SAME,
	RULE_OFFSET,	 /* saved at CFA + off */
	RULE_VAL_OFFSET, /* is CFA + off */
	RULE_REGISTER,	 /* in register off */
	RULE_EXPR,	 /* saved at the address expr computes */
	RULE_VAL_EXPR,
};

struct rule {
	uint8_t kind;
	int64_t off;
	const uint8_t *expr;
	uint64_t len;
};

enum cfa_kind {
	CFA_UNSET = 0,
	CFA_REG,     /* reg + off */
	CFA_EXPR,    /* expr */
	CFA_INVALID, /* def_cfa_register/offset applied to an expression */
};

/* The registers whose rules a frame walk needs; the others are parsed and dropped. */
enum tracked_reg {
	T_RBP,
	T_RSP,
	T_RA,
	T_MAX,
};

struct state {
	uint8_t cfa;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *expr;
	uint64_t len;
	struct rule regs[T_MAX];
};

struct cie {
	struct eh_cie h; /* the header: layout of its FDEs, alignment factors, initial program */
	bool bad;	 /* initial instructions could not be executed */
	struct state init;
};

struct cies {
	struct cie *v;
	size_t nr, cap;
};

struct interp {
	const struct eh_section *sec;
	const struct cie *cie;
	bool in_cie; /* running the CIE's initial instructions: no rows, no restores */
	struct state st;
	struct state stack[STATE_STACK_MAX];
	unsigned int depth;
};

/* Skip a DW_FORM_block (ULEB128 length, then the bytes); its bytes in *p, *len. */
static bool rd_block(struct dwcursor *c, const uint8_t **p, uint64_t *len)
{
	*len = dwc_uleb(c);
	if (c->bad || *len > (uint64_t)(c->end - c->p))
		return false;
	*p = c->p;
	c->p += *len;
	return true;
}

/* Factored offsets wrap like libdw's Dwarf_Word arithmetic instead of overflowing. */
static int64_t factored(uint64_t v, int64_t factor)
{
	return (int64_t)(v * (uint64_t)factor);
}

enum step {
	STEP_ERR = -1,
	STEP_NEXT = 0,
	STEP_ADVANCE = 1, /* *loc moved: a new row starts */
};

static int tracked(const struct cie *cie, uint64_t reg)
{
	if (reg == cie->h.ra_reg)
		return T_RA;
	if (reg == DW_REG_RBP)
		return T_RBP;
	if (reg == DW_REG_RSP)
		return T_RSP;
	return -1;
}

static void set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off,
		     const uint8_t *expr, uint64_t len)
{
	int t = tracked(in->cie, reg);

	if (t >= 0)
		in->st.regs[t] = (struct rule){kind, off, expr, len};
}

/* DW_CFA_restore: back to the CIE's rule. Not allowed in the CIE's own instructions. */
static enum step restore(struct interp *in, uint64_t reg)
{
	int t = tracked(in->cie, reg);

	if (in->in_cie)
		return STEP_ERR;
	if (t >= 0)
		in->st.regs[t] = in->cie->init.regs[t];
	return STEP_NEXT;
}

/* DW_CFA_def_cfa_register and _offset only modify a register rule; libdw marks the CFA
 * invalid when there is none to modify. */
static bool cfa_is_reg(struct state *st)
{
	if (st->cfa == CFA_REG)
		return true;
	st->cfa = CFA_INVALID;
	return false;
}

/* Rules with a register operand, the primary DW_CFA_offset and DW_CFA_restore excluded. */
static enum step step_reg(struct interp *in, struct dwcursor *c, uint8_t op)
{
	const struct cie *cie = in->cie;
	uint64_t reg = dwc_uleb(c), v;
	const uint8_t *expr;
	uint64_t len;

	switch (op) {
	case DW_CFA_offset_extended:
		v = dwc_uleb(c);
		set_rule(in, reg, RULE_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		break;
	case DW_CFA_offset_extended_sf:
		v = (uint64_t)dwc_sleb(c);
		set_rule(in, reg, RULE_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		break;
	case DW_CFA_GNU_negative_offset_extended:
		v = -dwc_uleb(c);
		set_rule(in, reg, RULE_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		break;
	case DW_CFA_val_offset:
		v = dwc_uleb(c);
		set_rule(in, reg, RULE_VAL_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		break;
	case DW_CFA_val_offset_sf:
		v = (uint64_t)dwc_sleb(c);
		set_rule(in, reg, RULE_VAL_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		break;
	case DW_CFA_restore_extended:
		if (restore(in, reg) == STEP_ERR)
			return STEP_ERR;
		break;
	case DW_CFA_undefined:
		set_rule(in, reg, RULE_UNDEF, 0, NULL, 0);
		break;
	case DW_CFA_same_value:
		set_rule(in, reg, RULE_SAME, 0, NULL, 0);
		break;
	case DW_CFA_register:
		v = dwc_uleb(c);
		set_rule(in, reg, RULE_REGISTER, (int64_t)v, NULL, 0);
		break;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (!rd_block(c, &expr, &len))
			return STEP_ERR;
		set_rule(in, reg, op == DW_CFA_expression ? RULE_EXPR : RULE_VAL_EXPR, 0, expr,
			 len);
		break;
	default:
		return STEP_ERR;
	}
	return c->bad ? STEP_ERR : STEP_NEXT;
}

static enum step step_cfa(struct interp *in, struct dwcursor *c, uint8_t op)
{
	struct state *st = &in->st;
	uint64_t reg;

	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		reg = dwc_uleb(c);
		st->cfa = CFA_REG;
		st->cfa_reg = reg;
		if (op == DW_CFA_def_cfa)
			st->cfa_off = (int64_t)dwc_uleb(c);
		else
			st->cfa_off = factored((uint64_t)dwc_sleb(c), in->cie->h.data_align);
		break;
	case DW_CFA_def_cfa_register:
		reg = dwc_uleb(c);
		if (cfa_is_reg(st))
			st->cfa_reg = reg;
		break;
	case DW_CFA_def_cfa_offset:
		st->cfa_off = (int64_t)dwc_uleb(c);
		cfa_is_reg(st);
		break;
	case DW_CFA_def_cfa_offset_sf:
		st->cfa_off = factored((uint64_t)dwc_sleb(c), in->cie->h.data_align);
		cfa_is_reg(st);
		break;
	case DW_CFA_def_cfa_expression:
		if (!rd_block(c, &st->expr, &st->len))
			return STEP_ERR;
		st->cfa = CFA_EXPR;
		break;
	default:
		return STEP_ERR;
	}
	return c->bad ? STEP_ERR : STEP_NEXT;
}

static enum step advance(struct dwcursor *c, uint64_t delta, const struct cie *cie, uint64_t *loc)
{
	if (c->bad)
		return STEP_ERR;
	*loc += delta * cie->h.code_align;
	return STEP_ADVANCE;
}

/* Execute one instruction. */
static enum step step(struct interp *in, struct dwcursor *c, uint64_t *loc)
{
	const struct cie *cie = in->cie;
	uint8_t op = (uint8_t)dwc_u(c, 1);
	uint64_t v;

	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		return advance(c, op & 0x3f, cie, loc);
	case DW_CFA_offset:
		v = dwc_uleb(c);
		set_rule(in, op & 0x3f, RULE_OFFSET, factored(v, cie->h.data_align), NULL, 0);
		return c->bad ? STEP_ERR : STEP_NEXT;
	case DW_CFA_restore:
		return restore(in, op & 0x3f);
	}
	switch (op) {
	case DW_CFA_nop:
		return c->bad ? STEP_ERR : STEP_NEXT;
	case DW_CFA_set_loc:
		if (!eh_read_encoded(in->sec, c, cie->h.fde_enc, true, &v))
			return STEP_ERR;
		*loc = v;
		return STEP_ADVANCE;
	case DW_CFA_advance_loc1:
		return advance(c, dwc_u(c, 1), cie, loc);
	case DW_CFA_advance_loc2:
		return advance(c, dwc_u(c, 2), cie, loc);
	case DW_CFA_advance_loc4:
		return advance(c, dwc_u(c, 4), cie, loc);
	case DW_CFA_MIPS_advance_loc8:
		return advance(c, dwc_u(c, 8), cie, loc);
	case DW_CFA_remember_state:
		if (in->depth == STATE_STACK_MAX)
			return STEP_ERR;
		in->stack[in->depth++] = in->st;
		return STEP_NEXT;
	case DW_CFA_restore_state:
		if (!in->depth)
			return STEP_ERR;
		in->st = in->stack[--in->depth];
		return STEP_NEXT;
	case DW_CFA_GNU_args_size:
		dwc_uleb(c);
		return c->bad ? STEP_ERR : STEP_NEXT;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_def_cfa_expression:
		return step_cfa(in, c, op);
	default:
		/* The register rules; anything else (DW_CFA_GNU_window_save is SPARC's) is
		 * corrupt here. */
		return step_reg(in, c, op);
	}
}

/* DW_OP_breg<reg> <sleb128> at c; its offset in *off. */
static bool match_breg(struct dwcursor *c, unsigned int reg, int64_t *off)
{
	if (c->p >= c->end || *c->p != DW_OP_breg0 + reg)
		return false;
	c->p++;
	*off = dwc_sleb(c);
	return !c->bad;
}

/* An expression that is exactly DW_OP_breg<reg> off, then the bytes of tail. */
static bool expr_is(const uint8_t *expr, uint64_t len, unsigned int reg, int64_t off,
		    const uint8_t *tail, size_t tail_len)
{
	struct dwcursor c = dwc_make(expr, expr + len);
	int64_t got;

	return match_breg(&c, reg, &got) && got == off && (size_t)(c.end - c.p) == tail_len &&
	       (!tail_len || memcmp(c.p, tail, tail_len) == 0);
}

/*
 * The lazy PLT expression binutils writes:
 *   DW_OP_breg7 (rsp) OFF; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and; DW_OP_lit<K>;
 *   DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. CFA = RSP + OFF + ((RIP & 15) >= K ? 8 : 0) (K is 11, 10 with IBT, 5 with MPX).
 */
static bool expr_is_plt(const uint8_t *expr, uint64_t len, int64_t *off, int *k)
{
	struct dwcursor c = dwc_make(expr, expr + len);
	int64_t zero;

	if (!match_breg(&c, DW_REG_RSP, off) || !match_breg(&c, DW_REG_RIP, &zero) || zero ||
	    c.end - c.p != 7)
		return false;
	if (c.p[0] != DW_OP_lit15 || c.p[1] != DW_OP_and || c.p[2] < DW_OP_lit0 ||
	    c.p[2] > DW_OP_lit31 || c.p[3] != DW_OP_ge || c.p[4] != DW_OP_lit3 ||
	    c.p[5] != DW_OP_shl || c.p[6] != DW_OP_plus)
		return false;
	*k = c.p[2] - DW_OP_lit0;
	return true;
}

/*
 * __restore_rt's rules, as glibc writes them: CFA = *(RSP + gregs[REG_RSP]), and RIP, RBP (and
 * RSP, if named) saved at RSP + their gregs slots. That is the kernel's signal frame layout, so
 * the BPF side reads the ucontext_t at RSP instead of following rules.
 */
static bool saved_in_ucontext(const struct rule *r, int greg)
{
	return r->kind == RULE_EXPR && expr_is(r->expr, r->len, DW_REG_RSP, UC_GREG(greg), NULL, 0);
}

static bool is_sigframe(const struct state *st)
{
	static const uint8_t deref[] = {DW_OP_deref};

	return st->cfa == CFA_EXPR &&
	       expr_is(st->expr, st->len, DW_REG_RSP, UC_GREG(REG_RSP), deref, 1) &&
	       saved_in_ucontext(&st->regs[T_RA], REG_RIP) &&
	       saved_in_ucontext(&st->regs[T_RBP], REG_RBP) &&
	       (st->regs[T_RSP].kind == RULE_UNSPEC ||
		saved_in_ucontext(&st->regs[T_RSP], REG_RSP));
}

static uint8_t classify_cfa(const struct state *st, struct unwind_row *row)
{
	int64_t off;
	int k;

	switch (st->cfa) {
	case CFA_REG:
		if (st->cfa_reg != DW_REG_RSP && st->cfa_reg != DW_REG_RBP)
			return UNWIND_WHY_CFA_REG;
		if (st->cfa_off < INT32_MIN || st->cfa_off > INT32_MAX)
			return UNWIND_WHY_RANGE;
		row->cfa = st->cfa_reg == DW_REG_RSP ? UNWIND_CFA_RSP : UNWIND_CFA_RBP;
		row->cfa_off = (int32_t)st->cfa_off;
		return UNWIND_WHY_MAX;
	case CFA_EXPR:
		if (!expr_is_plt(st->expr, st->len, &off, &k))
			return UNWIND_WHY_CFA_EXPR;
		if (off < INT32_MIN || off > INT32_MAX)
			return UNWIND_WHY_RANGE;
		row->cfa = UNWIND_CFA_PLT;
		row->cfa_off = (int32_t)off;
		row->plt_k = (int16_t)k;
		return UNWIND_WHY_MAX;
	default:
		return UNWIND_WHY_BAD_CFI;
	}
}

/* The caller's RBP: unchanged, or saved at CFA + rbp_off. */
static uint8_t classify_rbp(const struct state *st, struct unwind_row *row)
{
	switch (st->regs[T_RBP].kind) {
	case RULE_UNSPEC:
	case RULE_UNDEF:
	case RULE_SAME:
		return UNWIND_WHY_MAX;
	case RULE_OFFSET:
		if (!st->regs[T_RBP].off || st->regs[T_RBP].off < INT16_MIN ||
		    st->regs[T_RBP].off > INT16_MAX)
			return UNWIND_WHY_RANGE;
		if (row->cfa == UNWIND_CFA_PLT)
			return UNWIND_WHY_RBP; /* plt_k takes the field */
		row->rbp_off = (int16_t)st->regs[T_RBP].off;
		return UNWIND_WHY_MAX;
	default:
		return UNWIND_WHY_RBP;
	}
}

/* The row the rules in force at pc give; r.why says why it is unsupported, if it is. */
static struct cfi_row classify(const struct interp *in, uint64_t pc)
{
	const struct state *st = &in->st;
	const struct cie *cie = in->cie;
	struct cfi_row r = {.pc = pc, .why = UNWIND_WHY_MAX};
	uint8_t why;

	r.row.flags = (cie->h.signal ? UNWIND_ROW_F_SIGNAL : 0) |
		      (in->sec->eh ? 0 : UNWIND_ROW_F_DEBUG_FRAME);
	if (cie->h.signal && is_sigframe(st)) {
		r.row.cfa = UNWIND_CFA_SIGNAL;
		return r;
	}
	if (cie->h.ra_reg == DW_REG_RIP && st->regs[T_RA].kind == RULE_UNDEF) {
		r.row.cfa = UNWIND_CFA_OUTERMOST;
		return r;
	}
	why = classify_cfa(st, &r.row);
	if (why == UNWIND_WHY_MAX &&
	    (cie->h.ra_reg != DW_REG_RIP || st->regs[T_RA].kind != RULE_OFFSET ||
	     st->regs[T_RA].off != -8))
		why = UNWIND_WHY_RA;
	/* The caller's RSP is the CFA: the ABI's default, or said again explicitly. */
	if (why == UNWIND_WHY_MAX && st->regs[T_RSP].kind != RULE_UNSPEC &&
	    !(st->regs[T_RSP].kind == RULE_VAL_OFFSET && st->regs[T_RSP].off == 0))
		why = UNWIND_WHY_RSP;
	if (why == UNWIND_WHY_MAX)
		why = classify_rbp(st, &r.row);
	if (why != UNWIND_WHY_MAX) {
		r.row = (struct unwind_row){.cfa = UNWIND_CFA_UNSUPPORTED, .flags = r.row.flags};
		r.why = why;
	}
	return r;
}

static int push_row(struct cfi_rows *out, struct cfi_row row)
{
	if (vec_grow(&out->rows, &out->cap_rows, out->nr_rows + 1, sizeof(*out->rows), 4096))
		return -ENOMEM;
	out->rows[out->nr_rows++] = row;
	return 0;
}

static int push_run(struct cfi_rows *out, struct cfi_run run)
{
	if (vec_grow(&out->runs, &out->cap_runs, out->nr_runs + 1, sizeof(*out->runs), 1024))
		return -ENOMEM;
	out->runs[out->nr_runs++] = run;
	return 0;
}

static struct cfi_row bad_row(const struct interp *in, uint64_t pc)
{
	struct cfi_row r = {.pc = pc, .why = UNWIND_WHY_BAD_CFI};

	r.row.cfa = UNWIND_CFA_UNSUPPORTED;
	r.row.flags = (in->cie->h.signal ? UNWIND_ROW_F_SIGNAL : 0) |
		      (in->sec->eh ? 0 : UNWIND_ROW_F_DEBUG_FRAME);
	return r;
}

/*
 * Execute an FDE's program over [lo, hi) and append its rows. A row is written when the
 * location moves past the row's start; from the row holding an instruction that cannot be
 * executed on, the rest of the FDE is one BAD_CFI row (libdw fails there too).
 */
static int run_fde(struct interp *in, struct dwcursor *c, uint64_t lo, uint64_t hi,
		   struct cfi_rows *out)
{
	struct cfi_run run = {.lo = lo, .hi = hi, .first = out->nr_rows};
	uint64_t loc = lo, next;
	enum step s;
	int err = 0;

	in->st = in->cie->init;
	in->depth = 0;
	if (in->cie->bad) {
		err = push_row(out, bad_row(in, loc));
		goto out;
	}
	while (c->p < c->end && loc < hi) {
		next = loc;
		s = step(in, c, &next);
		if (s == STEP_ADVANCE && next < loc)
			s = STEP_ERR;
		if (s == STEP_ERR) {
			err = push_row(out, bad_row(in, loc));
			goto out;
		}
		if (s == STEP_ADVANCE && next > loc) {
			err = push_row(out, classify(in, loc));
			if (err)
				goto out;
			loc = next;
		}
	}
	if (loc < hi)
		err = push_row(out, classify(in, loc));
out:
	if (err)
		return err;
	run.n = out->nr_rows - run.first;
	return push_run(out, run);
}

/* The CIE at section offset off (cies are read in section order, so sorted), or NULL. */
static const struct cie *find_cie(const struct cies *cies, uint64_t off)
{
	size_t i = search_last_le(cies->v, cies->nr, h.off, off);

	return i && cies->v[i - 1].h.off == off ? &cies->v[i - 1] : NULL;
}

/* Execute the CIE's initial instructions: the state every FDE of it starts from. */
static void cie_initial_state(const struct eh_section *sec, struct cie *cie)
{
	struct dwcursor c = dwc_make(cie->h.insns, cie->h.insns_end);
	struct interp in = {.sec = sec, .cie = cie, .in_cie = true};
	uint64_t loc = 0;

	/* A row (location change) or a restore in a CIE is an error, as in libdw. */
	while (c.p < c.end) {
		if (step(&in, &c, &loc) != STEP_NEXT) {
			cie->bad = true;
			break;
		}
	}
	cie->init = in.st;
}

/* Read a CIE and run its initial instructions; false when it cannot be read (its FDEs are then
 * skipped). */
static bool parse_cie(const struct eh_section *sec, const struct eh_entry *e, struct cie *cie)
{
	memset(cie, 0, sizeof(*cie));
	if (!eh_parse_cie(sec, e, &cie->h))
		return false;
	cie_initial_state(sec, cie);
	return true;
}

static int read_cies(const struct eh_section *sec, struct cies *cies, struct unwind_stats *st)
{
	struct eh_entry e;
	uint64_t off = 0;

	while (eh_next_entry(sec, &off, &e) > 0) {
		if (!e.is_cie)
			continue;
		if (vec_grow(&cies->v, &cies->cap, cies->nr + 1, sizeof(*cies->v), 64))
			return -ENOMEM;
		if (parse_cie(sec, &e, &cies->v[cies->nr])) {
			cies->nr++;
			st->cies++;
		}
	}
	return 0;
}

/* Read one FDE and run its program. Unreadable ones are skipped and counted. */
static int decode_fde(struct interp *in, const struct cies *cies, struct eh_entry *e,
		      struct cfi_rows *out, struct unwind_stats *st)
{
	const struct cie *cie = find_cie(cies, e->cie_off);
	struct eh_range r;

	if (in->sec->eh)
		st->fdes_eh++;
	else
		st->fdes_debug++;
	if (!cie || !eh_fde_range(in->sec, &cie->h, &e->body, &r))
		goto skip;
	in->cie = cie;
	return run_fde(in, &e->body, r.lo, r.hi, out);
skip:
	st->fdes_skipped++;
	return 0;
}

int unwind_cfi__decode(const struct eh_section *sec, struct cfi_rows *out, struct unwind_stats *st)
{
	struct interp *in = NULL;
	struct cies cies = {0};
	uint64_t off = 0;
	struct eh_entry e;
	int err;

	err = read_cies(sec, &cies, st);
	if (err)
		goto out;
	in = calloc(1, sizeof(*in));
	if (!in) {
		err = -ENOMEM;
		goto out;
	}
	in->sec = sec;
	while (eh_next_entry(sec, &off, &e) > 0) {
		if (e.is_cie)
			continue;
		err = decode_fde(in, &cies, &e, out, st);
		if (err)
			goto out;
	}
out:
	free(in);
	free(cies.v);
	return err;
}

void unwind_cfi__release(struct cfi_rows *r)
{
	free(r->rows);
	free(r->runs);
	memset(r, 0, sizeof(*r));
}
