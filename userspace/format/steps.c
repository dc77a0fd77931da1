// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The STEPS block (recording.h): the steps of the programs' perch_step() with the samples of
 * each, and the windows the programs paused themselves in (perch_profile_pause()). Written
 * whole by the writer (the last block wins, compaction keeps it), loaded into
 * recording.steps. Both sides here: the block is small and only programs with steps or pauses
 * make it.
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_STEP 6 /* kind, pid, n, start, end, k: a byte each at least */

static int check_steps(struct rec_writer *w, const struct rec_step *s, size_t n, size_t *bytes)
{
	size_t b = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i].kind > REC_STEP_PAUSE || (s[i].ncounts && !s[i].counts))
			return -EINVAL;
		if (s[i].end_ns && s[i].end_ns < s[i].start_ns) {
			w->refused++; /* the reader refuses it */
			return -ERANGE;
		}
		for (uint32_t j = 0; j < s[i].ncounts; j++) {
			if (s[i].counts[j].sample >= w->nkeys)
				return -EINVAL;
		}
		b += 6 * ULEB_MAX + (size_t)s[i].ncounts * 2 * ULEB_MAX;
	}
	*bytes = b;
	return 0;
}

static int write_steps(struct rec_writer *w);

int rec_writer__steps(struct rec_writer *w, const struct rec_step *s, size_t n)
{
	struct buf *keep;
	size_t bytes = 0;
	int err;

	if (!w || (n && !s) || n > UINT32_MAX)
		return -EINVAL;
	err = rec_writer__flush(w); /* the keys first */
	if (!err)
		err = check_steps(w, s, n, &bytes);
	if (err)
		return err; /* the block kept before stays whole: compaction writes it again */
	keep = &w->steps;
	keep->len = 0;
	if (buf_reserve(keep, bytes)) {
		w->has_steps = false;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		put_uleb(keep, s[i].kind);
		put_uleb(keep, s[i].pid);
		put_uleb(keep, s[i].n);
		put_uleb(keep, s[i].start_ns);
		put_uleb(keep, s[i].end_ns);
		put_uleb(keep, s[i].ncounts);
		for (uint32_t j = 0; j < s[i].ncounts; j++) {
			put_uleb(keep, s[i].counts[j].sample);
			put_uleb(keep, s[i].counts[j].count);
		}
	}
	w->nsteps = (uint32_t)n;
	w->has_steps = true;
	return write_steps(w);
}

static int write_steps(struct rec_writer *w)
{
	int err;

	if (!w->has_steps)
		return 0;
	err = wr_block_start(&w->block);
	if (!err && buf_reserve(&w->block, w->steps.len))
		err = -ENOMEM;
	if (err)
		return err;
	put_bytes(&w->block, w->steps.data, w->steps.len);
	return wr_write_block(w, REC_STEPS, &w->block, w->nsteps);
}

/* The latest STEPS block again (compaction). */
static int rewrite_steps(struct rec_writer *w, const struct wr_rewrite *rw)
{
	(void)rw;
	return write_steps(w);
}

static void free_steps(struct rec_writer *w)
{
	free(w->steps.data);
}

const struct wr_block wr_steps_block = {REC_STEPS, NULL, rewrite_steps, NULL, free_steps};

/* One entry's head; its counts are checked by the caller. */
static bool parse_head(struct cur *c, struct rec_step *s)
{
	return cur_uleb32(c, &s->kind) && s->kind <= REC_STEP_PAUSE && cur_uleb32(c, &s->pid) &&
	       cur_uleb(c, &s->n) && cur_uleb(c, &s->start_ns) && cur_uleb(c, &s->end_ns) &&
	       (!s->end_ns || s->end_ns >= s->start_ns) && cur_uleb32(c, &s->ncounts);
}

/* Every entry of the block: counts into one array (key ids made sample indexes). */
static int parse_all(struct loaded *L, struct cur *c, struct rec_step *v, uint32_t n,
		     struct rec_count **out)
{
	struct rec_count *pool = NULL;
	size_t np = 0, cap = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!parse_head(c, &v[i]) || v[i].ncounts > c->left / 2)
			goto bad;
		if (v[i].ncounts && vec_grow(&pool, &cap, np + v[i].ncounts, sizeof(*pool), 64)) {
			free(pool);
			return -ENOMEM;
		}
		v[i].counts = (const struct rec_count *)(uintptr_t)np; /* an offset until the end */
		for (uint32_t j = 0; j < v[i].ncounts; j++, np++) {
			uint32_t key;

			if (!cur_uleb32(c, &key) || key >= L->nkeys ||
			    !cur_uleb(c, &pool[np].count))
				goto bad;
			pool[np].sample = L->key_sample[key];
		}
	}
	if (c->left)
		goto bad;
	for (uint32_t i = 0; i < n; i++)
		v[i].counts = v[i].ncounts ? pool + (size_t)(uintptr_t)v[i].counts : NULL;
	*out = pool;
	return 0;
bad:
	free(pool);
	return -EBADMSG;
}

int parse_steps(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_count *pool = NULL;
	struct rec_step *v;
	uint32_t n;
	int err;

	if (!cur_count(c, MIN_STEP, &n))
		return -EBADMSG;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = parse_all(L, c, v, n, &pool);
	if (err) {
		free(v);
		return err;
	}
	free(r->steps); /* the last block wins */
	free(L->step_counts);
	r->steps = v;
	r->nsteps = n;
	L->step_counts = pool;
	return 0;
}
