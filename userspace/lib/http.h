/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small HTTP/1.1 client over plain TCP: one POST with a body of known length, the status
 * line back (perch push). No TLS, no redirects, no chunked or keep-alive requests: what a
 * Pyroscope or Parca ingest endpoint behind plain HTTP needs, and nothing a library must bring.
 */
#ifndef PERCH_HTTP_H
#define PERCH_HTTP_H

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

/* POST body to host:port path (the query included) with content_type; headers: more "Name:
 * value" lines, NULL-terminated, or NULL. Gives up after timeout_s at each step. 0 with *reply
 * filled (any status), or -errno: -EADDRNOTAVAIL for a host name that does not resolve, connect()'s
 * error (-ECONNREFUSED, -ETIMEDOUT, ...), -EPROTO for a reply that is not HTTP. */
int http_post(const struct http_url *u, const char *path, const char *content_type,
	      const void *body, size_t len, int timeout_s, struct http_reply *reply);

#endif /* PERCH_HTTP_H */
