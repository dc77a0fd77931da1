// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch annotate FUNCTION`: where inside one function its self samples fell. The samples whose
 * leaf frame is the function (its out-of-line code, or code inlined into another function) are
 * counted per source line from the frames' LINES, shown beside the source text where the file
 * can be read; when the recording has no lines for them (no DWARF, or --no-lines), per
 * instruction of the function's disassembly (report/annotate_asm.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "annotate.h"
#include "common.h"
#include "lib/escape.h"
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

/* The report's functions are one per module and name: two modules' samples are two rows. */
struct module_count {
	uint32_t module;
	uint8_t kind;
	uint64_t count;
};

struct annot {
	const struct recording *r;
	const char *name;
	struct line_count *lines;
	size_t nlines, cap_lines;
	struct annot_pc *pcs; /* samples with no line: module, offset */
	size_t npcs, cap_pcs;
	struct module_count *modules; /* the modules (and kinds) the self samples lie in */
	size_t nmodules, cap_modules;
	uint64_t with_line, without_line, all;
	uint64_t inlined; /* leaves in code inlined into the function: not its self */
	uid_t src_uid;	  /* the sources are opened with these rights (annotate_src.c) */
	gid_t src_gid;
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

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Whether frame f names name as the report does: its innermost inline level's function (else
 * the symbol's; a frame without either: BASE+0xOFFSET, its module's base name and offset). */
static bool names(const struct recording *r, const struct rec_frame *f, uint32_t fn,
		  const char *name)
{
	char unnamed[PATH_MAX];

	if (fn && *recording__string(r, fn))
		return same_name(recording__string(r, fn), name);
	snprintf(unnamed, sizeof(unnamed), "%s+0x%llx", base_name(recording__string(r, f->module)),
		 (unsigned long long)f->offset);
	return !strcmp(unnamed, name);
}

/* What leaf frame f is to name: its own code (the innermost level of f's inline chain is name:
 * the report's self), code inlined into it (an outer level is name: the self of the function
 * inlined, which the report counts there, not here), or neither. */
enum leaf_kind { LEAF_OTHER, LEAF_SELF, LEAF_INLINED_INTO };

static enum leaf_kind leaf_kind(const struct recording *r, const struct rec_frame *f,
				const char *name)
{
	if (!f->nlines)
		return names(r, f, f->name, name) ? LEAF_SELF : LEAF_OTHER;
	if (names(r, f, f->lines[0].function ? f->lines[0].function : f->name, name))
		return LEAF_SELF;
	for (uint32_t i = 1; i < f->nlines; i++) {
		if (names(r, f, f->lines[i].function ? f->lines[i].function : f->name, name))
			return LEAF_INLINED_INTO;
	}
	return LEAF_OTHER;
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

/* count more in f's module, as the report keys its functions: by base name and kind. */
static int add_module(struct annot *a, const struct rec_frame *f, uint64_t count)
{
	const char *base = base_name(recording__string(a->r, f->module));

	for (size_t i = 0; i < a->nmodules; i++) {
		if (a->modules[i].kind == f->kind &&
		    !strcmp(base_name(recording__string(a->r, a->modules[i].module)), base)) {
			a->modules[i].count += count;
			return 0;
		}
	}
	if (vec_grow(&a->modules, &a->cap_modules, a->nmodules + 1, sizeof(*a->modules), 4))
		return -ENOMEM;
	a->modules[a->nmodules++] = (struct module_count){f->module, f->kind, count};
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
		enum leaf_kind kind;

		if (!s->count || !s->nframes || s->frames[s->nframes - 1] >= r->nframes)
			continue;
		f = &r->frames[s->frames[s->nframes - 1]];
		kind = leaf_kind(r, f, a->name);
		if (kind == LEAF_INLINED_INTO)
			a->inlined += s->count;
		if (kind != LEAF_SELF)
			continue;
		a->all += s->count;
		err = add_module(a, f, s->count);
		if (!err && f->nlines && f->lines[0].line) {
			a->with_line += s->count;
			err = add_line(a, f->lines[0].file, f->lines[0].line, s->count);
		} else if (!err) {
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
	const char *why = NULL;
	FILE *src = annotate_src_open(path, a->src_uid, a->src_gid, &why);
	char text[SOURCE_LINE];
	size_t k = 0;

	fprintf(out, "\n%s", *path ? path : "[unknown file]");
	if (!src)
		fprintf(out, " (source not shown, %s: counts by line number only)", why);
	fputc('\n', out);
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

/* Whose rights the sources are read with: the owner of the binaries the samples lie in. */
static int source_owner(struct annot *a)
{
	const char **paths = calloc(a->nmodules ? a->nmodules : 1, sizeof(*paths));

	if (!paths)
		return -ENOMEM;
	for (size_t i = 0; i < a->nmodules; i++)
		paths[i] = recording__string(a->r, a->modules[i].module);
	a->src_uid = annotate_src_owner(paths, a->nmodules, &a->src_gid);
	free(paths);
	return 0;
}

static int print_lines(struct annot *a, FILE *out)
{
	size_t i = 0;

	if (source_owner(a))
		return -ENOMEM;
	qsort(a->lines, a->nlines, sizeof(*a->lines), cmp_line);
	while (i < a->nlines) {
		size_t j = i;

		while (j < a->nlines && a->lines[j].file == a->lines[i].file)
			j++;
		print_source(a, a->lines + i, j - i, out);
		i = j;
	}
	return 0;
}

/* The header: the self samples (the report's self of name), and what is not counted in them. */
static void print_header(const struct annot *a, FILE *out)
{
	uint64_t total = report_sample_total(a->r);

	fprintf(out, "%s: %llu self samples (%.2f%% of %llu)", a->name, (unsigned long long)a->all,
		report_pct(a->all, total), (unsigned long long)total);
	if (a->with_line && a->without_line)
		fprintf(out, "; %llu with a source line, %llu without (by instruction below)",
			(unsigned long long)a->with_line, (unsigned long long)a->without_line);
	fputc('\n', out);
	if (a->nmodules > 1) {
		fprintf(out, " in %zu modules (a row each in the report):", a->nmodules);
		for (size_t i = 0; i < a->nmodules; i++)
			fprintf(out, "%s %s %llu", i ? "," : "",
				base_name(recording__string(a->r, a->modules[i].module)),
				(unsigned long long)a->modules[i].count);
		fputc('\n', out);
	}
	if (a->inlined)
		fprintf(out,
			" not counted: %llu samples in functions inlined into it (their self, as in "
			"the report)\n",
			(unsigned long long)a->inlined);
}

int report__annotate(const struct recording *r, const char *name, FILE *out)
{
	struct annot a = {.r = r, .name = name};
	int err = collect(&a);
	FILE *term;

	if (!err && !a.all && a.inlined)
		log_warn("annotate: %s: %llu samples lie in functions inlined into it, none in its "
			 "own code",
			 name, (unsigned long long)a.inlined);
	if (!err && !a.all)
		err = -ENOENT;
	if (err)
		goto cleanup;
	term = esc_term_stream(out); /* source lines and names are the target's */
	if (!term) {
		err = -errno;
		goto cleanup;
	}
	print_header(&a, term);
	if (a.nlines)
		err = print_lines(&a, term);
	if (!err && a.npcs)
		err = annotate_asm(name, a.pcs, a.npcs, a.all, term);
	if (fclose(term) && !err)
		err = -EIO;
cleanup:
	free(a.lines);
	free(a.pcs);
	free(a.modules);
	return err;
}
