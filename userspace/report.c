// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch report` output: the header (what was recorded and everything that was lost), the top
 * functions by self and by total weight, the bounded call tree, folded stacks, and the summary
 * printed when `perch record` ends. Every number says which view it comes from.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"
#include "report.h"
#include "u64map.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static uint64_t stat_or_zero(const struct recording *r, const char *key)
{
	uint64_t v = 0;

	recording__stat(r, key, &v);
	return v;
}

static uint64_t lost_samples(const struct recording *r)
{
	return stat_or_zero(r, "lost_count_map_full");
}

/* How user stacks were walked, when the sampler unwound from DWARF tables. */
static void print_unwinding(const struct recording *r, FILE *out)
{
	const char *mode = recording__meta(r, "unwind");
	uint64_t dwarf = stat_or_zero(r, "dwarf_unwound");

	if (!mode || !strcmp(mode, "fp"))
		return;
	fprintf(out,
		"unwinding  %s: %" PRIu64 " user stacks unwound from %" PRIu64
		" DWARF tables, %" PRIu64 " with frame pointers; %" PRIu64
		" stopped early (unreadable %" PRIu64 ", no CFI %" PRIu64 ", bad frame %" PRIu64
		")\n",
		mode, dwarf, stat_or_zero(r, "unwind_tables"), stat_or_zero(r, "samples") - dwarf,
		stat_or_zero(r, "unwind_stopped_early"),
		stat_or_zero(r, "dwarf_stopped_unreadable"),
		stat_or_zero(r, "dwarf_stopped_no_cfi"),
		stat_or_zero(r, "dwarf_stopped_bad_frame"));
}

static void print_losses(const struct recording *r, FILE *out)
{
	fprintf(out,
		"lost       %" PRIu64 " samples (count map full); stacks missing: user %" PRIu64
		" (stack map full or hash collision %" PRIu64 ", unreadable %" PRIu64
		"), kernel %" PRIu64 " (full or collision %" PRIu64 ", unreadable %" PRIu64 ")\n",
		lost_samples(r),
		stat_or_zero(r, "lost_user_stack_map_full") +
			stat_or_zero(r, "user_stack_unreadable"),
		stat_or_zero(r, "lost_user_stack_map_full"),
		stat_or_zero(r, "user_stack_unreadable"),
		stat_or_zero(r, "lost_kernel_stack_map_full") +
			stat_or_zero(r, "kernel_stack_unreadable"),
		stat_or_zero(r, "lost_kernel_stack_map_full"),
		stat_or_zero(r, "kernel_stack_unreadable"));
	fprintf(out,
		"truncated  %" PRIu64 " samples hit the %s-frame stack limit; %" PRIu64
		" without process mappings; %" PRIu64 " lost process events\n",
		stat_or_zero(r, "truncated_stacks"), recording__meta(r, "max_stack") ?: "?",
		stat_or_zero(r, "samples_without_mappings"),
		stat_or_zero(r, "lost_process_events"));
	print_unwinding(r, out);
}

static void print_cost(const struct recording *r, FILE *out)
{
	uint64_t run_ns = stat_or_zero(r, "bpf_run_time_ns");

	fprintf(out, "profiler   perch used %.3f s user + %.3f s system",
		stat_or_zero(r, "perch_user_us") / 1e6, stat_or_zero(r, "perch_sys_us") / 1e6);
	if (run_ns)
		fprintf(out, "; its BPF programs ran %" PRIu64 " times for %.3f ms\n",
			stat_or_zero(r, "bpf_run_count"), run_ns / 1e6);
	else
		fprintf(out, "; BPF run time not measured (sysctl kernel.bpf_stats_enabled=0)\n");
}

static size_t count_processes(const struct recording *r, size_t *nthreads)
{
	struct u64map pids = {0};
	uint64_t one;
	size_t n = 0;

	for (size_t i = 0; i < r->nthreads; i++) {
		if (!u64map__get(&pids, r->threads[i].pid, &one)) {
			u64map__put(&pids, r->threads[i].pid, 1);
			n++;
		}
	}
	u64map__clear(&pids);
	*nthreads = r->nthreads;
	return n;
}

static uint64_t sample_total(const struct recording *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nsamples; i++)
		n += r->samples[i].count;
	return n;
}

static void print_header(const struct recording *r, const char *path, FILE *out)
{
	uint64_t dur = 0, status = 0;
	size_t nthreads, nproc = count_processes(r, &nthreads);
	bool done = recording__end(r, "duration_ns", &dur);

	recording__end(r, "exit_status", &status);
	fprintf(out, "# perch report of %s\n", path);
	fprintf(out, "command    %s\n", recording__meta(r, "command") ?: "?");
	fprintf(out, "pids       %s (%s); %zu processes and %zu threads sampled\n",
		recording__meta(r, "pids") ?: "?", recording__meta(r, "mode") ?: "?", nproc,
		nthreads);
	fprintf(out, "started    %s on %s, kernel %s\n", recording__meta(r, "start_time") ?: "?",
		recording__meta(r, "hostname") ?: "?", recording__meta(r, "kernel") ?: "?");
	if (done)
		fprintf(out, "duration   %.3f s, exit status %" PRIu64 "\n", dur / 1e9, status);
	else
		fprintf(out,
			"duration   unknown: the recording did not finish (perch was stopped)\n");
	fprintf(out,
		"sampling   %s at %s Hz per CPU; %" PRIu64 " samples in %" PRIu64
		" ticks on target threads\n",
		recording__meta(r, "event") ?: "?", recording__meta(r, "frequency") ?: "?",
		sample_total(r), stat_or_zero(r, "samples"));
	print_losses(r, out);
	print_cost(r, out);
}

static const struct profile *g_sort_profile;

static int by_self_desc(const void *a, const void *b)
{
	const struct tree *t = profile__tree(g_sort_profile);
	uint64_t x = tree__label_self(t, *(const uint32_t *)a);
	uint64_t y = tree__label_self(t, *(const uint32_t *)b);

	return x < y ? 1 : x > y ? -1 : (int)(*(const uint32_t *)a - *(const uint32_t *)b);
}

static int by_total_desc(const void *a, const void *b)
{
	const struct tree *t = profile__tree(g_sort_profile);
	uint64_t x = tree__label_total(t, *(const uint32_t *)a);
	uint64_t y = tree__label_total(t, *(const uint32_t *)b);

	return x < y ? 1 : x > y ? -1 : (int)(*(const uint32_t *)a - *(const uint32_t *)b);
}

static const char *kmark(const struct profile *p, uint32_t f)
{
	return profile__func_kernel(p, f) ? " [k]" : "";
}

static void print_top(const struct profile *p, bool by_self, unsigned int top, FILE *out)
{
	const struct tree *t = profile__tree(p);
	uint32_t n = profile__nfuncs(p), *order = malloc((n + 1) * sizeof(*order));
	uint64_t all = tree__total_weight(t);

	if (!order)
		return;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	g_sort_profile = p;
	qsort(order, n, sizeof(*order), by_self ? by_self_desc : by_total_desc);
	fprintf(out, "\nTop functions by %s\n",
		by_self ? "self (samples whose leaf is the function)"
			: "total (samples in which the function appears at least once)");
	fprintf(out, "  %7s %8s %7s %8s  %-40s %s\n", "self%", "self", "total%", "total",
		"function", "module");
	for (uint32_t i = 0; i < n && i < top; i++) {
		uint64_t s = tree__label_self(t, order[i]), tot = tree__label_total(t, order[i]);

		if (!(by_self ? s : tot))
			break;
		fprintf(out, "  %6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 "  %-40s %s%s\n",
			pct(s, all), s, pct(tot, all), tot, profile__func_name(p, order[i]),
			profile__func_module(p, order[i]), kmark(p, order[i]));
	}
	free(order);
}

struct tree_ctx {
	const struct profile *p;
	const struct tree *t;
	uint64_t all;
	double min_percent;
	FILE *out;
	char prefix[512];
};

static int by_inclusive_desc(const void *a, const void *b)
{
	const struct tree *t = profile__tree(g_sort_profile);
	uint64_t x = tree__node_inclusive(t, *(const size_t *)a);
	uint64_t y = tree__node_inclusive(t, *(const size_t *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

static void print_node(struct tree_ctx *c, size_t node, size_t depth)
{
	const size_t *kids;
	size_t n = tree__node_children(c->t, node, &kids), shown = 0, hidden = 0;
	size_t *order = malloc((n + 1) * sizeof(*order));
	size_t len = strlen(c->prefix);

	if (!order)
		return;
	if (n)
		memcpy(order, kids, n * sizeof(*order));
	qsort(order, n, sizeof(*order), by_inclusive_desc);
	for (size_t i = 0; i < n; i++) {
		uint64_t inc = tree__node_inclusive(c->t, order[i]);
		uint32_t f = tree__node_label(c->t, order[i]);

		if (pct(inc, c->all) < c->min_percent) {
			hidden += inc;
			continue;
		}
		shown++;
		fprintf(c->out, "%s%6.2f%% %6.2f%%  %s%s\n", c->prefix, pct(inc, c->all),
			pct(tree__node_self(c->t, order[i]), c->all), profile__func_name(c->p, f),
			kmark(c->p, f));
		if (len + 2 < sizeof(c->prefix) && depth < 200) {
			strcpy(c->prefix + len, "  ");
			print_node(c, order[i], depth + 1);
			c->prefix[len] = 0;
		}
	}
	if (hidden && shown)
		fprintf(c->out, "%s%6.2f%%          (%zu smaller callees below %.2f%%)\n",
			c->prefix, pct(hidden, c->all), n - shown, c->min_percent);
	free(order);
}

static void print_tree(const struct profile *p, double min_percent, FILE *out)
{
	struct tree_ctx c = {.p = p, .t = profile__tree(p), .min_percent = min_percent, .out = out};

	c.all = tree__total_weight(c.t);
	g_sort_profile = p;
	fprintf(out,
		"\nCall tree (bounded path tree: recursion folded so no caller->callee pair repeats "
		"on a path; %zu nodes)\n",
		tree__node_count(c.t));
	fprintf(out, "  %7s %7s  (%% of all samples; nodes below %.2f%% hidden: --min-percent)\n",
		"total", "self", min_percent);
	strcpy(c.prefix, "  ");
	print_node(&c, 0, 0);
}

/* ---- folded stacks -------------------------------------------------------------------------- */

struct line {
	char *text;
	uint64_t count;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static const char *process_name(const struct recording *r, uint32_t pid, uint32_t tid)
{
	const char *thread = NULL;

	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].pid != pid)
			continue;
		if (r->threads[i].tid == pid)
			return recording__string(r, r->threads[i].comm);
		if (r->threads[i].tid == tid)
			thread = recording__string(r, r->threads[i].comm);
	}
	return thread && *thread ? thread : "?";
}

static char *fold_sample(const struct recording *r, const struct profile *p,
			 const struct rec_sample *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputs(process_name(r, s->pid, s->tid), f);
	if (!s->nframes)
		fputs(";[no stack]", f); /* neither stack could be read: counted in the header */
	for (uint32_t j = 0; j < s->nframes; j++) {
		const uint32_t *fns;
		uint32_t n = profile__frame_funcs(p, s->frames[j], &fns);

		for (uint32_t k = 0; k < n; k++)
			fprintf(f, ";%s%s", profile__func_name(p, fns[k]),
				profile__func_kernel(p, fns[k]) ? "_[k]" : "");
	}
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
		lines[n].text = fold_sample(r, p, &r->samples[i]);
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

int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out)
{
	struct profile_opts po = {
		.sz = sizeof(po), .lines = o->lines, .no_demangle = o->no_demangle};
	struct profile *p = profile__build(r, &po);
	int err = 0;

	if (!p)
		return -errno;
	if (o->format == REPORT_FOLDED) {
		err = print_folded(r, p, out);
	} else {
		print_header(r, path, out);
		print_top(p, true, o->top, out);
		print_top(p, false, o->top, out);
		print_tree(p, o->min_percent, out);
	}
	profile__free(p);
	return err;
}

void report__summary(const struct recording *r, const char *path, FILE *out)
{
	struct profile *p = profile__build(r, NULL);
	uint64_t dur = 0, lost = lost_samples(r);

	if (!p)
		return;
	recording__end(r, "duration_ns", &dur);
	fprintf(out, "\nperch: %" PRIu64 " samples in %.2f s (%s at %s Hz)", sample_total(r),
		dur / 1e9, recording__meta(r, "event") ?: "?",
		recording__meta(r, "frequency") ?: "?");
	fprintf(out, "; lost %" PRIu64 ", truncated %" PRIu64 ", user stacks missing %" PRIu64 "\n",
		lost, stat_or_zero(r, "truncated_stacks"),
		stat_or_zero(r, "lost_user_stack_map_full") +
			stat_or_zero(r, "user_stack_unreadable"));
	print_top(p, true, 10, out);
	fprintf(out, "\nrecording: %s (%.1f KiB); full report: perch report %s\n", path,
		r->good_size / 1024.0, path);
	profile__free(p);
}
