// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for the --control FIFO's lines (record/control_lines.c): any bytes a writer of
 * the FIFO sends, in any pieces. Nothing may crash; each newline ends one line, whose text is
 * printable ASCII of at most 63 bytes and whose command is what the text parses to (a known
 * word exactly, or unknown); and the pieces the bytes arrive in change nothing.
 *
 *   make fuzz && build-fuzz/fuzz_control -max_total_time=60 CORPUS_DIR
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "record/control_lines.h"

/* What the lines were: how many, and a hash of their commands and texts in order. */
struct seen {
	size_t n;
	uint64_t hash;
};

static void on_line(void *ctx, enum control_cmd cmd, const char *text)
{
	struct seen *s = ctx;
	size_t n = strnlen(text, 64);

	fuzz_check(n < 64);
	for (size_t i = 0; i < n; i++)
		fuzz_check(text[i] >= 0x20 && text[i] < 0x7f);
	/* a known word is the whole text; an unknown one's text is no word (unless it was cut) */
	fuzz_check(cmd == CONTROL_UNKNOWN ? n == 63 || !control_lines__parse(text, n)
					  : control_lines__parse(text, n) == cmd);
	s->n++;
	s->hash = (s->hash ^ (uint64_t)cmd) * 0x100000001b3ull;
	for (size_t i = 0; i < n; i++)
		s->hash = (s->hash ^ (uint8_t)text[i]) * 0x100000001b3ull;
}

/* data fed in pieces whose sizes come from a generator seeded by the data's first byte. */
static void feed_in_pieces(const uint8_t *data, size_t size, struct seen *s)
{
	struct control_lines l = {0};
	uint32_t x = size ? data[0] * 2654435761u + 1 : 1;

	for (size_t at = 0, n; at < size; at += n) {
		char *piece;

		x = x * 1103515245u + 12345u;
		n = 1 + (x >> 16) % 17;
		n = n < size - at ? n : size - at;
		piece = malloc(n); /* its own buffer: a read past it is caught */
		if (!piece)
			return;
		memcpy(piece, data + at, n);
		control_lines__feed(&l, piece, n, on_line, s);
		free(piece);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_lines l = {0};
	struct seen whole = {0, 14695981039346656037ull}, pieces = whole;
	size_t newlines = 0;

	control_lines__feed(&l, (const char *)data, size, on_line, &whole);
	feed_in_pieces(data, size, &pieces);
	for (size_t i = 0; i < size; i++)
		newlines += data[i] == '\n';
	fuzz_check(whole.n == newlines && pieces.n == whole.n && pieces.hash == whole.hash);
	return 0;
}
