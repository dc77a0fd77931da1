// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The discriminators of a module's line tables (see linediscs.h). Rows are kept per sequence, in
 * address order; neighbours with the same discriminator are merged.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "line_program.h"
#include "linediscs.h"
#include "lib/dwcursor.h"
#include "lib/search.h"
#include "lib/vec.h"

void linediscs_free(struct line_discs *ld)
{
	if (!ld)
		return;
	free(ld->seqs);
	free(ld->rows);
	free(ld);
}

static int ld_reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	return vec_grow(pv, cap, need, elem, 256);
}

/* Row (addr, disc) of the open sequence, whose rows start at first: the last row at an address
 * wins (as in libdw and BFD), and a row with its predecessor's discriminator adds nothing. */
static int ld_row(struct line_discs *ld, size_t first, uint64_t addr, uint32_t disc)
{
	struct disc_row *last = ld->nr_rows > first ? &ld->rows[ld->nr_rows - 1] : NULL;
	int err;

	if (last && last->addr == addr) {
		last->disc = disc;
		if (ld->nr_rows - 1 > first && last[-1].disc == disc)
			ld->nr_rows--;
		return 0;
	}
	if (last && last->disc == disc)
		return 0;
	err = ld_reserve(&ld->rows, &ld->cap_rows, ld->nr_rows + 1, sizeof(*ld->rows));
	if (err)
		return err;
	ld->rows[ld->nr_rows++] = (struct disc_row){.addr = addr, .disc = disc};
	return 0;
}

/* Close the sequence whose rows start at first and that ends at end; kept if it covers code. */
static int ld_end_seq(struct line_discs *ld, const struct text_span *text, size_t first,
		      uint64_t end)
{
	uint64_t lo;
	int err;

	if (ld->nr_rows == first)
		return 0;
	lo = ld->rows[first].addr;
	/* As the DWARF index: rows outside the text come from sections the linker dropped. */
	if (end <= lo || lo < text->lo || lo >= text->hi || ld->nr_rows - first > UINT32_MAX) {
		ld->nr_rows = first;
		return 0;
	}
	err = ld_reserve(&ld->seqs, &ld->cap_seqs, ld->nr_seqs + 1, sizeof(*ld->seqs));
	if (err)
		return err;
	ld->seqs[ld->nr_seqs++] = (struct disc_seq){.lo = lo,
						    .hi = end,
						    .first = (uint32_t)first,
						    .n = (uint32_t)(ld->nr_rows - first)};
	return 0;
}

/* The discriminators of the rows of one line-program unit at r->p; r->p is left at the next
 * unit. Returns 0 or -ENOMEM. */
static int ld_unit(struct line_discs *ld, const struct text_span *text, struct dwcursor *r)
{
	size_t first = ld->nr_rows;
	struct line_program lp;
	enum line_event ev;
	int err = 0;

	if (!line_program__begin(&lp, r))
		return 0;
	while (!err && (ev = line_program__next(&lp)) != LINE_DONE) {
		if (ev == LINE_ROW) {
			err = ld_row(ld, first, lp.at, lp.at_disc);
			continue;
		}
		err = ld_end_seq(ld, text, first, lp.at);
		first = ld->nr_rows;
	}
	/* A program cut short keeps no half sequence. */
	ld->nr_rows = first;
	return err;
}

static int disc_seq_cmp(const void *pa, const void *pb)
{
	const struct disc_seq *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The .debug_line section of elf, decompressed; NULL when there is none. */
static Elf_Data *debug_line_data(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".debug_line") == 0) {
			if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
				return NULL;
			return elf_getdata(scn, NULL);
		}
		if (strcmp(name, ".zdebug_line") == 0)
			return elf_compress_gnu(scn, 0, 0) < 0 ? NULL : elf_getdata(scn, NULL);
	}
	return NULL;
}

/* The discriminators of every line program in the ELF file fd (a file of its own: this may run
 * in another thread); NULL when out of memory. */
struct line_discs *linediscs_read(int fd, const struct text_span *text)
{
	struct line_discs *ld = calloc(1, sizeof(*ld));
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Data *data = NULL;
	struct dwcursor r;
	GElf_Ehdr eh;
	int err = 0;

	if (ld && elf && gelf_getehdr(elf, &eh))
		data = debug_line_data(elf);
	if (data && data->d_buf) {
		r = dwc_make(data->d_buf, (const uint8_t *)data->d_buf + data->d_size);
		r.msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
		while (!err && r.p < r.end)
			err = ld_unit(ld, text, &r);
		if (ld->nr_seqs)
			qsort(ld->seqs, ld->nr_seqs, sizeof(*ld->seqs), disc_seq_cmp);
	}
	elf_end(elf);
	if (err) {
		linediscs_free(ld);
		return NULL;
	}
	return ld;
}

void *linediscs_job_run(void *arg)
{
	struct disc_job *j = arg;

	j->ld = linediscs_read(j->fd, &j->text);
	close(j->fd);
	return NULL;
}

/* The discriminator of the row covering vaddr: the sequence holding it, then its last row at or
 * below it. */
unsigned int linediscs_at(const struct line_discs *ld, uint64_t vaddr)
{
	size_t lo = search_last_le(ld->seqs, ld->nr_seqs, lo, vaddr);
	const struct disc_seq *q;

	if (!lo || vaddr >= ld->seqs[lo - 1].hi)
		return 0;
	q = &ld->seqs[lo - 1];
	lo = search_prefix(q->first, (size_t)q->first + q->n, i, ld->rows[i].addr <= vaddr);
	return lo > q->first ? ld->rows[lo - 1].disc : 0;
}
