/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internal to symbolize/: the discriminators of a module's line tables, read straight from
 * .debug_line through the one line-program decoder (line_program.h): the DWARF index keeps none,
 * and opening libdw again would decompress every debug section a second time.
 */
#ifndef PERCH_LINEDISCS_H
#define PERCH_LINEDISCS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The discriminators of a module's line tables, read straight from .debug_line (the DWARF index
 * keeps none, and opening libdw again would decompress every debug section a second time). Rows
 * are kept per sequence, in address order; neighbours with the same discriminator are merged.
 */
struct disc_seq {
	uint64_t lo;
	uint64_t hi;	/* exclusive: the sequence's end */
	uint32_t first; /* its rows: rows[first..first + n) */
	uint32_t n;
};

struct disc_row {
	uint64_t addr;
	uint32_t disc;
};

struct line_discs {
	struct disc_seq *seqs; /* sorted by lo */
	size_t nr_seqs, cap_seqs;
	struct disc_row *rows;
	size_t nr_rows, cap_rows;
};

/* The module's executable segments span [lo, hi]. */
struct text_span {
	uint64_t lo;
	uint64_t hi;
};

/*
 * A read of the discriminators in a thread of its own (symbolizer__prefetch_discriminators()):
 * it owns its descriptor and touches nothing of the module, which collects ld when it needs it.
 */
struct disc_job {
	pthread_t thread;
	int fd;
	struct text_span text;
	struct line_discs *ld; /* the result; NULL when there are none */
};

void linediscs_free(struct line_discs *ld);
/* The discriminators of every line program in the ELF file fd (a file of its own: this may run
 * in another thread); NULL when out of memory. */
struct line_discs *linediscs_read(int fd, const struct text_span *text);
/* pthread_create() entry of a struct disc_job: reads j->ld from j->fd, then closes j->fd. */
void *linediscs_job_run(void *arg);
/* The discriminator of the row covering vaddr (0 when none). */
unsigned int linediscs_at(const struct line_discs *ld, uint64_t vaddr);

#endif /* PERCH_LINEDISCS_H */
