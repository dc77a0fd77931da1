/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The correlation join of GPU activities to their launches (gpu_join.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "gpu_join.h"

#define NONE UINT64_MAX /* a wait list's head or tail once its launch came */

struct launch_entry {
	struct gpu_launch l;
	uint64_t ran;	  /* activities joined to it */
	uint64_t seen_ns; /* perch's clock at its last join (or its arrival) */
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
	struct gpu_join_limits lim;
	uint64_t now_ns, swept_ns; /* gpu_join__tick()'s clock, and its last sweep */
	struct launch_entry *launches;
	size_t nlaunches, launches_cap;
	struct u64map launch_by_key; /* key -> index in launches */
	struct pending *pending;
	size_t npending, pending_cap;
	struct u64map head_by_key, tail_by_key; /* key -> index in pending (NONE: no list) */
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
	j->lim = (struct gpu_join_limits){GPU_JOIN_MAX_LAUNCHES, GPU_JOIN_MAX_PENDING,
					  GPU_JOIN_WINDOW_NS};
	return j;
}

int gpu_join__set_limits(struct gpu_join *j, const struct gpu_join_limits *lim)
{
	if (lim->max_launches < 2 || lim->max_pending < 2 || !lim->window_ns)
		return -EINVAL;
	j->lim = *lim;
	return 0;
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
		e->seen_ns = j->now_ns;
		j->stats.joined++;
	}
	j->fn(j->ctx, e ? &e->l : NULL, a);
}

/* An activity that will not wait for its launch any longer (or the run ended): handed on
 * without it, counted. */
static void give_up(struct gpu_join *j, struct pending *p)
{
	p->done = 1;
	j->stats.activities_unmatched++;
	hand_on(j, NULL, &p->rec);
}

/* A launch leaving the table: one that launched and ran nothing is counted. */
static void forget_launch(struct gpu_join *j, const struct launch_entry *e, bool final)
{
	if (e->ran || !(e->l.flags & PERCH_CUDA_F_LAUNCH))
		return;
	j->stats.launches_unmatched++;
	j->stats.launches_dropped += !final;
}

static bool expired(const struct gpu_join *j, const struct launch_entry *e)
{
	return e->ran && j->now_ns - e->seen_ns > j->lim.window_ns;
}

/* Keep the launches keep() says, in order, and index them again. */
static int launches_filter(struct gpu_join *j,
			   bool (*keep)(struct gpu_join *, struct launch_entry *, void *),
			   void *arg)
{
	size_t n = 0;

	u64map__clear(&j->launch_by_key);
	for (size_t i = 0; i < j->nlaunches; i++) {
		struct launch_entry *e = &j->launches[i];

		if (!keep(j, e, arg)) {
			forget_launch(j, e, false);
			continue;
		}
		j->launches[n] = *e;
		if (u64map__put(&j->launch_by_key, join_key(e->l.pid, e->l.correlation_id), n))
			return -ENOMEM;
		n++;
	}
	j->nlaunches = n;
	return 0;
}

static bool keep_unexpired(struct gpu_join *j, struct launch_entry *e, void *arg)
{
	(void)arg;
	return !expired(j, e);
}

/* How many of each kind a full table sheds, oldest first: the joined ones (their graph's
 * remaining kernels would come unmatched), then those still waiting for their activities. */
struct shed {
	size_t joined, waiting;
};

static bool keep_unshed(struct gpu_join *j, struct launch_entry *e, void *arg)
{
	struct shed *s = arg;
	size_t *left = e->ran ? &s->joined : &s->waiting;

	if (expired(j, e))
		return false;
	if (!*left)
		return true;
	(*left)--;
	return false;
}

/* The table is full: down to half, the expired first, then the joined, then the waiting. */
static int launches_shed(struct gpu_join *j)
{
	size_t live = 0, joined = 0, want = j->lim.max_launches / 2;
	struct shed s = {0};

	for (size_t i = 0; i < j->nlaunches; i++) {
		live += !expired(j, &j->launches[i]);
		joined += j->launches[i].ran && !expired(j, &j->launches[i]);
	}
	if (live > want) {
		s.joined = live - want < joined ? live - want : joined;
		s.waiting = live - want - s.joined;
	}
	return launches_filter(j, keep_unshed, &s);
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
	if (j->nlaunches >= j->lim.max_launches && launches_shed(j))
		return -ENOMEM;
	if (vec_grow(&j->launches, &j->launches_cap, j->nlaunches + 1, sizeof(*j->launches), 256) ||
	    u64map__put(&j->launch_by_key, key, j->nlaunches))
		return -ENOMEM;
	e = &j->launches[j->nlaunches++];
	*e = (struct launch_entry){.l = *l, .seen_ns = j->now_ns};
	j->stats.launches++;
	if (!u64map__get(&j->head_by_key, key, &idx) || idx == NONE)
		return 0;
	/* The activities that came first: the launch comes back from its probe after them when
	 * the CPU side is slower to drain than CUPTI's buffers. */
	for (size_t i = idx + 1; i; i = j->pending[i - 1].next) {
		if (j->pending[i - 1].done)
			continue;
		j->pending[i - 1].done = 1;
		hand_on(j, e, &j->pending[i - 1].rec);
	}
	if (u64map__put(&j->head_by_key, key, NONE) || u64map__put(&j->tail_by_key, key, NONE))
		return -ENOMEM;
	return 0;
}

/* The waiting activities, those still waiting moved to the front and their lists linked again. */
static int pending_pack(struct gpu_join *j)
{
	size_t n = 0;
	uint64_t tail;

	u64map__clear(&j->head_by_key);
	u64map__clear(&j->tail_by_key);
	for (size_t i = 0; i < j->npending; i++) {
		struct pending p = j->pending[i];
		uint64_t key = join_key(p.rec.pid, p.rec.correlation_id);
		bool first;

		if (p.done)
			continue;
		first = !u64map__get(&j->tail_by_key, key, &tail);
		if (u64map__put(&j->tail_by_key, key, n) ||
		    (first && u64map__put(&j->head_by_key, key, n)))
			return -ENOMEM;
		if (!first)
			j->pending[tail].next = n + 1;
		p.next = 0;
		j->pending[n++] = p;
	}
	j->npending = n;
	return 0;
}

/* The waiting table is full: the oldest wait no longer (handed on without a launch) until half
 * of it is left. */
static int pending_shed(struct gpu_join *j)
{
	size_t live = 0, want = j->lim.max_pending / 2;

	for (size_t i = 0; i < j->npending; i++)
		live += !j->pending[i].done;
	for (size_t i = 0; i < j->npending && live > want; i++) {
		if (j->pending[i].done)
			continue;
		give_up(j, &j->pending[i]);
		j->stats.waits_cut++;
		live--;
	}
	return pending_pack(j);
}

static int wait_for_launch(struct gpu_join *j, uint64_t key, const struct perch_cuda_rec *a)
{
	uint64_t tail;
	size_t i;
	bool first;

	if (j->npending >= j->lim.max_pending && pending_shed(j))
		return -ENOMEM;
	i = j->npending;
	first = !u64map__get(&j->tail_by_key, key, &tail) || tail == NONE;
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

int gpu_join__tick(struct gpu_join *j, uint64_t now_ns)
{
	bool any = false;

	j->now_ns = now_ns;
	if (now_ns - j->swept_ns < j->lim.window_ns)
		return 0;
	j->swept_ns = now_ns;
	for (size_t i = 0; i < j->nlaunches && !any; i++)
		any = expired(j, &j->launches[i]);
	return any ? launches_filter(j, keep_unexpired, NULL) : 0;
}

void gpu_join__finish(struct gpu_join *j)
{
	for (size_t i = 0; i < j->npending; i++)
		if (!j->pending[i].done)
			give_up(j, &j->pending[i]);
	for (size_t i = 0; i < j->nlaunches; i++)
		forget_launch(j, &j->launches[i], true);
	j->nlaunches = 0;
	j->npending = 0;
	u64map__clear(&j->launch_by_key);
	u64map__clear(&j->head_by_key);
	u64map__clear(&j->tail_by_key);
}

const struct gpu_join_stats *gpu_join__stats(const struct gpu_join *j)
{
	return &j->stats;
}

void gpu_join__size(const struct gpu_join *j, size_t *launches, size_t *waiting)
{
	*launches = j->nlaunches;
	*waiting = 0;
	for (size_t i = 0; i < j->npending; i++)
		*waiting += !j->pending[i].done;
}
