// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Syncs and who waited (gpusyncs.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpusyncs.h"

const char *gpu_syncs__type_name(uint32_t type)
{
	static const char *const names[GPU_SYNC_NR] = {
		[GPU_SYNC_UNKNOWN] = "other",		[GPU_SYNC_EVENT] = "event",
		[GPU_SYNC_STREAM_WAIT] = "stream-wait", [GPU_SYNC_STREAM] = "stream",
		[GPU_SYNC_CONTEXT] = "context",
	};

	return type < GPU_SYNC_NR ? names[type] : names[GPU_SYNC_UNKNOWN];
}

/* The thread's name: the thread table's, else that of a sample (a launch's) of the thread. */
static uint32_t thread_comm(const struct recording *r, uint32_t pid, uint32_t tid)
{
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].pid == pid && r->threads[i].tid == tid && r->threads[i].comm)
			return r->threads[i].comm;
	}
	for (size_t i = 0; i < r->nsamples; i++) {
		if (r->samples[i].pid == pid && r->samples[i].tid == tid && r->samples[i].comm)
			return r->samples[i].comm;
	}
	return 0;
}

static int add_sync(struct gpu_syncs *s, size_t *cap, struct u64map *by_thread,
		    const struct rec_gpu *g)
{
	uint64_t key = g->tid ? (uint64_t)g->pid << 32 | g->tid : 0, dur = g->end_ns - g->start_ns;
	uint64_t i;
	struct gpu_sync_row *row;

	if (!u64map__get(by_thread, key, &i)) {
		i = s->nrows;
		if (vec_grow(&s->rows, cap, i + 1, sizeof(*s->rows), 8) ||
		    u64map__put(by_thread, key, i))
			return -ENOMEM;
		s->rows[s->nrows++] =
			(struct gpu_sync_row){.pid = g->tid ? g->pid : 0, .tid = g->tid};
	}
	row = &s->rows[i];
	row->by_type[g->detail < GPU_SYNC_NR ? g->detail : GPU_SYNC_UNKNOWN]++;
	row->count++;
	row->total_ns += dur;
	row->max_ns = dur > row->max_ns ? dur : row->max_ns;
	s->count++;
	s->total_ns += dur;
	return 0;
}

static int by_wait_desc(const void *a, const void *b)
{
	const struct gpu_sync_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct gpu_syncs *gpu_syncs__new(const struct recording *r)
{
	struct gpu_syncs *s = calloc(1, sizeof(*s));
	struct u64map by_thread = {0};
	size_t cap = 0;
	int err = s ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->ngpu; i++) {
		if (r->gpu[i].kind == REC_GPU_SYNC)
			err = add_sync(s, &cap, &by_thread, &r->gpu[i]);
	}
	u64map__clear(&by_thread);
	if (err) {
		gpu_syncs__free(s);
		errno = -err;
		return NULL;
	}
	for (size_t i = 0; i < s->nrows; i++)
		s->rows[i].comm =
			s->rows[i].tid ? thread_comm(r, s->rows[i].pid, s->rows[i].tid) : 0;
	if (s->nrows) /* rows is NULL when there were no syncs */
		qsort(s->rows, s->nrows, sizeof(*s->rows), by_wait_desc);
	return s;
}

void gpu_syncs__free(struct gpu_syncs *s)
{
	if (!s)
		return;
	free(s->rows);
	free(s);
}
