// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The escaping rules of lib/escape.c, one per kind of output, and every output of perch report on
 * a recording whose names are hostile (terminal escapes, XML and JSON specials, bytes that are no
 * UTF-8, a spreadsheet formula): text outputs without a raw ESC, pprof strings that are UTF-8,
 * CSV without formulas, the model's SVG well-formed (xmllint where it is installed), and log
 * lines on one line without ESC. tests/integration/hostile-names.sh reads the same kind of
 * recording with strict decoders (python3's json and csv, a protobuf reader).
 */
#include <locale.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <zlib.h>
#include <cmocka.h>

#include "format/recording.h"
#include "lib/escape.h"
#include "lib/log.h"
#include "model/sizedata.h"
#include "profile.pb-c.h"
#include "report/model.h"
#include "report/report.h"

/* Terminal escapes (a window title, a screen clear), XML specials, a cut-short sequence, an
 * overlong '/', a surrogate, a C1 CSI and U+FFFE. */
#define FFFD	      "\xef\xbf\xbd"
#define REPEAT_FFFD_7 FFFD FFFD FFFD FFFD FFFD FFFD FFFD
#define EVIL	      "\x1b]0;pwn\x07\x1b[2J<b>&\"'\xe2\x82\xc0\xaf\xed\xa0\x80\xc2\x9b\xef\xbf\xbe"

static char *memout(void (*put)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	put(f, s);
	fclose(f);
	return buf;
}

/* Whether the n bytes at s are UTF-8 as the C library's decoder reads it (not lib/escape.c's). */
static bool utf8_ok(const char *s, size_t n)
{
	mbstate_t st = {0};

	for (size_t i = 0, k; i < n; i += k ? k : 1) {
		k = mbrtowc(NULL, s + i, n - i, &st);
		if (k == (size_t)-1 || k == (size_t)-2)
			return false;
	}
	return true;
}

static void escape_term_writes_controls_and_non_utf8_as_hex(void **state)
{
	char *out = memout(esc_term, "a\x1b[31m\n\t\x7f\xc2\x9b\xff\xe2\x82|\xc3\xa9\\");
	char buf[8];

	(void)state;
	assert_string_equal(out, "a\\x1b[31m\\n\\t\\x7f\\xc2\\x9b\\xff\\xe2\\x82|\xc3\xa9\\");
	assert_string_equal(esc_term_buf(buf, sizeof(buf), "\x1b[2J"), "\\x1b[2J");
	free(out);
}

/* A stream cut anywhere, even inside a UTF-8 sequence, escapes what one write would. */
static void escape_term_stream_joins_sequences_cut_between_writes(void **state)
{
	const char in[] = "x\xc3\xa9\n\xe2\x82\xac\t\x1b[0m\xe2\x82"
			  "A\xf0\x9f\x98\x80\xc2\x9b\xff";
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len), *t;

	(void)state;
	assert_non_null(m);
	t = esc_term_stream(m);
	assert_non_null(t);
	setvbuf(t, NULL, _IONBF, 0);
	for (size_t i = 0; i < sizeof(in) - 1; i++)
		fputc(in[i], t); /* one write per byte */
	assert_int_equal(fclose(t), 0);
	fclose(m);
	assert_string_equal(buf, "x\xc3\xa9\n\xe2\x82\xac\t\\x1b[0m\\xe2\\x82"
				 "A\xf0\x9f\x98\x80\\xc2\\x9b\\xff");
	free(buf);
}

static void escape_json_xml_csv_and_protobuf_rules(void **state)
{
	char *json = memout(esc_json, EVIL), *xml = memout(esc_xml, EVIL),
	     *dup = esc_utf8_dup(EVIL);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_string_equal(json,
			    "\\u001b]0;pwn\\u0007\\u001b[2J<b>&\\\"'\\ufffd\\ufffd\\ufffd\\ufffd"
			    "\\ufffd\\ufffd\\ufffd\xc2\x9b\xef\xbf\xbe");
	assert_string_equal(xml, "\xef\xbf\xbd]0;pwn\xef\xbf\xbd\xef\xbf\xbd[2J&lt;b&gt;&amp;&quot;"
				 "&apos;" REPEAT_FFFD_7 "\xc2\x9b\xef\xbf\xbd");
	assert_true(esc_utf8_valid(dup) && !esc_utf8_valid(EVIL));
	assert_non_null(strstr(dup, "\x1b[2J<b>")); /* protobuf: only UTF-8 is asked for */
	assert_non_null(f);
	esc_csv(f, "=HYPERLINK(\"x\")", false);
	fputc('|', f);
	esc_csv(f, "-2+3", false);
	fputc('|', f);
	esc_csv(f, "@sum", false);
	fputc('|', f);
	esc_csv(f, "a,b", false);
	fputc('|', f);
	esc_csv(f, "plain", false);
	fputc('|', f);
	esc_csv(f, "plain", true);
	fputc('|', f);
	esc_csv(f, "a\x1b\xff", false);
	fclose(f);
	assert_string_equal(buf, "\"'=HYPERLINK(\"\"x\"\")\"|\"'-2+3\"|\"'@sum\"|\"a,b\"|plain|"
				 "\"plain\"|a\xef\xbf\xbd\xef\xbf\xbd");
	free(buf);
	free(json);
	free(xml);
	free(dup);
}

/* A log line naming what the target controls stays one line, without ESC. */
static void log_lines_escape_what_they_quote(void **state)
{
	char name[] = "/tmp/perch-test-escape.XXXXXX", got[256] = "";
	int fd = mkstemp(name), saved = dup(2);
	FILE *f;

	(void)state;
	assert_true(fd >= 0 && saved >= 0);
	fflush(stderr);
	dup2(fd, 2);
	log_err("push: %s answered %d %s", "http://h", 500,
		"\x1b[2J\x1b]0;x\x07"
		"bad\nline");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	assert_non_null(f);
	rewind(f);
	assert_non_null(fgets(got, sizeof(got), f));
	fclose(f);
	unlink(name);
	assert_string_equal(
		got, "perch: push: http://h answered 500 \\x1b[2J\\x1b]0;x\\x07bad\\nline\n");
}

static char path[] = "/tmp/perch-test-escape.XXXXXX";

/* Process 10 named EVIL "app", in EVIL "/app", function EVIL "work", region "=" EVIL "solve"
 * (a formula in a spreadsheet), recorded on event EVIL "ev" by command EVIL "cmd". */
static struct recording *hostile_recording(void)
{
	struct rec_kv meta[] = {{.key = "command", .str = EVIL "cmd"},
				{.key = "pids", .str = "10"},
				{.key = "event", .str = EVIL "ev"},
				{.key = "frequency", .str = "997"}};
	struct rec_region_node nodes[2] = {{0}, {.name = 0, .calls = 3, .total_ns = 3000}};
	struct rec_region_thread rt = {10, 10, 0, 2, nodes};
	struct recording *r = NULL;
	struct rec_writer *w;
	uint32_t mod, frames[2];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	assert_int_equal(rec_writer__meta(w, meta, 4), 0);
	mod = rec_writer__string(w, EVIL "/app");
	nodes[1].name = rec_writer__string(w, "=" EVIL "solve");
	frames[0] = rec_writer__frame(w, REC_FRAME_REGION, 0, nodes[1].name, 0);
	frames[1] = rec_writer__frame(w, REC_FRAME_USER, mod, rec_writer__string(w, EVIL "work"),
				      0x100);
	assert_int_equal(rec_writer__thread(w, 10, 10, 1, rec_writer__string(w, EVIL "app")), 0);
	assert_int_equal(rec_writer__sample(w, 10, 10, 7, 0, frames, 2), 0);
	assert_int_equal(rec_writer__regions(w, &rt, 1), 0);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	strcpy(path, "/tmp/perch-test-escape.XXXXXX");
	return r;
}

static char *render(const struct recording *r, enum report_format format, size_t *len)
{
	struct report_opts o = {.format = format, .top = 10};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(report__print(r, "hostile.data", &o, f), 0);
	fclose(f);
	return buf;
}

/* What a terminal shows: no ESC, no BEL, no C1 control, nothing that is no UTF-8. */
static void assert_terminal_safe(const char *out, size_t len)
{
	assert_null(memchr(out, 0x1b, len));
	assert_null(memchr(out, 0x07, len));
	assert_null(memmem(out, len, "\xc2\x9b", 2));
	assert_true(utf8_ok(out, len));
}

/* text, folded, stats and the summary perch record prints. */
static void report_text_outputs_never_send_escapes(void **state)
{
	struct recording *r = hostile_recording();
	enum report_format f[] = {REPORT_TEXT, REPORT_FOLDED, REPORT_STATS};

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++) {
		size_t len;
		char *out = render(r, f[i], &len);

		assert_terminal_safe(out, len);
		if (f[i] != REPORT_STATS)
			assert_non_null(
				strstr(out, "pwn\\x07\\x1b[2J<b>")); /* folded: ';' as ':' */
		free(out);
	}
	{ /* perch record's summary */
		char *out = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&out, &len);

		assert_non_null(m);
		report__summary(r, "hostile.data", m);
		fclose(m);
		assert_terminal_safe(out, len);
		assert_non_null(strstr(out, "pwn\\x07\\x1b[2J<b>"));
		free(out);
	}
	recording__free(r);
}

/* pprof: every string of the table is UTF-8 (a strict protobuf decoder refuses the profile
 * otherwise), the names still there with U+FFFD for what was not. */
static void report_pprof_strings_are_utf8(void **state)
{
	struct recording *r = hostile_recording();
	static unsigned char plain[1 << 16];
	z_stream z = {0};
	size_t len;
	char *out = render(r, REPORT_PPROF, &len);
	Perftools__Profiles__Profile *pb;
	bool work = false;

	(void)state;
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (unsigned char *)out;
	z.avail_in = (uInt)len;
	z.next_out = plain;
	z.avail_out = sizeof(plain);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	pb = perftools__profiles__profile__unpack(NULL, z.total_out, plain);
	assert_non_null(pb);
	for (size_t i = 0; i < pb->n_string_table; i++) {
		assert_true(utf8_ok(pb->string_table[i], strlen(pb->string_table[i])));
		work |= strstr(pb->string_table[i], "[2J<b>&\"'" FFFD) &&
			strstr(pb->string_table[i], "work");
	}
	assert_true(work);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	inflateEnd(&z);
	free(out);
	recording__free(r);
}

/* JSON outputs: UTF-8, no raw control byte; the region a formula only where it is quoted in CSV;
 * the HTML page's names inside its JSON, never as markup. */
static void report_json_csv_and_html_escape_names(void **state)
{
	struct recording *r = hostile_recording();
	enum report_format f[] = {REPORT_SPEEDSCOPE, REPORT_CHROME, REPORT_HTML, REPORT_CSV};

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++) {
		size_t len;
		char *out = render(r, f[i], &len);

		assert_true(utf8_ok(out, len));
		assert_null(memchr(out, 0x1b, len));
		assert_null(memchr(out, 0x07, len));
		if (f[i] == REPORT_CSV)
			assert_non_null(strstr(out, "\n\"'=" FFFD "]0;pwn"));
		else if (f[i] == REPORT_HTML)
			assert_null(strstr(out, "<b>"));
		else
			assert_non_null(strstr(out, "\\u001b]0;pwn\\u0007\\u001b[2J<b>&\\\""));
		free(out);
	}
	recording__free(r);
}

/* The cost-model SVG of a region named EVIL: XML specials as entities, what is no XML character
 * as U+FFFD; well-formed to xmllint where it is installed. */
static void model_svg_escapes_region_names(void **state)
{
	struct size_region g = {.name = "=" EVIL "solve", .seen = 64};
	struct cm_point pts[64];
	struct size_fit fit;
	char svg[] = "/tmp/perch-test-escape-svg.XXXXXX", cmd[128];
	int fd = mkstemp(svg);
	FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
	char *text;
	long len;

	(void)state;
	assert_non_null(f);
	for (size_t i = 0; i < 64; i++)
		pts[i] = (struct cm_point){.n = (double)(i + 1) * 100, .t = (double)(i + 1) * 5e3};
	g.points = pts;
	g.npoints = 64;
	assert_int_equal(size_fit__run(&fit, &g, NULL, 3), 0);
	model_report_svg(&fit, 1, f);
	fflush(f);
	len = ftell(f);
	text = calloc(1, (size_t)len + 1);
	assert_non_null(text);
	rewind(f);
	assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	assert_true(utf8_ok(text, (size_t)len));
	assert_null(strchr(text, 0x1b));
	assert_null(strstr(text, "<b>"));
	assert_non_null(strstr(text, "=" FFFD "]0;pwn" FFFD FFFD "[2J&lt;b&gt;&amp;&quot;&apos;"));
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>&1", svg);
	if (!access("/usr/bin/xmllint", X_OK))
		assert_int_equal(system(cmd), 0);
	unlink(svg);
	free(text);
	size_fit__free(&fit);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escape_term_writes_controls_and_non_utf8_as_hex),
		cmocka_unit_test(escape_term_stream_joins_sequences_cut_between_writes),
		cmocka_unit_test(escape_json_xml_csv_and_protobuf_rules),
		cmocka_unit_test(log_lines_escape_what_they_quote),
		cmocka_unit_test(report_text_outputs_never_send_escapes),
		cmocka_unit_test(report_pprof_strings_are_utf8),
		cmocka_unit_test(report_json_csv_and_html_escape_names),
		cmocka_unit_test(model_svg_escapes_region_names),
	};

	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		return 77;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
