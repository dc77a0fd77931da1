// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reads a PERCH_CUDA_FD channel file as perch will: one line per record, kernel names from their
 * NAME records, then the correlation join's counts. For tests/cuda.sh.
 *
 *   dump FILE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu_join.h"
#include "cuda/gpu_records.h"

static char names[256][PERCH_CUDA_NAME_MAX + 1];

static const char *kind_name(uint16_t k)
{
	static const char *const n[] = {"?",	"kernel",  "memcpy", "memset", "sync", "api",
					"name", "dropped", "note",   "clock",  "end",  "site"};

	return k <= PERCH_CUDA_SITE ? n[k] : "?";
}

static void print(const struct perch_cuda_rec *r, const char *name)
{
	printf("%s corr=%u start=%llu end=%llu bytes=%llu dev=%u stream=%u detail=%u tid=%u "
	       "flags=%#x graph=%u",
	       kind_name(r->kind), r->correlation_id, (unsigned long long)r->start_ns,
	       (unsigned long long)r->end_ns, (unsigned long long)r->bytes, r->device, r->stream,
	       r->detail, r->tid, r->flags, r->graph_id);
	if (r->kind == PERCH_CUDA_KERNEL && r->detail < 256)
		printf(" name=%s", names[r->detail]);
	if (name)
		printf(" text=%.*s", (int)r->name_len, name);
	printf("\n");
}

static void on_joined(void *ctx, const struct gpu_launch *l, const struct perch_cuda_rec *a)
{
	(void)ctx;
	printf("joined corr=%u kind=%s tid=%u", a->correlation_id, kind_name(a->kind),
	       l ? l->tid : 0);
	if (a->kind == PERCH_CUDA_KERNEL && a->detail < 256)
		printf(" name=%s", names[a->detail]);
	printf("\n");
}

/* The whole file (a GPU run's channel is tens of MB). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 20, n;
	char *buf = malloc(cap), *p;

	*len = 0;
	if (!f || !buf)
		goto fail;
	while ((n = fread(buf + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len < cap)
			continue;
		p = realloc(buf, cap * 2);
		if (!p)
			goto fail;
		buf = p;
		cap *= 2;
	}
	fclose(f);
	return buf;
fail:
	if (f)
		fclose(f);
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	struct gpu_join *j = gpu_join__new(on_joined, NULL);
	const struct gpu_join_stats *st;
	struct perch_cuda_rec r;
	const char *name;
	size_t len, off = 0;
	char *buf;
	int rc;

	if (argc != 2 || !j || !(buf = slurp(argv[1], &len)))
		return 2;
	while ((rc = gpu_stream_next(buf, len, &off, &r, &name)) == 1) {
		if (r.kind == PERCH_CUDA_NAME && r.detail < 256)
			snprintf(names[r.detail], sizeof(names[0]), "%.*s", (int)r.name_len, name);
		print(&r, name);
		if (gpu_join__channel(j, &r))
			return 2;
	}
	gpu_join__finish(j);
	st = gpu_join__stats(j);
	printf("stream %s at %zu of %zu\n", rc ? "damaged" : "ends", off, len);
	printf("join launches=%llu joined=%llu launches_unmatched=%llu activities_unmatched=%llu "
	       "dropped=%llu\n",
	       (unsigned long long)st->launches, (unsigned long long)st->joined,
	       (unsigned long long)st->launches_unmatched,
	       (unsigned long long)st->activities_unmatched, (unsigned long long)st->dropped);
	gpu_join__free(j);
	free(buf);
	return rc ? 1 : 0;
}
