// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The reader's time axis (recording.h, version 4): the stack tree, keys (each loads as one
 * rec_sample, its count the sum of its windows'), windows, the exact timeline, region spans and
 * build-ids. Like the rest of the reader it trusts no byte: every id must be defined by an
 * earlier block, every time must stay in order and in range, and a block that fails leaves
 * nothing of itself behind (reader.c cuts back to its mark; windows add to the samples' counts
 * only once the whole block has been read).
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/vec.h"
#include "reader_impl.h"

int parse_stacks(struct loaded *L, struct cur *c)
{
	uint32_t n;

	if (!cur_count(c, MIN_NODE, &n) || n > UINT32_MAX - 1 - L->nnodes)
		return -EBADMSG;
	if (vec_grow(&L->nodes, &L->cap_nodes, L->nnodes + n, sizeof(*L->nodes), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct lnode *node = &L->nodes[L->nnodes];

		if (!cur_uleb32(c, &node->parent1) || !cur_uleb32(c, &node->frame) ||
		    node->parent1 > L->nnodes || node->frame >= L->r.nframes)
			return -EBADMSG;
		node->depth = node->parent1 ? L->nodes[node->parent1 - 1].depth + 1 : 1;
		if (node->depth > MAX_STACK)
			return -EBADMSG;
		L->nnodes++;
	}
	return c->left ? -EBADMSG : 0;
}

/* The frames of node stack1 - 1, root first, into L->stack. */
static int node_frames(struct loaded *L, uint32_t stack1, uint32_t *n)
{
	uint32_t depth = stack1 ? L->nodes[stack1 - 1].depth : 0;

	*n = depth;
	if (vec_grow(&L->stack, &L->cap_stack, depth ? depth : 1, sizeof(*L->stack), 64))
		return -ENOMEM;
	for (uint32_t i = depth; i-- > 0;) {
		const struct lnode *node = &L->nodes[stack1 - 1];

		L->stack[i] = node->frame;
		stack1 = node->parent1;
	}
	return 0;
}

static int read_key(struct loaded *L, struct cur *c, struct rec_sample *s)
{
	uint32_t stack1, n;
	int err;

	*s = (struct rec_sample){0};
	if (!cur_uleb32(c, &s->pid) || !cur_uleb32(c, &s->tid) || !cur_uleb32(c, &s->comm) ||
	    !cur_uleb32(c, &s->flags) || !cur_uleb32(c, &stack1) || s->comm >= L->r.nstrings ||
	    stack1 > L->nnodes)
		return -EBADMSG;
	err = node_frames(L, stack1, &n);
	return err ? err : place_stack(L, L->stack, n, s);
}

/* Sample frames point into the pool only once it stops moving: see reader.c's finish(). */
int parse_keys(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n;
	int err;

	if (!cur_count(c, MIN_KEY, &n) || n > UINT32_MAX - L->nkeys || n > UINT32_MAX - r->nsamples)
		return -EBADMSG;
	if (vec_grow(&r->samples, &L->cap_samples, r->nsamples + n, sizeof(*r->samples), 16) ||
	    vec_grow(&L->key_sample, &L->cap_keys, L->nkeys + n, sizeof(*L->key_sample), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		err = read_key(L, c, &r->samples[r->nsamples]);
		if (err)
			return err;
		L->key_sample[L->nkeys++] = r->nsamples++;
	}
	return c->left ? -EBADMSG : 0;
}

/* One window's counts into L->counts (samples ascending, as their keys). */
static int read_counts(struct loaded *L, struct cur *c, struct rec_window *win)
{
	uint64_t key = 0, count;

	if (!cur_uleb32(c, &win->ncounts) || win->ncounts > c->left / MIN_COUNT)
		return -EBADMSG;
	if (vec_grow(&L->counts, &L->cap_counts, L->ncounts + win->ncounts, sizeof(*L->counts), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < win->ncounts; i++) {
		uint64_t gap;

		if (!cur_uleb(c, &gap) || !cur_uleb(c, &count) || gap >= L->nkeys)
			return -EBADMSG;
		key = i ? key + 1 + gap : gap;
		if (key >= L->nkeys)
			return -EBADMSG;
		L->counts[L->ncounts++] = (struct rec_count){L->key_sample[key], count};
	}
	return 0;
}

static int read_window(struct loaded *L, struct cur *c, uint64_t *last_end)
{
	struct recording *r = &L->r;
	struct rec_window *win = &r->windows[r->nwindows];
	uint64_t start, duration;

	*win = (struct rec_window){0};
	if (!cur_uleb(c, &start) || !cur_uleb(c, &duration) || start > UINT64_MAX - *last_end)
		return -EBADMSG;
	win->start_ns = *last_end + start;
	if (duration > UINT64_MAX - win->start_ns)
		return -EBADMSG;
	win->end_ns = win->start_ns + duration;
	L->win_off[r->nwindows] = L->ncounts;
	*last_end = win->end_ns;
	return read_counts(L, c, win);
}

/* Counts reach the samples only once the whole block is read: a bad block adds nothing. */
int parse_windows(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint64_t last_end = L->last_end;
	size_t first = L->ncounts;
	uint32_t n;
	int err;

	if (!cur_count(c, MIN_WINDOW, &n))
		return -EBADMSG;
	if (vec_grow(&r->windows, &L->cap_windows, r->nwindows + n, sizeof(*r->windows), 64) ||
	    vec_grow(&L->win_off, &L->cap_win_off, r->nwindows + n, sizeof(*L->win_off), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		err = read_window(L, c, &last_end);
		if (err)
			return err;
		r->nwindows++;
	}
	if (c->left)
		return -EBADMSG;
	for (size_t i = first; i < L->ncounts; i++) {
		struct rec_sample *s = &r->samples[L->counts[i].sample];

		s->count = s->count + L->counts[i].count < s->count ? UINT64_MAX
								    : s->count + L->counts[i].count;
	}
	L->last_end = last_end;
	return 0;
}

/* A TIMELINE or SPANS time: the one before plus a signed delta, never out of u64's range. */
static bool read_time(struct cur *c, uint64_t *t)
{
	int64_t delta;
	uint64_t next;

	if (!cur_sleb(c, &delta))
		return false;
	next = *t + (uint64_t)delta;
	if ((delta > 0 && next < *t) || (delta < 0 && next > *t))
		return false;
	*t = next;
	return true;
}

int parse_timeline(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint64_t t = 0;
	uint32_t n, key;

	if (!cur_count(c, MIN_EVENT, &n))
		return -EBADMSG;
	if (vec_grow(&r->events, &L->cap_events, r->nevents + n, sizeof(*r->events), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_time(c, &t) || !cur_uleb32(c, &key) || key >= L->nkeys)
			return -EBADMSG;
		r->events[r->nevents++] = (struct rec_event){t, L->key_sample[key]};
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_span(struct cur *c, const struct recording *r, struct rec_span *s, uint64_t *t)
{
	*s = (struct rec_span){0};
	if (!cur_uleb32(c, &s->pid) || !cur_uleb32(c, &s->tid) || !read_time(c, t) ||
	    !cur_u8(c, &s->kind) || !cur_uleb32(c, &s->name) || !cur_uleb(c, &s->size))
		return false;
	s->time_ns = *t;
	return s->kind <= REC_SPAN_MARK && s->name && s->name < r->nstrings;
}

int parse_spans(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint64_t t = 0;
	uint32_t n;

	if (!cur_count(c, MIN_SPAN, &n))
		return -EBADMSG;
	if (vec_grow(&r->spans, &L->cap_spans, r->nspans + n, sizeof(*r->spans), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_span(c, r, &r->spans[r->nspans], &t))
			return -EBADMSG;
		r->nspans++;
	}
	return c->left ? -EBADMSG : 0;
}

int parse_modules(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n;

	if (!cur_count(c, MIN_MODULE, &n))
		return -EBADMSG;
	if (vec_grow(&r->modules, &L->cap_modules, r->nmodules + n, sizeof(*r->modules), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct rec_module *m = &r->modules[r->nmodules];

		if (!cur_uleb32(c, &m->path) || !cur_uleb32(c, &m->build_id) || !m->path ||
		    m->path >= r->nstrings || m->build_id >= r->nstrings)
			return -EBADMSG;
		r->nmodules++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_gpu(struct cur *c, const struct recording *r, struct rec_gpu *g, uint64_t *t)
{
	uint64_t dur;
	int64_t launch;

	*g = (struct rec_gpu){0};
	if (!cur_u8(c, &g->kind) || !read_time(c, t) || !cur_uleb(c, &dur) ||
	    !cur_uleb32(c, &g->device) || !cur_uleb32(c, &g->stream) || !cur_uleb(c, &g->bytes) ||
	    !cur_uleb32(c, &g->detail) || !cur_uleb32(c, &g->name) ||
	    !cur_uleb32(c, &g->correlation) || !cur_uleb32(c, &g->flags) ||
	    !cur_uleb32(c, &g->graph) || !cur_uleb32(c, &g->pid) || !cur_uleb32(c, &g->tid) ||
	    !cur_sleb(c, &launch))
		return false;
	g->start_ns = *t;
	g->end_ns = *t + dur;
	g->launch_ns = g->tid ? *t + (uint64_t)launch : 0;
	return g->end_ns >= g->start_ns && g->name < r->nstrings;
}

/* Attach mode's libcuda call: its stack's key id becomes launch_key now (keys come first). */
static int add_gpu_call(struct loaded *L, const struct rec_gpu *g)
{
	struct recording *r = &L->r;

	if (g->detail >= L->nkeys)
		return -EBADMSG;
	if (vec_grow(&r->gpu_calls, &L->cap_gpu_calls, r->ngpu_calls + 1, sizeof(*r->gpu_calls),
		     256))
		return -ENOMEM;
	r->gpu_calls[r->ngpu_calls] = *g;
	r->gpu_calls[r->ngpu_calls++].launch_key = L->key_sample[g->detail] + 1;
	return 0;
}

/* A kind this perch does not know (a later one's) is skipped, as an unknown block is. */
static int add_gpu(struct loaded *L, const struct rec_gpu *g)
{
	struct recording *r = &L->r;

	if (g->kind == REC_GPU_NOTE) {
		if (vec_grow(&r->gpu_notes, &L->cap_gpu_notes, r->ngpu_notes + 1,
			     sizeof(*r->gpu_notes), 4))
			return -ENOMEM;
		r->gpu_notes[r->ngpu_notes++] = g->name;
		return 0;
	}
	if (g->kind == REC_GPU_LAUNCH) {
		if (g->detail >= L->nkeys)
			return -EBADMSG;
		return u64map__put(&L->launch_tab, (uint64_t)g->pid << 32 | g->correlation,
				   L->key_sample[g->detail] + 1ull);
	}
	if (g->kind == REC_GPU_CALL)
		return add_gpu_call(L, g);
	if (g->kind < REC_GPU_KERNEL || g->kind > REC_GPU_API)
		return 0;
	if (vec_grow(&r->gpu, &L->cap_gpu, r->ngpu + 1, sizeof(*r->gpu), 256))
		return -ENOMEM;
	r->gpu[r->ngpu++] = *g;
	return 0;
}

int parse_gpu(struct loaded *L, struct cur *c)
{
	uint64_t t = 0;
	uint32_t n;

	if (!cur_count(c, MIN_GPU, &n))
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		struct rec_gpu g;
		int err;

		if (!read_gpu(c, &L->r, &g, &t))
			return -EBADMSG;
		err = add_gpu(L, &g);
		if (err)
			return err;
	}
	return c->left ? -EBADMSG : 0;
}

static int cmp_event(const void *a, const void *b)
{
	const struct rec_event *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return (x->sample > y->sample) - (x->sample < y->sample);
}

/* Windows point at their counts now that the pool has its final address; events in time order
 * (a ring buffer shared by CPUs hands them over nearly, not exactly, in order). */
void time_finish(struct loaded *L)
{
	struct recording *r = &L->r;
	bool sorted = true;

	for (size_t i = 0; i < r->nwindows; i++)
		r->windows[i].counts = r->windows[i].ncounts ? L->counts + L->win_off[i] : NULL;
	for (size_t i = 1; sorted && i < r->nevents; i++)
		sorted = r->events[i - 1].time_ns <= r->events[i].time_ns;
	if (!sorted)
		qsort(r->events, r->nevents, sizeof(*r->events), cmp_event);
	offspans_finish(L);
	for (size_t i = 0; i < r->ngpu; i++) {
		uint64_t sample = 0;
		struct rec_gpu *g = &r->gpu[i];

		if (u64map__get(&L->launch_tab, (uint64_t)g->pid << 32 | g->correlation, &sample) &&
		    sample <= r->nsamples)
			g->launch_key = (uint32_t)sample;
	}
}

void time_free(struct loaded *L)
{
	free(L->nodes);
	free(L->key_sample);
	free(L->counts);
	free(L->win_off);
	free(L->r.windows);
	free(L->r.events);
	free(L->r.spans);
	free(L->r.modules);
	free(L->r.origins);
	free(L->r.cgroups);
	free(L->r.gpu);
	free(L->r.gpu_notes);
	free(L->r.gpu_calls);
	free(L->r.offspans);
	u64map__clear(&L->launch_tab);
}
