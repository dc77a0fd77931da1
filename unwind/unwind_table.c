// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwind table assembly (see unwind_table.h). cfi.c turns every FDE into a run of rows; this
 * part keeps the runs that lie in the module's executable segments, decides which FDE owns each
 * address, fills the gaps with NONE rows and merges equal neighbours:
 *
 *   1. .eh_frame runs sorted by start; one that the next starts inside is cut there (the owner
 *      of an address is the last FDE starting at or before it, as in .eh_frame_hdr's search);
 *   2. .debug_frame runs, ordered the same way, keep only what no .eh_frame run covers;
 *   3. the pieces, in address order, are copied row by row (a piece starting inside a run
 *      starts with the row in force there), NONE rows between and after them.
 *
 * Row pcs are stored as 32-bit offsets from the first covered address (unwind_row.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "lib/elfinit.h"
#include "lib/log.h"
#include "lib/search.h"
#include "lib/vec.h"
#include "unwind_table.h"

_Static_assert(sizeof(struct unwind_row) == 12, "rows are 12 bytes: see unwind_row.h");

/* An executable PT_LOAD segment: where its bytes are in the file and in the module's address
 * space (to place the table in a process that mapped the file). */
struct unwind_segment {
	uint64_t vaddr, offset, filesz;
};

struct unwind_table {
	uint64_t base;
	struct unwind_row *rows;
	size_t nr;
	struct unwind_stats stats;
	struct unwind_segment *segs;
	size_t nr_segs;
};

/* Part of a run that owns [lo, hi). */
struct piece {
	uint64_t lo, hi;
	size_t order; /* the FDE's place in its section */
	const struct cfi_rows *src;
	const struct cfi_run *run;
};

struct pieces {
	struct piece *v;
	size_t nr, cap;
};

struct range {
	uint64_t lo, hi;
};

/* What the module gives: its CFI sections and where its code is. */
struct module {
	struct eh_section eh, debug;
	struct range *exec;	     /* executable PT_LOAD segments */
	struct unwind_segment *segs; /* the same, with their file offsets */
	size_t nr_exec;
};

/* Rows being assembled, at absolute addresses. */
struct out_rows {
	struct cfi_row *v;
	size_t nr, cap;
};

static int push_piece(struct pieces *p, struct piece piece)
{
	if (vec_grow(&p->v, &p->cap, p->nr + 1, sizeof(*p->v), 1024))
		return -ENOMEM;
	p->v[p->nr++] = piece;
	return 0;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* The same start: keep the section's order, so the first FDE is the one kept. */
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool in_exec(const struct module *m, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < m->nr_exec; i++) {
		if (lo >= m->exec[i].lo && hi <= m->exec[i].hi)
			return true;
	}
	return false;
}

/*
 * The runs of src as pieces, in address order, each cut where the next one starts (of runs
 * starting at one address the first is kept). Runs outside the executable segments are dropped:
 * no sample can land there, and linkers leave FDEs of discarded code at address 0 in
 * .debug_frame.
 */
static int own_pieces(const struct module *m, const struct cfi_rows *src, struct pieces *out,
		      struct unwind_stats *st)
{
	size_t i, kept = 0;
	int err;

	for (i = 0; i < src->nr_runs; i++) {
		const struct cfi_run *run = &src->runs[i];

		if (!in_exec(m, run->lo, run->hi)) {
			st->fdes_skipped++;
			continue;
		}
		err = push_piece(out, (struct piece){run->lo, run->hi, i, src, run});
		if (err)
			return err;
	}
	if (out->nr)
		qsort(out->v, out->nr, sizeof(*out->v), piece_cmp);
	for (i = 0; i < out->nr; i++) {
		struct piece *prev = kept ? &out->v[kept - 1] : NULL;

		if (prev && prev->lo == out->v[i].lo) {
			st->fdes_overlapping++;
			continue;
		}
		if (prev && prev->hi > out->v[i].lo) {
			st->fdes_overlapping++;
			prev->hi = out->v[i].lo;
		}
		out->v[kept++] = out->v[i];
	}
	out->nr = kept;
	return 0;
}

/* Append to out the parts of the debug pieces that no eh piece covers (both in order). */
static int fill_holes(const struct pieces *eh, const struct pieces *debug, struct pieces *out)
{
	size_t i, j = 0;
	int err;

	for (i = 0; i < debug->nr; i++) {
		struct piece p = debug->v[i];

		while (j < eh->nr && eh->v[j].hi <= p.lo)
			j++;
		for (; j < eh->nr && eh->v[j].lo < p.hi && p.lo < p.hi; j++) {
			if (eh->v[j].lo > p.lo) {
				struct piece part = p;

				part.hi = eh->v[j].lo;
				err = push_piece(out, part);
				if (err)
					return err;
			}
			p.lo = eh->v[j].hi;
			if (eh->v[j].hi > p.hi)
				break; /* the next debug piece may still meet this eh piece */
		}
		if (p.lo < p.hi) {
			err = push_piece(out, p);
			if (err)
				return err;
		}
	}
	return 0;
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa == b->cfa && a->flags == b->flags && a->cfa_off == b->cfa_off &&
	       a->rbp_off == b->rbp_off;
}

/* Append a row covering [pc, end); count it; merge it into the previous one when equal. */
static int emit(struct out_rows *o, const struct cfi_row *r, uint64_t pc, uint64_t end,
		struct unwind_stats *st)
{
	st->rows_unmerged++;
	if (r->row.cfa == UNWIND_CFA_UNSUPPORTED && r->why < UNWIND_WHY_MAX)
		st->unsupported_bytes[r->why] += end - pc;
	if (o->nr && same_rule(&o->v[o->nr - 1].row, &r->row))
		return 0;
	if (vec_grow(&o->v, &o->cap, o->nr + 1, sizeof(*o->v), 4096))
		return -ENOMEM;
	o->v[o->nr] = *r;
	o->v[o->nr++].pc = pc;
	return 0;
}

/* The rows of piece p: from the row in force at p->lo up to p->hi. */
static int emit_piece(struct out_rows *o, const struct piece *p, struct unwind_stats *st)
{
	const struct cfi_row *rows = p->src->rows + p->run->first;
	size_t k = 0, n = p->run->n;
	uint64_t pc, end;
	int err;

	while (k + 1 < n && rows[k + 1].pc <= p->lo)
		k++;
	for (; k < n; k++) {
		pc = rows[k].pc > p->lo ? rows[k].pc : p->lo;
		if (pc >= p->hi)
			break;
		end = k + 1 < n && rows[k + 1].pc < p->hi ? rows[k + 1].pc : p->hi;
		err = emit(o, &rows[k], pc, end, st);
		if (err)
			return err;
	}
	return 0;
}

static int emit_all(const struct pieces *all, struct out_rows *o, struct unwind_stats *st)
{
	static const struct cfi_row none = {.row.cfa = UNWIND_CFA_NONE, .why = UNWIND_WHY_MAX};
	size_t i;
	int err;

	for (i = 0; i < all->nr; i++) {
		const struct piece *p = &all->v[i];

		if (i && all->v[i - 1].hi < p->lo) {
			err = emit(o, &none, all->v[i - 1].hi, p->lo, st);
			if (err)
				return err;
		}
		err = emit_piece(o, p, st);
		if (err)
			return err;
	}
	if (all->nr)
		return emit(o, &none, all->v[all->nr - 1].hi, all->v[all->nr - 1].hi, st);
	return 0;
}

/* The final rows: offsets from the first address, and the per-kind byte counts. */
static int finish(struct unwind_table *t, const struct out_rows *o)
{
	struct unwind_stats *st = &t->stats;
	size_t i;

	if (!o->nr)
		return -ENODATA;
	t->base = o->v[0].pc;
	if (o->v[o->nr - 1].pc - t->base > UINT32_MAX)
		return -EOVERFLOW;
	t->rows = calloc(o->nr, sizeof(*t->rows));
	if (!t->rows)
		return -ENOMEM;
	for (i = 0; i < o->nr; i++) {
		uint64_t end = i + 1 < o->nr ? o->v[i + 1].pc : o->v[i].pc;

		t->rows[i] = o->v[i].row;
		t->rows[i].pc = (uint32_t)(o->v[i].pc - t->base);
		st->kind_rows[t->rows[i].cfa]++;
		st->kind_bytes[t->rows[i].cfa] += end - o->v[i].pc;
		if (t->rows[i].cfa != UNWIND_CFA_NONE)
			st->covered_bytes += end - o->v[i].pc;
	}
	t->nr = o->nr;
	st->rows = o->nr;
	st->bytes = o->nr * sizeof(*t->rows);
	return 0;
}

static int assemble(struct unwind_table *t, const struct module *m, const struct cfi_rows *eh,
		    const struct cfi_rows *debug)
{
	struct pieces peh = {0}, pdebug = {0}, all = {0};
	struct out_rows o = {0};
	int err;

	err = own_pieces(m, eh, &peh, &t->stats);
	if (!err)
		err = own_pieces(m, debug, &pdebug, &t->stats);
	if (!err)
		err = fill_holes(&peh, &pdebug, &all);
	for (size_t i = 0; !err && i < peh.nr; i++)
		err = push_piece(&all, peh.v[i]);
	if (err)
		goto out;
	if (all.nr)
		qsort(all.v, all.nr, sizeof(*all.v), piece_cmp);
	err = emit_all(&all, &o, &t->stats);
	if (!err)
		err = finish(t, &o);
out:
	free(o.v);
	free(all.v);
	free(pdebug.v);
	free(peh.v);
	return err;
}

/* A section's bytes; compressed ones (SHF_COMPRESSED) are inflated by libelf. */
static int section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, struct eh_section *sec, bool eh)
{
	Elf_Data *d;

	if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) {
		log_debug("unwind: inflate CFI section: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf) {
		log_debug("unwind: read CFI section: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	*sec = (struct eh_section){d->d_buf, d->d_size, sh->sh_addr, eh};
	return 0;
}

/* Find .eh_frame (eh) or .debug_frame in elf and count the code bytes; 0 when it has none. */
static int find_cfi(Elf *elf, bool eh, struct eh_section *sec, uint64_t *code_bytes)
{
	const char *want = eh ? ".eh_frame" : ".debug_frame";
	Elf_Scn *scn = NULL, *found = NULL;
	GElf_Shdr sh, found_sh;
	size_t shstrndx;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no section headers: nothing to read */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		if (code_bytes && (sh.sh_flags & SHF_EXECINSTR))
			*code_bytes += sh.sh_size;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!found && name && strcmp(name, want) == 0 && sh.sh_size) {
			found = scn;
			found_sh = sh;
		}
	}
	return found ? section_bytes(found, &found_sh, sec, eh) : 0;
}

static int read_module(Elf *elf, Elf *debug, struct module *m, struct unwind_stats *st)
{
	size_t i, nr_phdr;
	GElf_Ehdr eh;
	GElf_Phdr ph;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return -EOPNOTSUPP;
	if (elf_getphdrnum(elf, &nr_phdr))
		return -ENOEXEC;
	m->exec = calloc(nr_phdr ? nr_phdr : 1, sizeof(*m->exec));
	m->segs = calloc(nr_phdr ? nr_phdr : 1, sizeof(*m->segs));
	if (!m->exec || !m->segs)
		return -ENOMEM;
	for (i = 0; i < nr_phdr; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			m->segs[m->nr_exec] =
				(struct unwind_segment){ph.p_vaddr, ph.p_offset, ph.p_filesz};
			m->exec[m->nr_exec++] = (struct range){ph.p_vaddr, ph.p_vaddr + ph.p_memsz};
		}
	}
	err = find_cfi(elf, true, &m->eh, &st->code_bytes);
	if (!err)
		err = find_cfi(elf, false, &m->debug, NULL);
	if (!err && !m->debug.data && debug && elf_kind(debug) == ELF_K_ELF)
		err = find_cfi(debug, false, &m->debug, NULL);
	if (!err && !m->eh.data && !m->debug.data)
		err = -ENODATA;
	return err;
}

struct unwind_table *unwind_table__build_elf(Elf *elf, Elf *debug)
{
	struct cfi_rows eh = {0}, dbg = {0};
	struct module m = {0};
	struct unwind_table *t;
	int err;

	err = perch_elf_init();
	if (err) {
		errno = -err;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	err = read_module(elf, debug, &m, &t->stats);
	if (!err && m.eh.data)
		err = unwind_cfi__decode(&m.eh, &eh, &t->stats);
	if (!err && m.debug.data)
		err = unwind_cfi__decode(&m.debug, &dbg, &t->stats);
	if (!err)
		err = assemble(t, &m, &eh, &dbg);
	/* CFI sections that hold FDEs and yield no row at all are damaged, not absent: say so
	 * (a terminator alone, as in ICU's libicudata, describes no code: no table, no damage). */
	if (err == -ENODATA && (eh_holds_fdes(&m.eh) || eh_holds_fdes(&m.debug)))
		err = -EBADMSG;
	unwind_cfi__release(&eh);
	unwind_cfi__release(&dbg);
	free(m.exec);
	t->segs = m.segs;
	t->nr_segs = m.nr_exec;
	if (err) {
		unwind_table__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

struct unwind_table *unwind_table__build(const char *path)
{
	struct unwind_table *t = NULL;
	Elf *elf = NULL;
	int fd, err;

	err = perch_elf_init();
	if (err) {
		errno = -err;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		log_debug("unwind: %s: open ELF: %s", path, elf_errmsg(-1));
		err = -ENOEXEC;
		goto out;
	}
	t = unwind_table__build_elf(elf, NULL);
	if (!t) {
		err = -errno;
		log_debug("unwind: %s: build table: %s", path, strerror(errno));
	}
out:
	elf_end(elf);
	close(fd);
	if (err)
		errno = -err;
	return t;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}

const struct unwind_row *unwind_table__rows(const struct unwind_table *t, size_t *nr)
{
	*nr = t->nr;
	return t->rows;
}

uint64_t unwind_table__base(const struct unwind_table *t)
{
	return t->base;
}

const struct unwind_stats *unwind_table__stats(const struct unwind_table *t)
{
	return &t->stats;
}

int unwind_table__load_bias(const struct unwind_table *t, uint64_t start, uint64_t end,
			    uint64_t pgoff, uint64_t *bias)
{
	uint64_t len = end - start;
	size_t i;

	/* The executable segment whose file bytes the mapping holds. */
	for (i = 0; i < t->nr_segs; i++) {
		const struct unwind_segment *sg = &t->segs[i];

		if (sg->offset < pgoff + len && pgoff < sg->offset + sg->filesz) {
			/* process address = file offset - pgoff + start, and
			 * vaddr = file offset - p_offset + p_vaddr */
			*bias = start - pgoff + sg->offset - sg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct unwind_row *unwind_table__find(const struct unwind_table *t, uint64_t vaddr)
{
	uint64_t off;

	if (!t->nr || vaddr < t->base)
		return NULL;
	off = vaddr - t->base;
	if (off > UINT32_MAX)
		return &t->rows[t->nr - 1];
	/* The last row whose pc <= off: rows[0].pc is 0, so there is one. */
	return &t->rows[search_last_le(t->rows, t->nr, pc, off) - 1];
}

const char *unwind_cfa__name(unsigned int cfa)
{
	static const char *const names[UNWIND_CFA_MAX] = {
		[UNWIND_CFA_NONE] = "none",
		[UNWIND_CFA_RSP] = "rsp",
		[UNWIND_CFA_RBP] = "rbp",
		[UNWIND_CFA_PLT] = "plt",
		[UNWIND_CFA_SIGNAL] = "signal",
		[UNWIND_CFA_OUTERMOST] = "outermost",
		[UNWIND_CFA_UNSUPPORTED] = "unsupported",
	};

	return cfa < UNWIND_CFA_MAX ? names[cfa] : "?";
}

const char *unwind_why__name(unsigned int why)
{
	static const char *const names[UNWIND_WHY_MAX] = {
		[UNWIND_WHY_CFA_REG] = "cfa-register", [UNWIND_WHY_CFA_EXPR] = "cfa-expression",
		[UNWIND_WHY_RA] = "return-address",    [UNWIND_WHY_RBP] = "rbp-rule",
		[UNWIND_WHY_RSP] = "rsp-rule",	       [UNWIND_WHY_RANGE] = "offset-range",
		[UNWIND_WHY_BAD_CFI] = "bad-cfi",
	};

	return why < UNWIND_WHY_MAX ? names[why] : "?";
}
