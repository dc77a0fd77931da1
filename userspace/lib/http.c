// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP/1.1 client of http.h: getaddrinfo, a non-blocking connect, one request written with
 * its Content-Length and "Connection: close", and the reply read until http_reply_parse() says
 * it is complete, all before one deadline.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait for events on fd until the deadline (CLOCK_MONOTONIC ms): 0, or -ETIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	uint64_t now;
	int n;

	for (;;) {
		now = now_ms();
		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)(deadline - now < 60000 ? deadline - now : 60000));
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* A non-blocking socket connected to a by the deadline; -errno. */
static int dial_one(const struct addrinfo *a, uint64_t deadline)
{
	int fd =
		socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
	int err = 0;
	socklen_t elen = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, a->ai_addr, a->ai_addrlen))
		err = errno == EINPROGRESS ? wait_fd(fd, POLLOUT, deadline) : -errno;
	if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
		err = errno;
	err = err > 0 ? -err : err;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

/* A socket connected to u by the deadline; -errno. */
static int dial(const struct http_url *u, uint64_t deadline)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *a;
	int fd = -EADDRNOTAVAIL, gai;

	gai = getaddrinfo(u->host, u->port, &hints, &res);
	if (gai) {
		log_debug("http: %s: %s", u->host, gai_strerror(gai));
		return -EADDRNOTAVAIL;
	}
	for (a = res; a && fd < 0 && fd != -ETIMEDOUT; a = a->ai_next)
		fd = dial_one(a, deadline);
	freeaddrinfo(res);
	return fd;
}

static int send_all(int fd, const void *p, size_t len, uint64_t deadline)
{
	const char *c = p;
	int err;

	while (len) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			err = errno == EAGAIN ? wait_fd(fd, POLLOUT, deadline) : 0;
			if (err)
				return err;
			continue;
		}
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The reply, read until it is complete (not until the server closes), the buffer is full or the
 * deadline passes: 0 with *reply, or -errno. */
static int read_reply(int fd, char *buf, size_t size, uint64_t deadline, struct http_reply *reply)
{
	size_t len = 0;
	int ret = 0;

	while (!ret && len < size) {
		ssize_t n = recv(fd, buf + len, size - len, 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			ret = errno == EAGAIN ? wait_fd(fd, POLLIN, deadline) : 0;
			if (ret) /* the deadline: a complete head is the answer */
				return http_reply_parse(buf, len, true, reply) == 1 ? 0 : ret;
			continue;
		}
		if (n < 0)
			return -errno;
		if (!n)
			break;
		len += (size_t)n;
		ret = http_reply_parse(buf, len, false, reply);
	}
	if (!ret) /* closed, or the buffer full */
		ret = http_reply_parse(buf, len, true, reply);
	return ret < 0 ? ret : 0;
}

int http_post(const struct http_url *u, const char *path, const char *content_type,
	      const char *content_encoding, const void *body, size_t len, int timeout_s,
	      struct http_reply *reply)
{
	uint64_t deadline = now_ms() + (uint64_t)timeout_s * 1000;
	char head[4096], buf[16384];
	int fd = dial(u, deadline), n, err;

	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "POST %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: perch\r\n"
		     "Content-Type: %s\r\n%s%s%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     path, u->host, u->port, content_type,
		     content_encoding ? "Content-Encoding: " : "",
		     content_encoding ? content_encoding : "", content_encoding ? "\r\n" : "", len);
	err = n < 0 || (size_t)n >= sizeof(head) ? -E2BIG : send_all(fd, head, (size_t)n, deadline);
	if (!err)
		err = send_all(fd, body, len, deadline);
	if (!err)
		err = read_reply(fd, buf, sizeof(buf), deadline, reply);
	close(fd);
	return err;
}
