// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lib/http_reply.c: the reply parser perch push reads a server's answer with. A hostile or
 * broken server decides every byte: interim answers, kept-open connections, chunks, garbage.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/http.h"

static int parse(const char *s, bool end, struct http_reply *r)
{
	memset(r, 0, sizeof(*r));
	return http_reply_parse(s, strlen(s), end, r);
}

static void reply_skips_100_continue_to_the_final_status(void **state)
{
	const char *s = "HTTP/1.1 100 Continue\r\n\r\n"
			"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops\n";
	struct http_reply r;

	(void)state;
	assert_int_equal(parse(s, false, &r), 1);
	assert_int_equal(r.status, 500);
	assert_string_equal(r.text, "Internal Server Error: oops");
	/* the interim answer alone is not an answer, even when nothing more comes */
	assert_int_equal(parse("HTTP/1.1 100 Continue\r\n\r\n", false, &r), 0);
	assert_int_equal(parse("HTTP/1.1 100 Continue\r\n\r\n", true, &r), -EPROTO);
	assert_int_equal(parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 P\r\n\r\n"
			       "HTTP/1.0 200 OK\r\n\r\n",
			       true, &r),
			 1);
	assert_int_equal(r.status, 200);
}

static void reply_is_complete_at_content_length_without_eof(void **state)
{
	const char *s = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}";
	struct http_reply r;
	char cut[128];

	(void)state;
	assert_int_equal(parse(s, false, &r), 1); /* the connection stays open: no EOF needed */
	assert_int_equal(r.status, 200);
	assert_string_equal(r.text, "OK: {}");
	/* each shorter prefix needs more, and is not HTTP only if the server stops there */
	for (size_t n = 0; n < strlen(s); n++) {
		memcpy(cut, s, n);
		assert_int_equal(http_reply_parse(cut, n, false, &r), 0);
	}
	assert_int_equal(parse("HTTP/1.1 204 No Content\r\n\r\n", false, &r), 1);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false, &r), 1);
	/* no length: the body ends with the connection */
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n\r\nhello", false, &r), 0);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\n\r\nhello", true, &r), 1);
	assert_string_equal(r.text, "OK: hello");
}

static void reply_reads_chunks_to_the_last(void **state)
{
	const char *s = "HTTP/1.1 503 Unavailable\r\nTransfer-Encoding: gzip, chunked\r\n"
			"Content-Length: 999\r\n\r\n"
			"8;ext=1\r\ningester\r\n9\r\n down\nxx\r\n0\r\nX-Trailer: 1\r\n\r\n";
	struct http_reply r;

	(void)state;
	assert_int_equal(parse(s, false, &r), 1);
	assert_int_equal(r.status, 503);
	assert_string_equal(r.text, "Unavailable: ingester");
	/* before the trailers' end: more needed; at the end, the status stands */
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "4\r\nabcd\r\n0\r\n",
			       false, &r),
			 0);
	assert_int_equal(
		parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab", true, &r), 1);
	assert_string_equal(r.text, "OK: ab");
	/* the line end after a chunk's data: waited for, or refused (cut right after the data) */
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "1\r\na\r",
			       false, &r),
			 0);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "1\r\nab",
			       false, &r),
			 -EPROTO);
	assert_int_equal(
		parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, &r),
		-EPROTO);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "2\r\nabXY0\r\n\r\n",
			       false, &r),
			 -EPROTO);
	assert_int_equal(parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
			       "fffffffffffffffff\r\n",
			       false, &r),
			 -EPROTO);
}

static void reply_refuses_garbage_and_escapes_the_message(void **state)
{
	static const char *const bad[] = {
		"SSH-2.0-OpenSSH_9.2\r\n",
		"<html>",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 099 Low\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: no name\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
	};
	const char esc[] = "HTTP/1.1 500 \x1b[2J\x07\r\nContent-Length: 6\r\n\r\n\x1b]0;x\r\n";
	struct http_reply r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(parse(bad[i], false, &r), -EPROTO);
	assert_int_equal(parse("", true, &r), -EPROTO); /* closed without a word */
	assert_int_equal(http_reply_parse("HTTP/1.1 200 OK\r\n\0\r\n\r\n", 22, true, &r), -EPROTO);
	assert_int_equal(parse(esc, false, &r), 1);
	assert_int_equal(r.status, 500);
	assert_string_equal(r.text, "\\x1b[2J\\x07: \\x1b]0;x"); /* the terminal rule: \\xNN */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reply_skips_100_continue_to_the_final_status),
		cmocka_unit_test(reply_is_complete_at_content_length_without_eof),
		cmocka_unit_test(reply_reads_chunks_to_the_last),
		cmocka_unit_test(reply_refuses_garbage_and_escapes_the_message),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
