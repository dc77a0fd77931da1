// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the JIT symbol map reader (perfmap.c). Each test writes a map in perf's format to a
 * temporary file, loads it and checks lookups against the answers the text itself gives: the
 * ranges written, and for overlapping symbols the later line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guards.h"
#include "symbolize/perfmap.h"

/* Load a map from the first len bytes of text, through a file that is gone on return. */
static struct perfmap *load_bytes(const char *text, size_t len)
{
	char path[] = "/tmp/perch-test-perfmap-XXXXXX";
	struct perfmap *m;
	int fd, saved;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	m = perfmap__load(path);
	saved = errno;
	unlink(path);
	errno = saved;
	return m;
}

static struct perfmap *load_text(const char *text)
{
	struct perfmap *m = load_bytes(text, strlen(text));

	assert_non_null(m);
	return m;
}

/* addr resolves to name, starting at start. */
static void expect_sym(const struct perfmap *m, uint64_t addr, const char *name, uint64_t start)
{
	uint64_t got = ~start;
	const char *n = perfmap__find(m, addr, &got);

	if (!n)
		fail_msg("0x%" PRIx64 ": no symbol, expected %s", addr, name);
	assert_string_equal(n, name);
	assert_int_equal(got, start);
}

static void expect_none(const struct perfmap *m, uint64_t addr)
{
	uint64_t got = 12345;
	const char *n = perfmap__find(m, addr, &got);

	if (n)
		fail_msg("0x%" PRIx64 ": found %s, expected no symbol", addr, n);
	assert_int_equal(got, 12345);
}

static void perfmap_free_and_queries_accept_null(void **state)
{
	(void)state;
	perfmap__free(NULL);
	assert_null(perfmap__find(NULL, 0x1000, NULL));
	assert_int_equal(perfmap__count(NULL), 0);
	assert_int_equal(perfmap__skipped(NULL), 0);
}

static void perfmap_finds_start_middle_and_last_byte_but_not_one_past_end(void **state)
{
	struct perfmap *m = load_text("1000 100 first\n"
				      "2000 10 second\n");

	(void)state;
	assert_int_equal(perfmap__count(m), 2);
	assert_int_equal(perfmap__skipped(m), 0);
	expect_none(m, 0);
	expect_none(m, 0xfff);
	expect_sym(m, 0x1000, "first", 0x1000);
	expect_sym(m, 0x1080, "first", 0x1000);
	expect_sym(m, 0x10ff, "first", 0x1000);
	expect_none(m, 0x1100);
	expect_none(m, 0x1fff);
	expect_sym(m, 0x2000, "second", 0x2000);
	expect_sym(m, 0x200f, "second", 0x2000);
	expect_none(m, 0x2010);
	expect_none(m, UINT64_MAX);
	/* start may be NULL when only the name is wanted */
	assert_string_equal(perfmap__find(m, 0x2001, NULL), "second");
	perfmap__free(m);
}

static void perfmap_reads_hex_with_and_without_0x_prefix(void **state)
{
	struct perfmap *m =
		load_text("0x7f00aa000000 0x20 prefixed\n"
			  "7F00AB000000 20 bare_upper\n"
			  "0X7f00ac000000 20 mixed_prefix\n"
			  "00000000000000007f00ad000000 0000000000000000020 leading_zeros\n"
			  "ffffffffffffff00 ff top_of_space\n");

	(void)state;
	assert_int_equal(perfmap__count(m), 5);
	assert_int_equal(perfmap__skipped(m), 0);
	expect_sym(m, 0x7f00aa00001f, "prefixed", 0x7f00aa000000);
	expect_none(m, 0x7f00aa000020);
	expect_sym(m, 0x7f00ab000000, "bare_upper", 0x7f00ab000000);
	expect_sym(m, 0x7f00ac000010, "mixed_prefix", 0x7f00ac000000);
	expect_sym(m, 0x7f00ad00001f, "leading_zeros", 0x7f00ad000000);
	expect_sym(m, 0xfffffffffffffffe, "top_of_space", 0xffffffffffffff00);
	expect_none(m, UINT64_MAX);
	perfmap__free(m);
}

static void perfmap_keeps_names_with_spaces_and_cxx_characters(void **state)
{
	static const char v8[] = "LazyCompile:~handler /srv/app/index.js:12:3";
	static const char cxx[] =
		"std::vector<int, std::allocator<int> >::push_back(int const&) [clone .cold]";
	static const char op[] = "operator()(Foo*, char const*) const &&";
	static const char tabbed[] = "name\twith tab";
	struct perfmap *m =
		load_text("1000 10 LazyCompile:~handler /srv/app/index.js:12:3\n"
			  "2000 10 std::vector<int, std::allocator<int> >::push_back(int "
			  "const&) [clone .cold]\n"
			  "3000\t10\toperator()(Foo*, char const*) const &&   \r\n"
			  "4000 10   name\twith tab");

	(void)state;
	assert_int_equal(perfmap__count(m), 4);
	assert_int_equal(perfmap__skipped(m), 0);
	expect_sym(m, 0x1005, v8, 0x1000);
	expect_sym(m, 0x2005, cxx, 0x2000);
	/* trailing blanks and the \r of a CRLF line are not part of the name */
	expect_sym(m, 0x3005, op, 0x3000);
	/* a last line without a newline still counts */
	expect_sym(m, 0x4005, tabbed, 0x4000);
	perfmap__free(m);
}

static void perfmap_later_entry_wins_partial_overlap(void **state)
{
	/* old:   [0x1000, 0x1100)
	 * new:        [0x1080, 0x1180)  -- written later, owns the overlap
	 * newer: [0x0f80, 0x1010)       -- written last, owns its part of both */
	struct perfmap *m = load_text("1000 100 old\n"
				      "1080 100 new\n"
				      "f80 90 newer\n");

	(void)state;
	expect_none(m, 0xf7f);
	expect_sym(m, 0xf80, "newer", 0xf80);
	expect_sym(m, 0x100f, "newer", 0xf80);
	expect_sym(m, 0x1010, "old", 0x1000);
	expect_sym(m, 0x107f, "old", 0x1000);
	expect_sym(m, 0x1080, "new", 0x1080);
	expect_sym(m, 0x10ff, "new", 0x1080);
	expect_sym(m, 0x1100, "new", 0x1080);
	expect_sym(m, 0x117f, "new", 0x1080);
	expect_none(m, 0x1180);
	perfmap__free(m);
}

static void perfmap_later_entry_wins_full_overlap(void **state)
{
	/* inner inside an earlier outer: a hole in outer; outer over an earlier inner: all outer;
	 * the same range twice: the second name */
	struct perfmap *m = load_text("1000 100 outer\n"
				      "1040 10 inner\n"
				      "2040 10 small_old\n"
				      "2000 100 big_new\n"
				      "3000 20 first_jit\n"
				      "3000 20 second_jit\n");

	(void)state;
	expect_sym(m, 0x103f, "outer", 0x1000);
	expect_sym(m, 0x1040, "inner", 0x1040);
	expect_sym(m, 0x104f, "inner", 0x1040);
	expect_sym(m, 0x1050, "outer", 0x1000);
	expect_sym(m, 0x10ff, "outer", 0x1000);
	expect_sym(m, 0x2000, "big_new", 0x2000);
	expect_sym(m, 0x2040, "big_new", 0x2000);
	expect_sym(m, 0x204f, "big_new", 0x2000);
	expect_sym(m, 0x20ff, "big_new", 0x2000);
	expect_sym(m, 0x3000, "second_jit", 0x3000);
	expect_sym(m, 0x301f, "second_jit", 0x3000);
	expect_none(m, 0x3020);
	perfmap__free(m);
}

static void perfmap_nested_overlaps_resolve_to_latest_covering_entry(void **state)
{
	/* entry i is [base + i, base + 2n - i): each later one nested in the one before, so at
	 * base + j (j < n) entry j is the latest that covers it, and entry n - 1 at the middle */
	enum { N = 2000 };
	const uint64_t base = 0x400000;
	char *text = NULL, name[32];
	size_t len = 0, j;
	struct perfmap *m;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	for (j = 0; j < N; j++)
		fprintf(f, "%" PRIx64 " %x nest_%zu\n", base + j, (unsigned int)(2 * (N - j)), j);
	fclose(f);
	m = load_bytes(text, len);
	assert_non_null(m);
	assert_int_equal(perfmap__count(m), N);
	for (j = 0; j < N; j++) {
		snprintf(name, sizeof(name), "nest_%zu", j);
		expect_sym(m, base + j, name, base + j);
		expect_sym(m, base + 2 * N - 1 - j, name, base + j);
	}
	expect_none(m, base - 1);
	expect_none(m, base + 2 * N);
	perfmap__free(m);
	free(text);
}

static void perfmap_zero_size_symbol_covers_nothing(void **state)
{
	struct perfmap *m = load_text("1000 100 outer\n"
				      "1040 0 empty\n");

	(void)state;
	assert_int_equal(perfmap__count(m), 2);
	expect_sym(m, 0x1040, "outer", 0x1000);
	perfmap__free(m);
}

static void perfmap_skips_and_counts_blank_and_malformed_lines(void **state)
{
	static const char text[] = "1000 10 good_one\n"
				   "\n"
				   "   \t \n"
				   "zzzz 10 not_hex\n"
				   "2000 10\n"
				   "2000 10    \n"
				   "2000\n"
				   "0x 10 empty_number\n"
				   "-2000 10 negative\n"
				   "2000 -10 negative_size\n"
				   "2000x 10 junk_after_number\n"
				   "2000 10x junk_after_size\n"
				   "10000000000000000 10 seventeen_digits\n"
				   "ffffffffffffff00 101 wraps_around\n"
				   "3000 10 nul\0byte\n"
				   "4000 10 good_two\n";
	struct perfmap *m = load_bytes(text, sizeof(text) - 1);

	(void)state;
	assert_non_null(m);
	assert_int_equal(perfmap__count(m), 2);
	assert_int_equal(perfmap__skipped(m), 14);
	expect_sym(m, 0x1000, "good_one", 0x1000);
	expect_none(m, 0x2000);
	expect_none(m, 0x3000);
	expect_none(m, 0xffffffffffffff00);
	expect_sym(m, 0x400f, "good_two", 0x4000);
	perfmap__free(m);
}

static void perfmap_empty_file_is_an_empty_map(void **state)
{
	struct perfmap *m = load_bytes("", 0);

	(void)state;
	assert_non_null(m);
	assert_int_equal(perfmap__count(m), 0);
	assert_int_equal(perfmap__skipped(m), 0);
	expect_none(m, 0);
	expect_none(m, 0x1000);
	expect_none(m, UINT64_MAX);
	perfmap__free(m);
}

static void perfmap_missing_file_fails_with_enoent(void **state)
{
	(void)state;
	errno = 0;
	assert_null(perfmap__load("/nonexistent/perch/perf-1.map"));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(perfmap__load(NULL));
	assert_int_equal(errno, EINVAL);
}

/*
 * 100k symbols of 0x30 bytes every 0x40, written in a scrambled order, then every tenth one
 * re-JITted under a new name at the end of the file. Each symbol's first and last byte resolve
 * to it, and the gap after it to nothing.
 */
static void perfmap_loads_and_finds_100k_entries(void **state)
{
	enum { N = 100000, STRIDE = 0x40, SIZE = 0x30 };
	const uint64_t base = 0x7f1234560000;
	char *text = NULL, name[32];
	size_t len = 0, i;
	struct perfmap *m;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	for (i = 0; i < N; i++) {
		size_t k = (i * 7919) % N; /* 7919 is prime, coprime to N: a permutation */

		fprintf(f, "%" PRIx64 " %x jit_fn_%zu\n", base + k * STRIDE, SIZE, k);
	}
	for (i = 0; i < N; i += 10)
		fprintf(f, "0x%" PRIx64 " 0x%x rejit %zu\n", base + i * STRIDE, SIZE, i);
	fclose(f);
	m = load_bytes(text, len);
	assert_non_null(m);
	assert_int_equal(perfmap__count(m), N + N / 10);
	assert_int_equal(perfmap__skipped(m), 0);
	expect_none(m, base - 1);
	for (i = 0; i < N; i++) {
		uint64_t start = base + i * STRIDE;

		snprintf(name, sizeof(name), i % 10 ? "jit_fn_%zu" : "rejit %zu", i);
		expect_sym(m, start, name, start);
		expect_sym(m, start + SIZE - 1, name, start);
		expect_none(m, start + SIZE);
	}
	perfmap__free(m);
	free(text);
}

/* ---- reading a process's map inside its root ---- */

/* A fake process root: ROOT/tmp, and a map outside it that only a symlink could lead to. */
struct fake_root {
	char root[64];
	char outside[64];
	int fd;
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void make_root(struct fake_root *r, bool tmp_is_symlink)
{
	char path[128];

	strcpy(r->root, "/tmp/perch-test-root-XXXXXX");
	strcpy(r->outside, "/tmp/perch-test-outside-XXXXXX");
	assert_non_null(mkdtemp(r->root));
	assert_non_null(mkdtemp(r->outside));
	snprintf(path, sizeof(path), "%s/perf-42.map", r->outside);
	write_file(path, "1000 10 secret_of_the_host\n");
	snprintf(path, sizeof(path), "%s/tmp", r->root);
	if (tmp_is_symlink)
		assert_int_equal(symlink(r->outside, path), 0);
	else
		assert_int_equal(mkdir(path, 0755), 0);
	r->fd = open(r->root, O_PATH | O_DIRECTORY);
	assert_true(r->fd >= 0);
}

static void remove_root(struct fake_root *r)
{
	char cmd[256];

	close(r->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", r->root, r->outside);
	assert_int_equal(system(cmd), 0);
}

static void expect_refused(int root_fd, const char *path, uid_t owner, int err)
{
	struct perfmap *m;

	errno = 0;
	m = perfmap__load_at(root_fd, path, owner);
	if (m)
		fail_msg("%s: loaded (%s at 0x1000), expected errno %d", path,
			 perfmap__find(m, 0x1000, NULL) ?: "nothing", err);
	assert_int_equal(errno, err);
}

/* A process that symlinks its map (or its /tmp) to a file of the host's must not get perch to
 * copy that file into the recording. */
static void perfmap_refuses_symlinked_map_and_symlinked_tmp(void **state)
{
	struct fake_root r, s;
	char path[128], target[128];
	struct perfmap *m;

	(void)state;
	make_root(&r, false);
	snprintf(path, sizeof(path), "%s/perf-42.map", r.outside);
	snprintf(target, sizeof(target), "%s/tmp/perf-42.map", r.root);
	assert_int_equal(symlink(path, target), 0);
	strcpy(path, target);
	expect_refused(r.fd, "tmp/perf-42.map", getuid(), ELOOP);
	expect_refused(r.fd, "/tmp/perf-42.map", getuid(), ELOOP);
	expect_refused(AT_FDCWD, path, PERFMAP_ANY_OWNER, ELOOP);
	/* The same file, not a symlink: read, and "/" means the process's root. */
	snprintf(path, sizeof(path), "%s/tmp/perf-43.map", r.root);
	write_file(path, "1000 10 jitted\n");
	m = perfmap__load_at(r.fd, "/tmp/perf-43.map", getuid());
	assert_non_null(m);
	expect_sym(m, 0x1000, "jitted", 0x1000);
	perfmap__free(m);
	make_root(&s, true);
	errno = 0;
	assert_null(perfmap__load_at(s.fd, "tmp/perf-42.map", getuid()));
	assert_true(errno == ELOOP || errno == ENOTDIR);
	remove_root(&s);
	remove_root(&r);
}

/* The map must be the process's own (or root's): a JIT writes it as the user it runs as. */
static void perfmap_refuses_map_owned_by_another_uid(void **state)
{
	struct fake_root r;
	char path[128];
	struct perfmap *m;

	(void)state;
	if (geteuid() != 0)
		skip(); /* chown needs root */
	make_root(&r, false);
	snprintf(path, sizeof(path), "%s/tmp/perf-42.map", r.root);
	write_file(path, "1000 10 someone_elses\n");
	assert_int_equal(chown(path, FOREIGN_UID, FOREIGN_UID), 0);
	expect_refused(r.fd, "tmp/perf-42.map", 1000, EPERM);
	m = perfmap__load_at(r.fd, "tmp/perf-42.map", FOREIGN_UID);
	assert_non_null(m);
	expect_sym(m, 0x1000, "someone_elses", 0x1000);
	perfmap__free(m);
	/* root's files are every process's to name */
	assert_int_equal(chown(path, 0, 0), 0);
	m = perfmap__load_at(r.fd, "tmp/perf-42.map", 1000);
	assert_non_null(m);
	perfmap__free(m);
	remove_root(&r);
}

/* A FIFO would block open() until someone writes to it: refused at once. */
static void perfmap_refuses_fifo_without_blocking(void **state)
{
	struct fake_root r;
	char path[128];

	(void)state;
	make_root(&r, false);
	snprintf(path, sizeof(path), "%s/tmp/perf-42.map", r.root);
	assert_int_equal(mkfifo(path, 0644), 0);
	deadline_start(5);
	expect_refused(r.fd, "tmp/perf-42.map", getuid(), EINVAL);
	expect_refused(AT_FDCWD, path, PERFMAP_ANY_OWNER, EINVAL);
	deadline_stop();
	remove_root(&r);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* A sparse 384 MiB map: the first PERFMAP_MAX_BYTES are read, the rest counted, the memory
 * perch takes stays near the cap (the whole file would have cost 384 MiB). */
static void perfmap_caps_oversized_sparse_map(void **state)
{
	const off_t size = 384ll << 20;
	static const char tail[] = "\n2000 10 past_the_cap\n";
	char path[] = "/tmp/perch-test-perfmap-XXXXXX";
	struct perfmap *m;
	long before, grown;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1000 10 first\n", 14), 14);
	assert_int_equal(ftruncate(fd, size), 0);
	assert_int_equal(pwrite(fd, tail, sizeof(tail) - 1, size - (off_t)sizeof(tail) + 1),
			 (ssize_t)sizeof(tail) - 1);
	close(fd);
	before = max_rss_kib();
	m = perfmap__load(path);
	unlink(path);
	assert_non_null(m);
	grown = max_rss_kib() - before;
	if (grown >= 128 * 1024)
		fail_msg("peak memory grew by %ld KiB reading a %lld KiB map", grown,
			 (long long)size >> 10);
	expect_sym(m, 0x1000, "first", 0x1000);
	expect_none(m, 0x2000);
	assert_int_equal(perfmap__unread(m), (uint64_t)size - PERFMAP_MAX_BYTES);
	perfmap__free(m);
}

/* A map of text through a file that is gone on return, loaded within budget b. */
static struct perfmap *load_within(const char *text, struct perfmap_budget *b)
{
	char path[] = "/tmp/perch-test-perfmap-XXXXXX";
	struct perfmap *m;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	m = perfmap__load_within(AT_FDCWD, path, PERFMAP_ANY_OWNER, b);
	unlink(path);
	assert_non_null(m);
	return m;
}

/* Maps loaded through one budget hold at most its total together (their text and
 * PERFMAP_SYMBOL_COST a symbol): the one that comes when the others hold it is read short (at a
 * line), counted; released maps give their bytes back. */
static void perfmap_budget_caps_what_all_maps_hold(void **state)
{
	static const char a[] = "1000 10 a_one\n2000 10 a_two\n3000 10 a_three\n"; /* 44 bytes */
	static const char b_text[] = "5000 10 b_one\n6000 10 b_two\n7000 10 b_three\n";
	struct perfmap_budget b;
	struct perfmap *ma, *mb;

	(void)state;
	perfmap_budget__init(&b, 44 + 3 * PERFMAP_SYMBOL_COST + 200);
	ma = load_within(a, &b);
	assert_int_equal(perfmap__cost(ma), 44 + 3 * PERFMAP_SYMBOL_COST);
	assert_false(perfmap__over_budget(ma));
	mb = load_within(b_text, &b); /* 200 left: its first line and symbol are 14 + 128 */
	assert_int_equal(perfmap__count(mb), 1);
	expect_sym(mb, 0x5000, "b_one", 0x5000);
	expect_none(mb, 0x6000);
	assert_true(perfmap__over_budget(mb));
	assert_true(perfmap__unread(mb) > 0);
	assert_int_equal(b.cut, 1);
	assert_true(b.held <= b.total);
	perfmap__release(&b, ma);
	perfmap__release(&b, mb);
	assert_int_equal(b.held, 0);
	mb = load_within(b_text, &b); /* the budget is back */
	assert_int_equal(perfmap__count(mb), 3);
	assert_false(perfmap__over_budget(mb));
	perfmap__release(&b, mb);
	perfmap__release(&b, NULL);
}

/* What a budget lets be read: its total at first, then PERFMAP_READ_PER_PERIOD a period. */
static void perfmap_budget_limits_reading_rate(void **state)
{
	struct perfmap_budget b;

	(void)state;
	perfmap_budget__init(&b, PERFMAP_TOTAL_BYTES);
	assert_true(perfmap_budget__may_read(&b, PERFMAP_MAX_BYTES));
	assert_true(perfmap_budget__may_read(&b, 1ull << 40)); /* what is read is capped */
	b.tokens -= PERFMAP_TOTAL_BYTES;		       /* all of it read */
	assert_false(perfmap_budget__may_read(&b, 1));
	perfmap_budget__refill(&b);
	assert_true(perfmap_budget__may_read(&b, PERFMAP_READ_PER_PERIOD));
	assert_false(perfmap_budget__may_read(&b, PERFMAP_READ_PER_PERIOD + 1));
	for (int i = 0; i < 1000; i++)
		perfmap_budget__refill(&b);
	assert_int_equal(b.tokens, PERFMAP_TOTAL_BYTES); /* refilled up to the total only */
}

/* A map of many short symbols (what costs most to index per byte) within a budget: read as far
 * as the budget holds, counted; under the default budget, read whole. What was read comes off
 * the budget's reading rate. */
static void perfmap_budget_bounds_many_small_symbols(void **state)
{
	enum { N = 20000 };
	char *text = malloc(N * 16 + 1);
	struct perfmap_budget b;
	struct perfmap *m;
	size_t len = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < N; i++)
		len += (size_t)sprintf(text + len, "%x 10 s%d\n", 0x10000 + 16 * i, i % 10);
	perfmap_budget__init(&b, 100000);
	m = load_within(text, &b);
	assert_true(perfmap__count(m) > 100000 / (16 + PERFMAP_SYMBOL_COST) &&
		    perfmap__count(m) <= 100000 / PERFMAP_SYMBOL_COST);
	assert_true(b.held <= 100000);
	assert_true(perfmap__over_budget(m));
	expect_sym(m, 0x10000, "s0", 0x10000);
	expect_none(m, 0x10000 + 16 * (N - 1));
	perfmap__release(&b, m);
	perfmap_budget__init(&b, PERFMAP_TOTAL_BYTES);
	m = load_within(text, &b);
	assert_int_equal(perfmap__count(m), N);
	assert_false(perfmap__over_budget(m));
	assert_int_equal(b.tokens, (int64_t)PERFMAP_TOTAL_BYTES - (int64_t)len);
	perfmap__release(&b, m);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(perfmap_free_and_queries_accept_null),
		cmocka_unit_test(perfmap_finds_start_middle_and_last_byte_but_not_one_past_end),
		cmocka_unit_test(perfmap_reads_hex_with_and_without_0x_prefix),
		cmocka_unit_test(perfmap_keeps_names_with_spaces_and_cxx_characters),
		cmocka_unit_test(perfmap_later_entry_wins_partial_overlap),
		cmocka_unit_test(perfmap_later_entry_wins_full_overlap),
		cmocka_unit_test(perfmap_nested_overlaps_resolve_to_latest_covering_entry),
		cmocka_unit_test(perfmap_zero_size_symbol_covers_nothing),
		cmocka_unit_test(perfmap_skips_and_counts_blank_and_malformed_lines),
		cmocka_unit_test(perfmap_empty_file_is_an_empty_map),
		cmocka_unit_test(perfmap_missing_file_fails_with_enoent),
		cmocka_unit_test(perfmap_loads_and_finds_100k_entries),
		cmocka_unit_test(perfmap_refuses_symlinked_map_and_symlinked_tmp),
		cmocka_unit_test(perfmap_refuses_map_owned_by_another_uid),
		cmocka_unit_test(perfmap_refuses_fifo_without_blocking),
		cmocka_unit_test(perfmap_caps_oversized_sparse_map),
		cmocka_unit_test(perfmap_budget_caps_what_all_maps_hold),
		cmocka_unit_test(perfmap_budget_limits_reading_rate),
		cmocka_unit_test(perfmap_budget_bounds_many_small_symbols),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
