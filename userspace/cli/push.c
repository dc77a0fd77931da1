// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch push --url=http://HOST:PORT[/PATH] [--name=APP] [--parca] [FILE]`: the recording as
 * pprof (report/pprof.c's writer, into memory) handed to a fleet backend over HTTP (lib/http.h):
 *   Pyroscope: POST PATH (default /ingest)?name=APP&from=S&until=S&format=pprof&sampleRate=HZ
 *              &spyName=perch, body multipart/form-data with the gzipped profile as the field
 *              "profile" (Pyroscope's ingest API; Grafana Alloy's pyroscope.receive_http too);
 *   --parca:   POST PATH (default /profiles/writeraw), JSON {"series": [{"labels": {"labels":
 *              [{"name": "__name__", "value": APP}]}, "samples": [{"rawProfile": BASE64}]}]}
 *              (Parca's WriteRaw through its HTTP gateway);
 *   --otlp:    POST PATH (default /v1development/profiles), the recording as OTLP's
 *              ExportProfilesServiceRequest (report/otlp.c; its service.name APP with --name),
 *              application/x-protobuf, Content-Encoding: gzip (OTLP/HTTP, as an OpenTelemetry
 *              Collector's otlp receiver takes it).
 * from and until: the recording's start (META start_time) and start + duration, Unix seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "cli.h"
#include "lib/escape.h"
#include "lib/exitcodes.h"
#include "lib/http.h"
#include "lib/log.h"
#include "format/recording.h"
#include "report/report.h"
#include "push.h"

/* The recorded command's program name, as the default application name. */
static void default_name(const struct recording *r, char *out, size_t size)
{
	const char *cmd = recording__meta(r, "command"), *base;
	size_t len;

	if (!cmd || !*cmd)
		cmd = "perch";
	len = strcspn(cmd, " ");
	base = memrchr(cmd, '/', len);
	base = base ? base + 1 : cmd;
	snprintf(out, size, "%.*s", (int)(len - (size_t)(base - cmd)), base);
}

/* from and until (Unix seconds) from META start_time and END duration_ns; now without them. */
static void time_range(const struct recording *r, long long *from, long long *until)
{
	const char *start = recording__meta(r, "start_time");
	struct tm tm = {0};
	uint64_t dur = 0;
	const char *end = start ? strptime(start, "%Y-%m-%dT%H:%M:%S%z", &tm) : NULL;

	recording__end(r, "duration_ns", &dur);
	*from = end && !*end ? (long long)(timegm(&tm) - tm.tm_gmtoff)
			     : (long long)time(NULL) - (long long)(dur / 1000000000u);
	*until = *from + (long long)((dur + 999999999u) / 1000000000u);
	if (*until <= *from)
		*until = *from + 1;
}

/* s percent-encoded (RFC 3986: all but the unreserved characters). */
static void put_encoded(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("-._~", *s) || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') ||
		    (*s >= 'A' && *s <= 'Z'))
			fputc(*s, f);
		else
			fprintf(f, "%%%02X", (unsigned char)*s);
	}
}

static void put_base64(FILE *f, const unsigned char *p, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

	for (size_t i = 0; i < len; i += 3) {
		unsigned long v = (unsigned long)p[i] << 16 |
				  (i + 1 < len ? (unsigned long)p[i + 1] << 8 : 0) |
				  (i + 2 < len ? p[i + 2] : 0);

		fputc(tab[v >> 18 & 63], f);
		fputc(tab[v >> 12 & 63], f);
		fputc(i + 1 < len ? tab[v >> 6 & 63] : '=', f);
		fputc(i + 2 < len ? tab[v & 63] : '=', f);
	}
}

/* The request's path and query, into *out (the caller frees it). */
static int request_path(const struct push *p, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	bool custom = p->u.has_path && strcmp(p->u.path, "/");

	if (!f)
		return -ENOMEM;
	fputs(custom	 ? p->u.path
	      : p->parca ? "/profiles/writeraw"
	      : p->otlp	 ? "/v1development/profiles"
			 : "/ingest",
	      f);
	if (!p->parca && !p->otlp) {
		fputs(strchr(custom ? p->u.path : "", '?') ? "&name=" : "?name=", f);
		put_encoded(f, p->app);
		fprintf(f, "&from=%lld&until=%lld&format=pprof&sampleRate=%llu&spyName=perch",
			p->from, p->until, p->rate);
	}
	return fclose(f) ? -ENOMEM : 0;
}

/* A boundary that the profile does not hold. */
static void boundary(const struct push_body *pb, char *b, size_t size)
{
	unsigned long long x = (unsigned long long)time(NULL) ^ (unsigned long long)getpid() << 32;

	do {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		snprintf(b, size, "perch-%016llx", x);
	} while (memmem(pb->data, pb->len, b, strlen(b)));
}

/* pb gzipped into f (no name, no time: the same recording gives the same bytes). */
static int put_gzip(FILE *f, const struct push_body *pb)
{
	z_stream z = {.next_in = (unsigned char *)pb->data, .avail_in = (uInt)pb->len};
	unsigned char chunk[65536];
	int zerr;

	if (pb->len > UINT32_MAX || deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
						 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zerr = deflate(&z, Z_FINISH);
		fwrite(chunk, 1, sizeof(chunk) - z.avail_out, f);
	} while (zerr == Z_OK);
	deflateEnd(&z);
	return zerr == Z_STREAM_END ? 0 : -ENOMEM;
}

/* The request body for the profile pb, and its content type (static, or in ctype). */
static int request_body(const struct push *p, const struct push_body *pb, struct push_body *out,
			char *ctype, size_t size)
{
	FILE *f = open_memstream(&out->data, &out->len);
	char b[64];
	int err = 0;

	if (!f)
		return -ENOMEM;
	if (p->otlp) {
		err = put_gzip(f, pb);
		snprintf(ctype, size, "application/x-protobuf");
	} else if (p->parca) {
		fputs("{\"series\":[{\"labels\":{\"labels\":[{\"name\":\"__name__\",\"value\":", f);
		esc_json_str(f, p->app);
		fputs("}]},\"samples\":[{\"rawProfile\":\"", f);
		put_base64(f, (const unsigned char *)pb->data, pb->len);
		fputs("\"}]}]}", f);
		snprintf(ctype, size, "application/json");
	} else {
		boundary(pb, b, sizeof(b));
		fprintf(f,
			"--%s\r\nContent-Disposition: form-data; name=\"profile\"; "
			"filename=\"profile.pb.gz\"\r\nContent-Type: application/octet-stream\r\n\r\n",
			b);
		fwrite(pb->data, 1, pb->len, f);
		fprintf(f, "\r\n--%s--\r\n", b);
		snprintf(ctype, size, "multipart/form-data; boundary=%s", b);
	}
	return fclose(f) || err ? -ENOMEM : 0;
}

/* The recording's pprof (or, --otlp, its OTLP request) into pb; the exit status. */
static int build_profile(const struct push *p, const struct recording *r, const char *file,
			 struct push_body *pb)
{
	struct report_opts o = {
		.format = p->otlp ? REPORT_OTLP : REPORT_PPROF, .top = 20, .service = p->app};
	FILE *f = open_memstream(&pb->data, &pb->len);
	int err;

	if (!f) {
		log_err("push: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	err = report__print(r, file, &o, f);
	if (fclose(f) || err) {
		log_err("push: cannot build the %s of %s: %s", p->otlp ? "OTLP request" : "pprof",
			file, strerror(err ? -err : ENOMEM));
		return PERCH_EXIT_INTERNAL;
	}
	return 0;
}

int push__send(const struct push *p, const struct push_body *pb)
{
	struct push_body req = {0};
	struct http_reply reply = {0};
	char ctype[128], *path = NULL;
	int err = request_path(p, &path);

	if (!err)
		err = request_body(p, pb, &req, ctype, sizeof(ctype));
	if (!err)
		err = http_post(&p->u, path, ctype, p->otlp ? "gzip" : NULL, req.data, req.len,
				(int)p->timeout_s, &reply);
	free(path);
	free(req.data);
	if (err == -ENOMEM) {
		log_err("push: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	if (err == -EPROTO) {
		log_err("push: %s did not answer in HTTP", p->url);
		return PERCH_EXIT_REJECTED;
	}
	if (err == -ETIMEDOUT) {
		log_err("push: %s did not answer within --timeout=%lu s", p->url, p->timeout_s);
		return PERCH_EXIT_NOSERVER;
	}
	if (err == -EADDRNOTAVAIL) {
		log_err("push: cannot reach %s: host %s does not resolve", p->url, p->u.host);
		return PERCH_EXIT_NOSERVER;
	}
	if (err) {
		log_err("push: cannot reach %s: %s", p->url, strerror(-err));
		return PERCH_EXIT_NOSERVER;
	}
	if (reply.status >= 300) {
		log_err("push: %s answered %d %.200s", p->url, reply.status, reply.text);
		return PERCH_EXIT_REJECTED;
	}
	log_debug("push: %s answered %d", p->url, reply.status);
	return 0;
}

int push__prepare(struct push *p, const struct recording *r, const char *file, struct push_body *pb)
{
	const char *freq;

	if (p->name)
		snprintf(p->app, sizeof(p->app), "%s", p->name);
	else
		default_name(r, p->app, sizeof(p->app));
	time_range(r, &p->from, &p->until);
	freq = recording__meta(r, "frequency");
	p->rate = freq ? strtoull(freq, NULL, 10) : 0;
	return build_profile(p, r, file, pb);
}

static int push_file(struct push *p, const char *file)
{
	struct recording *r = NULL;
	struct push_body pb = {0};
	int err = recording__load(file, &r), ret;

	if (!r)
		return load_error(file, err);
	if (err) {
		ret = report_damage(file, r, err);
		recording__free(r);
		return ret;
	}
	ret = push__prepare(p, r, file, &pb);
	recording__free(r);
	if (!ret)
		ret = push__send(p, &pb);
	free(pb.data);
	return ret;
}

int push__set_url(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct push *p = (struct push *)((char *)ctx + opt->field);

	p->url = arg;
	if (http_parse_url(arg, &p->u))
		return log_usage(NULL, "bad --url '%s' (http://HOST:PORT[/PATH])", arg);
	return 0;
}

int push__set_name(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct push *p = (struct push *)((char *)ctx + opt->field);

	p->name = arg;
	if (!*arg || strlen(arg) >= sizeof(p->app))
		return log_usage(NULL, "bad --name '%s'", arg);
	return 0;
}

int push__set_timeout(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct push *p = (struct push *)((char *)ctx + opt->field);

	if (cli_parse_uint(arg, 3600, &p->timeout_s))
		return log_usage(NULL, "bad --timeout '%s'", arg);
	return 0;
}

extern const struct cli_command cli_push;

static int run_push(int argc, char **argv)
{
	struct push p = {.timeout_s = 10};
	const char *file = "perch.data";
	int ret = cli_opts__parse(&cli_push, argc, argv, &p);

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	if (!p.url)
		return log_usage(NULL, "push needs --url=http://HOST:PORT[/PATH]");
	if (p.otlp && p.parca)
		return log_usage(NULL, "--otlp and --parca are two backends: choose one");
	if (optind < argc)
		file = argv[optind++];
	if (optind < argc)
		return log_usage(NULL, "unexpected argument '%s'", argv[optind]);
	return push_file(&p, file);
}

#define CLI_CTX struct push

static const struct cli_opt push_rows[] = {
	{0, "url", "URL",
	 "http://HOST:PORT[/PATH] of a Pyroscope server (PATH default /ingest) or, with --parca, of "
	 "Parca's HTTP API (default /profiles/writeraw)",
	 OPT_FN(push__set_url), .needs = 1},
	{0, "name", "APP",
	 "the application name (default: the recorded command's; --otlp: its service.name)",
	 OPT_FN(push__set_name), .in = 1},
	{0, "parca", NULL, "Parca's /profiles/writeraw form instead of Pyroscope's /ingest",
	 OPT_TRUE(parca), .in = 1},
	{0, "otlp", NULL,
	 "OTLP/HTTP instead (default path /v1development/profiles): the OpenTelemetry profiles "
	 "signal, gzipped protobuf, as --format=otlp writes it",
	 OPT_TRUE(otlp), .in = 1},
	{0, "timeout", "S", "give up when the exchange takes over S seconds (default 10)",
	 OPT_FN(push__set_timeout), .in = 1},
};

const struct cli_command cli_push = {
	.name = "push",
	.run = run_push,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(push_rows),
			.flags = "",
			.lines = (const char *const[]){"[FILE]", NULL},
			.summary =
				"a recording as pprof to Pyroscope (/ingest) or Parca (/profiles/writeraw), or "
				"as OTLP to an OpenTelemetry endpoint (/v1development/profiles)",
		},
};
