// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * report/html.c: what the browser test (tests/html.sh) cannot see from outside: no name ends the
 * data's <script> element, the viewer is built in whole, and the stacks go out as a prefix tree
 * sized by distinct stacks (a sample count never repeats a stack).
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
#include "format/recording.h"
#include "model/diff.h"
#include "report/report.h"

static char path[64];

/* main -> solve -> refine -> solve (40, then 7 more in a later drain), main -> solve (20),
 * main -> "</script><b>x" (5): a function name that would end the element if written raw. */
static void write_fixture(void)
{
	struct rec_writer *w;
	int fd;
	uint32_t mod, fmain, fsolve, frefine, fevil;

	strcpy(path,
	       "/tmp/perch-test-html.XXXXXX"); /* mkstemp fills it in: a fresh one each time */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	mod = rec_writer__string(w, "/usr/bin/app");
	fmain = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "main"), 0x100);
	fsolve = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "solve"), 0x200);
	frefine = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "refine"), 0x300);
	fevil = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, "</script><b>x"),
				  0x400);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, rec_writer__string(w, "app")), 0);
	{
		uint32_t s1[] = {fmain, fsolve, frefine, fsolve}, s2[] = {fmain, fsolve};
		uint32_t s3[] = {fmain, fevil};

		assert_int_equal(rec_writer__sample(w, 10, 10, 40, 0, s1, 4), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 20, 0, s2, 2), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 5, 0, s3, 2), 0);
		assert_int_equal(rec_writer__flush(w), 0);
		assert_int_equal(rec_writer__sample(w, 10, 10, 7, 0, s1, 4), 0);
	}
	assert_int_equal(rec_writer__close(w), 0);
}

static char *html_of(void)
{
	struct recording *r = NULL;
	struct report_opts o = {.format = REPORT_HTML, .top = 20};
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	write_fixture();
	assert_int_equal(recording__load(path, &r), 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__print(r, path, &o, f), 0);
	assert_int_equal(fclose(f), 0);
	recording__free(r);
	unlink(path);
	return buf;
}

/* The text of the data element: from its opening tag to the first "</script>" after it. */
static char *data_of(const char *html)
{
	const char *open = strstr(html, "id=\"perch-data\">"), *end;

	assert_non_null(open);
	open += strlen("id=\"perch-data\">");
	end = strstr(open, "</script>");
	assert_non_null(end);
	return strndup(open, (size_t)(end - open));
}

static void html_name_cannot_end_the_data_element(void **state)
{
	char *html = html_of(), *data = data_of(html);

	(void)state;
	/* the element holds the whole object: it ends where the JSON does */
	assert_non_null(strstr(data, "\"\\u003c/script>\\u003cb>x\""));
	assert_null(strchr(data, '<'));
	assert_string_equal(data + strlen(data) - 2, "}\n");
	free(data);
	free(html);
}

static void html_builds_the_viewer_in_whole(void **state)
{
	char *html = html_of();

	(void)state;
	assert_null(strstr(html, "/*PERCH_")); /* every marker of the shell was filled */
	assert_non_null(strstr(html, "'use strict';"));
	assert_non_null(strstr(html, "init();"));
	assert_non_null(strstr(html, "<style>/* perch report --format=html"));
	assert_string_equal(html + strlen(html) - strlen("</html>\n"), "</html>\n");
	free(html);
}

/* Prefix tree: main, main>solve, main>solve>refine, main>solve>refine>solve, main>evil: five
 * nodes (parent, function each), three sample records (the later drain's count merged). */
static void html_stacks_are_a_prefix_tree_of_distinct_stacks(void **state)
{
	char *html = html_of(), *data = data_of(html);
	const char *nodes = strstr(data, "\"nodes\":["), *samples = strstr(data, "\"samples\":[");
	size_t commas = 0;

	(void)state;
	assert_non_null(nodes);
	assert_non_null(samples);
	for (const char *c = nodes; *c != ']'; c++)
		commas += *c == ',';
	assert_int_equal(commas, 2 * 5 - 1);
	commas = 0;
	for (const char *c = samples; *c != ']'; c++)
		commas += *c == ',';
	assert_int_equal(commas, 3 * 3 - 1);
	assert_non_null(strstr(data, "\"all\":72"));
	assert_non_null(strstr(samples, ",47")); /* 40 + 7 */
	free(data);
	free(html);
}

/* perch diff --format=html: the same element, the diff's rows; a recording against itself has
 * every change 0. */
static void html_diff_page_holds_both_sides_escaped(void **state)
{
	struct recording *r = NULL;
	const char *const paths[2] = {"base<x>.data", "new.data"};
	struct diff *d;
	char *buf = NULL, *data;
	size_t len = 0;
	FILE *f;

	(void)state;
	write_fixture();
	assert_int_equal(recording__load(path, &r), 0);
	d = diff__build(r, r, NULL);
	assert_non_null(d);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(report__html_diff(d, paths, f), 0);
	assert_int_equal(fclose(f), 0);
	data = data_of(buf);
	assert_null(strchr(data, '<'));
	assert_non_null(strstr(data, "\"files\":[\"base\\u003cx>.data\",\"new.data\"]"));
	assert_non_null(strstr(data, "\"samples\":[72,72]"));
	assert_non_null(strstr(data, "\"\\u003c/script>\\u003cb>x\""));
	assert_null(strstr(data, ",1]")); /* no row is significant */
	free(data);
	free(buf);
	diff__free(d);
	recording__free(r);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(html_name_cannot_end_the_data_element),
		cmocka_unit_test(html_builds_the_viewer_in_whole),
		cmocka_unit_test(html_stacks_are_a_prefix_tree_of_distinct_stacks),
		cmocka_unit_test(html_diff_page_holds_both_sides_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
