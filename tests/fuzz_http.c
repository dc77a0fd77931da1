// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for perch push's reply parser (lib/http_reply.c, http_reply_parse()): any bytes
 * a server sends. Nothing may crash or read past the bytes that arrived; a reply taken is a
 * final status (200-999) with a printable message; with no more bytes to come the answer is
 * decided (never "more"); and bytes arriving later never change what an earlier part decided
 * (complete stays the same reply, not HTTP stays not HTTP).
 *
 *   make fuzz && build-fuzz/fuzz_http -max_total_time=60 CORPUS_DIR
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lib/http.h"

static void check_reply(const struct http_reply *r)
{
	size_t n = strnlen(r->text, sizeof(r->text));

	fuzz_check(r->status >= 200 && r->status <= 999 && n < sizeof(r->text));
	for (size_t i = 0; i < n; i++)
		fuzz_check(r->text[i] >= 0x20 && r->text[i] < 0x7f);
}

/* The first cut bytes alone, in a buffer of their own (so a read past them is caught). */
static void check_prefix(const uint8_t *data, size_t cut, int whole, const struct http_reply *w)
{
	struct http_reply part = {0};
	char *buf = malloc(cut ? cut : 1);
	int ret;

	if (!buf)
		return;
	memcpy(buf, data, cut);
	ret = http_reply_parse(buf, cut, false, &part);
	free(buf);
	fuzz_check(ret == 1 || ret == 0 || ret == -EPROTO);
	if (ret == 1)
		fuzz_check(whole == 1 && part.status == w->status && !strcmp(part.text, w->text));
	if (ret == -EPROTO)
		fuzz_check(whole == -EPROTO);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct http_reply whole = {0}, ended = {0};
	int w = http_reply_parse(buf, size, false, &whole);
	int e = http_reply_parse(buf, size, true, &ended);

	fuzz_check(w == 1 || w == 0 || w == -EPROTO);
	fuzz_check(e == 1 || e == -EPROTO);
	if (w == 1)
		check_reply(&whole);
	if (e == 1)
		check_reply(&ended);
	if (w != 0) /* decided before the end: the end decides the same */
		fuzz_check(e == w && (w != 1 || ended.status == whole.status));
	if (size) /* a cut the input chooses, and one at its middle */
		check_prefix(data, data[size - 1] % (size + 1), w, &whole);
	check_prefix(data, size / 2, w, &whole);
	return 0;
}
