// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch report` output: the header (what was recorded and everything that was lost), the
 * regions (exact statistics from the markers, their merged tree, what could not be measured),
 * the top functions by self and by total weight, the bounded call tree, folded stacks, the CSV
 * of regions, and the summary printed when `perch record` ends. Every number says which view it
 * comes from. Regions are never functions: a sample's regions only select it (--region) and
 * lead its folded stack as region:NAME.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "perch_abi.h"
#include "format/keys.h"
#include "model/profile.h"
#include "model/regiontab.h"
#include "report.h"
#include "lib/u64map.h"

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static uint64_t stat_or_zero(const struct recording *r, enum rec_stat key)
{
	uint64_t v = 0;

	recording__stat(r, rec_stat_keys[key], &v);
	return v;
}

static const char *meta_of(const struct recording *r, enum rec_meta key)
{
	return recording__meta(r, rec_meta_keys[key]);
}

static bool end_of(const struct recording *r, enum rec_end key, uint64_t *value)
{
	return recording__end(r, rec_end_keys[key], value);
}

static uint64_t lost_samples(const struct recording *r)
{
	return stat_or_zero(r, REC_STAT_lost_count_map_full);
}

/* How user stacks were walked, when the sampler unwound from DWARF tables. */
static void print_unwinding(const struct recording *r, FILE *out)
{
	const char *mode = meta_of(r, REC_META_unwind);
	uint64_t dwarf = stat_or_zero(r, REC_STAT_dwarf_unwound);

	if (!mode || !strcmp(mode, "fp"))
		return;
	fprintf(out,
		"unwinding  %s: %" PRIu64 " user stacks unwound from %" PRIu64
		" DWARF tables, %" PRIu64 " with frame pointers; %" PRIu64
		" stopped early (unreadable %" PRIu64 ", no CFI %" PRIu64 ", bad frame %" PRIu64
		")\n",
		mode, dwarf, stat_or_zero(r, REC_STAT_unwind_tables),
		stat_or_zero(r, REC_STAT_samples) - dwarf,
		stat_or_zero(r, REC_STAT_unwind_stopped_early),
		stat_or_zero(r, REC_STAT_dwarf_stopped_unreadable),
		stat_or_zero(r, REC_STAT_dwarf_stopped_no_cfi),
		stat_or_zero(r, REC_STAT_dwarf_stopped_bad_frame));
}

static void print_losses(const struct recording *r, FILE *out)
{
	fprintf(out,
		"lost       %" PRIu64 " samples (count map full); stacks missing: user %" PRIu64
		" (stack map full or hash collision %" PRIu64 ", unreadable %" PRIu64
		"), kernel %" PRIu64 " (full or collision %" PRIu64 ", unreadable %" PRIu64 ")\n",
		lost_samples(r),
		stat_or_zero(r, REC_STAT_lost_user_stack_map_full) +
			stat_or_zero(r, REC_STAT_user_stack_unreadable),
		stat_or_zero(r, REC_STAT_lost_user_stack_map_full),
		stat_or_zero(r, REC_STAT_user_stack_unreadable),
		stat_or_zero(r, REC_STAT_lost_kernel_stack_map_full) +
			stat_or_zero(r, REC_STAT_kernel_stack_unreadable),
		stat_or_zero(r, REC_STAT_lost_kernel_stack_map_full),
		stat_or_zero(r, REC_STAT_kernel_stack_unreadable));
	fprintf(out,
		"truncated  %" PRIu64 " samples hit the %s-frame stack limit; %" PRIu64
		" without process mappings; %" PRIu64
		" cut at an address no mapping holds; %" PRIu64 " lost process events\n",
		stat_or_zero(r, REC_STAT_truncated_stacks), meta_of(r, REC_META_max_stack) ?: "?",
		stat_or_zero(r, REC_STAT_samples_without_mappings),
		stat_or_zero(r, REC_STAT_damaged_user_stacks),
		stat_or_zero(r, REC_STAT_lost_process_events));
	if (stat_or_zero(r, REC_STAT_jit_maps_capped))
		fprintf(out, "jit maps   %" PRIu64 " over perch's size limit, read in part\n",
			stat_or_zero(r, REC_STAT_jit_maps_capped));
	print_unwinding(r, out);
}

/* Counters that mean something was lost and that the lines above do not show: named on one line
 * when any is not zero, so no loss the recording counted goes unsaid. */
static const struct {
	enum rec_stat key;
	const char *what;
} other_losses[] = {
	{REC_STAT_lost_children_target_map_full, "children not followed (target map full)"},
	{REC_STAT_lost_user_stack_hash_collision, "user stacks lost to a hash collision"},
	{REC_STAT_region_stack_unreadable, "region stacks unreadable"},
	{REC_STAT_region_processes_unreadable, "processes whose region runtime could not be read"},
	{REC_STAT_region_processes_no_handshake, "region runtimes that never answered"},
	{REC_STAT_unwind_modules_without_table, "modules without unwind tables"},
	{REC_STAT_unwind_modules_cfi_damaged, "modules whose CFI (.eh_frame) is damaged"},
	{REC_STAT_unwind_modules_rows_full, "modules whose unwind rows did not fit"},
	{REC_STAT_unwind_mappings_over_limit, "mappings over the unwinder's limit"},
	{REC_STAT_unwind_processes_not_listed, "processes the unwinder could not list"},
	{REC_STAT_dwarf_frame_pointer_fallback,
	 "user stacks walked by frame pointers (leaf in code without unwind tables: JIT)"},
};

static void print_other_losses(const struct recording *r, FILE *out)
{
	const char *sep = "also lost ";

	for (size_t i = 0; i < sizeof(other_losses) / sizeof(other_losses[0]); i++) {
		uint64_t v = stat_or_zero(r, other_losses[i].key);

		if (!v)
			continue;
		fprintf(out, "%s%" PRIu64 " %s", sep, v, other_losses[i].what);
		sep = "; ";
	}
	if (strcmp(sep, "also lost "))
		fputc('\n', out);
}

static void print_cost(const struct recording *r, FILE *out)
{
	uint64_t run_ns = stat_or_zero(r, REC_STAT_bpf_run_time_ns);

	fprintf(out, "profiler   perch used %.3f s user + %.3f s system",
		stat_or_zero(r, REC_STAT_perch_user_us) / 1e6,
		stat_or_zero(r, REC_STAT_perch_sys_us) / 1e6);
	if (run_ns)
		fprintf(out, "; its BPF programs ran %" PRIu64 " times for %.3f ms\n",
			stat_or_zero(r, REC_STAT_bpf_run_count), run_ns / 1e6);
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

static void print_header(const struct recording *r, const char *path, const struct report_opts *o,
			 const struct profile *p, FILE *out)
{
	uint64_t dur = 0, status = 0;
	size_t nthreads, nproc = count_processes(r, &nthreads);
	bool done = end_of(r, REC_END_duration_ns, &dur);

	end_of(r, REC_END_exit_status, &status);
	fprintf(out, "# perch report of %s\n", path);
	fprintf(out, "command    %s\n", meta_of(r, REC_META_command) ?: "?");
	fprintf(out, "pids       %s (%s); %zu processes and %zu threads sampled\n",
		meta_of(r, REC_META_pids) ?: "?", meta_of(r, REC_META_mode) ?: "?", nproc,
		nthreads);
	fprintf(out, "started    %s on %s, kernel %s\n", meta_of(r, REC_META_start_time) ?: "?",
		meta_of(r, REC_META_hostname) ?: "?", meta_of(r, REC_META_kernel) ?: "?");
	if (done)
		fprintf(out, "duration   %.3f s, exit status %" PRIu64 "\n", dur / 1e9, status);
	else
		fprintf(out,
			"duration   unknown: the recording did not finish (perch was stopped)\n");
	fprintf(out,
		"sampling   %s at %s Hz per CPU; %" PRIu64 " samples in %" PRIu64
		" ticks on target threads\n",
		meta_of(r, REC_META_event) ?: "?", meta_of(r, REC_META_frequency) ?: "?",
		sample_total(r), stat_or_zero(r, REC_STAT_samples));
	if (o->region) {
		uint64_t kept = tree__total_weight(profile__tree(p));

		fprintf(out,
			"filter     --region %s keeps %" PRIu64 " of %" PRIu64
			" samples (%.2f%%): the top functions and the call tree count only these\n",
			o->region, kept, sample_total(r), pct(kept, sample_total(r)));
	}
	print_losses(r, out);
	print_other_losses(r, out);
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

static void print_tree(const struct profile *p, double min_percent, const char *region, FILE *out)
{
	struct tree_ctx c = {.p = p, .t = profile__tree(p), .min_percent = min_percent, .out = out};

	c.all = tree__total_weight(c.t);
	g_sort_profile = p;
	fprintf(out,
		"\nCall tree (bounded path tree: recursion folded so no caller->callee pair repeats "
		"on a path; %zu nodes)\n",
		tree__node_count(c.t));
	if (region)
		fprintf(out, "  %7s %7s  (%% of the samples inside region %s", "total", "self",
			region);
	else
		fprintf(out, "  %7s %7s  (%% of all samples", "total", "self");
	fprintf(out, "; nodes below %.2f%% hidden: --min-percent)\n", min_percent);
	strcpy(c.prefix, "  ");
	print_node(&c, 0, 0);
}

/* ---- regions -------------------------------------------------------------------------------- */

/* A duration in ten columns with three decimals, in ns, µs, ms or s (as perf and Tracy print). */
static const char *fmt_time(char buf[24], uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, 24, "%7" PRIu64 " ns", ns);
	else if (ns < 1000000)
		snprintf(buf, 24, "%7.3f µs", ns / 1e3);
	else if (ns < 999999500) /* above, %.3f ms would print 1000.000 */
		snprintf(buf, 24, "%7.3f ms", ns / 1e6);
	else
		snprintf(buf, 24, "%8.3f s", ns / 1e9);
	return buf;
}

/* Mean, min or max of a region's calls: "-" when no call was timed. */
static const char *fmt_per_call(char buf[24], const struct region_stat *s, uint64_t ns)
{
	return region_stat__timed(s) ? fmt_time(buf, ns) : "         -";
}

/* The mean time per timed call: every call's own time (a recursive region's nested calls
 * included), or, from a recording without those sums, the total over the calls. */
static uint64_t mean_ns(const struct region_stat *s)
{
	uint64_t timed = region_stat__timed(s), sum = s->sum_ns ? s->sum_ns : s->total_ns;

	return timed ? (sum + timed / 2) / timed : 0;
}

static void print_region_table(const struct regiontab *t, uint64_t all, FILE *out)
{
	char b[6][24];

	fprintf(out,
		"\nRegions (exact counts and wall times from the markers, all threads summed; total "
		"counts a\nrecursion once, self leaves out child regions; samples: CPU samples "
		"inside, at any depth)\n");
	fprintf(out, "  %10s  %10s  %10s  %10s  %10s  %10s  %8s  %8s  %s\n", "calls", "total",
		"self", "mean", "min", "max", "samples", "samples%", "region");
	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		const struct region_stat *s = regiontab__all(t, i);

		fprintf(out, "  %10" PRIu64 "  %s  %s  %s  %s  %s  %8" PRIu64 "  %7.2f%%  %s\n",
			s->calls, fmt_time(b[0], s->total_ns), fmt_time(b[1], s->self_ns),
			fmt_per_call(b[2], s, mean_ns(s)), fmt_per_call(b[3], s, s->min_ns),
			fmt_per_call(b[4], s, s->max_ns), s->samples, pct(s->samples, all),
			regiontab__name(t, i));
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
			fmt_time(b[0], c->total_ns), fmt_time(b[1], c->self_ns),
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
		if (stat_or_zero(r, region_stat_notes[i].key))
			return true;
	}
	return false;
}

static void print_stat_notes(const struct recording *r, FILE *out)
{
	for (size_t i = 0; i < sizeof(region_stat_notes) / sizeof(region_stat_notes[0]); i++) {
		uint64_t v = stat_or_zero(r, region_stat_notes[i].key);

		if (v)
			fprintf(out, "  %" PRIu64 " %s\n", v, region_stat_notes[i].text);
	}
}

/* What the region numbers leave out, one line each; nothing when all is exact. */
static void print_region_notes(const struct recording *r, const struct regiontab *t, FILE *out)
{
	const char *note = meta_of(r, REC_META_regions_note);
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
			open, snapshot_time(meta_of(r, REC_META_mode)));
		print_which(t, open_of, out);
		fputc('\n', out);
	}
	print_stat_notes(r, out);
	if (note)
		fprintf(out, "  note: %s\n", note);
}

static void print_regions(const struct recording *r, const struct regiontab *t, FILE *out)
{
	if (regiontab__count(t)) {
		print_region_table(t, sample_total(r), out);
		if (regiontab__node_count(t) > 1)
			print_region_tree(t, out);
	}
	print_region_notes(r, t, out);
}

/* ---- CSV of regions ------------------------------------------------------------------------- */

/* RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
static void csv_field(const char *s, FILE *out)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_seconds(uint64_t ns, FILE *out)
{
	fprintf(out, ",%" PRIu64 ".%09" PRIu64, ns / 1000000000, ns % 1000000000);
}

static void csv_row(const char *name, const struct region_thread_stat *th,
		    const struct region_stat *s, FILE *out)
{
	uint64_t timed = region_stat__timed(s);

	csv_field(name, out);
	if (th)
		fprintf(out, ",%" PRIu32, th->tid);
	else
		fputc(',', out);
	fprintf(out, ",%" PRIu64, s->calls);
	csv_seconds(s->total_ns, out);
	csv_seconds(s->self_ns, out);
	if (timed) {
		fprintf(out, ",%.9f",
			(double)(s->sum_ns ? s->sum_ns : s->total_ns) / (double)timed / 1e9);
		csv_seconds(s->min_ns, out);
		csv_seconds(s->max_ns, out);
	} else {
		fputs(",,,", out);
	}
	fprintf(out, ",%" PRIu64 ",%" PRIu64 "\n", s->samples, s->size_sum);
}

static int print_csv(const struct recording *r, FILE *out)
{
	struct regiontab *t = regiontab__new(r);

	if (!t)
		return -errno;
	fputs("name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size\n", out);
	for (uint32_t i = 0; i < regiontab__count(t); i++) {
		const struct region_thread_stat *rows;
		uint32_t n = regiontab__threads(t, i, &rows);

		csv_row(regiontab__name(t, i), NULL, regiontab__all(t, i), out);
		for (uint32_t k = 0; k < n; k++)
			csv_row(regiontab__name(t, i), &rows[k], &rows[k].s, out);
	}
	regiontab__free(t);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int report__find_region(const struct recording *r, const char *name)
{
	struct regiontab *t = regiontab__new(r);
	int found;

	if (!t)
		return -errno;
	found = regiontab__find(t, name) >= 0;
	regiontab__free(t);
	return found ? 0 : -ENOENT;
}

char *report__region_names(const struct recording *r)
{
	struct regiontab *t = regiontab__new(r);
	uint32_t n = t ? regiontab__count(t) : 0;
	const char **names = t ? malloc((n + 1) * sizeof(*names)) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = names ? open_memstream(&buf, &len) : NULL;

	if (f) {
		for (uint32_t i = 0; i < n; i++)
			names[i] = regiontab__name(t, i);
		qsort(names, n, sizeof(*names), by_name);
		for (uint32_t i = 0; i < n; i++)
			fprintf(f, "%s%s", i ? ", " : "", names[i]);
		if (fclose(f)) {
			free(buf);
			buf = NULL;
		}
	}
	free(names);
	regiontab__free(t);
	return buf;
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

/* The sample's thread's name when it was taken; from the thread table for recordings made before
 * samples carried it (its name when perch first saw it). */
static const char *process_name(const struct recording *r, const struct rec_sample *s)
{
	const char *thread = NULL;
	uint32_t pid = s->pid, tid = s->tid;

	if (s->comm)
		return recording__string(r, s->comm);
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

/* A name as one folded frame: ';' separates frames and a line break ends the line, so they
 * become ':' and ' ' (what flamegraph.pl's stackcollapse scripts do; README: folded output). */
static void put_folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
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
	put_folded_name(f, process_name(r, s));
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
	if (!nfuncs)
		fputs(";[no stack]", f); /* neither stack could be read: counted in the header */
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
		if (!profile__sample_kept(p, i))
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

/* --format=stats: one "key value" line per key of format/keys.h the recording holds (every STATS
 * key, 0 when absent), then the counts the text header derives, for scripts and tests. */
static int print_stats(const struct recording *r, FILE *out)
{
	size_t nthreads, nproc = count_processes(r, &nthreads);
	uint64_t v;

	for (int k = 0; k < REC_META_NR; k++) {
		if (meta_of(r, k))
			fprintf(out, "%s %s\n", rec_meta_keys[k], meta_of(r, k));
	}
	for (int k = 0; k < REC_STAT_NR; k++)
		fprintf(out, "%s %" PRIu64 "\n", rec_stat_keys[k], stat_or_zero(r, k));
	for (int k = 0; k < REC_END_NR; k++) {
		if (end_of(r, k, &v))
			fprintf(out, "%s %" PRIu64 "\n", rec_end_keys[k], v);
	}
	fprintf(out, "sampled %" PRIu64 "\nprocesses %zu\nthreads %zu\n", sample_total(r), nproc,
		nthreads);
	return 0;
}

int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out)
{
	struct profile_opts po = {.sz = sizeof(po),
				  .lines = o->lines,
				  .no_demangle = o->no_demangle,
				  .region = o->region};
	struct regiontab *t = NULL;
	struct profile *p;
	int err = 0;

	if (o->format == REPORT_CSV)
		return print_csv(r, out);
	if (o->format == REPORT_STATS)
		return print_stats(r, out);
	p = profile__build(r, &po);
	if (!p)
		return -errno;
	if (o->format == REPORT_FOLDED) {
		err = print_folded(r, p, out);
	} else {
		t = regiontab__new(r);
		if (!t) {
			err = -errno;
			goto cleanup;
		}
		print_header(r, path, o, p, out);
		print_regions(r, t, out);
		print_top(p, true, o->top, out);
		print_top(p, false, o->top, out);
		print_tree(p, o->min_percent, o->region, out);
	}
cleanup:
	regiontab__free(t);
	profile__free(p);
	return err;
}

/* The summary's region lines: the five regions with the most time. */
static void summary_regions(const struct recording *r, FILE *out)
{
	struct regiontab *t = r->nrthreads ? regiontab__new(r) : NULL;
	uint32_t n = t ? regiontab__count(t) : 0;
	char tot[24], mean[24];

	if (n)
		fprintf(out,
			"\nRegions (exact, all threads; %u in all)\n       calls       total"
			"        mean  region\n",
			n);
	for (uint32_t i = 0; i < n && i < 5; i++) {
		const struct region_stat *s = regiontab__all(t, i);
		uint64_t timed = region_stat__timed(s);

		fmt_time(tot, s->total_ns);
		if (timed)
			fmt_time(mean, mean_ns(s));
		else
			snprintf(mean, sizeof(mean), "%10s", "-");
		fprintf(out, "  %10" PRIu64 "  %s  %s  %s\n", s->calls, tot, mean,
			regiontab__name(t, i));
	}
	regiontab__free(t);
}

void report__summary(const struct recording *r, const char *path, FILE *out)
{
	struct profile *p = profile__build(r, NULL);
	uint64_t dur = 0, lost = lost_samples(r);

	if (!p)
		return;
	end_of(r, REC_END_duration_ns, &dur);
	fprintf(out, "\nperch: %" PRIu64 " samples in %.2f s (%s at %s Hz)", sample_total(r),
		dur / 1e9, meta_of(r, REC_META_event) ?: "?",
		meta_of(r, REC_META_frequency) ?: "?");
	fprintf(out, "; lost %" PRIu64 ", truncated %" PRIu64 ", user stacks missing %" PRIu64 "\n",
		lost, stat_or_zero(r, REC_STAT_truncated_stacks),
		stat_or_zero(r, REC_STAT_lost_user_stack_map_full) +
			stat_or_zero(r, REC_STAT_user_stack_unreadable));
	print_top(p, true, 10, out);
	summary_regions(r, out);
	fprintf(out, "\nrecording: %s (%.1f KiB); full report: perch report %s\n", path,
		r->good_size / 1024.0, path);
	profile__free(p);
}
