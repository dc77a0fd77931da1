// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The text report (--format=text, the default): the header (what was recorded and everything
 * that was lost), the top functions by self and by total weight and the bounded call tree, then
 * the sections that explain them: processes (system-wide), regions (report/regions.c), GPU,
 * metrics (a summary by default) and steps. Every number says which view it comes from.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

/* How user stacks were walked, when the sampler unwound from DWARF tables. */
static void print_unwinding(const struct recording *r, FILE *out)
{
	const char *mode = report_meta(r, REC_META_unwind);
	uint64_t dwarf = report_stat(r, REC_STAT_dwarf_unwound);

	if (!mode || !strcmp(mode, "fp"))
		return;
	fprintf(out,
		"unwinding  %s: %" PRIu64 " user stacks unwound from %" PRIu64
		" DWARF tables, %" PRIu64 " with frame pointers; %" PRIu64
		" stopped early (unreadable %" PRIu64 ", no CFI %" PRIu64 ", bad frame %" PRIu64
		")\n",
		mode, dwarf, report_stat(r, REC_STAT_unwind_tables),
		report_stat(r, REC_STAT_samples) - dwarf,
		report_stat(r, REC_STAT_unwind_stopped_early),
		report_stat(r, REC_STAT_dwarf_stopped_unreadable),
		report_stat(r, REC_STAT_dwarf_stopped_no_cfi),
		report_stat(r, REC_STAT_dwarf_stopped_bad_frame));
}

/* CPython: the interpreters walked, and every Python frame that could not be shown. */
static void print_python(const struct recording *r, FILE *out)
{
	uint64_t procs = report_stat(r, REC_STAT_python_processes),
		 unsupported = report_stat(r, REC_STAT_python_processes_unsupported);

	if (!procs && !unsupported)
		return;
	fprintf(out,
		"python     %" PRIu64 " interpreters walked, %" PRIu64
		" not (a version or free-threaded build perch does not walk); %" PRIu64
		" Python stacks; lost: %" PRIu64 " samples' Python frames (%" PRIu64
		" stacks too deep, %" PRIu64 " unreadable, %" PRIu64 " not kept), %" PRIu64
		" frames unnamed (code object gone or unreadable), %" PRIu64
		" placed at the root (no interpreter frame left for them)\n",
		procs, unsupported, report_stat(r, REC_STAT_python_stacks),
		report_stat(r, REC_STAT_python_samples_frames_lost),
		report_stat(r, REC_STAT_python_stacks_truncated),
		report_stat(r, REC_STAT_python_stacks_unreadable),
		report_stat(r, REC_STAT_python_stacks_lost),
		report_stat(r, REC_STAT_python_frames_unnamed),
		report_stat(r, REC_STAT_python_frames_unplaced));
}

static void print_losses(const struct recording *r, FILE *out)
{
	uint64_t n;

	fprintf(out,
		"lost       %" PRIu64 " samples (count map full); stacks missing: user %" PRIu64
		" (stack map full or hash collision %" PRIu64 ", unreadable %" PRIu64
		"), kernel %" PRIu64 " (full or collision %" PRIu64 ", unreadable %" PRIu64 ")\n",
		report_stat(r, REC_STAT_lost_count_map_full),
		report_stat(r, REC_STAT_lost_user_stack_map_full) +
			report_stat(r, REC_STAT_user_stack_unreadable),
		report_stat(r, REC_STAT_lost_user_stack_map_full),
		report_stat(r, REC_STAT_user_stack_unreadable),
		report_stat(r, REC_STAT_lost_kernel_stack_map_full) +
			report_stat(r, REC_STAT_kernel_stack_unreadable),
		report_stat(r, REC_STAT_lost_kernel_stack_map_full),
		report_stat(r, REC_STAT_kernel_stack_unreadable));
	fprintf(out,
		"truncated  %" PRIu64 " samples hit the %s-frame stack limit; %" PRIu64
		" without process mappings; %" PRIu64
		" cut at an address no mapping holds; %" PRIu64 " lost process events\n",
		report_stat(r, REC_STAT_truncated_stacks),
		report_meta(r, REC_META_max_stack) ?: "?",
		report_stat(r, REC_STAT_samples_without_mappings),
		report_stat(r, REC_STAT_damaged_user_stacks),
		report_stat(r, REC_STAT_lost_process_events));
	if ((n = report_samples_without_stack(r)))
		fprintf(out,
			"no stack   %" PRIu64
			" samples kept neither stack (user stack lost above, tick in "
			"user mode): shown as [no stack]\n",
			n);
	if (report_stat(r, REC_STAT_jit_maps_capped))
		fprintf(out,
			"jit maps   %" PRIu64
			" over perch's size limit (one map's, or all maps' together), read in "
			"part\n",
			report_stat(r, REC_STAT_jit_maps_capped));
	print_unwinding(r, out);
	print_python(r, out);
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
	{REC_STAT_timeline_events_dropped, "sample times dropped past --max-size"},
	{REC_STAT_timeline_spans_dropped, "region spans dropped past --max-size"},
	{REC_STAT_timeline_ticks_lost, "sample times (timeline ring buffer full)"},
	{REC_STAT_timeline_ticks_unkeyed, "sample times whose stack had no key"},
	{REC_STAT_region_spans_lost, "region spans overwritten before perch read them"},
	{REC_STAT_region_processes_without_spans,
	 "processes whose region runtime is too old for spans"},
	{REC_STAT_region_control_lost,
	 "program pauses and steps overwritten before perch read them"},
	{REC_STAT_region_spans_refused, "region spans refused (a time outside the run)"},
	{REC_STAT_region_thread_list_cycles,
	 "reads of a region thread list that came back on itself (each block read once)"},
	{REC_STAT_region_threads_refused,
	 "region thread blocks refused (past what one process may cost a read)"},
	{REC_STAT_region_control_refused,
	 "program pauses and steps refused (a time outside the run)"},
	{REC_STAT_steps_refused, "steps and pauses refused (an end before the start)"},
	{REC_STAT_entries_refused, "entries the writer refused (a time out of range)"},
	{REC_STAT_off_cpu_spans_lost, "off-CPU spans (ring buffer full, or no key)"},
	{REC_STAT_off_cpu_spans_dropped, "off-CPU spans dropped past --max-size"},
	{REC_STAT_gpu_entries_dropped_max_size, "GPU records dropped past --max-size"},
	{REC_STAT_gpu_launches_dropped,
	 "GPU launches dropped from the full join table before their activity came"},
	{REC_STAT_gpu_activities_waits_cut,
	 "GPU activities written without their launch (the join's waiting table was full)"},
	{REC_STAT_gpu_channel_records_refused,
	 "CUDA channel records refused past perch's bounds (kernel names, notes, launch sites)"},
	{REC_STAT_pre_exec_ticks_left_out,
	 "ticks of the command before its exec (perch's own code in its child), left out"},
};

static void print_other_losses(const struct recording *r, FILE *out)
{
	const char *sep = "also lost ";

	for (size_t i = 0; i < sizeof(other_losses) / sizeof(other_losses[0]); i++) {
		uint64_t v = report_stat(r, other_losses[i].key);

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
	uint64_t run_ns = report_stat(r, REC_STAT_bpf_run_time_ns);
	uint64_t ticks = report_stat(r, REC_STAT_bpf_tick_run_count);

	fprintf(out, "profiler   perch used %.3f s user + %.3f s system",
		report_stat(r, REC_STAT_perch_user_us) / 1e6,
		report_stat(r, REC_STAT_perch_sys_us) / 1e6);
	if (run_ns && ticks) /* the tick program apart: recordings from 2026-11-28 on */
		fprintf(out,
			"; its BPF programs ran %" PRIu64
			" times for %.3f ms (the tick program %" PRIu64 " times, %.2f µs each)\n",
			report_stat(r, REC_STAT_bpf_run_count), run_ns / 1e6, ticks,
			report_stat(r, REC_STAT_bpf_tick_run_time_ns) / 1e3 / ticks);
	else if (run_ns)
		fprintf(out, "; its BPF programs ran %" PRIu64 " times for %.3f ms\n",
			report_stat(r, REC_STAT_bpf_run_count), run_ns / 1e6);
	else
		fprintf(out, "; BPF run time not measured (sysctl kernel.bpf_stats_enabled=0)\n");
}

/* Version 4 on: when the counts were taken (nothing for older recordings: they have no windows). */
static void print_time_axis(const struct recording *r, FILE *out)
{
	struct report_time_axis t;

	if (!report_time_axis(r, &t))
		return;
	fprintf(out,
		"time       CLOCK_MONOTONIC %.3f s to %.3f s (%.3f s); %zu windows of %.1f ms\n",
		t.start_ns / 1e9, t.end_ns / 1e9, (t.end_ns - t.start_ns) / 1e9, t.nwindows,
		t.resolution_ns / 1e6);
}

void report_print_query(const struct report_opts *o, const struct profile *p, uint64_t all,
			FILE *out)
{
	uint64_t kept = tree__total_weight(profile__tree(p));

	if (!query__active(o->query))
		return;
	fprintf(out,
		"query      %s keeps %" PRIu64 " of %" PRIu64
		" samples (%.2f%%)%s: the functions and the call trees count only these; region "
		"times and GPU tables are the whole recording's\n",
		query__describe(o->query), kept, all, report_pct(kept, all),
		o->region ? " inside the region" : "");
}

/* perch's own enabled intervals (from the run's start), and its paused time. */
static void print_enabled(const struct recording *r, uint64_t n, uint64_t start, FILE *out)
{
	uint64_t paused = 0, a, b;
	char key[2][32];
	const char *sep = "";

	report_end(r, REC_END_paused_ns, &paused);
	fputs("recorded   ", out);
	for (unsigned int i = 0; i < n && i < REC_END_ENABLED_MAX; i++) {
		snprintf(key[0], sizeof(key[0]), REC_END_ENABLED_START, i);
		snprintf(key[1], sizeof(key[1]), REC_END_ENABLED_END, i);
		if (!recording__end(r, key[0], &a) || !recording__end(r, key[1], &b))
			break;
		fprintf(out, "%s%.3f-%.3f s", sep, (a - start) / 1e9, (b - start) / 1e9);
		sep = ", ";
	}
	if (n > REC_END_ENABLED_MAX)
		fprintf(out, ", ... (%" PRIu64 " intervals)", n);
	fprintf(out, "%s (paused %.3f s)", n ? "" : "nothing", paused / 1e9);
}

/* When sampling did not cover the whole run (perch record --delay, pauses, caps, --steps): the
 * intervals it covered, from the run's start (with --steps, the steps' own: perch is enabled
 * from the start and the program's step gate decides). */
static void print_recorded(const struct recording *r, FILE *out)
{
	static const char *const why[] = {[REC_STOP_MAX_DURATION] = "--max-duration",
					  [REC_STOP_MAX_SIZE] = "--max-size",
					  [REC_STOP_STEPS] = "the end of the last step (--steps)"};
	uint64_t n, start = 0, stop = 0;

	if (!report_end(r, REC_END_enabled_intervals, &n))
		return;
	report_end(r, REC_END_start_ns, &start);
	report_end(r, REC_END_stopped_at, &stop);
	if (!report_print_steps_recorded(r, start, out))
		print_enabled(r, n, start, out);
	if (stop && stop < sizeof(why) / sizeof(why[0]) && why[stop])
		fprintf(out, "; stopped at %s", why[stop]);
	fputc('\n', out);
}

static void print_header(const struct recording *r, const char *path, const struct report_opts *o,
			 const struct profile *p, FILE *out)
{
	uint64_t dur = 0, status = 0;
	size_t nthreads, nproc = report_count_processes(r, &nthreads);
	bool done = report_end(r, REC_END_duration_ns, &dur);
	char sampling[512];

	report_end(r, REC_END_exit_status, &status);
	fprintf(out, "# perch report of %s\n", path);
	fputs("command    ", out);
	report_put_oneline(out, report_meta(r, REC_META_command) ?: "?");
	fputc('\n', out);
	fprintf(out, "pids       %s (%s); %zu processes and %zu threads sampled\n",
		report_meta(r, REC_META_pids) ?: "?", report_meta(r, REC_META_mode) ?: "?", nproc,
		nthreads);
	fprintf(out, "started    %s on %s, kernel %s\n", report_meta(r, REC_META_start_time) ?: "?",
		report_meta(r, REC_META_hostname) ?: "?", report_meta(r, REC_META_kernel) ?: "?");
	if (done)
		fprintf(out, "duration   %.3f s, exit status %" PRIu64 "\n", dur / 1e9, status);
	else
		fprintf(out,
			"duration   unknown: the recording did not finish (perch was stopped)\n");
	print_recorded(r, out);
	report_print_steps_header(r, out);
	report_sampling(r, o->event, true, sampling, sizeof(sampling));
	fprintf(out, "sampling   %s; %" PRIu64 " samples in %" PRIu64 " ticks on target threads\n",
		sampling, report_sample_total(r), report_stat(r, REC_STAT_samples));
	if (o->region) {
		uint64_t kept = tree__total_weight(profile__tree(p));

		fprintf(out,
			"filter     --region %s keeps %" PRIu64 " of %" PRIu64
			" samples (%.2f%%): the top functions and the call tree count only these\n",
			o->region, kept, report_sample_total(r),
			report_pct(kept, report_sample_total(r)));
	}
	report_print_query(o, p, report_sample_total(r), out);
	print_time_axis(r, out);
	print_losses(r, out);
	print_other_losses(r, out);
	print_cost(r, out);
}

static int by_self_desc(const void *a, const void *b, void *p)
{
	const struct tree *t = profile__tree(p);
	uint64_t x = tree__label_self(t, *(const uint32_t *)a);
	uint64_t y = tree__label_self(t, *(const uint32_t *)b);

	return x < y ? 1 : x > y ? -1 : (int)(*(const uint32_t *)a - *(const uint32_t *)b);
}

static int by_total_desc(const void *a, const void *b, void *p)
{
	const struct tree *t = profile__tree(p);
	uint64_t x = tree__label_total(t, *(const uint32_t *)a);
	uint64_t y = tree__label_total(t, *(const uint32_t *)b);

	return x < y ? 1 : x > y ? -1 : (int)(*(const uint32_t *)a - *(const uint32_t *)b);
}

static const char *kmark(const struct profile *p, uint32_t f)
{
	return profile__func_kernel(p, f) ? " [k]" : "";
}

void report_print_top(const struct profile *p, bool by_self, unsigned int top, FILE *out)
{
	const struct tree *t = profile__tree(p);
	uint32_t n = profile__nfuncs(p), *order = malloc((n + 1) * sizeof(*order));
	uint64_t all = tree__total_weight(t);

	if (!order)
		return;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_self ? by_self_desc : by_total_desc, (void *)p);
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
			report_pct(s, all), s, report_pct(tot, all), tot,
			profile__func_name(p, order[i]), profile__func_module(p, order[i]),
			kmark(p, order[i]));
	}
	free(order);
}

struct tree_ctx {
	const struct profile *p;
	const struct tree *t;
	uint64_t all;
	double min_percent;
	FILE *out;
	double merge; /* --merge-chains: 0 for none */
	char prefix[512];
};

static int by_inclusive_desc(const void *a, const void *b, void *tree)
{
	const struct tree *t = tree;
	uint64_t x = tree__node_inclusive(t, *(const size_t *)a);
	uint64_t y = tree__node_inclusive(t, *(const size_t *)b);

	return x < y ? 1 : x > y ? -1 : 0;
}

/* --merge-chains: the self of node and of each node merged into its row. */
static uint64_t chain_self(const struct tree_ctx *c, size_t node)
{
	uint64_t self = tree__node_self(c->t, node);

	while (c->merge > 0 && (node = query_chain_next(c->t, node, c->merge)))
		self += tree__node_self(c->t, node);
	return self;
}

/* The rest of node's row: " > child" for each node merged into it, and the line's end; the last
 * node of the chain, whose callees come next. */
static size_t print_chain(const struct tree_ctx *c, size_t node)
{
	size_t next;

	while (c->merge > 0 && (next = query_chain_next(c->t, node, c->merge))) {
		uint32_t f = tree__node_label(c->t, next);

		fprintf(c->out, " > %s%s", profile__func_name(c->p, f), kmark(c->p, f));
		node = next;
	}
	fputc('\n', c->out);
	return node;
}

static void print_node(struct tree_ctx *c, size_t node, size_t depth)
{
	const size_t *kids;
	size_t n = tree__node_children(c->t, node, &kids), shown = 0, hidden = 0;
	size_t *order = malloc((n + 1) * sizeof(*order));
	size_t len = strlen(c->prefix), last;

	if (!order)
		return;
	if (n)
		memcpy(order, kids, n * sizeof(*order));
	qsort_r(order, n, sizeof(*order), by_inclusive_desc, (void *)c->t);
	for (size_t i = 0; i < n; i++) {
		uint64_t inc = tree__node_inclusive(c->t, order[i]);
		uint32_t f = tree__node_label(c->t, order[i]);

		if (report_pct(inc, c->all) < c->min_percent) {
			hidden += inc;
			continue;
		}
		shown++;
		fprintf(c->out, "%s%6.2f%% %6.2f%%  %s%s", c->prefix, report_pct(inc, c->all),
			report_pct(chain_self(c, order[i]), c->all), profile__func_name(c->p, f),
			kmark(c->p, f));
		last = print_chain(c, order[i]);
		if (len + 2 < sizeof(c->prefix) && depth < 200) {
			strcpy(c->prefix + len, "  ");
			print_node(c, last, depth + 1);
			c->prefix[len] = 0;
		}
	}
	if (hidden && shown)
		fprintf(c->out, "%s%6.2f%%          (%zu smaller callees below %.2f%%)\n",
			c->prefix, report_pct(hidden, c->all), n - shown, c->min_percent);
	free(order);
}

static void print_tree_nodes(const struct profile *p, const struct tree *t, double min_percent,
			     double merge, FILE *out)
{
	struct tree_ctx c = {
		.p = p, .t = t, .min_percent = min_percent, .merge = merge, .out = out};

	c.all = tree__total_weight(t);
	strcpy(c.prefix, "  ");
	print_node(&c, 0, 0);
}

void report_print_tree_nodes(const struct profile *p, const struct tree *t, double min_percent,
			     FILE *out)
{
	print_tree_nodes(p, t, min_percent, 0, out);
}

static void print_tree(const struct profile *p, const struct report_opts *o, FILE *out)
{
	const struct tree *t = profile__tree(p);
	const char *region = o->region;
	double min_percent = o->min_percent;

	fprintf(out,
		"\nCall tree (bounded path tree: recursion folded so no caller->callee pair repeats "
		"on a path; %zu nodes)\n",
		tree__node_count(t));
	if (region)
		fprintf(out, "  %7s %7s  (%% of the samples inside region %s", "total", "self",
			region);
	else
		fprintf(out, "  %7s %7s  (%% of all samples", "total", "self");
	fprintf(out, "; nodes below %.2f%% hidden: --min-percent)\n", min_percent);
	if (o->merge_chains > 0)
		fprintf(out,
			"  (--merge-chains=%g: \"a > b\" is a caller shown with the callee holding >= "
			"%g%% of its samples; total is the caller's, self the whole chain's; the other "
			"callees of a merged caller are not shown)\n",
			o->merge_chains, o->merge_chains);
	print_tree_nodes(p, t, min_percent, o->merge_chains, out);
}

int report_text(const struct recording *r, const char *path, const struct report_opts *o, FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct regiontab *t = NULL;
	bool keyed = o->nkeys || (o->by_module && !o->by_function);
	int err = 0;

	if (!p)
		return -errno;
	t = regiontab__new(r);
	if (!t) {
		err = -errno;
		goto cleanup;
	}
	/* what was asked first (the functions, the call tree), then what explains it */
	print_header(r, path, o, p, out);
	if (keyed)
		err = report_print_keyed_top(r, p, o, out);
	if (!keyed && o->sort != REPORT_SORT_TOTAL)
		report_print_top(p, true, o->top, out);
	if (!keyed && o->sort != REPORT_SORT_SELF)
		report_print_top(p, false, o->top, out);
	print_tree(p, o, out);
	report_print_processes(r, p, o->top, out);
	report_print_regions(r, t, out);
	report_print_gpu(r, p, o, out);
	report_print_metrics(r, o->metrics, out);
	report_print_steps(r, out);
cleanup:
	regiontab__free(t);
	profile__free(p);
	return err;
}
