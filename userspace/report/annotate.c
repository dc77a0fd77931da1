// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch annotate FUNCTION`: where inside one function its self samples fell. The samples whose
 * leaf frame is the function (its out-of-line code, or code inlined into another function) are
 * counted per source line from the frames' LINES, shown beside the source text where the file
 * can be read; when the recording has no lines for them (no DWARF, or --no-lines), per
 * instruction of the function's disassembly (report/annotate_asm.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "annotate.h"
#include "common.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "report.h"
#include "symbolize/demangle.h"

#define CONTEXT	    2	/* source lines shown around the counted ones */
#define MAX_SPAN    400 /* a file's counted lines further apart than this: only those shown */
#define SOURCE_LINE 4096

struct line_count {
	uint32_t file, line; /* string id, line number */
	uint64_t count;
};

struct annot {
	const struct recording *r;
	const char *name;
	struct line_count *lines;
	size_t nlines, cap_lines;
	struct annot_pc *pcs; /* samples with no line: module, offset */
	size_t npcs, cap_pcs;
	uint64_t with_line, without_line, all;
};

/* Whether raw (a symbol or DWARF name) is name as given or as the report shows it (demangled). */
static bool same_name(const char *raw, const char *name)
{
	char *d;
	bool same;

	if (!strcmp(raw, name))
		return true;
	if (raw[0] != '_' || raw[1] != 'Z')
		return false;
	d = demangle__name(raw);
	same = d && !strcmp(d, name);
	free(d);
	return same;
}

/* The level of f's inline chain that is name (-1: none; f->nlines when f is name, out of line,
 * with no lines), named as the report names it (a level without a function: the symbol's). */
static int match_level(const struct recording *r, const struct rec_frame *f, const char *name)
{
	for (uint32_t i = 0; i < f->nlines; i++) {
		uint32_t fn = f->lines[i].function ? f->lines[i].function : f->name;

		if (same_name(recording__string(r, fn), name))
			return (int)i;
	}
	if (!f->nlines && f->name && same_name(recording__string(r, f->name), name))
		return 0;
	return -1;
}

static int add_line(struct annot *a, uint32_t file, uint32_t line, uint64_t count)
{
	for (size_t i = 0; i < a->nlines; i++) {
		if (a->lines[i].file == file && a->lines[i].line == line) {
			a->lines[i].count += count;
			return 0;
		}
	}
	if (vec_grow(&a->lines, &a->cap_lines, a->nlines + 1, sizeof(*a->lines), 16))
		return -ENOMEM;
	a->lines[a->nlines++] = (struct line_count){file, line, count};
	return 0;
}

static int add_pc(struct annot *a, const struct rec_frame *f, uint64_t count)
{
	if (vec_grow(&a->pcs, &a->cap_pcs, a->npcs + 1, sizeof(*a->pcs), 16))
		return -ENOMEM;
	a->pcs[a->npcs++] = (struct annot_pc){recording__string(a->r, f->module),
					      recording__string(a->r, f->name), f->offset, count};
	return 0;
}

/* Every sample whose leaf is the function, into lines or pcs. */
static int collect(struct annot *a)
{
	const struct recording *r = a->r;
	int err = 0;

	for (size_t i = 0; i < r->nsamples && !err; i++) {
		const struct rec_sample *s = &r->samples[i];
		const struct rec_frame *f;
		int level;

		if (!s->count || !s->nframes || s->frames[s->nframes - 1] >= r->nframes)
			continue;
		f = &r->frames[s->frames[s->nframes - 1]];
		level = match_level(r, f, a->name);
		if (level < 0)
			continue;
		a->all += s->count;
		if ((uint32_t)level < f->nlines && f->lines[level].line) {
			a->with_line += s->count;
			err = add_line(a, f->lines[level].file, f->lines[level].line, s->count);
		} else {
			a->without_line += s->count;
			err = add_pc(a, f, s->count);
		}
	}
	return err;
}

static int cmp_line(const void *x, const void *y)
{
	const struct line_count *a = x, *b = y;

	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->line > b->line) - (a->line < b->line);
}

/* One file's counted lines lc[0..n) (sorted), with CONTEXT lines around them and the lines
 * between them (when they are at most MAX_SPAN apart) from the source file where it can be read. */
static void print_source(const struct annot *a, const struct line_count *lc, size_t n, FILE *out)
{
	const char *path = recording__string(a->r, lc[0].file);
	uint32_t from = lc[0].line > CONTEXT ? lc[0].line - CONTEXT : 1;
	uint32_t to = lc[n - 1].line + CONTEXT, ln = 0;
	bool span = lc[n - 1].line - lc[0].line <= MAX_SPAN;
	FILE *src = fopen(path, "r");
	char text[SOURCE_LINE];
	size_t k = 0;

	fprintf(out, "\n%s%s\n", *path ? path : "[unknown file]",
		src ? "" : " (source not readable: counts by line number only)");
	fprintf(out, "%8s %9s %6s  %s\n", "percent", "samples", "line", "source");
	while (++ln <= to) {
		bool got = src && fgets(text, sizeof(text), src);
		uint64_t count = 0;

		if (got)
			text[strcspn(text, "\n")] = '\0';
		while (k < n && lc[k].line < ln)
			k++;
		if (k < n && lc[k].line == ln)
			count = lc[k].count;
		if (ln < from || (!count && (!span || !got)))
			continue;
		if (count)
			fprintf(out, "%7.2f%% %9llu %6u  %s\n", report_pct(count, a->all),
				(unsigned long long)count, ln, got ? text : "");
		else
			fprintf(out, "%8s %9s %6u  %s\n", "", "", ln, text);
	}
	if (src)
		fclose(src);
}

static void print_lines(struct annot *a, FILE *out)
{
	size_t i = 0;

	qsort(a->lines, a->nlines, sizeof(*a->lines), cmp_line);
	while (i < a->nlines) {
		size_t j = i;

		while (j < a->nlines && a->lines[j].file == a->lines[i].file)
			j++;
		print_source(a, a->lines + i, j - i, out);
		i = j;
	}
}

int report__annotate(const struct recording *r, const char *name, FILE *out)
{
	struct annot a = {.r = r, .name = name};
	int err = collect(&a);

	if (!err && !a.all)
		err = -ENOENT;
	if (err)
		goto cleanup;
	fprintf(out, "%s: %llu self samples (%.2f%% of %llu)", name, (unsigned long long)a.all,
		report_pct(a.all, report_sample_total(r)),
		(unsigned long long)report_sample_total(r));
	if (a.with_line && a.without_line)
		fprintf(out, "; %llu with a source line, %llu without (by instruction below)",
			(unsigned long long)a.with_line, (unsigned long long)a.without_line);
	fputc('\n', out);
	if (a.nlines)
		print_lines(&a, out);
	if (a.npcs)
		err = annotate_asm(name, a.pcs, a.npcs, a.all, out);
cleanup:
	free(a.lines);
	free(a.pcs);
	return err;
}
