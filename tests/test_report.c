// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Golden-output tests of `perch report`: a recording with a known set of stacks (written through
 * the real writer, read back through the real loader) must print exactly the expected header,
 * top-function tables, bounded call tree and folded stacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recording.h"
#include "report.h"

static char path[] = "/tmp/perch-test-report.XXXXXX";

/*
 * Process "app" (pid 10): main -> solve -> refine -> solve (recursion), main -> parse, and one
 * stack that enters the kernel from write; plus one frame no symbol covers.
 */
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
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
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
	assert_int_equal(rec_writer__end(w, end, 2), 0);
	assert_int_equal(rec_writer__close(w), 0);
}

static char *render(const struct report_opts *o)
{
	struct recording *r = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	write_fixture();
	assert_int_equal(recording__load(path, &r), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__print(r, "fixture.data", o, f), 0);
	fclose(f);
	recording__free(r);
	unlink(path);
	strcpy(path, "/tmp/perch-test-report.XXXXXX");
	return buf;
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
	struct report_opts o = {.sz = sizeof(o), .format = REPORT_FOLDED};
	char *out = render(&o);

	(void)state;
	assert_string_equal(out, "app;main;app+0x1234 5\n"
				 "app;main;parse 26\n"
				 "app;main;solve 20\n"
				 "app;main;solve;refine;solve 40\n"
				 "app;main;write;ksys_write_[k] 10\n");
	free(out);
}

static void report_text_shows_header_tables_and_folded_tree(void **state)
{
	struct report_opts o = {.sz = sizeof(o), .format = REPORT_TEXT, .min_percent = 6, .top = 4};
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
		"truncated  1 samples hit the 127-frame stack limit; 0 without process mappings; 0 lost "
		"process events\n"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_folded_merges_stacks_and_marks_kernel_frames),
		cmocka_unit_test(report_text_shows_header_tables_and_folded_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
