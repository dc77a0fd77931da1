// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A hostile writer to perch's CUDA channel (tests/integration/hostile-gpu.sh): NOT the injection
 * library, no CUPTI. It takes the descriptor perch passed in PERCH_CUDA_FD and writes straight to
 * it: first 300000 launches nothing runs for and 70000 copies whose launch never comes (past the
 * bounds of perch's join); then for FLOOD_MS (default 800, at least 8192 rounds) more of them, each under a new
 * correlation id, three for each launch with its kernel and each kernel whose launch never
 * comes; a new 1000-byte kernel name every 16 records, a note every 64, a launch-site record whose site never comes
 * every 8 (its time at the end of the clock). Then 4 KiB of garbage (a kind no channel has),
 * then 8 MiB more: a perch that stopped reading at the damage would leave it blocked here for
 * good. It prints, one line:
 *   flood records=N bytes=B
 *
 *   flood
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "perch_cuda.h"

static char out[4096];
static size_t out_len;
static unsigned long long records, bytes;
static int fd = -1;
static uint32_t pid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void flush_out(void)
{
	size_t off = 0;

	while (off < out_len) {
		ssize_t w = write(fd, out + off, out_len - off);

		if (w <= 0)
			exit(3);
		off += (size_t)w;
	}
	bytes += out_len;
	out_len = 0;
}

static void put(struct perch_cuda_rec r, const char *name)
{
	uint32_t size = perch_cuda_rec_size(r.name_len);

	if (out_len + size > sizeof(out))
		flush_out();
	r.pid = pid;
	memcpy(out + out_len, &r, sizeof(r));
	memset(out + out_len + sizeof(r), 0, size - sizeof(r));
	memcpy(out + out_len + sizeof(r), name ? name : "", r.name_len);
	out_len += size;
	records++;
}

/* Record i of the flood (its kinds in turn). */
static void flood_one(uint32_t i, uint64_t t)
{
	char name[1001];
	struct perch_cuda_rec api = {.kind = PERCH_CUDA_API,
				     .correlation_id = 4 * i + 1,
				     .start_ns = t,
				     .end_ns = t + 1000,
				     .tid = 1,
				     .flags = PERCH_CUDA_F_LAUNCH};
	struct perch_cuda_rec k = {.kind = PERCH_CUDA_KERNEL, .start_ns = t, .end_ns = t + 500};

	put(api, NULL); /* launches nothing runs for */
	api.correlation_id = 4 * i + 2;
	put(api, NULL);
	api.correlation_id = 4 * i + 3;
	put(api, NULL);
	api.correlation_id = 4 * i + 4;
	put(api, NULL);
	k.correlation_id = 4 * i + 4; /* ...and one with its kernel */
	put(k, NULL);
	k.correlation_id = 0x80000000u | i; /* a kernel whose launch never comes */
	put(k, NULL);
	if (i % 16 == 0) {
		memset(name, 'a' + (char)(i % 26), 1000);
		snprintf(name, sizeof(name), "kernel_%u_", i);
		name[strlen(name)] = 'x';
		put((struct perch_cuda_rec){.kind = PERCH_CUDA_NAME, .detail = i, .name_len = 1000},
		    name);
	}
	if (i % 64 == 0)
		put((struct perch_cuda_rec){.kind = PERCH_CUDA_NOTE, .name_len = 12},
		    "hostile note");
	if (i % 8 == 0)
		put((struct perch_cuda_rec){.kind = PERCH_CUDA_SITE,
					    .correlation_id = 4 * i + 1,
					    .detail = 0x7fffffffu - i,
					    .tid = 1,
					    .start_ns = UINT64_MAX - 1},
		    NULL);
}

int main(void)
{
	const char *env = getenv(PERCH_CUDA_FD_ENV), *ms = getenv("FLOOD_MS");
	uint64_t end = now_ns() + (uint64_t)(ms ? atoi(ms) : 800) * 1000000ull;

	signal(SIGPIPE, SIG_IGN);
	if (!env || sscanf(env, "%d", &fd) != 1) {
		fprintf(stderr, "flood: no %s\n", PERCH_CUDA_FD_ENV);
		return 2;
	}
	pid = (uint32_t)getpid();
	for (uint32_t i = 0; i < 300000; i++)
		put((struct perch_cuda_rec){.kind = PERCH_CUDA_API,
					    .correlation_id = 0x40000000u + i,
					    .tid = 1,
					    .flags = PERCH_CUDA_F_LAUNCH},
		    NULL);
	for (uint32_t i = 0; i < 70000; i++)
		put((struct perch_cuda_rec){.kind = PERCH_CUDA_MEMCPY,
					    .correlation_id = 0xc0000000u + i},
		    NULL);
	for (uint32_t i = 0; i < 8192 || now_ns() < end; i++) /* 8192: past 64 notes, slow or not */
		flood_one(i, now_ns());
	flush_out();
	memset(out, 0xff, sizeof(out)); /* garbage: kind 0xffff */
	out_len = sizeof(out);
	flush_out();
	for (int i = 0; i < 2048; i++) { /* 8 MiB after the damage */
		out_len = sizeof(out);
		flush_out();
	}
	printf("flood records=%llu bytes=%llu\n", records, bytes);
	return 0;
}
