// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Golden-output tests of `perch report`: a recording with a known set of stacks (written through
 * the real writer, read back through the real loader) must print exactly the expected header,
 * top-function tables, bounded call tree and folded stacks; one with regions (region frames in
 * its samples, REGIONS trees of two threads) exactly the expected region table, merged region
 * tree, notes and CSV, and --region must keep exactly the samples inside the region.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "model/gpusyncs.h"
#include "model/gputree.h"
#include "model/profile.h"
#include "format/recording.h"
#include "report/report.h"
#include "model/tree.h"
#include "profile.pb-c.h"

static char path[] = "/tmp/perch-test-report.XXXXXX";

/*
 * Process "app" (pid 10): main -> solve -> refine -> solve (recursion), main -> parse, and one
 * stack that enters the kernel from write; plus one frame no symbol covers.
 */
/* A new recording at path (a fresh name from its template), for a fixture to write. */
static struct rec_writer *open_fixture(void)
{
	struct rec_writer *w;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	return w;
}

static bool g_loss_stats; /* write_fixture adds loss counters the header's fixed lines omit */
static const struct rec_kv loss_stats[] = {{.key = "unwind_mappings_over_limit", .value = 1072},
					   {.key = "region_stack_unreadable", .value = 3}};

static void write_fixture(void)
{
	struct rec_writer *w;
	struct rec_kv meta[] = {
		{.key = "command", .str = "./app --fast"}, {.key = "pids", .str = "10"},
		{.key = "mode", .str = "launch"},	   {.key = "event", .str = "cpu-clock"},
		{.key = "frequency", .str = "997"},	   {.key = "start_time", .str = "T0"},
		{.key = "hostname", .str = "host"},	   {.key = "kernel", .str = "6.1"},
		{.key = "max_stack", .str = "127"},
	};
	struct rec_kv stats[] = {
		{.key = "samples", .value = 100},	 {.key = "lost_count_map_full", .value = 2},
		{.key = "truncated_stacks", .value = 1}, {.key = "perch_user_us", .value = 1500},
		{.key = "perch_sys_us", .value = 500},
	};
	struct rec_kv end[] = {{.key = "duration_ns", .value = 2000000000},
			       {.key = "exit_status", .value = 0}};
	uint32_t mod, kmod, fmain, fsolve, frefine, fparse, fwrite, fksys, fanon;

	w = open_fixture();
	assert_int_equal(rec_writer__meta(w, meta, 9), 0);
	mod = rec_writer__string(w, "/usr/bin/app");
	kmod = rec_writer__string(w, "[kernel]");
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x100);
	fsolve = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "solve"), 0x200);
	frefine = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "refine"), 0x300);
	fparse = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "parse"), 0x400);
	fwrite = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "write"), 0x500);
	fksys = rec_writer__frame(w, REC_FRAME_KERNEL, kmod, rec_writer__string(w, "ksys_write"),
				  0xffffffff81000000ull);
	fanon = rec_writer__frame(w, REC_FRAME_USER, mod, 0, 0x1234);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, rec_writer__string(w, "app")), 0);
	{
		uint32_t s1[] = {fmain, fsolve, frefine, fsolve};
		uint32_t s2[] = {fmain, fsolve};
		uint32_t s3[] = {fmain, fparse};
		uint32_t s4[] = {fmain, fwrite, fksys};
		uint32_t s5[] = {fmain, fanon};

		assert_int_equal(rec_writer__sample(w, 10, 10, 40, 0, s1, 4), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 20, 0, s2, 2), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 25, 0, s3, 2), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 10, 0, s4, 3), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 5, 0, s5, 2), 0);
		/* The same stack again in a later drain: folded output merges it. */
		assert_int_equal(rec_writer__flush(w), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 1, 0, s3, 2), 0);
	}
	assert_int_equal(rec_writer__stats(w, stats, 5), 0);
	if (g_loss_stats)
		assert_int_equal(rec_writer__stats(w, loss_stats, 2), 0);
	assert_int_equal(rec_writer__end(w, end, 2), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

#define MS 1000000ull
#define US 1000ull

static bool g_region_trees = true; /* write_region_fixture writes the REGIONS block */

/*
 * Process "app" (pid 20) with threads 20 (app) and 21 (worker). Thread 20's region tree:
 * solve > {step, io}, io at the root too (one name used from two places, one of its ends
 * untimed), walk > walk (recursion folded: the inner node's time is inside the outer one's);
 * 2 mismatched ends. Thread 21: solve > {step, mark a,"b"}, solve left open once. Samples carry
 * the region stacks; 120 in all, 96 inside solve, 8 inside io.
 */
static void write_region_fixture(void)
{
	struct rec_writer *w;
	struct rec_kv meta[] = {
		{.key = "command", .str = "./app"},
		{.key = "pids", .str = "20"},
		{.key = "mode", .str = "launch"},
		{.key = "event", .str = "cpu-clock"},
		{.key = "frequency", .str = "997"},
		{.key = "start_time", .str = "T0"},
		{.key = "hostname", .str = "host"},
		{.key = "kernel", .str = "6.1"},
		{.key = "max_stack", .str = "127"},
		{.key = "regions_note", .str = "trees read when each thread exited"},
	};
	struct rec_kv stats[] = {
		{.key = "samples", .value = 124},
		{.key = "region_stacks_lost", .value = 4},
		{.key = "region_processes_busy", .value = 1},
		{.key = "region_calls_names_over_limit", .value = 10},
		{.key = "region_calls_tree_full", .value = 3},
		{.key = "region_calls_too_deep", .value = 6},
	};
	struct rec_kv end[] = {{.key = "duration_ns", .value = 2500000000},
			       {.key = "exit_status", .value = 0}};
	uint32_t mod, kmod, fmain, fwork, fsetup, fread, frecurse, fidle, fworker, fksys;
	uint32_t rsolve, rstep, rio, rwalk, rmark, nsolve, nstep, nio, nwalk, nmark;

	w = open_fixture();
	assert_int_equal(rec_writer__meta(w, meta, 10), 0);
	mod = rec_writer__string(w, "/usr/bin/app");
	kmod = rec_writer__string(w, "[kernel]");
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x100);
	fwork = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "work"), 0x200);
	fsetup = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "setup"), 0x300);
	fread = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "read"), 0x400);
	frecurse =
		rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "recurse"), 0x500);
	fidle = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "idle"), 0x600);
	fworker = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "worker_main"),
				    0x700);
	fksys = rec_writer__frame(w, REC_FRAME_KERNEL, kmod, rec_writer__string(w, "ksys_read"),
				  0xffffffff81000000ull);
	nsolve = rec_writer__string(w, "solve");
	nstep = rec_writer__string(w, "step");
	nio = rec_writer__string(w, "io");
	nwalk = rec_writer__string(w, "walk");
	nmark = rec_writer__string(w, "a,\"b\"");
	rsolve = rec_writer__frame(w, REC_FRAME_REGION, 0, nsolve, 0);
	rstep = rec_writer__frame(w, REC_FRAME_REGION, 0, nstep, 0);
	rio = rec_writer__frame(w, REC_FRAME_REGION, 0, nio, 0);
	rwalk = rec_writer__frame(w, REC_FRAME_REGION, 0, nwalk, 0);
	rmark = rec_writer__frame(w, REC_FRAME_REGION, 0, nmark, 0);
	(void)rmark;
	assert_int_equal(rec_writer__thread(w, 20, 20, 1, rec_writer__string(w, "app")), 0);
	assert_int_equal(rec_writer__thread(w, 20, 21, 1, rec_writer__string(w, "worker")), 0);
	{
		uint32_t s1[] = {rsolve, rstep, fmain, fwork};
		uint32_t s2[] = {rsolve, fmain, fsetup};
		uint32_t s3[] = {rsolve, rio, fmain, fread, fksys};
		uint32_t s4[] = {rio, fmain, fread};
		uint32_t s5[] = {rwalk, rwalk, fmain, frecurse};
		uint32_t s6[] = {fmain, fidle};
		uint32_t s7[] = {rsolve, rstep, fworker, fwork};
		uint32_t s8[] = {rsolve};

		assert_int_equal(rec_writer__sample(w, 20, 20, 50, 0, s1, 4), 0);
		assert_int_equal(rec_writer__sample(w, 20, 20, 10, 0, s2, 3), 0);
		assert_int_equal(rec_writer__sample(w, 20, 20, 5, 0, s3, 5), 0);
		assert_int_equal(rec_writer__sample(w, 20, 20, 3, 0, s4, 3), 0);
		assert_int_equal(rec_writer__sample(w, 20, 20, 2, 0, s5, 4), 0);
		assert_int_equal(rec_writer__sample(w, 20, 20, 19, 0, s6, 2), 0);
		assert_int_equal(rec_writer__sample(w, 20, 21, 30, 0, s7, 4), 0);
		assert_int_equal(rec_writer__sample(w, 20, 21, 1, REC_SAMPLE_USER_LOST, s8, 1), 0);
	}
	{
		/* name, parent, calls, total, self, min, max, size_sum, untimed, open, sum (0: as in
		 * a recording without sums, the mean is total over timed calls) */
		struct rec_region_node main_nodes[] = {
			{0},
			{nsolve, 0, 2, 1500 * MS, 300 * MS, 500 * MS, 1000 * MS, 0, 0, 0, 0},
			{nstep, 1, 10, 1000 * MS, 1000 * MS, 50 * MS, 150 * MS, 1000, 0, 0, 0},
			{nio, 1, 4, 200 * MS, 200 * MS, 20 * MS, 80 * MS, 0, 0, 0, 0},
			{nio, 0, 3, 60 * MS, 60 * MS, 25 * MS, 35 * MS, 0, 1, 0, 0},
			{nwalk, 0, 1, 2 * MS, 500 * US, 2 * MS, 2 * MS, 0, 0, 0, 0},
			{nwalk, 5, 3, 1500 * US, 1500 * US, 250 * US, 1500 * US, 0, 0, 0, 0},
		};
		struct rec_region_node worker_nodes[] = {
			{0},
			{nsolve, 0, 1, 400 * MS, 100 * MS, 400 * MS, 400 * MS, 0, 0, 1, 0},
			{nstep, 1, 5, 300 * MS, 300 * MS, 40 * MS, 80 * MS, 500, 0, 0, 0},
			{nmark, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0},
		};
		struct rec_region_thread threads[] = {
			{.pid = 20, .tid = 20, .mismatches = 2, .nnodes = 7, .nodes = main_nodes},
			{.pid = 20, .tid = 21, .nnodes = 4, .nodes = worker_nodes},
		};

		if (g_region_trees)
			assert_int_equal(rec_writer__regions(w, threads, 2), 0);
	}
	assert_int_equal(rec_writer__stats(w, stats, sizeof(stats) / sizeof(stats[0])), 0);
	assert_int_equal(rec_writer__end(w, end, 2), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

static struct recording *load_fixture(void (*fixture)(void))
{
	struct recording *r = NULL;

	fixture();
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	strcpy(path, "/tmp/perch-test-report.XXXXXX");
	return r;
}

static char *render_with(void (*fixture)(void), const struct report_opts *o)
{
	struct recording *r = load_fixture(fixture);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__print(r, "fixture.data", o, f), 0);
	fclose(f);
	recording__free(r);
	return buf;
}

static char *render(const struct report_opts *o)
{
	return render_with(write_fixture, o);
}

/* Like assert_string_equal, but names the first line that differs (cmocka cuts long strings). */
static void assert_lines_equal(const char *got, const char *want)
{
	int line = 1;

	while (*got && *got == *want) {
		line += *got == '\n';
		got++;
		want++;
	}
	if (*got || *want) {
		print_error("line %d differs:\n got: %.*s\nwant: %.*s\n", line,
			    (int)strcspn(got, "\n"), got, (int)strcspn(want, "\n"), want);
		fail();
	}
}

static void report_folded_merges_stacks_and_marks_kernel_frames(void **state)
{
	struct report_opts o = {.format = REPORT_FOLDED};
	char *out = render(&o);

	(void)state;
	assert_string_equal(out, "app;main;app+0x1234 5\n"
				 "app;main;parse 26\n"
				 "app;main;solve 20\n"
				 "app;main;solve;refine;solve 40\n"
				 "app;main;write;ksys_write_[k] 10\n");
	free(out);
}

/* One process, one thread: it ran bash, then exec'd python3.11, and its samples say so. */
static void write_renamed_fixture(void)
{
	struct rec_writer *w;
	uint32_t sh, py, mod, frame;

	w = open_fixture();
	sh = rec_writer__string(w, "bash");
	py = rec_writer__string(w, "python3.11");
	mod = rec_writer__string(w, "/usr/bin/app");
	frame = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x10);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, sh), 0);
	assert_int_equal(rec_writer__sample_named(w, 10, 10, sh, 4, 0, &frame, 1), 0);
	assert_int_equal(rec_writer__sample_named(w, 10, 10, py, 6, 0, &frame, 1), 0);
	assert_int_equal(rec_writer__sample(w, 10, 10, 1, 0, &frame, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

/* Folded stacks start with the thread's name when each sample was taken (the thread table's, for
 * a sample without one). */
static void report_folded_names_each_sample_as_its_thread_was_named(void **state)
{
	struct report_opts o = {.format = REPORT_FOLDED};
	char *out = render_with(write_renamed_fixture, &o);

	(void)state;
	assert_string_equal(out, "bash;main 5\n"
				 "python3.11;main 6\n");
	free(out);
}

static void report_text_shows_header_tables_and_folded_tree(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 6, .top = 4};
	char *out = render(&o);
	const char *want =
		"# perch report of fixture.data\n"
		"command    ./app --fast\n"
		"pids       10 (launch); 1 processes and 1 threads sampled\n"
		"started    T0 on host, kernel 6.1\n"
		"duration   2.000 s, exit status 0\n"
		"sampling   cpu-clock at 997 Hz per CPU; 101 samples in 100 ticks on target threads\n"
		"lost       2 samples (count map full); stacks missing: user 0 (stack map full or hash "
		"collision 0, unreadable 0), kernel 0 (full or collision 0, unreadable 0)\n"
		"truncated  1 samples hit the 127-frame stack limit; 0 without process mappings; "
		"0 cut at an address no mapping holds; 0 lost process events\n"
		"profiler   perch used 0.002 s user + 0.001 s system; BPF run time not measured "
		"(sysctl kernel.bpf_stats_enabled=0)\n"
		"\n"
		"Top functions by self (samples whose leaf is the function)\n"
		"    self%     self  total%    total  function                                 module\n"
		"   59.41%       60  59.41%       60  solve                                    app\n"
		"   25.74%       26  25.74%       26  parse                                    app\n"
		"    9.90%       10   9.90%       10  ksys_write                               [kernel] "
		"[k]\n"
		"    4.95%        5   4.95%        5  app+0x1234                               app\n"
		"\n"
		"Top functions by total (samples in which the function appears at least once)\n"
		"    self%     self  total%    total  function                                 module\n"
		"    0.00%        0 100.00%      101  main                                     app\n"
		"   59.41%       60  59.41%       60  solve                                    app\n"
		"    0.00%        0  39.60%       40  refine                                   app\n"
		"   25.74%       26  25.74%       26  parse                                    app\n"
		"\n"
		"Call tree (bounded path tree: recursion folded so no caller->callee pair repeats on a "
		"path; 8 nodes)\n"
		"    total    self  (% of all samples; nodes below 6.00% hidden: --min-percent)\n"
		"  100.00%   0.00%  main\n"
		"     59.41%  19.80%  solve\n"
		"       39.60%   0.00%  refine\n"
		"         39.60%  39.60%  solve\n"
		"     25.74%  25.74%  parse\n"
		"      9.90%   0.00%  write\n"
		"        9.90%   9.90%  ksys_write [k]\n"
		"      4.95%          (1 smaller callees below 6.00%)\n";

	(void)state;
	assert_lines_equal(out, want);
	free(out);
}

/* ---- regions -------------------------------------------------------------------------------- */

/* The part of s from the first `from` up to the next `to` (to the end when to is NULL). */
static char *between(const char *s, const char *from, const char *to)
{
	const char *a = strstr(s, from), *b;

	assert_non_null(a);
	b = to ? strstr(a, to) : a + strlen(a);
	assert_non_null(b);
	return strndup(a, b - a);
}

/* From from to the end of the report (the last section), less its last line's end. */
static char *last_lines(const char *s, const char *from)
{
	char *part = between(s, from, NULL);
	size_t n = strlen(part);

	if (n && part[n - 1] == '\n')
		part[n - 1] = '\0';
	return part;
}

static const char region_table[] =
	"\n"
	"Regions (exact counts and wall times from the markers, all threads summed; total counts a\n"
	"recursion once, self leaves out child regions; samples: CPU samples inside, at any depth)\n"
	"       calls       total        self        mean         min         max   samples  "
	"samples%  region\n"
	"           3     1.900 s  400.000 ms  633.333 ms  400.000 ms     1.000 s        96    "
	"80.00%  solve\n"
	"          15     1.300 s     1.300 s   86.667 ms   40.000 ms  150.000 ms        80    "
	"66.67%  step\n"
	"           7  260.000 ms  260.000 ms   43.333 ms   20.000 ms   80.000 ms         8     "
	"6.67%  io\n"
	"           4    2.000 ms    2.000 ms  500.000 µs  250.000 µs    2.000 ms         2     "
	"1.67%  walk\n"
	"           7        0 ns        0 ns           -           -           -         0     "
	"0.00%  a,\"b\"\n";

static const char region_tree_and_notes[] =
	"\n"
	"Region tree (the threads' region trees merged by path from the root; recursion folded as "
	"in the call tree)\n"
	"       calls       total        self  region\n"
	"           3     1.900 s  400.000 ms  solve\n"
	"            15     1.300 s     1.300 s  step\n"
	"             4  200.000 ms  200.000 ms  io\n"
	"             7        0 ns        0 ns  a,\"b\"\n"
	"           3   60.000 ms   60.000 ms  io\n"
	"           1    2.000 ms  500.000 µs  walk\n"
	"             3    1.500 ms    1.500 ms  walk\n"
	"\n"
	"Region notes\n"
	"  2 region ends did not match the innermost open region (see stderr of the program)\n"
	"  1 activations were already open when perch attached: their ends are counted in calls "
	"but not timed (io 1)\n"
	"  1 activations were still open when the process exited: not counted in calls or times "
	"(solve 1)\n"
	"  4 samples have no region stack (it could not be read): they count as outside every "
	"region\n"
	"  1 processes were left alone: another perch was recording their region markers (one "
	"perch at a time)\n"
	"  10 region calls had names beyond the 4096 the runtime keeps: counted under [region "
	"names beyond the runtime's table], under no other name\n"
	"  3 region calls did not fit their thread's tree of 1024 nodes: counted under [more "
	"regions than the runtime keeps]\n"
	"  6 region begins and marks were nested deeper than the 64 levels the runtime keeps: "
	"counted here only, in no region's calls or times\n"
	"  note: trees read when each thread exited\n";

/* Region totals: solve = 1.5 s + 0.4 s over two threads; io used from two places sums both
 * nodes, one end untimed (mean over the 6 timed calls); walk's inner node (under walk) is inside
 * the outer one: total 2 ms, not 3.5 ms, while self and calls add up; the mark has calls only. */
/* Every counter that means a loss is in the header: those without a line of their own are named
 * on one "also lost" line, and only when not zero. */
static void report_header_names_every_nonzero_loss_counter(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 6, .top = 4};
	char *out = render(&o);

	(void)state;
	assert_null(strstr(out, "also lost"));
	free(out);
	g_loss_stats = true;
	out = render(&o);
	g_loss_stats = false;
	assert_non_null(strstr(out,
			       "\nalso lost 3 region stacks unreadable; 1072 mappings over the "
			       "unwinder's limit\nprofiler "));
	free(out);
}

static void report_text_shows_region_table_tree_and_notes(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 0, .top = 20};
	char *out = render_with(write_region_fixture, &o), *want;
	const char *head =
		"# perch report of fixture.data\n"
		"command    ./app\n"
		"pids       20 (launch); 1 processes and 2 threads sampled\n"
		"started    T0 on host, kernel 6.1\n"
		"duration   2.500 s, exit status 0\n"
		"sampling   cpu-clock at 997 Hz per CPU; 120 samples in 124 ticks on target threads\n"
		"lost       0 samples (count map full); stacks missing: user 0 (stack map full or hash "
		"collision 0, unreadable 0), kernel 0 (full or collision 0, unreadable 0)\n"
		"truncated  0 samples hit the 127-frame stack limit; 0 without process mappings; "
		"0 cut at an address no mapping holds; 0 lost process events\n"
		"no stack   1 samples kept neither stack (user stack lost above, tick in user mode): "
		"shown as [no stack]\n"
		"profiler   perch used 0.000 s user + 0.000 s system; BPF run time not measured "
		"(sysctl kernel.bpf_stats_enabled=0)\n";
	/* No region among the functions; region-only samples (user stack lost) weigh on no node. */
	const char *body =
		"\n"
		"Top functions by self (samples whose leaf is the function)\n"
		"    self%     self  total%    total  function                                 module\n"
		"   66.67%       80  66.67%       80  work                                     app\n"
		"   15.83%       19  15.83%       19  idle                                     app\n"
		"    8.33%       10   8.33%       10  setup                                    app\n"
		"    4.17%        5   4.17%        5  ksys_read                                [kernel] "
		"[k]\n"
		"    2.50%        3   6.67%        8  read                                     app\n"
		"    1.67%        2   1.67%        2  recurse                                  app\n"
		"\n"
		"Top functions by total (samples in which the function appears at least once)\n"
		"    self%     self  total%    total  function                                 module\n"
		"    0.00%        0  74.17%       89  main                                     app\n"
		"   66.67%       80  66.67%       80  work                                     app\n"
		"    0.00%        0  25.00%       30  worker_main                              app\n"
		"   15.83%       19  15.83%       19  idle                                     app\n"
		"    8.33%       10   8.33%       10  setup                                    app\n"
		"    2.50%        3   6.67%        8  read                                     app\n"
		"    4.17%        5   4.17%        5  ksys_read                                [kernel] "
		"[k]\n"
		"    1.67%        2   1.67%        2  recurse                                  app\n"
		"\n"
		"Call tree (bounded path tree: recursion folded so no caller->callee pair repeats on a "
		"path; 9 nodes)\n"
		"    total    self  (% of all samples; nodes below 0.00% hidden: --min-percent)\n"
		"   74.17%   0.00%  main\n"
		"     41.67%  41.67%  work\n"
		"     15.83%  15.83%  idle\n"
		"      8.33%   8.33%  setup\n"
		"      6.67%   2.50%  read\n"
		"        4.17%   4.17%  ksys_read [k]\n"
		"      1.67%   1.67%  recurse\n"
		"   25.00%   0.00%  worker_main\n"
		"     25.00%  25.00%  work\n";

	(void)state;
	/* the functions and the call tree first, then the regions */
	assert_true(asprintf(&want, "%s%s%s%s", head, body, region_table, region_tree_and_notes) >
		    0);
	assert_lines_equal(out, want);
	free(want);
	free(out);
}

static void report_folded_puts_region_frames_at_the_root(void **state)
{
	struct report_opts o = {.format = REPORT_FOLDED};
	char *out = render_with(write_region_fixture, &o);

	(void)state;
	assert_lines_equal(out, "app;main;idle 19\n"
				"app;region:io;main;read 3\n"
				"app;region:solve;[no stack] 1\n"
				"app;region:solve;main;setup 10\n"
				"app;region:solve;region:io;main;read;ksys_read_[k] 5\n"
				"app;region:solve;region:step;main;work 50\n"
				"app;region:solve;region:step;worker_main;work 30\n"
				"app;region:walk;region:walk;main;recurse 2\n");
	free(out);
}

/* Process "a;pp" with a region "x;y\nz" and function names with ';' and line breaks in them. */
static void write_separator_fixture(void)
{
	struct rec_writer *w;
	uint32_t mod, fmain, fodd, freg;

	w = open_fixture();
	mod = rec_writer__string(w, "/usr/bin/app");
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x100);
	fodd = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "op;er\nat\r\nor"),
				 0x200);
	freg = rec_writer__frame(w, REC_FRAME_REGION, 0, rec_writer__string(w, "x;y\nz"), 0);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, rec_writer__string(w, "a;pp")), 0);
	{
		uint32_t s1[] = {freg, fmain, fodd};

		assert_int_equal(rec_writer__sample(w, 10, 10, 7, 0, s1, 3), 0);
	}
	assert_int_equal(rec_writer__close(w), 0);
}

/* A ';' inside a name would split a frame in two and a line break would split the line: they
 * become ':' and ' ' (docs/exports.md: folded output). */
static void report_folded_escapes_separators_in_names(void **state)
{
	struct report_opts o = {.format = REPORT_FOLDED};
	char *out = render_with(write_separator_fixture, &o);

	(void)state;
	assert_lines_equal(out, "a:pp;region:x:y z;main;op:er at  or 7\n");
	free(out);
}

/* Process "t\"h" with a function whose name holds a quote, a backslash, control bytes, a byte
 * that is no UTF-8, a cut-short sequence and a valid two-byte character. */
static void write_json_escape_fixture(void)
{
	struct rec_writer *w;
	uint32_t mod, fodd;

	w = open_fixture();
	mod = rec_writer__string(w, "/usr/bin/app");
	fodd = rec_writer__frame(w, REC_FRAME_USER, mod,
				 rec_writer__string(w, "q\"b\\c\x01\x1f\td\xff"
						       "e\xe2\x82"
						       "f\xc3\xa9"),
				 0x200);
	assert_int_equal(rec_writer__thread(w, 10, 11, 1, rec_writer__string(w, "t\"h")), 0);
	assert_int_equal(rec_writer__sample(w, 10, 11, 7, 0, &fodd, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

/* JSON strings: '"' and '\\' escaped, control bytes as \u00XX, each byte of what is not UTF-8
 * as \ufffd, valid UTF-8 as it is. */
static void report_speedscope_escapes_json_strings(void **state)
{
	struct report_opts o = {.format = REPORT_SPEEDSCOPE};
	char *out = render_with(write_json_escape_fixture, &o);

	(void)state;
	assert_non_null(strstr(out, "\"name\":\"q\\\"b\\\\c\\u0001\\u001f\\u0009d\\ufffde\\ufffd"
				    "\\ufffdf\xc3\xa9\"}"));
	assert_non_null(strstr(out, "\"name\":\"t\\\"h (10/11)\""));
	assert_non_null(strstr(out, "\"weights\":[7]"));
	free(out);
}

/*
 * A version 4 recording built in memory (the time axis as recording.h loads it): thread 31 of
 * process 30, two keys (main;solve inside region "outer", main;io), two windows with a gap
 * between them, three exact ticks, and spans: outer > inner, an end of outer that ends inner
 * too, an end that matches nothing, a mark, and an inner left open.
 */
static char *v4_strings[] = {"",   "app",   "/usr/bin/app", "main", "solve",
			     "io", "outer", "inner",	    "tick", "4f1c0ffee0ddba11"};
static const uint32_t v4_stack_solve[] = {0, 1}, v4_stack_io[] = {0, 2}, v4_regions[] = {6};
static const struct rec_count v4_w0[] = {{0, 3}, {1, 1}}, v4_w1[] = {{0, 2}};

static void v4_recording(struct recording *r)
{
	static struct rec_frame frames[] = {{REC_FRAME_USER, 2, 3, 0x100, NULL, 0},
					    {REC_FRAME_USER, 2, 4, 0x200, NULL, 0},
					    {REC_FRAME_USER, 2, 5, 0x300, NULL, 0}};
	static struct rec_thread threads[] = {{30, 31, 1, 1}};
	static struct rec_module modules[] = {{2, 9}};
	static struct rec_sample samples[] = {
		{30, 31, 5, 0, 1, 1, v4_regions, 2, v4_stack_solve, 0},
		{30, 31, 1, 0, 1, 0, NULL, 2, v4_stack_io, 0}};
	static struct rec_window windows[] = {{1000000, 2000000, 2, v4_w0},
					      {3000000, 4000000, 1, v4_w1}};
	static struct rec_event events[] = {{1500000, 0}, {1600500, 1}, {3500000, 0}};
	static struct rec_span spans[] = {
		{30, 31, 1100000, REC_SPAN_BEGIN, 6, 0}, {30, 31, 1200000, REC_SPAN_BEGIN, 7, 42},
		{30, 31, 1300000, REC_SPAN_END, 6, 0},	 {30, 31, 1400000, REC_SPAN_END, 8, 0},
		{30, 31, 1450000, REC_SPAN_MARK, 8, 0},	 {30, 31, 3200000, REC_SPAN_BEGIN, 7, 0}};

	*r = (struct recording){.version = 4,
				.strings = v4_strings,
				.nstrings = 10,
				.frames = frames,
				.nframes = 3,
				.threads = threads,
				.nthreads = 1,
				.samples = samples,
				.nsamples = 2,
				.windows = windows,
				.nwindows = 2,
				.events = events,
				.nevents = 3,
				.spans = spans,
				.nspans = 6,
				.modules = modules,
				.nmodules = 1};
}

/* Names, one counter per window (back to 0 across the gap and at the end), one instant per
 * tick, region spans nested (an outer end ends the inner span too; an open one ends at the
 * end), the mark, all in microseconds from the first window's start. */
static void report_chrome_writes_counters_ticks_and_nested_spans(void **state)
{
	struct report_opts o = {.format = REPORT_CHROME};
	struct recording r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	v4_recording(&r);
	assert_non_null(f);
	assert_int_equal(report__print(&r, "v4.data", &o, f), 0);
	fclose(f);
	assert_lines_equal(
		out,
		"{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":30,\"tid\":30,\"ts\":0.000,\"name\":\"process_name\","
		"\"args\":{\"name\":\"app\"}},\n"
		"{\"ph\":\"M\",\"pid\":30,\"tid\":31,\"ts\":0.000,\"name\":\"thread_name\","
		"\"args\":{\"name\":\"app\"}},\n"
		"{\"ph\":\"C\",\"pid\":30,\"tid\":30,\"ts\":0.000,\"name\":\"samples/s\","
		"\"args\":{\"tid 31\":4000}},\n"
		"{\"ph\":\"C\",\"pid\":30,\"tid\":30,\"ts\":1000.000,\"name\":\"samples/s\","
		"\"args\":{\"tid 31\":0}},\n"
		"{\"ph\":\"C\",\"pid\":30,\"tid\":30,\"ts\":2000.000,\"name\":\"samples/s\","
		"\"args\":{\"tid 31\":2000}},\n"
		"{\"ph\":\"C\",\"pid\":30,\"tid\":30,\"ts\":3000.000,\"name\":\"samples/s\","
		"\"args\":{\"tid 31\":0}},\n"
		"{\"ph\":\"i\",\"pid\":30,\"tid\":31,\"ts\":500.000,\"s\":\"t\",\"cat\":\"cpu\","
		"\"args\":{\"stack\":\"main;solve\",\"regions\":\"outer\"},\"name\":\"solve\"},\n"
		"{\"ph\":\"i\",\"pid\":30,\"tid\":31,\"ts\":600.500,\"s\":\"t\",\"cat\":\"cpu\","
		"\"args\":{\"stack\":\"main;io\"},\"name\":\"io\"},\n"
		"{\"ph\":\"i\",\"pid\":30,\"tid\":31,\"ts\":2500.000,\"s\":\"t\",\"cat\":\"cpu\","
		"\"args\":{\"stack\":\"main;solve\",\"regions\":\"outer\"},\"name\":\"solve\"},\n"
		"{\"ph\":\"B\",\"pid\":30,\"tid\":31,\"ts\":100.000,\"cat\":\"region\","
		"\"name\":\"outer\"},\n"
		"{\"ph\":\"B\",\"pid\":30,\"tid\":31,\"ts\":200.000,\"cat\":\"region\","
		"\"name\":\"inner\",\"args\":{\"size\":42}},\n"
		"{\"ph\":\"E\",\"pid\":30,\"tid\":31,\"ts\":300.000,\"cat\":\"region\","
		"\"name\":\"inner\"},\n"
		"{\"ph\":\"E\",\"pid\":30,\"tid\":31,\"ts\":300.000,\"cat\":\"region\","
		"\"name\":\"outer\"},\n"
		"{\"ph\":\"i\",\"pid\":30,\"tid\":31,\"ts\":450.000,\"cat\":\"mark\","
		"\"name\":\"tick\",\"s\":\"t\"},\n"
		"{\"ph\":\"B\",\"pid\":30,\"tid\":31,\"ts\":2200.000,\"cat\":\"region\","
		"\"name\":\"inner\"},\n"
		"{\"ph\":\"E\",\"pid\":30,\"tid\":31,\"ts\":3000.000,\"cat\":\"region\","
		"\"name\":\"inner\",\"args\":{\"open_at_end\":true}}\n"
		"],\n\"otherData\":{\"exporter\":\"perch report --format=chrome\",\"command\":"
		"\"v4.data\",\"recording_version\":\"4\",\"time_axis\":\"ticks\",\"origin_ns\":"
		"\"1000000\",\"region_ends_unmatched\":\"1\"}}\n");
	free(out);
}

/* ---- GPU ------------------------------------------------------------------------------------ */

static char *gpu_strings[] = {"",
			      "app",
			      "/usr/bin/app",
			      "main",
			      "solve",
			      "io",
			      "outer",
			      "inner",
			      "tick",
			      "4f1c0ffee0ddba11",
			      "kern_a",
			      "kern_b",
			      "CUPTI is in use by Nsight Systems (error 39)"};

/* The v4 recording with GPU data: kern_a twice (400 and 200 us) on device 0 stream 7, kern_b
 * (300 us) on stream 8 overlapping kern_a's second run (device 0 busy 800 us, not 900), a 1 us
 * HtoD copy of 2 MB, a 0.5 us DtoH copy of 1000 bytes on device 1, a 100 us sync, the launch
 * API call of thread 31; one activity unjoined, two records dropped, and a note. */
static void gpu_recording(struct recording *r)
{
	static struct rec_gpu gpu[] = {
		{REC_GPU_API, 998000, 999000, 0, 0, 0, 211, 0, 1, REC_GPU_F_LAUNCH, 0, 30, 31,
		 999000, 0},
		{REC_GPU_KERNEL, 1000000, 1400000, 0, 7, 32, 0, 10, 1, 0, 0, 30, 31, 999000, 0},
		{REC_GPU_KERNEL, 1500000, 1700000, 0, 7, 32, 0, 10, 2, 0, 0, 30, 31, 1499000, 0},
		{REC_GPU_KERNEL, 1600000, 1900000, 0, 8, 32, 0, 11, 3, 0, 0, 30, 0, 0, 0},
		{REC_GPU_MEMCPY, 2000000, 2001000, 0, 7, 2000000, REC_GPU_COPY_HTOD, 0, 4, 0, 0, 30,
		 31, 2001500, 0},
		{REC_GPU_MEMCPY, 2100000, 2100500, 1, 3, 1000, REC_GPU_COPY_DTOH, 0, 5, 0, 0, 30,
		 31, 2100600, 0},
		{REC_GPU_SYNC, 2200000, 2300000, 0, 0, 0, 1, 0, 6, 0, 0, 30, 31, 2200000, 0},
	};
	static uint32_t notes[] = {12}, region_names[] = {6, 7};
	static struct rec_kv meta[] = {{.key = "gpu", .str = "cupti"}};
	static struct rec_kv stats[] = {{.key = "gpu_activities", .value = 6},
					{.key = "gpu_activities_joined", .value = 5},
					{.key = "gpu_activities_without_launch", .value = 1},
					{.key = "gpu_launches_without_activity", .value = 0},
					{.key = "gpu_records_dropped", .value = 2}};

	v4_recording(r);
	r->strings = gpu_strings;
	r->nstrings = sizeof(gpu_strings) / sizeof(gpu_strings[0]);
	r->gpu = gpu;
	r->ngpu = sizeof(gpu) / sizeof(gpu[0]);
	r->gpu_notes = notes;
	r->ngpu_notes = 1;
	r->region_names = region_names;
	r->nregion_names = 2;
	r->meta = meta;
	r->nmeta = 1;
	r->stats = stats;
	r->nstats = sizeof(stats) / sizeof(stats[0]);
}

static char *print_format(const struct recording *r, enum report_format format)
{
	struct report_opts o = {.format = format, .top = 20};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(report__print(r, "gpu.data", &o, f), 0);
	fclose(f);
	return out;
}

/* Kernels by total with their share of the busy time (the union: 801.5 us), copies with their
 * bandwidth, busy and idle per device and stream over its own span (device 0: 1.0 to 2.001 ms,
 * busy 400 + 400 (kern_a's second run and kern_b overlap) + 1 us, idle 200 us; stream 7: idle the
 * 100 us and 300 us gaps), the counts, the sync of thread 30/31 ("app") and the note, as the
 * recording holds them. */
static void report_text_gpu_section_has_kernels_copies_busy_and_counts(void **state)
{
	struct recording r;
	char *out, *gpu;

	(void)state;
	gpu_recording(&r);
	out = print_format(&r, REPORT_TEXT);
	gpu = between(out, "GPU (CUDA", NULL);
	assert_lines_equal(
		gpu,
		"GPU (CUDA through CUPTI)\n"
		"  note: CUPTI is in use by Nsight Systems (error 39)\n"
		"  3 kernels, 2 copies, 0 memsets; GPU busy 801.500 µs on 2 devices\n"
		"  kernel                              calls      total       mean        min        max  busy%\n"
		"  kern_a                                  2 600.000 µs 300.000 µs 200.000 µs 400.000 µs  74.9%\n"
		"  kern_b                                  1 300.000 µs 300.000 µs 300.000 µs 300.000 µs  37.4%\n"
		"  copy        count          bytes       time         GB/s\n"
		"  HtoD            1        2000000   1.000 µs     2000.000\n"
		"  DtoH            1           1000     500 ns        2.000\n"
		"  lane            activities       busy       idle  busy%       span  (span: from the first activity's start to the last one's end; idle = span - busy)\n"
		"  device 0                 4 801.000 µs 200.000 µs  80.0%   1.001 ms\n"
		"    stream 7               3 601.000 µs 400.000 µs  60.0%   1.001 ms\n"
		"    stream 8               1 300.000 µs       0 ns 100.0% 300.000 µs\n"
		"  device 1                 1     500 ns       0 ns 100.0%     500 ns\n"
		"    stream 3               1     500 ns       0 ns 100.0%     500 ns\n"
		"  joined     5 of 6 activities to their launch; 1 activities without a launch, 0 launches without activity, 2 records dropped by CUPTI\n"
		"  api        1 CUDA calls recorded, 1 launches\n"
		"  syncs      1, the CPU waited 100.000 µs; by thread:\n"
		"  pid/tid         thread            syncs     waited        max  by type\n"
		"  30/31           app                   1 100.000 µs 100.000 µs  event 1\n");
	free(gpu);
	free(out);
}

/* The launch stacks (launch_key): the API call and both kern_a runs from sample 0 (main -> solve,
 * in region "outer"), the HtoD copy from sample 1 (main -> io, no region); kern_b and the DtoH
 * copy without one. GPU time per region: outer 600 us (kern_a's two runs), inner (a name with no
 * sample or launch) none; by call path: solve
 * 600 us, io 1 us; 2 activities unattributed (kern_b's 300 us, the DtoH copy's 0.5 us), every
 * launch with its stack; the GPU call tree: main 601 us, solve 600 of it, io 1. */
static void report_gpu_time_by_launch_stack_region_and_call_path(void **state)
{
	static const uint32_t keys[] = {1, 1, 1, 0, 2, 0, 0};
	struct rec_gpu gpu[7];
	struct recording r;
	char *out, *paths;

	(void)state;
	gpu_recording(&r);
	memcpy(gpu, r.gpu, sizeof(gpu));
	for (size_t i = 0; i < 7; i++)
		gpu[i].launch_key = keys[i];
	r.gpu = gpu;
	out = print_format(&r, REPORT_TEXT);
	paths = between(out, "  GPU time by launching call path", "\n\n");
	assert_lines_equal(
		paths,
		"  GPU time by launching call path (kernels, copies and memsets; the "
		"launch innermost)\n"
		"         gpu    count  call path\n"
		"  600.000 µs        2  solve <- main\n"
		"    1.000 µs        1  io <- main\n"
		"  stacks     0 of 1 launches have no CPU stack (2 activities unattributed; 0 "
		"probe hits lost in the kernel)\n"
		"  attributed 601.000 µs of GPU time to a launch stack, 300.500 µs not");
	free(paths);
	paths = last_lines(out, "  GPU call tree");
	assert_lines_equal(
		paths, "  GPU call tree (the launch stacks as the bounded path tree, weighted by "
		       "the GPU time they launched: 601.000 µs; 3 nodes)\n"
		       "    total    self  (% of the GPU time with a launch stack; nodes below "
		       "0.00% hidden: --min-percent)\n"
		       "  100.00%   0.00%  main\n"
		       "     99.83%  99.83%  solve\n"
		       "      0.17%   0.17%  io");
	free(paths);
	free(out);
	out = print_format(&r, REPORT_CSV);
	assert_lines_equal(out, "name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size,"
				"gpu_s\n"
				"outer,,0,0.000000000,0.000000000,,,,5,0,0.000600000\n"
				"outer,31,0,0.000000000,0.000000000,,,,5,0,0.000600000\n"
				"inner,,0,0.000000000,0.000000000,,,,0,0,0.000000000\n");
	free(out);
}

/* The GPU as tracks: a process per device, a thread per stream, an "X" per activity, the API
 * call on its thread, a flow from the launch to each joined activity (none for the unjoined
 * one, none for the sync), and the sync as a slice on the thread that waited. */
static void report_chrome_has_gpu_tracks_and_launch_flows(void **state)
{
	struct recording r;
	char *out, *gpu;

	(void)state;
	gpu_recording(&r);
	out = print_format(&r, REPORT_CHROME);
	gpu = between(out, "\"GPU 0\"", "],\n\"otherData\"");
	assert_lines_equal(
		gpu,
		"\"GPU 0\"}},\n"
		"{\"ph\":\"M\",\"pid\":1073741824,\"tid\":7,\"ts\":0.000,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 7\"}},\n"
		"{\"ph\":\"M\",\"pid\":1073741824,\"tid\":8,\"ts\":0.000,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 8\"}},\n"
		"{\"ph\":\"M\",\"pid\":1073741825,\"tid\":0,\"ts\":0.000,\"name\":\"process_name\",\"args\":{\"name\":\"GPU 1\"}},\n"
		"{\"ph\":\"M\",\"pid\":1073741825,\"tid\":3,\"ts\":0.000,\"name\":\"thread_name\",\"args\":{\"name\":\"stream 3\"}},\n"
		"{\"ph\":\"X\",\"pid\":30,\"tid\":31,\"ts\":0.000,\"dur\":1.000,\"cat\":\"cuda\",\"name\":\"CUDA launch (cbid 211)\",\"args\":{\"correlation\":1,\"bytes\":0,\"graph\":0}},\n"
		"{\"ph\":\"X\",\"pid\":1073741824,\"tid\":7,\"ts\":2.000,\"dur\":400.000,\"cat\":\"gpu\",\"name\":\"kern_a\",\"args\":{\"correlation\":1,\"bytes\":32,\"graph\":0}},\n"
		"{\"ph\":\"s\",\"pid\":30,\"tid\":31,\"ts\":0.999,\"cat\":\"launch\",\"name\":\"launch\",\"id\":2},\n"
		"{\"ph\":\"f\",\"pid\":1073741824,\"tid\":7,\"ts\":2.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":2,\"bp\":\"e\"},\n"
		"{\"ph\":\"X\",\"pid\":1073741824,\"tid\":7,\"ts\":502.000,\"dur\":200.000,\"cat\":\"gpu\",\"name\":\"kern_a\",\"args\":{\"correlation\":2,\"bytes\":32,\"graph\":0}},\n"
		"{\"ph\":\"s\",\"pid\":30,\"tid\":31,\"ts\":500.999,\"cat\":\"launch\",\"name\":\"launch\",\"id\":3},\n"
		"{\"ph\":\"f\",\"pid\":1073741824,\"tid\":7,\"ts\":502.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":3,\"bp\":\"e\"},\n"
		"{\"ph\":\"X\",\"pid\":1073741824,\"tid\":8,\"ts\":602.000,\"dur\":300.000,\"cat\":\"gpu\",\"name\":\"kern_b\",\"args\":{\"correlation\":3,\"bytes\":32,\"graph\":0}},\n"
		"{\"ph\":\"X\",\"pid\":1073741824,\"tid\":7,\"ts\":1002.000,\"dur\":1.000,\"cat\":\"gpu\",\"name\":\"memcpy HtoD\",\"args\":{\"correlation\":4,\"bytes\":2000000,\"graph\":0}},\n"
		"{\"ph\":\"s\",\"pid\":30,\"tid\":31,\"ts\":1002.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":5},\n"
		"{\"ph\":\"f\",\"pid\":1073741824,\"tid\":7,\"ts\":1002.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":5,\"bp\":\"e\"},\n"
		"{\"ph\":\"X\",\"pid\":1073741825,\"tid\":3,\"ts\":1102.000,\"dur\":0.500,\"cat\":\"gpu\",\"name\":\"memcpy DtoH\",\"args\":{\"correlation\":5,\"bytes\":1000,\"graph\":0}},\n"
		"{\"ph\":\"s\",\"pid\":30,\"tid\":31,\"ts\":1102.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":6},\n"
		"{\"ph\":\"f\",\"pid\":1073741825,\"tid\":3,\"ts\":1102.000,\"cat\":\"launch\",\"name\":\"launch\",\"id\":6,\"bp\":\"e\"},\n"
		"{\"ph\":\"X\",\"pid\":30,\"tid\":31,\"ts\":1202.000,\"dur\":100.000,\"cat\":\"sync\",\"name\":\"sync event\",\"args\":{\"correlation\":6,\"type\":\"event\"}}\n");
	free(gpu);
	free(out);
}

/* The GPU call tree honours --min-percent (io's 1 of 601 us hidden, summed in one line) and
 * --region (only the launches made inside "outer": solve's 600 us). */
static void report_gpu_tree_honours_min_percent_and_region(void **state)
{
	static const uint32_t keys[] = {1, 1, 1, 0, 2, 0, 0};
	struct report_opts o = {.format = REPORT_TEXT, .top = 20, .min_percent = 0.5};
	struct rec_gpu gpu[7];
	struct recording r;
	char *out = NULL, *tree;
	size_t len = 0;
	FILE *f;

	(void)state;
	gpu_recording(&r);
	memcpy(gpu, r.gpu, sizeof(gpu));
	for (size_t i = 0; i < 7; i++)
		gpu[i].launch_key = keys[i];
	r.gpu = gpu;
	for (int pass = 0; pass < 2; pass++) {
		f = open_memstream(&out, &len);
		assert_non_null(f);
		assert_int_equal(report__print(&r, "gpu.data", &o, f), 0);
		fclose(f);
		tree = last_lines(out, "  GPU call tree");
		assert_lines_equal(tree,
				   pass ? "  GPU call tree (the launch stacks as the bounded path "
					  "tree, weighted by the GPU time they launched: "
					  "600.000 µs; 2 nodes)\n"
					  "    total    self  (% of the GPU time with a launch "
					  "stack launched inside region outer; nodes below "
					  "0.50% hidden: --min-percent)\n"
					  "  100.00%   0.00%  main\n"
					  "    100.00% 100.00%  solve"
					: "  GPU call tree (the launch stacks as the bounded path "
					  "tree, weighted by the GPU time they launched: "
					  "601.000 µs; 3 nodes)\n"
					  "    total    self  (% of the GPU time with a launch "
					  "stack; nodes below 0.50% hidden: --min-percent)\n"
					  "  100.00%   0.00%  main\n"
					  "     99.83%  99.83%  solve\n"
					  "      0.17%          (1 smaller callees below 0.50%)");
		free(tree);
		free(out);
		o.region = "outer";
	}
}

/* The pprof export's GPU type: with launch stacks (gpu_recording's, as above) a third sample
 * type gpu/nanoseconds, the CPU samples 0 in it, and one sample per launch stack valued at what
 * it launched (solve's 600 us, io's 1 us: the text report's GPU call tree total), its frames
 * leaf first and its region labels; without launch stacks the two CPU types only. */
static Perftools__Profiles__Profile *pprof_of(const struct recording *r)
{
	static unsigned char plain[1 << 16];
	struct report_opts o = {.format = REPORT_PPROF};
	Perftools__Profiles__Profile *pb;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	z_stream z = {0};

	assert_non_null(f);
	assert_int_equal(report__print(r, "gpu.data", &o, f), 0);
	fclose(f);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)out;
	z.avail_in = (uInt)len;
	z.next_out = plain;
	z.avail_out = sizeof(plain);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	pb = perftools__profiles__profile__unpack(NULL, z.total_out, plain);
	assert_non_null(pb);
	inflateEnd(&z);
	free(out);
	return pb;
}

static const char *pb_str(const Perftools__Profiles__Profile *pb, int64_t i)
{
	return i >= 0 && (size_t)i < pb->n_string_table ? pb->string_table[i] : "?";
}

/* The function name of a location id's innermost line. */
static const char *pb_loc_name(const Perftools__Profiles__Profile *pb, uint64_t id)
{
	const Perftools__Profiles__Location *l = pb->location[id - 1];
	const Perftools__Profiles__Function *f = pb->function[l->line[0]->function_id - 1];

	return pb_str(pb, f->name);
}

static void report_pprof_has_gpu_samples_per_launch_stack(void **state)
{
	static const uint32_t keys[] = {1, 1, 1, 0, 2, 0, 0};
	Perftools__Profiles__Profile *pb;
	struct rec_gpu gpu[7];
	struct recording r;
	int64_t cpu = 0, gpu_ns = 0;

	(void)state;
	gpu_recording(&r);
	pb = pprof_of(&r);
	assert_int_equal(pb->n_sample_type, 2); /* no launch stacks */
	perftools__profiles__profile__free_unpacked(pb, NULL);
	memcpy(gpu, r.gpu, sizeof(gpu));
	for (size_t i = 0; i < 7; i++)
		gpu[i].launch_key = keys[i];
	r.gpu = gpu;
	pb = pprof_of(&r);
	assert_int_equal(pb->n_sample_type, 3);
	assert_string_equal(pb_str(pb, pb->sample_type[2]->type), "gpu");
	assert_string_equal(pb_str(pb, pb->sample_type[2]->unit), "nanoseconds");
	assert_int_equal(pb->n_sample,
			 4); /* the two CPU samples, then a GPU one per launch stack */
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];

		assert_int_equal(s->n_value, 3);
		assert_true(!s->value[2] || (!s->value[0] && !s->value[1])); /* never both */
		cpu += s->value[0];
		gpu_ns += s->value[2];
	}
	assert_int_equal(cpu, 6);
	assert_int_equal(gpu_ns, 601000);
	assert_int_equal(pb->sample[2]->value[2], 600000);
	assert_int_equal(pb->sample[2]->n_location_id, 2);
	assert_string_equal(pb_loc_name(pb, pb->sample[2]->location_id[0]), "solve");
	assert_string_equal(pb_loc_name(pb, pb->sample[2]->location_id[1]), "main");
	assert_int_equal(pb->sample[2]->n_label, 5); /* pid, tid, thread, region, region_stack */
	assert_string_equal(pb_str(pb, pb->sample[2]->label[3]->str), "outer");
	assert_int_equal(pb->sample[3]->value[2], 1000);
	assert_string_equal(pb_loc_name(pb, pb->sample[3]->location_id[0]), "io");
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

/* Who waited: syncs summed per thread (by type, total, longest), the syncs whose API call never
 * came (tid 0) one row of their own, rows by time waited; a thread's name from THREADS. */
static void gpu_syncs_sum_waits_per_thread_and_keep_the_unjoined(void **state)
{
	static struct rec_gpu gpu[] = {
		{.kind = REC_GPU_SYNC,
		 .start_ns = 100,
		 .end_ns = 2100,
		 .detail = 3,
		 .pid = 30,
		 .tid = 31},
		{.kind = REC_GPU_SYNC,
		 .start_ns = 3000,
		 .end_ns = 8000,
		 .detail = 4,
		 .pid = 30,
		 .tid = 31},
		{.kind = REC_GPU_SYNC,
		 .start_ns = 3000,
		 .end_ns = 4000,
		 .detail = 1,
		 .pid = 30,
		 .tid = 32},
		{.kind = REC_GPU_SYNC, .start_ns = 9000, .end_ns = 13000, .detail = 99},
		{.kind = REC_GPU_KERNEL, .start_ns = 0, .end_ns = 50000, .pid = 30, .tid = 31},
	};
	struct recording r;
	struct gpu_syncs *s;

	(void)state;
	v4_recording(&r);
	r.gpu = gpu;
	r.ngpu = sizeof(gpu) / sizeof(gpu[0]);
	s = gpu_syncs__new(&r);
	assert_non_null(s);
	assert_int_equal(s->count, 4);
	assert_int_equal(s->total_ns, 2000 + 5000 + 1000 + 4000);
	assert_int_equal(s->nrows, 3);
	assert_int_equal(s->rows[0].tid, 31);
	assert_int_equal(s->rows[0].count, 2);
	assert_int_equal(s->rows[0].total_ns, 7000);
	assert_int_equal(s->rows[0].max_ns, 5000);
	assert_int_equal(s->rows[0].by_type[GPU_SYNC_STREAM], 1);
	assert_int_equal(s->rows[0].by_type[GPU_SYNC_CONTEXT], 1);
	assert_string_equal(recording__string(&r, s->rows[0].comm), "app");
	assert_int_equal(s->rows[1].pid, 0); /* no API call known */
	assert_int_equal(s->rows[1].tid, 0);
	assert_int_equal(s->rows[1].by_type[GPU_SYNC_UNKNOWN], 1);
	assert_int_equal(s->rows[2].tid, 32);
	assert_int_equal(s->rows[2].by_type[GPU_SYNC_EVENT], 1);
	assert_int_equal(s->rows[2].comm, 0); /* not in THREADS, no sample */
	assert_string_equal(gpu_syncs__type_name(99), "other");
	gpu_syncs__free(s);
}

/* The GPU call tree folds recursion as the CPU tree does: a launch from main a b a b c (and
 * perch's probe frame below it, left out) gives the CPU tree's nodes for a sample of main a b a
 * b c, each weighted by the GPU time instead of the count. */
static void gpu_tree_folds_recursion_as_the_cpu_tree(void **state)
{
	static char *strings[] = {"",
				  "app",
				  "/usr/bin/app",
				  "main",
				  "a",
				  "b",
				  "c",
				  "/opt/perch/libperch_cuda.so",
				  "perch_cuda_launch"};
	static struct rec_frame frames[] = {{REC_FRAME_USER, 2, 3, 0x100, NULL, 0},
					    {REC_FRAME_USER, 2, 4, 0x200, NULL, 0},
					    {REC_FRAME_USER, 2, 5, 0x300, NULL, 0},
					    {REC_FRAME_USER, 2, 6, 0x400, NULL, 0},
					    {REC_FRAME_USER, 7, 8, 0x10, NULL, 0}};
	static const uint32_t launch[] = {0, 1, 2, 1, 2, 3, 4}, cpu[] = {0, 1, 2, 1, 2, 3};
	static struct rec_sample lsamples[] = {{30, 31, 0, 0, 1, 0, NULL, 7, launch, 0}};
	static struct rec_sample csamples[] = {{30, 31, 3, 0, 1, 0, NULL, 6, cpu, 0}};
	static struct rec_gpu gpu[] = {
		{.kind = REC_GPU_KERNEL, .start_ns = 0, .end_ns = 1000, .launch_key = 1},
		{.kind = REC_GPU_KERNEL, .start_ns = 500, .end_ns = 2500, .launch_key = 1},
	};
	struct recording rl = {.version = 4,
			       .strings = strings,
			       .nstrings = 9,
			       .frames = frames,
			       .nframes = 5,
			       .samples = lsamples,
			       .nsamples = 1,
			       .gpu = gpu,
			       .ngpu = 2};
	struct recording rc = rl;
	struct profile *pl, *pc;
	const struct tree *c;
	struct tree *g;

	(void)state;
	rc.samples = csamples;
	rc.gpu = NULL;
	rc.ngpu = 0;
	pl = profile__build(&rl, NULL);
	pc = profile__build(&rc, NULL);
	assert_non_null(pl);
	assert_non_null(pc);
	g = gpu_tree__new(&rl, pl);
	assert_non_null(g);
	c = profile__tree(pc);
	assert_int_equal(tree__total_weight(g), 3000);
	assert_int_equal(tree__node_count(g), tree__node_count(c));
	for (size_t n = 1; n <= tree__node_count(c); n++) {
		assert_string_equal(profile__func_name(pl, tree__node_label(g, n)),
				    profile__func_name(pc, tree__node_label(c, n)));
		assert_int_equal(tree__node_parent(g, n), tree__node_parent(c, n));
		assert_int_equal(tree__node_inclusive(g, n), tree__node_inclusive(c, n) * 1000);
	}
	tree__free(g);
	profile__free(pl);
	profile__free(pc);
}

/* The region spans of the same recording as speedscope's evented profile: opens and closes
 * nested, the unmatched end and the mark left out, the open span closed at the end. */
static void report_speedscope_writes_region_spans_as_evented_profile(void **state)
{
	struct report_opts o = {.format = REPORT_SPEEDSCOPE};
	struct recording r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	v4_recording(&r);
	assert_non_null(f);
	assert_int_equal(report__print(&r, "v4.data", &o, f), 0);
	fclose(f);
	assert_non_null(
		strstr(out, "{\"type\":\"evented\",\"name\":\"regions of app (30/31)\",\"unit\":"
			    "\"nanoseconds\",\"startValue\":0,\"endValue\":3000000,\n\"events\":[\n"
			    "{\"type\":\"O\",\"frame\":0,\"at\":100000},\n"
			    "{\"type\":\"O\",\"frame\":4,\"at\":200000},\n"
			    "{\"type\":\"C\",\"frame\":4,\"at\":300000},\n"
			    "{\"type\":\"C\",\"frame\":0,\"at\":300000},\n"
			    "{\"type\":\"O\",\"frame\":4,\"at\":2200000},\n"
			    "{\"type\":\"C\",\"frame\":4,\"at\":3000000}]}],\n"));
	assert_non_null(strstr(out, "{\"name\":\"region:outer\"},\n{\"name\":\"main\"},\n"
				    "{\"name\":\"solve\"},\n{\"name\":\"io\"},\n"
				    "{\"name\":\"region:inner\"}]}}"));
	free(out);
}

/* pprof's mapping of a module carries the build-id the recording keeps for it: the gunzipped
 * profile holds it as a string (go tool pprof -raw shows it: tests/chrome.sh). */
static void report_pprof_mapping_carries_build_id(void **state)
{
	struct report_opts o = {.format = REPORT_PPROF};
	struct recording r;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	unsigned char plain[4096];
	z_stream z = {0};

	(void)state;
	v4_recording(&r);
	assert_non_null(f);
	assert_int_equal(report__print(&r, "v4.data", &o, f), 0);
	fclose(f);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)out;
	z.avail_in = (uInt)len;
	z.next_out = plain;
	z.avail_out = sizeof(plain);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_non_null(memmem(plain, z.total_out, "4f1c0ffee0ddba11", 16));
	inflateEnd(&z);
	free(out);
}

/* At any depth of the region stack, and a sample in a recursion of the region counted once. */
static void report_region_filter_keeps_exactly_the_samples_inside(void **state)
{
	struct report_opts o = {.format = REPORT_FOLDED, .region = "io"};
	char *out = render_with(write_region_fixture, &o);

	(void)state;
	assert_lines_equal(out, "app;region:io;main;read 3\n"
				"app;region:solve;region:io;main;read;ksys_read_[k] 5\n");
	free(out);
	o.region = "solve";
	out = render_with(write_region_fixture, &o);
	assert_lines_equal(out, "app;region:solve;[no stack] 1\n"
				"app;region:solve;main;setup 10\n"
				"app;region:solve;region:io;main;read;ksys_read_[k] 5\n"
				"app;region:solve;region:step;main;work 50\n"
				"app;region:solve;region:step;worker_main;work 30\n");
	free(out);
	o.region = "walk";
	out = render_with(write_region_fixture, &o);
	assert_lines_equal(out, "app;region:walk;region:walk;main;recurse 2\n");
	free(out);
	o.region = "a,\"b\""; /* a mark: no sample is ever inside it */
	out = render_with(write_region_fixture, &o);
	assert_lines_equal(out, "");
	free(out);
}

static void report_region_filter_shows_its_share_and_filters_tables_and_tree(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 0, .top = 20, .region = "io"};
	char *out = render_with(write_region_fixture, &o), *part;

	(void)state;
	part = between(out, "sampling", "lost");
	assert_lines_equal(part, "sampling   cpu-clock at 997 Hz per CPU; 120 samples in 124 ticks "
				 "on target threads\n"
				 "filter     --region io keeps 8 of 120 samples (6.67%): the top "
				 "functions and the call tree count only these\n");
	free(part);
	/* The region section is about all samples, filter or not. */
	part = between(out, "\nRegions (", "\nRegion tree");
	assert_lines_equal(part, region_table);
	free(part);
	part = between(out, "\nTop functions by self", "\nRegions (");
	assert_lines_equal(
		part,
		"\n"
		"Top functions by self (samples whose leaf is the function)\n"
		"    self%     self  total%    total  function                                 module\n"
		"   62.50%        5  62.50%        5  ksys_read                                [kernel] "
		"[k]\n"
		"   37.50%        3 100.00%        8  read                                     app\n"
		"\n"
		"Top functions by total (samples in which the function appears at least once)\n"
		"    self%     self  total%    total  function                                 module\n"
		"    0.00%        0 100.00%        8  main                                     app\n"
		"   37.50%        3 100.00%        8  read                                     app\n"
		"   62.50%        5  62.50%        5  ksys_read                                [kernel] "
		"[k]\n"
		"\n"
		"Call tree (bounded path tree: recursion folded so no caller->callee pair repeats on a "
		"path; 3 nodes)\n"
		"    total    self  (% of the samples inside region io; nodes below 0.00% hidden: "
		"--min-percent)\n"
		"  100.00%   0.00%  main\n"
		"    100.00%  37.50%  read\n"
		"       62.50%  62.50%  ksys_read [k]\n");
	free(part);
	free(out);
}

static void report_csv_has_region_rows_over_threads_then_per_thread(void **state)
{
	struct report_opts o = {.format = REPORT_CSV};
	char *out = render_with(write_region_fixture, &o);

	(void)state;
	assert_lines_equal(
		out,
		"name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size\n"
		"solve,,3,1.900000000,0.400000000,0.633333333,0.400000000,1.000000000,96,0\n"
		"solve,20,2,1.500000000,0.300000000,0.750000000,0.500000000,1.000000000,65,0\n"
		"solve,21,1,0.400000000,0.100000000,0.400000000,0.400000000,0.400000000,31,0\n"
		"step,,15,1.300000000,1.300000000,0.086666667,0.040000000,0.150000000,80,1500\n"
		"step,20,10,1.000000000,1.000000000,0.100000000,0.050000000,0.150000000,50,1000\n"
		"step,21,5,0.300000000,0.300000000,0.060000000,0.040000000,0.080000000,30,500\n"
		"io,,7,0.260000000,0.260000000,0.043333333,0.020000000,0.080000000,8,0\n"
		"io,20,7,0.260000000,0.260000000,0.043333333,0.020000000,0.080000000,8,0\n"
		"walk,,4,0.002000000,0.002000000,0.000500000,0.000250000,0.002000000,2,0\n"
		"walk,20,4,0.002000000,0.002000000,0.000500000,0.000250000,0.002000000,2,0\n"
		"\"a,\"\"b\"\"\",,7,0.000000000,0.000000000,,,,0,0\n"
		"\"a,\"\"b\"\"\",21,7,0.000000000,0.000000000,,,,0,0\n");
	free(out);
}

/*
 * perch annotate's self samples are the report's: leaves whose innermost inline level is the
 * function (not those where it is an outer level: code inlined into it, its callee's self), and
 * every module's (the report has a row per module). "caller" is: a leaf inlined "hot" inside it
 * (5: hot's), its own line (3), and its namesake in another module (2, no lines).
 */
static char *ann_strings[] = {
	"",    "/usr/lib/liba.so", "/opt/x/liba.so", "/opt/y/libb.so", "caller",
	"hot", "/nonexistent/a.c"};
static const struct rec_line ann_inl[] = {{5, 6, 10}, {4, 6, 20}}, ann_own[] = {{0, 6, 21}},
			     ann_other[] = {{4, 6, 30}};
static const uint32_t ann_s0[] = {0}, ann_s1[] = {1}, ann_s2[] = {2}, ann_s3[] = {3};

static void annotate_counts_the_reports_self_samples(void **state)
{
	static struct rec_frame frames[] = {{REC_FRAME_USER, 1, 4, 0x100, ann_inl, 2},
					    {REC_FRAME_USER, 1, 4, 0x140, ann_own, 1},
					    {REC_FRAME_USER, 2, 4, 0x180, ann_own, 1},
					    {REC_FRAME_USER, 3, 4, 0x200, ann_other, 1}};
	static struct rec_sample samples[] = {{1, 1, 5, 0, 0, 0, NULL, 1, ann_s0, 0},
					      {1, 1, 3, 0, 0, 0, NULL, 1, ann_s1, 0},
					      {2, 2, 4, 0, 0, 0, NULL, 1, ann_s2, 0},
					      {3, 3, 2, 0, 0, 0, NULL, 1, ann_s3, 0}};
	struct recording r = {.version = 4,
			      .strings = ann_strings,
			      .nstrings = 7,
			      .frames = frames,
			      .nframes = 4,
			      .samples = samples,
			      .nsamples = 4};
	struct profile *p = profile__build(&r, NULL);
	uint64_t self = 0;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	char want[64];

	(void)state;
	assert_non_null(p);
	for (uint32_t i = 0; i < profile__nfuncs(p); i++)
		if (!strcmp(profile__func_name(p, i), "caller"))
			self += tree__label_self(profile__tree(p), i);
	assert_int_equal(self, 9); /* liba.so (both paths: one row) 3 + 4, libb.so 2 */
	assert_int_equal(report__annotate(&r, "caller", f), 0);
	fclose(f);
	snprintf(want, sizeof(want), "caller: %llu self samples", (unsigned long long)self);
	assert_non_null(strstr(out, want));
	assert_non_null(
		strstr(out, " in 2 modules (a row each in the report): liba.so 7, libb.so 2"));
	assert_non_null(strstr(out, "not counted: 5 samples in functions inlined into it"));
	free(out);
	profile__free(p);
}

/* A file of text in dir, owned by uid, mode 0600; its path in buf. */
static const char *own_file(char *buf, const char *dir, const char *name, const char *text,
			    uid_t uid)
{
	FILE *f;

	snprintf(buf, PATH_MAX, "%s/%s", dir, name);
	f = fopen(buf, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(buf, 0600), 0);
	assert_int_equal(chown(buf, uid, uid), 0);
	return buf;
}

/*
 * The source paths annotate prints come from the target's debug info: a FIFO must not block it,
 * a symlink is not followed, and a file the binary's owner could not read (root's, 0600) is not
 * shown; the owner's own 0600 source is.
 */
static void annotate_shows_only_sources_the_binarys_owner_may_read(void **state)
{
	enum { UID = 12345 };
	char dir[PATH_MAX], made[] = "/tmp/perch-annsrc-XXXXXX", p[6][PATH_MAX];
	char *strings[7] = {"", p[0], "f", p[1], p[2], p[3], p[4]};
	static const uint32_t s0[] = {0}, s1[] = {1}, s2[] = {2}, s3[] = {3};
	static const struct rec_line l0[] = {{0, 3, 2}}, l1[] = {{0, 4, 1}}, l2[] = {{0, 5, 1}},
				     l3[] = {{0, 6, 1}};
	struct rec_frame frames[] = {{REC_FRAME_USER, 1, 2, 0x10, l0, 1},
				     {REC_FRAME_USER, 1, 2, 0x20, l1, 1},
				     {REC_FRAME_USER, 1, 2, 0x30, l2, 1},
				     {REC_FRAME_USER, 1, 2, 0x40, l3, 1}};
	struct rec_sample samples[] = {{1, 1, 4, 0, 0, 0, NULL, 1, s0, 0},
				       {1, 1, 3, 0, 0, 0, NULL, 1, s1, 0},
				       {1, 1, 2, 0, 0, 0, NULL, 1, s2, 0},
				       {1, 1, 1, 0, 0, 0, NULL, 1, s3, 0}};
	struct recording r = {.version = 4,
			      .strings = strings,
			      .nstrings = 7,
			      .frames = frames,
			      .nframes = 4,
			      .samples = samples,
			      .nsamples = 4};
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	if (geteuid())
		skip(); /* chown() needs root */
	assert_non_null(mkdtemp(made));
	assert_non_null(realpath(made, dir));
	assert_int_equal(chmod(dir, 0755), 0);
	own_file(p[0], dir, "app", "\177ELF", UID);
	own_file(p[1], dir, "mine.c", "one\nOWNER_LINE\n", UID);
	own_file(p[2], dir, "root.c", "ROOT_ONLY\n", 0);
	snprintf(p[3], PATH_MAX, "%.200s/fifo.c", dir);
	assert_int_equal(mkfifo(p[3], 0644), 0);
	snprintf(p[4], PATH_MAX, "%.200s/link.c", dir);
	assert_int_equal(symlink(p[1], p[4]), 0);
	f = open_memstream(&out, &len);
	alarm(3); /* a FIFO opened to read would block for good */
	assert_int_equal(report__annotate(&r, "f", f), 0);
	alarm(0);
	fclose(f);
	assert_non_null(strstr(out, "mine.c\n"));
	assert_non_null(strstr(out, "OWNER_LINE"));
	assert_non_null(
		strstr(out, "root.c (source not shown, not readable by the binary's owner"));
	assert_null(strstr(out, "ROOT_ONLY"));
	assert_non_null(strstr(out, "fifo.c (source not shown, not a regular file"));
	assert_non_null(strstr(out, "link.c (source not shown, a symbolic link"));
	free(out);
	for (int i = 0; i < 5; i++)
		unlink(p[i]);
	rmdir(dir);
}

static void report_csv_without_regions_is_the_header_only(void **state)
{
	struct report_opts o = {.format = REPORT_CSV};
	char *out = render(&o);

	(void)state;
	assert_string_equal(out,
			    "name,thread,calls,total_s,self_s,mean_s,min_s,max_s,samples,size\n");
	free(out);
}

/* Region frames stand for no function: not in the function table, not in any stack. */
static void profile_never_makes_a_region_a_function(void **state)
{
	struct recording *r = load_fixture(write_region_fixture);
	struct profile *p = profile__build(r, NULL);
	const char *regions[] = {"solve", "step", "io", "walk", "a,\"b\""};

	(void)state;
	assert_non_null(p);
	for (uint32_t f = 0; f < profile__nfuncs(p); f++) {
		for (size_t k = 0; k < sizeof(regions) / sizeof(regions[0]); k++)
			assert_string_not_equal(profile__func_name(p, f), regions[k]);
	}
	for (uint32_t i = 0; i < r->nframes; i++) {
		const uint32_t *fns;
		bool region = r->frames[i].kind == REC_FRAME_REGION;

		assert_int_equal(profile__frame_funcs(p, i, &fns) == 0, region);
	}
	/* The fifth sample: walk > walk; the last: solve with no function frame at all. Samples carry
	 * their regions apart from their frames (recording.h). */
	{
		const struct rec_sample *s = r->samples;

		assert_int_equal(s[4].nregions, 2);
		assert_string_equal(recording__string(r, s[4].regions[0]), "walk");
		assert_string_equal(recording__string(r, s[4].regions[1]), "walk");
		assert_int_equal(s[5].nregions, 0);
		assert_int_equal(s[7].nregions, 1);
		assert_string_equal(recording__string(r, s[7].regions[0]), "solve");
		assert_int_equal(s[7].nframes, 0);
		assert_true(profile__sample_kept(p, 7));
	}
	assert_int_equal(tree__total_weight(profile__tree(p)), 120);
	profile__free(p);
	recording__free(r);
}

static void report_finds_regions_by_name_and_lists_them(void **state)
{
	struct recording *r = load_fixture(write_region_fixture);
	char *names;

	(void)state;
	assert_int_equal(report__find_region(r, "solve"), 0);
	assert_int_equal(report__find_region(r, "a,\"b\""), 0);
	assert_int_equal(report__find_region(r, "sol"), -ENOENT);
	assert_int_equal(report__find_region(r, "main"), -ENOENT); /* a function, not a region */
	names = report__region_names(r);
	assert_string_equal(names, "a,\"b\", io, solve, step, walk");
	free(names);
	recording__free(r);
	r = load_fixture(write_fixture);
	assert_int_equal(report__find_region(r, "solve"), -ENOENT);
	names = report__region_names(r);
	assert_string_equal(names, "");
	free(names);
	recording__free(r);
}

/* perch stopped before it wrote the trees: the samples still say which regions ran. */
static void report_regions_without_trees_count_samples_only(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 0, .top = 20};
	char *out, *part;

	(void)state;
	g_region_trees = false;
	out = render_with(write_region_fixture, &o);
	g_region_trees = true;
	part = between(out, "\nRegions (", NULL);
	assert_lines_equal(
		part,
		"\n"
		"Regions (exact counts and wall times from the markers, all threads summed; total "
		"counts a\n"
		"recursion once, self leaves out child regions; samples: CPU samples inside, at any "
		"depth)\n"
		"       calls       total        self        mean         min         max   samples  "
		"samples%  region\n"
		"           0        0 ns        0 ns           -           -           -        96    "
		"80.00%  solve\n"
		"           0        0 ns        0 ns           -           -           -        80    "
		"66.67%  step\n"
		"           0        0 ns        0 ns           -           -           -         8     "
		"6.67%  io\n"
		"           0        0 ns        0 ns           -           -           -         2     "
		"1.67%  walk\n"
		"           0        0 ns        0 ns           -           -           -         0     "
		"0.00%  a,\"b\"\n"
		"\n"
		"Region notes\n"
		"  the recording has no region statistics (perch stopped before writing them): calls "
		"and times are unknown, samples are exact\n"
		"  4 samples have no region stack (it could not be read): they count as outside every "
		"region\n"
		"  1 processes were left alone: another perch was recording their region markers (one "
		"perch at a time)\n"
		"  10 region calls had names beyond the 4096 the runtime keeps: counted under [region "
		"names beyond the runtime's table], under no other name\n"
		"  3 region calls did not fit their thread's tree of 1024 nodes: counted under [more "
		"regions than the runtime keeps]\n"
		"  6 region begins and marks were nested deeper than the 64 levels the runtime keeps: "
		"counted here only, in no region's calls or times\n"
		"  note: trees read when each thread exited\n");
	free(part);
	free(out);
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void w32(FILE *f, uint32_t v)
{
	uint8_t b[4];

	put_le32(b, v);
	assert_int_equal(fwrite(b, 1, 4, f), 4);
}

static void w64(FILE *f, uint64_t v)
{
	w32(f, (uint32_t)v);
	w32(f, (uint32_t)(v >> 32));
}

static void wstr(FILE *f, const char *s)
{
	w32(f, strlen(s));
	assert_int_equal(fwrite(s, 1, strlen(s), f), strlen(s));
}

/* The payload written into *pl by the caller (an open_memstream), as one block of f. */
static void wblock(FILE *f, uint32_t type, FILE *pf, char **pl, size_t *len)
{
	fclose(pf);
	w32(f, type);
	w32(f, *len);
	w32(f, crc32(crc32(0L, Z_NULL, 0), (const uint8_t *)*pl, *len));
	w32(f, 0);
	assert_int_equal(fwrite(*pl, 1, *len, f), *len);
	free(*pl);
}

static void wkv(FILE *f, uint32_t type, const struct rec_kv *kv, size_t n, bool with_str)
{
	char *pl = NULL;
	size_t len = 0;
	FILE *pf = open_memstream(&pl, &len);

	w32(pf, n);
	for (size_t i = 0; i < n; i++) {
		wstr(pf, kv[i].key);
		if (with_str)
			wstr(pf, kv[i].str);
		else
			w64(pf, kv[i].value);
	}
	wblock(f, type, pf, &pl, &len);
}

static void wdefs(FILE *f, const struct recording *r)
{
	char *pl = NULL;
	size_t len = 0;
	FILE *pf = open_memstream(&pl, &len);

	w32(pf, r->nstrings - 1);
	for (size_t i = 1; i < r->nstrings; i++)
		wstr(pf, r->strings[i]);
	wblock(f, REC_STRINGS, pf, &pl, &len);
	pf = open_memstream(&pl, &len);
	w32(pf, r->nframes);
	for (size_t i = 0; i < r->nframes; i++) {
		assert_int_equal(fwrite(&r->frames[i].kind, 1, 1, pf), 1);
		w32(pf, r->frames[i].module);
		w32(pf, r->frames[i].name);
		w64(pf, r->frames[i].offset);
	}
	wblock(f, REC_FRAMES, pf, &pl, &len);
	pf = open_memstream(&pl, &len);
	w32(pf, r->nthreads);
	for (size_t i = 0; i < r->nthreads; i++) {
		w32(pf, r->threads[i].pid);
		w32(pf, r->threads[i].tid);
		w32(pf, r->threads[i].ppid);
		w32(pf, r->threads[i].comm);
	}
	wblock(f, REC_THREADS, pf, &pl, &len);
}

/* Samples without their comm, as version 1 spelled them (the fixture has no regions). */
static void wsamples(FILE *f, const struct recording *r)
{
	char *pl = NULL;
	size_t len = 0;
	FILE *pf = open_memstream(&pl, &len);

	w32(pf, r->nsamples);
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		assert_int_equal(s->nregions, 0);
		w32(pf, s->pid);
		w32(pf, s->tid);
		w64(pf, s->count);
		w32(pf, s->flags);
		w32(pf, s->nframes);
		for (uint32_t j = 0; j < s->nframes; j++)
			w32(pf, s->frames[j]);
	}
	wblock(f, REC_SAMPLES, pf, &pl, &len);
}

/* Rewrite the file at path as its version 1 spelling: what it loads as, in version 1's blocks
 * (SAMPLES without their comm; no LINES, REGIONS or time axis: the fixture has none of them). */
static void downgrade_to_version_1(void)
{
	struct recording *r = NULL;
	FILE *f;

	assert_int_equal(recording__load(path, &r), 0);
	assert_int_equal(r->nrthreads, 0);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(PERCH_FILE_MAGIC, 1, 8, f), 8);
	w32(f, 1);
	w32(f, 16);
	wkv(f, REC_META, r->meta, r->nmeta, true);
	wdefs(f, r);
	wsamples(f, r);
	wkv(f, REC_STATS, r->stats, r->nstats, false);
	if (r->end)
		wkv(f, REC_END, r->end, r->nend, false);
	fclose(f);
	recording__free(r);
}

/* A version 1 file (no region frames, no REGIONS, no sample names) reports as it always did. */
static void report_of_version_1_file_is_unchanged(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT, .min_percent = 6, .top = 4};
	struct recording *r = NULL;
	char *v2 = render(&o), *v1 = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	write_fixture();
	downgrade_to_version_1();
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	strcpy(path, "/tmp/perch-test-report.XXXXXX");
	f = open_memstream(&v1, &len);
	assert_non_null(f);
	assert_int_equal(report__print(r, "fixture.data", &o, f), 0);
	fclose(f);
	assert_lines_equal(v1, v2);
	assert_null(strstr(v1, "Region"));
	free(v1);
	free(v2);
	recording__free(r);
}

/* Two timed windows of 100 ms from 1 s on CLOCK_MONOTONIC, and one untimed. */
static void write_timed_fixture(void)
{
	struct rec_writer *w = open_fixture();
	uint32_t f = rec_writer__frame(w, REC_FRAME_USER, rec_writer__string(w, "/bin/app"),
				       rec_writer__string(w, "main"), 0x10);

	assert_int_equal(rec_writer__sample(w, 1, 1, 3, 0, &f, 1), 0);
	assert_int_equal(rec_writer__window(w, 1000000000, 1100000000), 0);
	assert_int_equal(rec_writer__sample(w, 1, 1, 4, 0, &f, 1), 0);
	assert_int_equal(rec_writer__window(w, 1100000000, 1200000000), 0);
	assert_int_equal(rec_writer__sample(w, 1, 1, 5, 0, &f, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

static void report_header_gives_the_time_axis_of_version_4(void **state)
{
	struct report_opts o = {.format = REPORT_TEXT};
	struct report_opts st = {.format = REPORT_STATS};
	char *text = render_with(write_timed_fixture, &o);
	char *stats = render_with(write_timed_fixture, &st);

	(void)state;
	assert_non_null(strstr(text, "\ntime       CLOCK_MONOTONIC 1.000 s to 1.200 s (0.200 s); 3 "
				     "windows of 100.0 ms\n"));
	assert_non_null(strstr(stats, "\ntime_start_ns 1000000000\ntime_end_ns 1200000000\n"
				      "windows 3\nwindow_ns 100000000\n"));
	assert_non_null(strstr(stats, "\nsampled 12\n"));
	free(text);
	free(stats);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_folded_merges_stacks_and_marks_kernel_frames),
		cmocka_unit_test(report_text_shows_header_tables_and_folded_tree),
		cmocka_unit_test(report_header_names_every_nonzero_loss_counter),
		cmocka_unit_test(report_folded_names_each_sample_as_its_thread_was_named),
		cmocka_unit_test(report_text_shows_region_table_tree_and_notes),
		cmocka_unit_test(report_folded_puts_region_frames_at_the_root),
		cmocka_unit_test(report_folded_escapes_separators_in_names),
		cmocka_unit_test(report_speedscope_escapes_json_strings),
		cmocka_unit_test(report_chrome_writes_counters_ticks_and_nested_spans),
		cmocka_unit_test(report_text_gpu_section_has_kernels_copies_busy_and_counts),
		cmocka_unit_test(report_gpu_time_by_launch_stack_region_and_call_path),
		cmocka_unit_test(report_chrome_has_gpu_tracks_and_launch_flows),
		cmocka_unit_test(report_gpu_tree_honours_min_percent_and_region),
		cmocka_unit_test(report_pprof_has_gpu_samples_per_launch_stack),
		cmocka_unit_test(gpu_syncs_sum_waits_per_thread_and_keep_the_unjoined),
		cmocka_unit_test(gpu_tree_folds_recursion_as_the_cpu_tree),
		cmocka_unit_test(report_speedscope_writes_region_spans_as_evented_profile),
		cmocka_unit_test(report_pprof_mapping_carries_build_id),
		cmocka_unit_test(report_region_filter_keeps_exactly_the_samples_inside),
		cmocka_unit_test(report_region_filter_shows_its_share_and_filters_tables_and_tree),
		cmocka_unit_test(report_csv_has_region_rows_over_threads_then_per_thread),
		cmocka_unit_test(report_csv_without_regions_is_the_header_only),
		cmocka_unit_test(annotate_counts_the_reports_self_samples),
		cmocka_unit_test(annotate_shows_only_sources_the_binarys_owner_may_read),
		cmocka_unit_test(profile_never_makes_a_region_a_function),
		cmocka_unit_test(report_finds_regions_by_name_and_lists_them),
		cmocka_unit_test(report_regions_without_trees_count_samples_only),
		cmocka_unit_test(report_of_version_1_file_is_unchanged),
		cmocka_unit_test(report_header_gives_the_time_axis_of_version_4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
