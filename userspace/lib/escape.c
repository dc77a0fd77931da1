// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One escaping rule per kind of output, for the bytes the target controls (see escape.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

#define NEED_MORE   (-1) /* a valid sequence so far, cut short by the end of what was given */
#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* The length of the valid UTF-8 sequence at s, of avail bytes: 0 when it is not one (overlong,
 * surrogate, past U+10FFFF, a byte that does not continue it), NEED_MORE when avail ends it
 * early. A NUL never continues a sequence, so a NUL-terminated s may pass SIZE_MAX. */
static int utf8_seq(const unsigned char *s, size_t avail)
{
	uint32_t cp, min;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i >= avail)
			return NEED_MORE;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return (int)n;
}

size_t esc_utf8_len(const char *s)
{
	return (size_t)utf8_seq((const unsigned char *)s, SIZE_MAX);
}

bool esc_utf8_valid(const char *s)
{
	for (size_t n; *s; s += n) {
		n = esc_utf8_len(s);
		if (!n)
			return false;
	}
	return true;
}

char *esc_utf8_dup(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t n; *s; s += n ?: 1) {
		n = esc_utf8_len(s);
		if (n)
			fwrite(s, 1, n, f);
		else
			fputs(REPLACEMENT, f);
	}
	if (fclose(f)) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}

void esc_json(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t n; *s; s += n ?: 1) {
		n = esc_utf8_len((const char *)s);
		if (!n)
			fputs("\\ufffd", f);
		else if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if (*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fwrite(s, 1, n, f);
	}
}

void esc_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	esc_json(f, s);
	fputc('"', f);
}

/* Whether the sequence of n bytes at s is a character XML and a CSV field keep: no control
 * byte but tab and line breaks, no DEL, neither U+FFFE nor U+FFFF (no XML characters). */
static bool text_char(const unsigned char *s, size_t n)
{
	if (n == 1)
		return (*s >= 0x20 && *s != 0x7f) || *s == '\t' || *s == '\n' || *s == '\r';
	return !(n == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf));
}

void esc_xml(FILE *f, const char *str)
{
	static const char *const entity[] = {['&'] = "&amp;",
					     ['<'] = "&lt;",
					     ['>'] = "&gt;",
					     ['"'] = "&quot;",
					     ['\''] = "&apos;"};
	const unsigned char *s = (const unsigned char *)str;

	for (size_t n; *s; s += n ?: 1) {
		n = esc_utf8_len((const char *)s);
		if (!n || !text_char(s, n))
			fputs(REPLACEMENT, f);
		else if (*s < sizeof(entity) / sizeof(*entity) && entity[*s])
			fputs(entity[*s], f);
		else
			fwrite(s, 1, n, f);
	}
}

/* A spreadsheet reads a cell that starts with one of these as a formula. */
static bool csv_formula(const char *s)
{
	return *s && strchr("=+-@\t\r", *s);
}

void esc_csv(FILE *f, const char *str, bool quote)
{
	const unsigned char *s = (const unsigned char *)str;
	bool formula = csv_formula(str);

	quote = quote || formula || strpbrk(str, ",\"\r\n");
	if (quote)
		fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (size_t n; *s; s += n ?: 1) {
		n = esc_utf8_len((const char *)s);
		if (!n || !text_char(s, n))
			fputs(REPLACEMENT, f);
		else if (*s == '"')
			fputs("\"\"", f);
		else
			fwrite(s, 1, n, f);
	}
	if (quote)
		fputc('"', f);
}

/* The terminal rule on the n bytes at s; lines: line breaks and tabs pass. With more (a stream
 * cut between two writes), a sequence cut short at the end is left: how many bytes were done. */
static size_t term_bytes(FILE *f, const unsigned char *s, size_t n, bool lines, bool more)
{
	size_t i = 0;

	while (i < n) {
		int len = utf8_seq(s + i, n - i);

		if (len == NEED_MORE && more)
			break;
		if (len == 1 && (s[i] == '\n' || s[i] == '\t') && !lines)
			fputs(s[i] == '\n' ? "\\n" : "\\t", f);
		else if (len == 1 && (s[i] >= 0x20 || s[i] == '\n' || s[i] == '\t') && s[i] != 0x7f)
			fputc(s[i], f);
		else if (len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) /* C1: U+0080 to U+009F */
			fprintf(f, "\\xc2\\x%02x", s[i + 1]);
		else if (len > 1)
			fwrite(s + i, 1, (size_t)len, f);
		else
			fprintf(f, "\\x%02x", s[i]);
		i += len > 1 ? (size_t)len : 1;
	}
	return i;
}

void esc_term_n(FILE *f, const char *s, size_t n)
{
	term_bytes(f, (const unsigned char *)s, n, false, false);
}

void esc_term(FILE *f, const char *s)
{
	esc_term_n(f, s, strlen(s));
}

char *esc_term_buf(char *buf, size_t len, const char *s)
{
	FILE *f = len ? fmemopen(buf, len, "w") : NULL;

	if (!f)
		return len ? (buf[0] = '\0', buf) : buf;
	esc_term(f, s);
	fclose(f);
	buf[len - 1] = '\0'; /* fmemopen() adds none when buf is full */
	return buf;
}

/* esc_term_stream()'s state: a UTF-8 sequence cut between two writes waits in held. */
struct term_stream {
	FILE *out;
	unsigned char held[4];
	size_t nheld;
};

/* Completes the held sequence from buf: how many bytes of buf it took. A byte that cannot
 * continue it ends it (escaped) and may start the next one. */
static size_t term_complete(struct term_stream *t, const unsigned char *buf, size_t n)
{
	size_t i = 0;

	while (t->nheld && i < n) {
		int len;

		t->held[t->nheld++] = buf[i++];
		len = utf8_seq(t->held, t->nheld);
		if (len == NEED_MORE)
			continue;
		if (len > 0) {
			term_bytes(t->out, t->held, t->nheld, true, false);
			t->nheld = 0;
			continue;
		}
		term_bytes(t->out, t->held, t->nheld - 1, true, false);
		t->held[0] = t->held[t->nheld - 1];
		t->nheld = utf8_seq(t->held, 1) == NEED_MORE;
		if (!t->nheld)
			term_bytes(t->out, t->held, 1, true, false);
	}
	return i;
}

static ssize_t term_write(void *cookie, const char *buf, size_t n)
{
	struct term_stream *t = cookie;
	const unsigned char *s = (const unsigned char *)buf;
	size_t i = term_complete(t, s, n), done;

	if (t->nheld) /* all of buf went into the held sequence, which still wants more */
		return ferror(t->out) ? -1 : (ssize_t)n;
	done = term_bytes(t->out, s + i, n - i, true, true);
	t->nheld = n - i - done;
	memcpy(t->held, s + i + done, t->nheld);
	return ferror(t->out) ? -1 : (ssize_t)n;
}

static int term_close(void *cookie)
{
	struct term_stream *t = cookie;
	int err;

	term_bytes(t->out, t->held, t->nheld, true, false);
	err = ferror(t->out) ? EOF : 0;
	free(t);
	return err;
}

FILE *esc_term_stream(FILE *out)
{
	cookie_io_functions_t io = {.write = term_write, .close = term_close};
	struct term_stream *t = calloc(1, sizeof(*t));
	FILE *f;

	if (!t)
		return NULL;
	t->out = out;
	f = fopencookie(t, "w", io);
	if (!f)
		free(t);
	return f;
}
