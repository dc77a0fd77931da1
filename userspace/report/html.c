// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=html: one self-contained file (no network; opens from file://): the shell, CSS and JS
 * viewer of report/html/ (built into perch by the Makefile: build/report_html_assets.h) and the
 * recording's data as JSON, which the viewer queries as the CLI does (README: "HTML report").
 *
 * The stacks go out as a prefix tree of function ids ("nodes": parent, function per node; node 0
 * is the empty stack) and one entry per kept sample of the recording ("samples": node, region
 * stack node, count), region stacks as a second prefix tree ("rnodes": parent, name): the size
 * follows the distinct stacks, never the number of ticks. Functions are the profile's (as the
 * text report's tables count them), each with its printed name, module and kernel mark.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "report_html_assets.h"
#include "common.h"
#include "html.h"

struct html {
	const struct recording *r;
	const struct profile *p;
	FILE *out;
	struct u64map nodes, rnodes; /* (parent << 32 | label) -> node */
	uint32_t nnodes, nrnodes;    /* nodes made, the empty stack (0) not counted */
	uint32_t *func_of;	     /* profile function -> JSON function + 1 */
	uint32_t *funcs;	     /* JSON function -> profile function */
	uint32_t nfuncs;
	uint32_t *rname_of; /* string id -> JSON region name + 1 */
	uint32_t *rnames;   /* JSON region name -> string id */
	uint32_t nrnames;
	uint32_t *sample_of; /* recording sample -> JSON sample + 1 */
};

/* Every '<' of the JSON (only ever inside its strings) as \u003c: no name ends the <script>. */
static ssize_t escape_write(void *cookie, const char *buf, size_t n)
{
	FILE *f = cookie;
	size_t from = 0;

	for (size_t i = 0; i < n; i++) {
		if (buf[i] != '<')
			continue;
		if (fwrite(buf + from, 1, i - from, f) != i - from || fputs("\\u003c", f) < 0)
			return -1;
		from = i + 1;
	}
	if (fwrite(buf + from, 1, n - from, f) != n - from)
		return -1;
	return (ssize_t)n;
}

/* The child labelled label of node parent in map (made when new, *count the nodes made, "p,l" put
 * on the line the caller has open); its id, or -ENOMEM. */
static int64_t child(struct html *h, struct u64map *map, uint32_t *count, uint32_t parent,
		     uint32_t label, bool *first)
{
	uint64_t key = (uint64_t)parent << 32 | label, id;

	if (u64map__get(map, key, &id))
		return (int64_t)id;
	if (u64map__put(map, key, ++*count))
		return -ENOMEM;
	fprintf(h->out, "%s%" PRIu32 ",%" PRIu32, *first ? "" : ",", parent, label);
	*first = false;
	return *count;
}

/* A label's JSON index: ids (of n) get entry id on first use; slot maps back. */
static uint32_t index_of(uint32_t *slot_of, uint32_t *ids, uint32_t *n, uint32_t id)
{
	if (!slot_of[id]) {
		ids[*n] = id;
		slot_of[id] = ++*n;
	}
	return slot_of[id] - 1;
}

/* The nodes a sample's stacks end at, *node (functions) and *rnode (regions); new nodes are
 * written to out ("nodes" then "rnodes" are written in two passes: which says which). */
static int sample_nodes(struct html *h, size_t i, bool regions, uint32_t *node, bool *first)
{
	const struct rec_sample *s = &h->r->samples[i];
	int64_t at = 0;

	for (uint32_t j = 0; regions && at >= 0 && j < s->nregions; j++) {
		uint32_t id = s->regions[j] < h->r->nstrings ? s->regions[j] : 0;

		at = child(h, &h->rnodes, &h->nrnodes, (uint32_t)at,
			   index_of(h->rname_of, h->rnames, &h->nrnames, id), first);
	}
	for (uint32_t j = 0; !regions && at >= 0 && j < s->nframes; j++) {
		const uint32_t *fns;
		uint32_t n = profile__frame_funcs(h->p, s->frames[j], &fns);

		for (uint32_t k = 0; at >= 0 && k < n; k++)
			at = child(h, &h->nodes, &h->nnodes, (uint32_t)at,
				   index_of(h->func_of, h->funcs, &h->nfuncs, fns[k]), first);
	}
	if (!regions && !at && profile__sample_folded(h->p, i)) /* --fold took every frame */
		at = child(h, &h->nodes, &h->nnodes, 0,
			   index_of(h->func_of, h->funcs, &h->nfuncs, profile__folded_func(h->p)),
			   first);
	if (at < 0)
		return -ENOMEM;
	*node = (uint32_t)at;
	return 0;
}

/* "nodes", "rnodes" and "samples": each kept sample's stacks, nodes made as they are met. */
static int put_stacks(struct html *h)
{
	const struct recording *r = h->r;
	uint32_t *ends = calloc(2 * r->nsamples + 1, sizeof(*ends)), n = 0;
	int err = 0;

	if (!ends)
		return -ENOMEM;
	for (int pass = 0; !err && pass < 2; pass++) {
		bool first = true;

		fputs(pass ? "],\n\"rnodes\":[" : ",\n\"nodes\":[", h->out);
		for (size_t i = 0; !err && i < r->nsamples; i++) {
			if (profile__sample_kept(h->p, i))
				err = sample_nodes(h, i, pass, &ends[2 * i + pass], &first);
		}
	}
	fputs("],\n\"samples\":[", h->out);
	for (size_t i = 0; !err && i < r->nsamples; i++) {
		if (!profile__sample_kept(h->p, i))
			continue;
		fprintf(h->out, "%s%" PRIu32 ",%" PRIu32 ",%" PRIu64, n ? ",\n" : "", ends[2 * i],
			ends[2 * i + 1], r->samples[i].count);
		h->sample_of[i] = ++n;
	}
	fputs("]", h->out);
	free(ends);
	return err;
}

static void put_names(struct html *h)
{
	fputs(",\n\"funcs\":[", h->out);
	for (uint32_t i = 0; i < h->nfuncs; i++) {
		fputs(i ? ",\n[" : "\n[", h->out);
		report_json_str(h->out, profile__func_name(h->p, h->funcs[i]));
		fputc(',', h->out);
		report_json_str(h->out, profile__func_module(h->p, h->funcs[i]));
		fprintf(h->out, ",%d]", profile__func_kernel(h->p, h->funcs[i]) ? 1 : 0);
	}
	fputs("],\n\"rnames\":[", h->out);
	for (uint32_t i = 0; i < h->nrnames; i++) {
		fputs(i ? "," : "", h->out);
		report_json_str(h->out, recording__string(h->r, h->rnames[i]));
	}
	fputs("]", h->out);
}

/* What the viewer needs to say where it came from: the file, the options that shaped the data
 * (the CLI line repeats them) and the text report's header and losses, as the CLI prints them. */
static int put_meta(struct html *h, const char *path, const struct report_opts *o)
{
	struct report_opts to = *o;
	struct report_event e;
	const char *const *args;
	size_t nargs = query__args(o->query, &args);
	char *text, *cut;

	to.format = REPORT_TEXT;
	text = html_capture(h->r, path, &to, report_outputs[REPORT_TEXT].print);
	if (!text)
		return -errno;
	cut = strstr(text, "\n\n"); /* the header ends at the first empty line */
	if (cut)
		cut[1] = '\0';
	fputs("{\"version\":1,\n\"file\":", h->out);
	report_json_str(h->out, path);
	fputs(",\n\"args\":[", h->out);
	fputs(o->lines ? "\"--lines\"" : "", h->out);
	fputs(o->no_demangle ? (o->lines ? ",\"--no-demangle\"" : "\"--no-demangle\"") : "",
	      h->out);
	if (o->no_inline)
		fputs(o->lines || o->no_demangle ? ",\"--no-inline\"" : "\"--no-inline\"", h->out);
	if (o->region) {
		fputs(o->lines || o->no_demangle || o->no_inline ? ",\"--region=" : "\"--region=",
		      h->out);
		report_json_chars(h->out, o->region);
		fputc('"', h->out);
	}
	if (o->event && report_event(h->r, o->event - 1, &e)) {
		fputs(o->lines || o->no_demangle || o->no_inline || o->region ? ",\"--event="
									      : "\"--event=",
		      h->out);
		report_json_chars(h->out, e.name);
		fputc('"', h->out);
	}
	fputs("],\n\"query\":[", h->out);
	for (size_t i = 0; i < nargs; i++) {
		fputs(i ? "," : "", h->out);
		report_json_str(h->out, args[i]);
	}
	fputc(']', h->out);
	fputs(",\n\"header\":", h->out);
	report_json_str(h->out, text);
	free(text);
	fprintf(h->out, ",\n\"all\":%" PRIu64, tree__total_weight(profile__tree(h->p)));
	if (o->nkeys) /* --per-thread, --sort=comm,pid,tid: the viewer opens on its Threads tab */
		fputs(",\n\"per_thread\":1", h->out);
	if (report_event_shown(h->r, o, &e)) { /* what the counts are: "page-faults samples" */
		fputs(",\n\"unit\":", h->out);
		report_json_str(h->out, e.name);
	}
	return 0;
}

/* JSON functions in the profile's order, which the text report's tables break ties by. */
static void number_funcs(struct html *h)
{
	const struct recording *r = h->r;
	uint32_t n = profile__nfuncs(h->p);

	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		for (uint32_t j = 0; profile__sample_kept(h->p, i) && j < s->nframes; j++) {
			const uint32_t *fns;
			uint32_t k = profile__frame_funcs(h->p, s->frames[j], &fns);

			while (k--)
				h->func_of[fns[k]] = 1;
		}
	}
	if (profile__folded_func(h->p) < n)
		h->func_of[profile__folded_func(h->p)] = 1;
	for (uint32_t f = 0; f < n; f++) {
		if (h->func_of[f]) {
			h->funcs[h->nfuncs] = f;
			h->func_of[f] = ++h->nfuncs;
		}
	}
}

static int put_data(struct html *h, const char *path, const struct report_opts *o)
{
	const struct recording *r = h->r;
	int err;

	h->func_of = calloc(profile__nfuncs(h->p) + 1, sizeof(*h->func_of));
	h->funcs = calloc(profile__nfuncs(h->p) + 1, sizeof(*h->funcs));
	h->rname_of = calloc(r->nstrings + 1, sizeof(*h->rname_of));
	h->rnames = calloc(r->nstrings + 1, sizeof(*h->rnames));
	h->sample_of = calloc(r->nsamples + 1, sizeof(*h->sample_of));
	if (!h->func_of || !h->funcs || !h->rname_of || !h->rnames || !h->sample_of)
		return -ENOMEM;
	number_funcs(h);
	err = put_meta(h, path, o);
	err = err ? err : put_stacks(h);
	if (err)
		return err;
	put_names(h);
	err = html_put_regions(r, o, h->out);
	err = err ? err : html_put_gpu(r, h->p, o, h->out);
	err = err ? err : html_put_timeline(r, h->sample_of, h->out);
	err = err ? err : html_put_threads(r, h->sample_of, h->out);
	err = err ? err : html_put_metrics(r, h->out);
	err = err ? err : html_put_steps(r, h->out);
	err = err ? err : html_put_models(r, h->out);
	fputs("}\n", h->out);
	return err;
}

/* The shell up to marker (whose line is replaced), from *at; the rest stays for the next call. */
static void put_shell_until(const char *marker, size_t *at, FILE *out)
{
	const char *shell = (const char *)shell_html, *end = shell + shell_html_len;
	const char *m =
		*marker ? memmem(shell + *at, shell_html_len - *at, marker, strlen(marker)) : NULL;

	if (!m)
		m = end;
	fwrite(shell + *at, 1, (size_t)(m - shell) - *at, out);
	*at = m < end ? (size_t)(m - shell) + strlen(marker) : shell_html_len;
}

int html_page(FILE *out, int (*put)(void *ctx, FILE *json), void *ctx)
{
	cookie_io_functions_t io = {.write = escape_write};
	size_t at = 0;
	FILE *json;
	int err;

	put_shell_until("/*PERCH_CSS*/", &at, out);
	fwrite(viewer_css, 1, viewer_css_len, out);
	put_shell_until("/*PERCH_DATA*/", &at, out);
	json = fopencookie(out, "w", io);
	if (!json)
		return -errno;
	err = put(ctx, json);
	if (fclose(json) && !err)
		err = -EIO;
	put_shell_until("/*PERCH_JS*/", &at, out);
	fwrite(viewer_js, 1, viewer_js_len, out);
	put_shell_until("", &at, out);
	return err;
}

struct html_args {
	struct html *h;
	const char *path;
	const struct report_opts *o;
};

static int put_report(void *ctx, FILE *json)
{
	struct html_args *a = ctx;

	a->h->out = json;
	return put_data(a->h, a->path, a->o);
}

int report_html(const struct recording *r, const char *path, const struct report_opts *o, FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct html h = {.r = r, .p = p};
	struct html_args a = {&h, path, o};
	int err;

	if (!p)
		return -errno;
	err = html_page(out, put_report, &a);
	u64map__clear(&h.nodes);
	u64map__clear(&h.rnodes);
	free(h.func_of);
	free(h.funcs);
	free(h.rname_of);
	free(h.rnames);
	free(h.sample_of);
	profile__free(p);
	return err;
}
