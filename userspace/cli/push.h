/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A profile handed to a fleet backend (cli/push.c): `perch push` sends one recording, `perch
 * agent` one recording of each interval. Pyroscope's /ingest (default), Parca's WriteRaw
 * (--parca) or OTLP/HTTP (--otlp); see push.c for the requests.
 */
#ifndef PERCH_CLI_PUSH_H
#define PERCH_CLI_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include "format/recording.h"
#include "lib/http.h"

struct push {
	const char *url, *name, *path;
	bool parca, otlp;
	unsigned long timeout_s;
	struct http_url u;
	char app[256];
	long long from, until;
	unsigned long long rate;
};

/* Growing bytes, built with open_memstream. */
struct push_body {
	char *data;
	size_t len;
};

/* The profile of r (read from file, named in messages) into *pb (the caller frees pb->data), and
 * the request's name, time range and rate into p; the exit status, with one line when it failed. */
int push__prepare(struct push *p, const struct recording *r, const char *file,
		  struct push_body *pb);
/* POST pb as p says; the exit status, with one line when it failed. */
int push__send(const struct push *p, const struct push_body *pb);

/* Option setters for --url, --name, --timeout: the struct push at opt->field of ctx. */
struct cli_opt;
int push__set_url(void *ctx, const struct cli_opt *opt, const char *arg);
int push__set_name(void *ctx, const struct cli_opt *opt, const char *arg);
int push__set_timeout(void *ctx, const struct cli_opt *opt, const char *arg);

#endif /* PERCH_CLI_PUSH_H */
