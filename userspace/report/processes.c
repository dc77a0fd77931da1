// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The text report's processes table for a system-wide recording (perch record -a): the
 * processes by samples, each with its pid and name, so that a machine's rows say whose they are
 * (the samples carry pid, tid and comm; folded stacks lead with the comm). Counts the samples
 * the profile kept (--region, --select, ... apply).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "model/profile.h"

struct proc_row {
	uint32_t pid;
	uint64_t samples;
	const char *comm;
};

static int by_samples_desc(const void *a, const void *b)
{
	const struct proc_row *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The process's name: its main thread's, else the name of the sample that found it. */
static const char *process_name(const struct recording *r, const struct rec_sample *s)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		const char *name = recording__string(r, r->threads[i].comm);

		if (r->threads[i].pid == s->pid && r->threads[i].tid == s->pid && name && *name)
			return name;
	}
	return report_sample_comm(r, s); /* the idle task has no /proc entry: "swapper/N" */
}

/* One row per process of the kept samples into *rows; their number, or -ENOMEM. */
static long collect(const struct recording *r, const struct profile *p, struct proc_row **rows)
{
	struct u64map index = {0};
	size_t n = 0, cap = 0;
	uint64_t at;

	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		if (!profile__sample_kept(p, i))
			continue;
		if (!u64map__get(&index, s->pid, &at)) {
			if (vec_grow(rows, &cap, n + 1, sizeof(**rows), 64) ||
			    u64map__put(&index, s->pid, n)) {
				u64map__clear(&index);
				return -1;
			}
			(*rows)[n] = (struct proc_row){s->pid, 0, process_name(r, s)};
			at = n++;
		}
		(*rows)[at].samples += s->count;
	}
	u64map__clear(&index);
	return (long)n;
}

void report_print_processes(const struct recording *r, const struct profile *p, unsigned int top,
			    FILE *out)
{
	const char *mode = report_meta(r, REC_META_mode);
	struct proc_row *rows = NULL;
	uint64_t total = 0;
	long n;

	if (!mode || strcmp(mode, "system-wide"))
		return;
	n = collect(r, p, &rows);
	for (long i = 0; i < n; i++)
		total += rows[i].samples;
	if (n > 0)
		qsort(rows, (size_t)n, sizeof(*rows), by_samples_desc);
	fprintf(out, "\nTop processes by samples (system-wide)\n");
	fprintf(out, "      pct    samples      pid  command\n");
	for (long i = 0; i < n && i < (long)top; i++)
		fprintf(out, "  %6.2f%% %10" PRIu64 " %8" PRIu32 "  %s\n",
			report_pct(rows[i].samples, total), rows[i].samples, rows[i].pid,
			rows[i].comm);
	if (n < 0)
		fprintf(out, "  (out of memory)\n");
	free(rows);
}
