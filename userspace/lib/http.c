// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP/1.1 client of http.h: getaddrinfo, connect with a timeout, one request written with
 * its Content-Length and "Connection: close", the status line and a little of the body read
 * back.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include "http.h"
#include "log.h"

int http_parse_url(const char *url, struct http_url *u)
{
	const char *p = url, *end, *colon;
	size_t hlen;

	if (strncmp(p, "http://", 7))
		return -EINVAL;
	p += 7;
	end = p + strcspn(p, "/?#");
	if (*p == '[') { /* [v6]:port */
		const char *close = memchr(p, ']', (size_t)(end - p));

		if (!close)
			return -EINVAL;
		hlen = (size_t)(close - p - 1);
		memcpy(u->host, p + 1, hlen < sizeof(u->host) ? hlen : 0);
		colon = close[1] == ':' ? close + 1 : NULL;
		p++;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		hlen = (size_t)((colon ? colon : end) - p);
		memcpy(u->host, p, hlen < sizeof(u->host) ? hlen : 0);
	}
	if (!hlen || hlen >= sizeof(u->host))
		return -EINVAL;
	u->host[hlen] = '\0';
	if (colon && (end - colon - 1 < 1 || end - colon - 1 > 5 ||
		      strspn(colon + 1, "0123456789") != (size_t)(end - colon - 1)))
		return -EINVAL;
	snprintf(u->port, sizeof(u->port), "%.*s", colon ? (int)(end - colon - 1) : 2,
		 colon ? colon + 1 : "80");
	if (*end == '#' || strchr(end, '#') || strlen(end) >= sizeof(u->path) ||
	    strpbrk(end, " \r\n"))
		return -EINVAL;
	u->has_path = *end == '/';
	snprintf(u->path, sizeof(u->path), "%s", *end ? end : "/");
	return 0;
}

/* A socket connected to u within timeout_s; -errno. */
static int dial(const struct http_url *u, int timeout_s)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *a;
	struct timeval tv = {.tv_sec = timeout_s};
	int fd = -1, err = -EADDRNOTAVAIL, gai;

	gai = getaddrinfo(u->host, u->port, &hints, &res);
	if (gai) {
		log_debug("http: %s: %s", u->host, gai_strerror(gai));
		return -EADDRNOTAVAIL;
	}
	for (a = res; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd, a->ai_addr, a->ai_addrlen)) {
			err = errno == EINPROGRESS || errno == EAGAIN ? -ETIMEDOUT : -errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : err;
}

static int send_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno != EAGAIN ? -errno : -ETIMEDOUT;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The reply's head and a little body into buf (NUL-terminated); its length or -errno. */
static ssize_t read_reply(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len + 1 < size) {
		ssize_t n = recv(fd, buf + len, size - 1 - len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

/* "HTTP/1.x NNN reason" and the body's first line into reply. */
static int parse_reply(const char *buf, struct http_reply *reply)
{
	const char *body = strstr(buf, "\r\n\r\n");
	int code, off = 0;

	if (sscanf(buf, "HTTP/1.%*1[01] %3d%n", &code, &off) != 1 || code < 100 || !off)
		return -EPROTO;
	reply->status = code;
	body = body ? body + 4 : "";
	snprintf(reply->text, sizeof(reply->text), "%.*s%s%.*s",
		 (int)strcspn(buf + off + (buf[off] == ' '), "\r\n"), buf + off + (buf[off] == ' '),
		 *body ? ": " : "", (int)strcspn(body, "\r\n"), body);
	return 0;
}

int http_post(const struct http_url *u, const char *path, const char *content_type,
	      const void *body, size_t len, int timeout_s, struct http_reply *reply)
{
	char head[4096], buf[4096];
	int fd = dial(u, timeout_s), n, err;
	ssize_t got;

	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: perch\r\n"
		     "Content-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     path, u->host, u->port, content_type, len);
	err = n < 0 || (size_t)n >= sizeof(head) ? -E2BIG : send_all(fd, head, (size_t)n);
	if (!err)
		err = send_all(fd, body, len);
	got = err ? err : read_reply(fd, buf, sizeof(buf));
	close(fd);
	if (got < 0)
		return (int)got;
	return parse_reply(buf, reply);
}
