// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The regions section of the text report: exact statistics from the markers (all threads
 * summed), their merged tree, and what could not be measured.
 */
#include <inttypes.h>
#include <string.h>
#include "common.h"
#include "perch_abi.h"

/* Mean, min or max of a region's calls: "-" when no call was timed. */
static const char *fmt_per_call(char buf[24], const struct region_stat *s, uint64_t ns)
{
	return region_stat__timed(s) ? report_fmt_time(buf, ns) : "         -";
}

/* The GPU column, before the name, when a launch's stack is known (older recordings: none). */
static void print_gpu_cell(const struct regiontab *t, const char *text, FILE *out)
{
	if (regiontab__has_gpu(t))
		fprintf(out, "  %10s", text);
}

static void print_region_table(const struct regiontab *t, uint64_t all, FILE *out)
{
	char b[6][24];

	fprintf(out,
		"\nRegions (exact counts and wall times from the markers, all threads summed; total "
		"counts a\nrecursion once, self leaves out child regions; samples: CPU samples "
		"inside, at any depth%s)\n",
		regiontab__has_gpu(t) ? ";\ngpu: GPU time of the kernels, copies and memsets "
					"launched inside"
				      : "");
	fprintf(out, "  %10s  %10s  %10s  %10s  %10s  %10s  %8s  %8s", "calls", "total", "self",
		"mean", "min", "max", "samples", "samples%");
	print_gpu_cell(t, "gpu", out);
	fprintf(out, "  %s\n", "region");
	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		const struct region_stat *s = regiontab__all(t, i);

		fprintf(out, "  %10" PRIu64 "  %s  %s  %s  %s  %s  %8" PRIu64 "  %7.2f%%", s->calls,
			report_fmt_time(b[0], s->total_ns), report_fmt_time(b[1], s->self_ns),
			fmt_per_call(b[2], s, report_mean_ns(s)), fmt_per_call(b[3], s, s->min_ns),
			fmt_per_call(b[4], s, s->max_ns), s->samples, report_pct(s->samples, all));
		print_gpu_cell(t, report_fmt_time(b[5], s->gpu_ns), out);
		fprintf(out, "  %s\n", regiontab__name(t, i));
	}
}

static void print_region_node(const struct regiontab *t, uint32_t node, char *prefix, size_t depth,
			      FILE *out)
{
	const struct region_node *n = regiontab__node(t, node);
	size_t len = strlen(prefix);
	char b[2][24];

	for (uint32_t k = 0; k < n->nkids; k++) {
		const struct region_node *c = regiontab__node(t, n->kids[k]);

		fprintf(out, "%s%10" PRIu64 "  %s  %s  %s\n", prefix, c->calls,
			report_fmt_time(b[0], c->total_ns), report_fmt_time(b[1], c->self_ns),
			regiontab__name(t, c->region));
		if (len + 2 < 512 && depth < 200) {
			strcpy(prefix + len, "  ");
			print_region_node(t, n->kids[k], prefix, depth + 1, out);
			prefix[len] = 0;
		}
	}
}

static void print_region_tree(const struct regiontab *t, FILE *out)
{
	char prefix[512] = "  ";

	fprintf(out, "\nRegion tree (the threads' region trees merged by path from the root; "
		     "recursion folded as in the call tree)\n");
	fprintf(out, "  %10s  %10s  %10s  %s\n", "calls", "total", "self", "region");
	print_region_node(t, 0, prefix, 0, out);
}

/* " (name count, ...)" for the regions where which() is not zero. */
static void print_which(const struct regiontab *t, uint64_t (*which)(const struct region_stat *),
			FILE *out)
{
	const char *sep = " (";

	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		uint64_t v = which(regiontab__all(t, i));

		if (v) {
			fprintf(out, "%s%s %" PRIu64, sep, regiontab__name(t, i), v);
			sep = ", ";
		}
	}
	fputs(*sep == ',' ? ")" : "", out);
}

static uint64_t untimed_of(const struct region_stat *s)
{
	return s->untimed;
}

static uint64_t open_of(const struct region_stat *s)
{
	return s->open;
}

static uint64_t sum_of(const struct regiontab *t, uint64_t (*which)(const struct region_stat *))
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < regiontab__count(t); i++)
		n += which(regiontab__all(t, i));
	return n;
}

/* When the region trees were read: a launched command's at its exit, else when perch stopped. */
static const char *snapshot_time(const char *mode)
{
	if (!mode)
		return "the process exited or recording stopped";
	return strcmp(mode, "launch") ? "recording stopped" : "the process exited";
}

_Static_assert(PERCH_MAX_NAMES == 4096 && PERCH_MAX_NODES == 1024 && PERCH_MAX_DEPTH == 64,
	       "the region notes name the runtime's limits");

/* Notes that are a STATS count and a sentence. */
static const struct {
	enum rec_stat key;
	const char *text;
} region_stat_notes[] = {
	{REC_STAT_region_stacks_lost,
	 "samples have no region stack (it could not be read): they count as outside every region"},
	{REC_STAT_region_processes_busy,
	 "processes were left alone: another perch was recording their region markers (one perch "
	 "at a time)"},
	{REC_STAT_region_calls_names_over_limit,
	 "region calls had names beyond the 4096 the runtime keeps: counted under [region names "
	 "beyond the runtime's table], under no other name"},
	{REC_STAT_region_calls_tree_full,
	 "region calls did not fit their thread's tree of 1024 nodes: counted under [more regions "
	 "than the runtime keeps]"},
	{REC_STAT_region_calls_too_deep,
	 "region begins and marks were nested deeper than the 64 levels the runtime keeps: counted "
	 "here only, in no region's calls or times"},
};

static bool any_stat_note(const struct recording *r)
{
	for (size_t i = 0; i < sizeof(region_stat_notes) / sizeof(region_stat_notes[0]); i++) {
		if (report_stat(r, region_stat_notes[i].key))
			return true;
	}
	return false;
}

static void print_stat_notes(const struct recording *r, FILE *out)
{
	for (size_t i = 0; i < sizeof(region_stat_notes) / sizeof(region_stat_notes[0]); i++) {
		uint64_t v = report_stat(r, region_stat_notes[i].key);

		if (v)
			fprintf(out, "  %" PRIu64 " %s\n", v, region_stat_notes[i].text);
	}
}

/* What the region numbers leave out, one line each; nothing when all is exact. */
static void print_region_notes(const struct recording *r, const struct regiontab *t, FILE *out)
{
	const char *note = report_meta(r, REC_META_regions_note);
	uint64_t mismatches = regiontab__mismatches(t), untimed = sum_of(t, untimed_of);
	uint64_t open = sum_of(t, open_of);
	bool no_block = !r->nrthreads && regiontab__count(t);

	if (!mismatches && !untimed && !open && !any_stat_note(r) && !note && !no_block)
		return;
	fprintf(out, "\nRegion notes\n");
	if (no_block)
		fprintf(out,
			"  the recording has no region statistics (perch stopped before writing "
			"them): calls and times are unknown, samples are exact\n");
	if (mismatches)
		fprintf(out,
			"  %" PRIu64
			" region ends did not match the innermost open region (see stderr "
			"of the program)\n",
			mismatches);
	if (untimed) {
		fprintf(out,
			"  %" PRIu64
			" activations were already open when perch attached: their ends "
			"are counted in calls but not timed",
			untimed);
		print_which(t, untimed_of, out);
		fputc('\n', out);
	}
	if (open) {
		fprintf(out,
			"  %" PRIu64
			" activations were still open when %s: not counted in calls or "
			"times",
			open, snapshot_time(report_meta(r, REC_META_mode)));
		print_which(t, open_of, out);
		fputc('\n', out);
	}
	print_stat_notes(r, out);
	if (note)
		fprintf(out, "  note: %s\n", note);
}

void report_print_regions(const struct recording *r, const struct regiontab *t, FILE *out)
{
	if (regiontab__count(t)) {
		print_region_table(t, report_sample_total(r), out);
		if (regiontab__node_count(t) > 1)
			print_region_tree(t, out);
	}
	print_region_notes(r, t, out);
}
