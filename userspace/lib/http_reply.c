// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The reply parser of http.h: what has arrived of a server's answer, as bytes, to its final
 * status and a line for a message. Interim (1xx) answers are skipped; the body ends where its
 * Content-Length or its last chunk says (or at the end of the bytes), so a server that keeps the
 * connection open is answered as soon as it has said everything. Nothing here trusts the server:
 * every length is checked against what arrived, and the message is printable ASCII.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "http.h"

/* A reply head: the status line and the headers that frame the body. */
struct head {
	int status;
	const char *reason;
	size_t reason_len;
	bool chunked;	 /* Transfer-Encoding ends in chunked */
	bool unframed;	 /* another Transfer-Encoding: the body ends with the connection */
	bool has_length; /* Content-Length */
	uint64_t length;
};

/* The body's bytes that arrived (the first chunk's, when chunked). */
struct body {
	const char *p;
	size_t len;
};

/* The line at *pos (without its CR LF) and *pos past it; false when no whole line arrived. */
static bool next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n)
{
	const char *nl = memchr(buf + *pos, '\n', len - *pos);

	if (!nl)
		return false;
	*line = buf + *pos;
	*n = (size_t)(nl - *line);
	if (*n && (*line)[*n - 1] == '\r')
		(*n)--;
	*pos = (size_t)(nl + 1 - buf);
	return true;
}

/* "HTTP/1.0 " or "HTTP/1.1 ", three digits, then the end or a space and the reason. */
static int parse_status(const char *l, size_t n, struct head *h)
{
	if (n < 12 || memcmp(l, "HTTP/1.", 7) || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
		return -EPROTO;
	for (int i = 9; i < 12; i++) {
		if (l[i] < '0' || l[i] > '9')
			return -EPROTO;
		h->status = h->status * 10 + (l[i] - '0');
	}
	if (h->status < 100 || (n > 12 && l[12] != ' '))
		return -EPROTO;
	h->reason = n > 12 ? l + 13 : l + 12;
	h->reason_len = n > 12 ? n - 13 : 0;
	return 0;
}

/* A value without the spaces and tabs around it. */
static void trim(const char **v, size_t *n)
{
	while (*n && (**v == ' ' || **v == '\t')) {
		(*v)++;
		(*n)--;
	}
	while (*n && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
		(*n)--;
}

/* Content-Length: decimal digits only, one value (a repeat must agree). */
static int parse_length(const char *v, size_t n, struct head *h)
{
	uint64_t len = 0;

	if (!n || n > 15)
		return -EPROTO;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -EPROTO;
		len = len * 10 + (uint64_t)(v[i] - '0');
	}
	if (h->has_length && h->length != len)
		return -EPROTO;
	h->has_length = true;
	h->length = len;
	return 0;
}

/* Transfer-Encoding: chunked when its last coding is. */
static void parse_coding(const char *v, size_t n, struct head *h)
{
	const char *comma = memrchr(v, ',', n);

	if (comma) {
		n -= (size_t)(comma + 1 - v);
		v = comma + 1;
	}
	trim(&v, &n);
	h->chunked = n == 7 && !strncasecmp(v, "chunked", 7);
	h->unframed = !h->chunked;
}

/* "Name: value"; a folded line (obsolete) is ignored, a line without a name is not HTTP. */
static int parse_header(const char *l, size_t n, struct head *h)
{
	const char *colon = memchr(l, ':', n), *v;
	size_t vn;

	if (l[0] == ' ' || l[0] == '\t')
		return 0;
	if (!colon || colon == l)
		return -EPROTO;
	v = colon + 1;
	vn = n - (size_t)(v - l);
	trim(&v, &vn);
	if (colon - l == 14 && !strncasecmp(l, "Content-Length", 14))
		return parse_length(v, vn, h);
	if (colon - l == 17 && !strncasecmp(l, "Transfer-Encoding", 17))
		parse_coding(v, vn, h);
	return 0;
}

/* Whether the first line, not yet whole, can still become a status line. */
static bool could_be_status(const char *buf, size_t len)
{
	return !memcmp(buf, "HTTP/1.", len < 7 ? len : 7);
}

/* The head at *pos: 1 with h and *pos past its empty line, 0 when not all of it arrived,
 * -EPROTO when it is not an HTTP reply head. */
static int parse_head(const char *buf, size_t len, size_t *pos, struct head *h)
{
	const char *l;
	size_t n;
	int err;

	memset(h, 0, sizeof(*h));
	if (!next_line(buf, len, pos, &l, &n))
		return could_be_status(buf + *pos, len - *pos) ? 0 : -EPROTO;
	err = parse_status(l, n, h);
	while (!err && next_line(buf, len, pos, &l, &n)) {
		if (!n)
			return 1;
		err = parse_header(l, n, h);
	}
	return err;
}

/* A chunk's size line: hex digits, then nothing, spaces or ";extensions". */
static int chunk_size(const char *l, size_t n, uint64_t *size)
{
	size_t i = 0;

	*size = 0;
	for (; i < n && i < 11 && l[i] && strchr("0123456789abcdefABCDEF", l[i]); i++)
		*size = *size * 16 +
			(uint64_t)(l[i] <= '9' ? l[i] - '0' : (l[i] | 0x20) - 'a' + 10);
	if (!i || (i < n && l[i] != ';' && l[i] != ' ' && l[i] != '\t'))
		return -EPROTO;
	return 0;
}

/* The line end after a chunk's size bytes of data at pos: its length (1 or 2), 0 when it has
 * not arrived, -EPROTO when the data is followed by anything else. */
static int chunk_end(const char *buf, size_t len, size_t pos, uint64_t size)
{
	const char *t = buf + pos + size;

	if (len - pos < size + 1)
		return 0;
	if (*t == '\n')
		return 1;
	if (*t != '\r')
		return -EPROTO;
	if (len - pos < size + 2)
		return 0;
	return t[1] == '\n' ? 2 : -EPROTO;
}

/* The chunks from pos: 1 when the last chunk and the trailers arrived, 0 when not yet, -EPROTO
 * for a malformed one. b: the first chunk's data that arrived. */
static int parse_chunks(const char *buf, size_t len, size_t pos, struct body *b)
{
	const char *l;
	size_t n;
	uint64_t size;
	int ret;

	while (next_line(buf, len, &pos, &l, &n)) {
		if (chunk_size(l, n, &size))
			return -EPROTO;
		if (!size) {
			while (next_line(buf, len, &pos, &l, &n))
				if (!n) /* the trailers' end */
					return 1;
			return 0;
		}
		if (!b->p) {
			b->p = buf + pos;
			b->len = len - pos < size ? len - pos : (size_t)size;
		}
		ret = chunk_end(buf, len, pos, size);
		if (ret <= 0)
			return ret;
		pos += (size_t)size + (size_t)ret;
	}
	return 0;
}

/* The body after a head that ends at pos: 1 when all of it arrived, 0 when not yet, -EPROTO. */
static int parse_body(const char *buf, size_t len, size_t pos, const struct head *h, struct body *b)
{
	b->p = buf + pos;
	b->len = len - pos;
	if (h->status == 204 || h->status == 304) {
		b->len = 0;
		return 1;
	}
	if (h->chunked) {
		b->p = NULL;
		b->len = 0;
		return parse_chunks(buf, len, pos, b);
	}
	if (h->has_length && !h->unframed) {
		if (b->len > h->length)
			b->len = (size_t)h->length;
		return b->len == h->length;
	}
	return 0; /* until the connection closes */
}

/* Printable ASCII of p[0..n) at *at in text (size bytes), any other byte as \xNN (the terminal
 * rule of lib/escape.h, which the error line is printed under: a server's escape sequences are
 * shown, never acted on); a byte whose escape does not fit ends the text. */
static void put_text(char *text, size_t size, size_t *at, const char *p, size_t n)
{
	for (size_t i = 0; i < n && *at + 1 < size; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20 && c < 0x7f) {
			text[(*at)++] = (char)c;
		} else if (*at + 5 <= size) {
			snprintf(text + *at, 5, "\\x%02x", c);
			*at += 4;
		} else {
			break;
		}
	}
	text[*at] = '\0';
}

static void fill_reply(const struct head *h, const struct body *b, struct http_reply *reply)
{
	const char *nl = b->len ? memchr(b->p, '\n', b->len) : NULL;
	size_t at = 0, line = nl ? (size_t)(nl - b->p) : b->len;

	if (line && b->p[line - 1] == '\r')
		line--;
	reply->status = h->status;
	reply->text[0] = '\0';
	put_text(reply->text, sizeof(reply->text), &at, h->reason, h->reason_len);
	if (line)
		put_text(reply->text, sizeof(reply->text), &at, ": ", 2);
	put_text(reply->text, sizeof(reply->text), &at, b->p, line);
}

int http_reply_parse(const char *buf, size_t len, bool end, struct http_reply *reply)
{
	struct head h;
	struct body b;
	size_t pos = 0;
	int ret;

	do { /* 1xx: interim, no body; the final answer follows */
		ret = parse_head(buf, len, &pos, &h);
		if (ret <= 0)
			return ret < 0 || end ? -EPROTO : 0;
	} while (h.status < 200);
	ret = parse_body(buf, len, pos, &h, &b);
	if (ret < 0 || (!ret && !end))
		return ret;
	fill_reply(&h, &b, reply);
	return 1;
}
