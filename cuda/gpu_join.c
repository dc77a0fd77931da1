/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The correlation join of GPU activities to their launches (gpu_join.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpu_join.h"

struct launch_entry {
	struct gpu_launch l;
	uint64_t ran; /* activities joined to it */
};

/* An activity waiting for its launch, in a list per key (oldest first). */
struct pending {
	struct perch_cuda_rec rec;
	size_t next; /* index + 1 of the next one for the same key, 0 at the end */
	int done;
};

struct gpu_join {
	gpu_join_fn *fn;
	void *ctx;
	struct launch_entry *launches;
	size_t nlaunches, launches_cap;
	struct u64map launch_by_key; /* key -> index in launches */
	struct pending *pending;
	size_t npending, pending_cap;
	struct u64map head_by_key, tail_by_key; /* key -> index in pending */
	struct gpu_join_stats stats;
};

static uint64_t join_key(uint32_t pid, uint32_t correlation_id)
{
	return (uint64_t)pid << 32 | correlation_id;
}

struct gpu_join *gpu_join__new(gpu_join_fn *fn, void *ctx)
{
	struct gpu_join *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->fn = fn;
	j->ctx = ctx;
	return j;
}

void gpu_join__free(struct gpu_join *j)
{
	if (!j)
		return;
	free(j->launches);
	free(j->pending);
	u64map__clear(&j->launch_by_key);
	u64map__clear(&j->head_by_key);
	u64map__clear(&j->tail_by_key);
	free(j);
}

static void hand_on(struct gpu_join *j, struct launch_entry *e, const struct perch_cuda_rec *a)
{
	if (e) {
		e->ran++;
		j->stats.joined++;
	}
	j->fn(j->ctx, e ? &e->l : NULL, a);
}

/* The probe's hit and the API record are two views of one call: keep what each knows. */
static void merge_launch(struct gpu_launch *have, const struct gpu_launch *l)
{
	if (!have->stack_id)
		have->stack_id = l->stack_id;
	if (!have->region)
		have->region = l->region;
	if (!have->tid)
		have->tid = l->tid;
	if (!have->time_ns)
		have->time_ns = l->time_ns;
	have->flags |= l->flags;
}

int gpu_join__launch(struct gpu_join *j, const struct gpu_launch *l)
{
	uint64_t key = join_key(l->pid, l->correlation_id), idx;
	struct launch_entry *e;

	if (u64map__get(&j->launch_by_key, key, &idx)) {
		merge_launch(&j->launches[idx].l, l);
		j->stats.duplicate_launches++;
		return 0;
	}
	if (vec_grow(&j->launches, &j->launches_cap, j->nlaunches + 1, sizeof(*j->launches), 256) ||
	    u64map__put(&j->launch_by_key, key, j->nlaunches))
		return -ENOMEM;
	e = &j->launches[j->nlaunches++];
	*e = (struct launch_entry){.l = *l};
	j->stats.launches++;
	if (!u64map__get(&j->head_by_key, key, &idx))
		return 0;
	/* The activities that came first: the launch comes back from its probe after them when
	 * the CPU side is slower to drain than CUPTI's buffers. */
	for (size_t i = idx + 1; i; i = j->pending[i - 1].next) {
		j->pending[i - 1].done = 1;
		hand_on(j, e, &j->pending[i - 1].rec);
	}
	return 0;
}

static int wait_for_launch(struct gpu_join *j, uint64_t key, const struct perch_cuda_rec *a)
{
	uint64_t tail;
	size_t i = j->npending;
	bool first = !u64map__get(&j->tail_by_key, key, &tail);

	if (vec_grow(&j->pending, &j->pending_cap, i + 1, sizeof(*j->pending), 256) ||
	    u64map__put(&j->tail_by_key, key, i) || (first && u64map__put(&j->head_by_key, key, i)))
		return -ENOMEM;
	if (!first)
		j->pending[tail].next = i + 1;
	j->pending[i] = (struct pending){.rec = *a};
	j->npending++;
	return 0;
}

int gpu_join__activity(struct gpu_join *j, const struct perch_cuda_rec *a)
{
	uint64_t key = join_key(a->pid, a->correlation_id), idx;

	j->stats.activities++;
	if (u64map__get(&j->launch_by_key, key, &idx)) {
		hand_on(j, &j->launches[idx], a);
		return 0;
	}
	return wait_for_launch(j, key, a);
}

int gpu_join__channel(struct gpu_join *j, const struct perch_cuda_rec *r)
{
	struct gpu_launch l;

	switch (r->kind) {
	case PERCH_CUDA_KERNEL:
	case PERCH_CUDA_MEMCPY:
	case PERCH_CUDA_MEMSET:
	case PERCH_CUDA_SYNC:
		return gpu_join__activity(j, r);
	case PERCH_CUDA_API:
		l = (struct gpu_launch){.pid = r->pid,
					.correlation_id = r->correlation_id,
					.tid = r->tid,
					.flags = r->flags & PERCH_CUDA_F_LAUNCH,
					.time_ns = r->end_ns};
		return gpu_join__launch(j, &l);
	case PERCH_CUDA_DROPPED:
		gpu_join__dropped(j, r->bytes);
		return 0;
	default:
		return 0;
	}
}

void gpu_join__dropped(struct gpu_join *j, uint64_t n)
{
	j->stats.dropped += n;
}

void gpu_join__finish(struct gpu_join *j)
{
	for (size_t i = 0; i < j->npending; i++) {
		if (j->pending[i].done)
			continue;
		j->pending[i].done = 1;
		j->stats.activities_unmatched++;
		hand_on(j, NULL, &j->pending[i].rec);
	}
	for (size_t i = 0; i < j->nlaunches; i++)
		if (!j->launches[i].ran && (j->launches[i].l.flags & PERCH_CUDA_F_LAUNCH))
			j->stats.launches_unmatched++;
}

const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *j)
{
	return &j->stats;
}
