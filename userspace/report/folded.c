// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=folded: one line per distinct stack, "comm;region:NAME...;function... count", as
 * flamegraph.pl and speedscope read it; with --sort's thread keys they lead instead of comm
 * ("pid N;tid N;..." for --per-thread). A sample's regions lead its stack; they are never
 * functions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

struct line {
	char *text;
	uint64_t count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

/* A name as one folded frame: ';' separates frames and a line break ends the line, so they
 * become ':' and ' ' (what flamegraph.pl's stackcollapse scripts do; README: folded output). */
static void put_folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

/* The stack's lead: the sort's thread keys (--sort=comm,pid,tid, --per-thread) when it has
 * them, else the thread's name. */
static void put_lead(FILE *f, const struct recording *r, const struct profile *p, size_t i)
{
	const uint32_t *keys;
	uint32_t n = profile__sample_keys(p, i, &keys);

	if (!n)
		put_folded_name(f, report_sample_comm(r, &r->samples[i]));
	for (uint32_t k = 0; k < n; k++) {
		fputs(k ? ";" : "", f);
		put_folded_name(f, profile__func_name(p, keys[k]));
	}
}

/* comm;region:NAME...;function...: the sample's regions are the outermost frames. */
static char *fold_sample(const struct recording *r, const struct profile *p, size_t i)
{
	const struct rec_sample *s = &r->samples[i];
	uint32_t nfuncs = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	put_lead(f, r, p, i);
	for (uint32_t j = 0; j < s->nregions; j++) {
		fputs(";region:", f);
		put_folded_name(f, recording__string(r, s->regions[j]));
	}
	for (uint32_t j = 0; j < s->nframes; j++) {
		const uint32_t *fns;
		uint32_t n = profile__frame_funcs(p, s->frames[j], &fns);

		for (uint32_t k = 0; k < n; k++) {
			fputc(';', f);
			put_folded_name(f, profile__func_name(p, fns[k]));
			fputs(profile__func_kernel(p, fns[k]) ? "_[k]" : "", f);
		}
		nfuncs += n;
	}
	if (!nfuncs) /* the query folded every frame, or neither stack could be read (header) */
		fputs(profile__sample_folded(p, i) ? ";[folded]" : ";[no stack]", f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int print_folded(const struct recording *r, const struct profile *p, FILE *out)
{
	struct line *lines = calloc(r->nsamples + 1, sizeof(*lines));
	size_t n = 0;
	int err = 0;

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < r->nsamples; i++) {
		/* a count of 0: a stack only a GPU launch or an attach-mode call names */
		if (!r->samples[i].count || !profile__sample_kept(p, i))
			continue;
		lines[n].text = fold_sample(r, p, i);
		lines[n].count = r->samples[i].count;
		if (!lines[n].text) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	qsort(lines, n, sizeof(*lines), by_text);
	for (size_t i = 0; i < n; i++) {
		uint64_t count = lines[i].count;

		while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
			count += lines[++i].count;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, count);
	}
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return err;
}

int report_folded(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out)
{
	struct profile *p = report_profile(r, o);
	int err;

	(void)path;
	if (!p)
		return -errno;
	err = print_folded(r, p, out);
	profile__free(p);
	return err;
}
