// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The writer's time axis (recording.h, version 4): the stack tree and the keys that make a
 * sample's identity small, the counts of each window (kept up to a budget, merged pairwise past
 * it), the exact timeline and region spans under the size cap, and the modules' build-ids.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/vec.h"
#include "writer_impl.h"

static uint32_t hash_key(const struct wkey *k)
{
	uint64_t a = (uint64_t)k->pid << 32 | k->tid, b = (uint64_t)k->comm << 32 | k->flags;

	return hash32(mix64(mix64(a) ^ b) ^ k->stack1);
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct wkey *a = &((const struct rec_writer *)ctx)->keys[idx];

	return !memcmp(a, key, sizeof(*a));
}

static int check_sample(const struct rec_writer *w, const struct rec_sample *s)
{
	if (s->comm >= w->nstrs || s->nframes > MAX_STACK || s->nregions > MAX_STACK - s->nframes ||
	    (s->nframes && !s->frames) || (s->nregions && !s->regions))
		return -EINVAL;
	for (uint32_t i = 0; i < s->nframes; i++) {
		if (s->frames[i] >= w->nframes)
			return -EINVAL;
	}
	for (uint32_t i = 0; i < s->nregions; i++) {
		if (!s->regions[i] || s->regions[i] >= w->nstrs)
			return -EINVAL;
	}
	return 0;
}

/* The frames s is stored as (its regions as region frames, then its frames), in w->rframes. */
static int stored_frames(struct rec_writer *w, const struct rec_sample *s)
{
	uint32_t n = s->nregions + s->nframes;

	if (vec_grow(&w->rframes, &w->cap_rframes, n ? n : 1, sizeof(*w->rframes), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nregions; i++) {
		w->rframes[i] = rec_writer__frame(w, REC_FRAME_REGION, 0, s->regions[i], 0);
		if (w->rframes[i] == UINT32_MAX)
			return -ENOMEM;
	}
	if (s->nframes)
		memcpy(w->rframes + s->nregions, s->frames, s->nframes * sizeof(*s->frames));
	return 0;
}

/* The node of frames[0..n) in the stack tree (+ 1; 0 for no frames), adding what is new. */
static int stack_node(struct rec_writer *w, const uint32_t *frames, uint32_t n, uint32_t *node1)
{
	uint32_t parent1 = 0;
	uint64_t idx;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t edge = (uint64_t)parent1 << 32 | frames[i];

		if (!u64map__get(&w->node_tab, edge, &idx)) {
			if (w->nnodes >= UINT32_MAX - 1 ||
			    vec_grow(&w->nodes, &w->cap_nodes, w->nnodes + 1, sizeof(*w->nodes),
				     64) ||
			    u64map__put(&w->node_tab, edge, w->nnodes))
				return -ENOMEM;
			w->nodes[w->nnodes] = (struct wnode){parent1, frames[i]};
			idx = w->nnodes++;
		}
		parent1 = (uint32_t)idx + 1;
	}
	*node1 = parent1;
	return 0;
}

int wr_key_of(struct rec_writer *w, const struct rec_sample *s, uint32_t *key)
{
	struct wkey k = {s->pid, s->tid, s->comm, s->flags, 0};
	struct idxtab_slot *slot;
	uint32_t hash;
	int err;

	err = check_sample(w, s);
	if (!err)
		err = stored_frames(w, s);
	if (!err)
		err = stack_node(w, w->rframes, s->nregions + s->nframes, &k.stack1);
	if (err)
		return err;
	hash = hash_key(&k);
	if (w->nkeys >= UINT32_MAX - 1 || idxtab__reserve(&w->key_tab))
		return -ENOMEM;
	slot = idxtab__find(&w->key_tab, hash, key_eq, w, &k);
	if (slot->idx1) {
		*key = slot->idx1 - 1;
		return 0;
	}
	if (vec_grow(&w->keys, &w->cap_keys, w->nkeys + 1, sizeof(k), 64) ||
	    vec_grow(&w->pending, &w->cap_pending, w->nkeys + 1, sizeof(*w->pending), 64))
		return -ENOMEM;
	w->keys[w->nkeys] = k;
	w->pending[w->nkeys] = 0;
	idxtab__set(&w->key_tab, slot, w->nkeys, hash);
	*key = w->nkeys++;
	return 0;
}

int rec_writer__key(struct rec_writer *w, const struct rec_sample *s, uint32_t *key)
{
	if (!w || !s || !key)
		return -EINVAL;
	return w->err ? w->err : wr_key_of(w, s, key);
}

/* The count goes to the key's pending count, which the next window takes. */
int rec_writer__add_sample(struct rec_writer *w, const struct rec_sample *s)
{
	uint32_t key;
	int err;

	if (!w || !s)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = wr_key_of(w, s, &key);
	return err ? err : wr_count(w, key, s->count);
}

/* count more for key (defined), for the next window. */
int wr_count(struct rec_writer *w, uint32_t key, uint64_t count)
{
	if (!count)
		return 0;
	if (!w->pending[key]) {
		if (vec_grow(&w->touched, &w->cap_touched, w->ntouched + 1, sizeof(*w->touched),
			     64))
			return -ENOMEM;
		w->touched[w->ntouched++] = key;
	}
	w->pending[key] =
		w->pending[key] + count < w->pending[key] ? UINT64_MAX : w->pending[key] + count;
	return 0;
}

int rec_writer__sample(struct rec_writer *w, uint32_t pid, uint32_t tid, uint64_t count,
		       uint32_t flags, const uint32_t *frames, uint32_t nframes)
{
	return rec_writer__sample_named(w, pid, tid, 0, count, flags, frames, nframes);
}

int rec_writer__sample_named(struct rec_writer *w, uint32_t pid, uint32_t tid, uint32_t comm,
			     uint64_t count, uint32_t flags, const uint32_t *frames,
			     uint32_t nframes)
{
	struct rec_sample s = {.pid = pid,
			       .tid = tid,
			       .count = count,
			       .flags = flags,
			       .comm = comm,
			       .nframes = nframes,
			       .frames = frames};

	return rec_writer__add_sample(w, &s);
}

/* One window as WINDOWS stores it, after the file's previous window; room reserved here. */
static int put_window(struct rec_writer *w, struct buf *b, const struct wwin *win)
{
	uint32_t prev = 0;

	if (buf_reserve(b, 3 * ULEB_MAX + (size_t)win->n * 2 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(b, win->start_ns - w->file_last_end);
	put_uleb(b, win->end_ns - win->start_ns);
	put_uleb(b, win->n);
	for (uint32_t i = 0; i < win->n; i++) {
		put_uleb(b, win->counts[i].sample - (i ? prev + 1 : 0));
		put_uleb(b, win->counts[i].count);
		prev = win->counts[i].sample;
	}
	w->file_last_end = win->end_ns;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The pending counts as a window's (keys ascending); pending is zero after. */
static int take_pending(struct rec_writer *w, struct wwin *win)
{
	win->n = w->ntouched;
	win->counts = calloc(w->ntouched ? w->ntouched : 1, sizeof(*win->counts));
	if (!win->counts)
		return -ENOMEM;
	if (w->ntouched) /* touched may be NULL: no key counted yet */
		qsort(w->touched, w->ntouched, sizeof(*w->touched), cmp_u32);
	for (size_t i = 0; i < w->ntouched; i++) {
		uint32_t k = w->touched[i];

		win->counts[i] = (struct rec_count){k, w->pending[k]};
		w->pending[k] = 0;
	}
	w->ntouched = 0;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* b's counts added into a's (both ascending), b's end becomes a's. */
static int merge_into(struct wwin *a, const struct wwin *b)
{
	struct rec_count *m = calloc((size_t)a->n + b->n + 1, sizeof(*m));
	uint32_t i = 0, j = 0, n = 0;

	if (!m)
		return -ENOMEM;
	while (i < a->n || j < b->n) {
		if (j == b->n || (i < a->n && a->counts[i].sample < b->counts[j].sample)) {
			m[n++] = a->counts[i++];
		} else if (i == a->n || b->counts[j].sample < a->counts[i].sample) {
			m[n++] = b->counts[j++];
		} else {
			/* C leaves the order of an initializer's expressions open: step after */
			m[n++] =
				(struct rec_count){a->counts[i].sample,
						   sat_add(a->counts[i].count, b->counts[j].count)};
			i++;
			j++;
		}
	}
	free(a->counts);
	a->counts = m;
	a->n = n;
	a->end_ns = b->end_ns;
	a->drains += b->drains;
	return 0;
}

/* Past the budget, neighbours merge pairwise and a full window holds twice the drains. */
static int merge_pairs(struct rec_writer *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nwins; i += 2) {
		if (i + 1 < w->nwins) {
			int err = merge_into(&w->wins[i], &w->wins[i + 1]);

			if (err)
				return err;
			free(w->wins[i + 1].counts);
		}
		w->wins[n++] = w->wins[i];
	}
	w->nwins = n;
	w->per_win *= 2;
	return 0;
}

/* Keep win: in the last window while it is not full, else as a new one. */
static int keep_window(struct rec_writer *w, struct wwin *win)
{
	struct wwin *last = w->nwins ? &w->wins[w->nwins - 1] : NULL;
	int err;

	if (last && last->drains < w->per_win) {
		err = merge_into(last, win);
		free(win->counts);
		return err;
	}
	if (vec_grow(&w->wins, &w->cap_wins, w->nwins + 1, sizeof(*w->wins), 64)) {
		free(win->counts);
		return -ENOMEM;
	}
	w->wins[w->nwins++] = *win;
	return w->nwins > w->budget ? merge_pairs(w) : 0;
}

int rec_writer__window(struct rec_writer *w, uint64_t start_ns, uint64_t end_ns)
{
	struct wwin win = {.start_ns = start_ns, .end_ns = end_ns, .drains = 1};
	int err;

	if (!w || end_ns < start_ns || (w->nwins && start_ns < w->last_end))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (!w->per_win)
		w->per_win = 1;
	err = take_pending(w, &win);
	if (!err && !w->winbuf.len)
		err = wr_block_start(&w->winbuf);
	if (!err)
		err = put_window(w, &w->winbuf, &win);
	if (err) {
		free(win.counts);
		return err;
	}
	w->nwinbuf++;
	w->last_end = end_ns;
	return keep_window(w, &win);
}

/* Counts flushed with no window (a writer that keeps no time) go to an untimed one. */
int wr_time_pending_window(struct rec_writer *w)
{
	if (!w->ntouched)
		return 0;
	return rec_writer__window(w, w->last_end, w->last_end);
}

int rec_writer__window_budget(struct rec_writer *w, uint32_t budget)
{
	if (!w || budget < 2)
		return -EINVAL;
	w->budget = budget;
	while (w->nwins > w->budget) {
		int err = merge_pairs(w);

		if (err)
			return err;
	}
	return 0;
}

/* The bytes one TIMELINE or SPANS entry takes, or -ENOSPC (counted) past the cap. */
int wr_timeline_room(struct rec_writer *w, const struct buf *entry, uint64_t *dropped)
{
	if (w->max_size && w->timeline_bytes + entry->len > w->max_size) {
		(*dropped)++;
		return -ENOSPC;
	}
	return 0;
}

/* A time the timeline's signed deltas can carry whatever came before it (the reader refuses a
 * delta that leaves u64's range): at most REC_TIME_MAX. Past it -ERANGE, and the entry counted
 * refused, so a target's garbage time costs that entry and never the block it would join. */
int wr_time_ok(struct rec_writer *w, uint64_t t)
{
	if (t <= REC_TIME_MAX)
		return 0;
	w->refused++;
	return -ERANGE;
}

/* Append the entry in e (built with its delta) to the pending block b. */
int wr_timeline_add(struct rec_writer *w, struct buf *b, uint32_t *n, const struct buf *e)
{
	if (!b->len && wr_block_start(b))
		return -ENOMEM;
	if (buf_reserve(b, e->len))
		return -ENOMEM;
	put_bytes(b, e->data, e->len);
	(*n)++;
	w->timeline_bytes += e->len;
	return b->len >= CHUNK ? rec_writer__flush(w) : 0;
}

int rec_writer__event(struct rec_writer *w, uint64_t time_ns, uint32_t key)
{
	uint8_t bytes[2 * ULEB_MAX];
	struct buf e = {bytes, 0, sizeof(bytes)};
	uint64_t last = w && w->events.len ? w->event_last : 0;
	int err;

	if (!w || key >= w->nkeys)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = wr_time_ok(w, time_ns);
	if (err)
		return err;
	put_sleb(&e, (int64_t)(time_ns - last));
	put_uleb(&e, key);
	err = wr_timeline_room(w, &e, &w->events_dropped);
	if (!err)
		err = wr_timeline_add(w, &w->events, &w->nevents, &e);
	if (!err)
		w->event_last = time_ns;
	return err;
}

int rec_writer__span(struct rec_writer *w, const struct rec_span *s)
{
	uint8_t bytes[5 * ULEB_MAX + 1];
	struct buf e = {bytes, 0, sizeof(bytes)};
	uint64_t last = w && w->spans.len ? w->span_last : 0;
	int err;

	if (!w || !s || s->kind > REC_SPAN_MARK || !s->name || s->name >= w->nstrs)
		return -EINVAL;
	if (w->err)
		return w->err;
	err = wr_time_ok(w, s->time_ns);
	if (err)
		return err;
	put_uleb(&e, s->pid);
	put_uleb(&e, s->tid);
	put_sleb(&e, (int64_t)(s->time_ns - last));
	put_u8(&e, s->kind);
	put_uleb(&e, s->name);
	put_uleb(&e, s->size);
	err = wr_timeline_room(w, &e, &w->spans_dropped);
	if (!err)
		err = wr_timeline_add(w, &w->spans, &w->nspans, &e);
	if (!err)
		w->span_last = s->time_ns;
	return err;
}

static bool gpu_valid(const struct rec_writer *w, const struct rec_gpu *g)
{
	bool known = g->kind == REC_GPU_KERNEL || g->kind == REC_GPU_MEMCPY ||
		     g->kind == REC_GPU_MEMSET || g->kind == REC_GPU_SYNC ||
		     g->kind == REC_GPU_API || g->kind == REC_GPU_NOTE ||
		     g->kind == REC_GPU_LAUNCH || g->kind == REC_GPU_CALL;

	return known && g->name < w->nstrs && g->end_ns >= g->start_ns &&
	       (g->kind != REC_GPU_NOTE || g->name) &&
	       ((g->kind != REC_GPU_LAUNCH && g->kind != REC_GPU_CALL) ||
		(g->detail < w->nkeys && g->tid));
}

/* GPU entries share the timeline's --max-size cap: a channel from a launch-bound program (or a
 * flood) grows the file as fast as any timeline. */
int rec_writer__gpu(struct rec_writer *w, const struct rec_gpu *g)
{
	uint8_t bytes[14 * ULEB_MAX + 1];
	struct buf e = {bytes, 0, sizeof(bytes)};
	uint64_t last = w && w->gpu.len ? w->gpu_last : 0;
	int err;

	if (!w || !g || !gpu_valid(w, g))
		return -EINVAL;
	if (w->err)
		return w->err;
	if (wr_time_ok(w, g->start_ns) || (g->tid && wr_time_ok(w, g->launch_ns)))
		return -ERANGE;
	put_u8(&e, g->kind);
	put_sleb(&e, (int64_t)(g->start_ns - last));
	put_uleb(&e, g->end_ns - g->start_ns);
	put_uleb(&e, g->device);
	put_uleb(&e, g->stream);
	put_uleb(&e, g->bytes);
	put_uleb(&e, g->detail);
	put_uleb(&e, g->name);
	put_uleb(&e, g->correlation);
	put_uleb(&e, g->flags);
	put_uleb(&e, g->graph);
	put_uleb(&e, g->pid);
	put_uleb(&e, g->tid);
	put_sleb(&e, g->tid ? (int64_t)(g->launch_ns - g->start_ns) : 0);
	err = wr_timeline_room(w, &e, &w->gpu_dropped);
	if (err)
		return err;
	if (!w->gpu.len && wr_block_start(&w->gpu))
		return -ENOMEM;
	if (buf_reserve(&w->gpu, e.len))
		return -ENOMEM;
	put_bytes(&w->gpu, e.data, e.len);
	w->ngpu++;
	w->gpu_last = g->start_ns;
	w->timeline_bytes += e.len;
	return w->gpu.len >= CHUNK ? rec_writer__flush(w) : 0;
}

void rec_writer__max_size(struct rec_writer *w, uint64_t bytes)
{
	if (w)
		w->max_size = bytes;
}

uint64_t rec_writer__events_dropped(const struct rec_writer *w)
{
	return w ? w->events_dropped : 0;
}

uint64_t rec_writer__spans_dropped(const struct rec_writer *w)
{
	return w ? w->spans_dropped : 0;
}

uint64_t rec_writer__gpu_dropped(const struct rec_writer *w)
{
	return w ? w->gpu_dropped : 0;
}

int rec_writer__gpu_charge(struct rec_writer *w, uint64_t bytes)
{
	if (!w)
		return -EINVAL;
	if (w->max_size && w->timeline_bytes + bytes > w->max_size) {
		w->gpu_dropped++;
		return -ENOSPC;
	}
	w->timeline_bytes += bytes;
	return 0;
}

uint64_t rec_writer__refused(const struct rec_writer *w)
{
	return w ? w->refused : 0;
}

int rec_writer__module(struct rec_writer *w, uint32_t path, const char *build_id)
{
	uint64_t known;
	uint32_t id;

	if (!w || !path || path >= w->nstrs || !build_id || !build_id[0])
		return -EINVAL;
	if (w->err)
		return w->err;
	if (u64map__get(&w->module_tab, path, &known))
		return 0;
	id = rec_writer__string(w, build_id);
	if (!id)
		return errno == E2BIG ? -EINVAL : -ENOMEM;
	if (vec_grow(&w->modules, &w->cap_modules, w->nmodules + 1, sizeof(*w->modules), 16) ||
	    u64map__put(&w->module_tab, path, w->nmodules))
		return -ENOMEM;
	w->modules[w->nmodules++] = (struct rec_module){path, id};
	return 0;
}

static int put_node(struct rec_writer *w, size_t i)
{
	if (buf_reserve(&w->block, 2 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(&w->block, w->nodes[i].parent1);
	put_uleb(&w->block, w->nodes[i].frame);
	return 0;
}

static int put_key(struct rec_writer *w, size_t i)
{
	const struct wkey *k = &w->keys[i];

	if (buf_reserve(&w->block, 5 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(&w->block, k->pid);
	put_uleb(&w->block, k->tid);
	put_uleb(&w->block, k->comm);
	put_uleb(&w->block, k->flags);
	put_uleb(&w->block, k->stack1);
	return 0;
}

static int put_module(struct rec_writer *w, size_t i)
{
	if (buf_reserve(&w->block, 2 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(&w->block, w->modules[i].path);
	put_uleb(&w->block, w->modules[i].build_id);
	return 0;
}

/* A pending TIMELINE-like block, remembered where it lands for compaction. */
int wr_timeline_write(struct rec_writer *w, uint32_t type, struct buf *b, uint32_t *n)
{
	uint64_t off = w->size;
	int err;

	if (!*n)
		return 0;
	if (vec_grow(&w->extents, &w->cap_extents, w->nextents + 1, sizeof(*w->extents), 16))
		return -ENOMEM;
	err = wr_write_block(w, type, b, *n);
	if (err)
		return err;
	w->extents[w->nextents++] = (struct wextent){off, (uint32_t)b->len};
	b->len = 0;
	*n = 0;
	return 0;
}

/* The time axis's blocks (writer_blocks.c's table): STACKS, KEYS and MODULES as the definitions
 * are (what the file has not got; watermarks), WINDOWS as they are made (all the kept ones again
 * in a compacted file, which starts its windows afresh), TIMELINE, SPANS and GPU as their pending
 * blocks fill (copied as they are into a compacted file: TIMELINE's row copies every
 * timeline-like block, in file order). */
static int flush_nodes(struct rec_writer *w)
{
	return wr_write_range(w, REC_STACKS, &w->nodes_done, w->nnodes, put_node);
}

static void restart_nodes(struct rec_writer *w, bool in_file)
{
	w->nodes_done = in_file ? w->nnodes : 0;
}

static void free_nodes(struct rec_writer *w)
{
	free(w->nodes);
	u64map__clear(&w->node_tab);
}

static int flush_keys(struct rec_writer *w)
{
	return wr_write_range(w, REC_KEYS, &w->keys_done, w->nkeys, put_key);
}

static void restart_keys(struct rec_writer *w, bool in_file)
{
	w->keys_done = in_file ? w->nkeys : 0;
}

static void free_keys(struct rec_writer *w)
{
	free(w->keys);
	idxtab__clear(&w->key_tab);
	free(w->pending);
	free(w->touched);
}

static int flush_modules(struct rec_writer *w)
{
	return wr_write_range(w, REC_MODULES, &w->modules_done, w->nmodules, put_module);
}

static void restart_modules(struct rec_writer *w, bool in_file)
{
	w->modules_done = in_file ? w->nmodules : 0;
}

static void free_modules(struct rec_writer *w)
{
	free(w->modules);
	u64map__clear(&w->module_tab);
}

static int flush_winbuf(struct rec_writer *w)
{
	int err;

	if (!w->nwinbuf)
		return 0;
	err = wr_write_block(w, REC_WINDOWS, &w->winbuf, w->nwinbuf);
	if (err)
		return err;
	w->winbuf.len = 0;
	w->nwinbuf = 0;
	return 0;
}

static int put_kept_window(struct rec_writer *w, size_t i)
{
	return put_window(w, &w->block, &w->wins[i]);
}

static int rewrite_windows(struct rec_writer *w, const struct wr_rewrite *rw)
{
	size_t done = 0;

	(void)rw;
	w->file_last_end = 0;
	return wr_write_range(w, REC_WINDOWS, &done, w->nwins, put_kept_window);
}

static void free_windows(struct rec_writer *w)
{
	for (size_t i = 0; i < w->nwins; i++)
		free(w->wins[i].counts);
	free(w->wins);
	free(w->winbuf.data);
}

static int flush_events(struct rec_writer *w)
{
	return wr_timeline_write(w, REC_TIMELINE, &w->events, &w->nevents);
}

/* Every timeline-like block, copied from the old file as it is; new offsets in rw->off[]. */
static int copy_extents(struct rec_writer *w, const struct wr_rewrite *rw)
{
	for (size_t i = 0; i < w->nextents; i++) {
		const struct wextent *e = &w->extents[i];
		ssize_t n;
		int err;

		w->block.len = 0;
		if (buf_reserve(&w->block, e->len))
			return -ENOMEM;
		n = pread(rw->from, w->block.data, e->len, (off_t)e->off);
		if (n != (ssize_t)e->len)
			return n < 0 ? -errno : -EIO;
		err = wr_write_all(w->fd, w->block.data, e->len);
		if (err)
			return err;
		rw->off[i] = w->size;
		w->size += e->len;
	}
	return 0;
}

static void free_events(struct rec_writer *w)
{
	free(w->events.data);
	free(w->extents);
}

static int flush_spans(struct rec_writer *w)
{
	return wr_timeline_write(w, REC_SPANS, &w->spans, &w->nspans);
}

static void free_spans(struct rec_writer *w)
{
	free(w->spans.data);
}

static int flush_gpu(struct rec_writer *w)
{
	return wr_timeline_write(w, REC_GPU, &w->gpu, &w->ngpu);
}

static void free_gpu(struct rec_writer *w)
{
	free(w->gpu.data);
}

const struct wr_block wr_stacks_block = {REC_STACKS, flush_nodes, NULL, restart_nodes, free_nodes};
const struct wr_block wr_keys_block = {REC_KEYS, flush_keys, NULL, restart_keys, free_keys};
const struct wr_block wr_modules_block = {REC_MODULES, flush_modules, NULL, restart_modules,
					  free_modules};
const struct wr_block wr_windows_block = {REC_WINDOWS, flush_winbuf, rewrite_windows, NULL,
					  free_windows};
const struct wr_block wr_timeline_block = {REC_TIMELINE, flush_events, copy_extents, NULL,
					   free_events};
const struct wr_block wr_spans_block = {REC_SPANS, flush_spans, NULL, NULL, free_spans};
const struct wr_block wr_gpu_block = {REC_GPU, flush_gpu, NULL, NULL, free_gpu};
