/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small HTTP/1.1 client over plain TCP: one POST with a body of known length, the final status
 * back (perch push). No TLS, no redirects, no chunked or keep-alive requests: what a
 * Pyroscope or Parca ingest endpoint behind plain HTTP needs, and nothing a library must bring.
 */
#ifndef PERCH_HTTP_H
#define PERCH_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct http_url {
	char host[256]; /* a name or an address (IPv6 without its brackets) */
	char port[8];	/* "80" when the URL names none */
	char path[2048];
	int has_path; /* the URL had a path past its authority ("/" counts) */
};

/* http://HOST[:PORT][/PATH[?QUERY]] into u. -EINVAL for anything else (https included). */
int http_parse_url(const char *url, struct http_url *u);

struct http_reply {
	int status;	/* the status line's code */
	char text[256]; /* its reason phrase and the body's first line, for a message */
};

/* POST body to host:port path (the query included) with content_type (and content_encoding,
 * "gzip", where not NULL). timeout_s bounds the whole
 * exchange (connect, send, the reply; the name lookup aside). 0 with *reply filled (the final
 * status, any), or -errno: -EADDRNOTAVAIL for a host name that does not resolve, connect()'s
 * error (-ECONNREFUSED, ...), -ETIMEDOUT when the reply's head had not all come by the deadline,
 * -EPROTO for a reply that is not HTTP. */
int http_post(const struct http_url *u, const char *path, const char *content_type,
	      const char *content_encoding, const void *body, size_t len, int timeout_s,
	      struct http_reply *reply);

/* What has arrived of a reply, buf[0..len) (untrusted, not NUL-terminated); end: no more bytes
 * will come (the connection closed, the buffer is full, the deadline passed). 1xx interim
 * answers are skipped. Returns 1 with *reply filled when the final answer is complete (its body
 * as long as Content-Length or the chunks say, or all there is at the end), 0 when more is
 * needed, -EPROTO when it is not an HTTP reply (or ended before its final head). */
int http_reply_parse(const char *buf, size_t len, bool end, struct http_reply *reply);

#endif /* PERCH_HTTP_H */
