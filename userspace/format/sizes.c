// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SIZES block (recording.h): the cost-model data of sized regions per thread (buckets by
 * log2(n) and a reservoir of raw (n, t) calls), written by record/regions/regions_sizes.c as the
 * region tables are read, loaded into recording.sthreads. Both sides here, as the block is one
 * part: the last entry of a (pid, tid) wins, on load and in a compacted file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_STHREAD 4 /* pid, tid, over, k */
#define MIN_SMODEL  5 /* name, node, seen, nb, np */
#define MIN_SBUCKET (4 + 4 * 8)
#define MIN_SPOINT  2
#define MAX_LOG2    64

/* A count inside an entry (uleb); false when n items of min bytes can't follow. */
static bool uleb_count(struct cur *c, size_t min, uint32_t *n)
{
	return cur_uleb32(c, n) && *n <= c->left / min;
}

static uint64_t f64_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double bits_f64(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

static size_t model_bytes(const struct rec_size_model *m)
{
	return 5 * ULEB_MAX + (size_t)m->nbuckets * (4 * ULEB_MAX + 4 * 8) +
	       (size_t)m->npoints * 2 * ULEB_MAX;
}

static bool model_ok(const struct rec_size_model *m, size_t nstrs)
{
	if (!m->name || m->name >= nstrs || m->npoints > m->seen || m->nbuckets > MAX_LOG2 + 1 ||
	    (m->nbuckets && !m->buckets) || (m->npoints && !m->points))
		return false;
	for (uint32_t k = 0; k < m->nbuckets; k++) {
		if (m->buckets[k].log2 > MAX_LOG2 ||
		    (k && m->buckets[k].log2 <= m->buckets[k - 1].log2))
			return false;
	}
	return true;
}

static void put_model(struct buf *b, const struct rec_size_model *m)
{
	put_uleb(b, m->name);
	put_uleb(b, m->node);
	put_uleb(b, m->seen);
	put_uleb(b, m->nbuckets);
	for (uint32_t k = 0; k < m->nbuckets; k++) {
		const struct rec_size_bucket *s = &m->buckets[k];

		put_uleb(b, s->log2);
		put_uleb(b, s->count);
		put_uleb(b, s->min_ns);
		put_uleb(b, s->max_ns);
		put_u64(b, f64_bits(s->sum_n));
		put_u64(b, f64_bits(s->sum_t));
		put_u64(b, f64_bits(s->sum_t2));
		put_u64(b, f64_bits(s->sum_nt));
	}
	put_uleb(b, m->npoints);
	for (uint32_t k = 0; k < m->npoints; k++) {
		put_uleb(b, m->points[k].n);
		put_uleb(b, m->points[k].t_ns);
	}
}

/* t encoded into b (reserved first); -ENOMEM. */
static int put_sthread(struct buf *b, const struct rec_size_thread *t)
{
	size_t bytes = 4 * ULEB_MAX;

	for (uint32_t i = 0; i < t->nmodels; i++)
		bytes += model_bytes(&t->models[i]);
	if (buf_reserve(b, bytes))
		return -ENOMEM;
	put_uleb(b, t->pid);
	put_uleb(b, t->tid);
	put_uleb(b, t->over);
	put_uleb(b, t->nmodels);
	for (uint32_t i = 0; i < t->nmodels; i++)
		put_model(b, &t->models[i]);
	return 0;
}

/* The thread's entry as written, replacing the one before: the compacted file has the latest. */
static int remember(struct rec_writer *w, const struct rec_size_thread *t)
{
	uint64_t key = (uint64_t)t->pid << 32 | t->tid, idx;

	if (!u64map__get(&w->sthread_tab, key, &idx)) {
		if (vec_grow(&w->sthreads, &w->cap_sthreads, w->nsthreads + 1, sizeof(*w->sthreads),
			     16) ||
		    u64map__put(&w->sthread_tab, key, w->nsthreads))
			return -ENOMEM;
		idx = w->nsthreads++;
		w->sthreads[idx] = (struct wrthread){.tid_key = key};
	}
	w->sthreads[idx].bytes.len = 0;
	return put_sthread(&w->sthreads[idx].bytes, t);
}

int rec_writer__sizes(struct rec_writer *w, const struct rec_size_thread *t, size_t n)
{
	int err;

	if (!w || (n && !t) || n > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (t[i].nmodels && !t[i].models)
			return -EINVAL;
		for (uint32_t k = 0; k < t[i].nmodels; k++) {
			if (!model_ok(&t[i].models[k], w->nstrs))
				return -EINVAL;
		}
	}
	if (!n)
		return 0;
	err = rec_writer__flush(w);
	if (!err)
		err = wr_block_start(&w->block);
	for (size_t i = 0; !err && i < n; i++)
		err = put_sthread(&w->block, &t[i]);
	if (!err && w->block.len > MAX_BLOCK)
		err = -EFBIG;
	if (!err)
		err = wr_write_block(w, REC_SIZES, &w->block, n);
	for (size_t i = 0; !err && i < n; i++)
		err = remember(w, &t[i]);
	return err;
}

static int put_sthread_bytes(struct rec_writer *w, size_t i)
{
	const struct buf *b = &w->sthreads[i].bytes;

	if (buf_reserve(&w->block, b->len))
		return -ENOMEM;
	put_bytes(&w->block, b->data, b->len);
	return 0;
}

/* Every thread's latest entry again (compaction). */
static int rewrite_sizes(struct rec_writer *w, const struct wr_rewrite *rw)
{
	size_t done = 0;

	(void)rw;
	return wr_write_range(w, REC_SIZES, &done, w->nsthreads, put_sthread_bytes);
}

static void free_sizes(struct rec_writer *w)
{
	for (size_t i = 0; i < w->nsthreads; i++)
		free(w->sthreads[i].bytes.data);
	free(w->sthreads);
	u64map__clear(&w->sthread_tab);
}

const struct wr_block wr_sizes_block = {REC_SIZES, NULL, rewrite_sizes, NULL, free_sizes};

static void free_sthread(struct rec_size_thread *t)
{
	for (uint32_t i = 0; t->models && i < t->nmodels; i++) {
		free(t->models[i].buckets);
		free(t->models[i].points);
	}
	free(t->models);
	t->models = NULL;
}

static bool read_bucket(struct cur *c, struct rec_size_bucket *s)
{
	uint64_t v[4];

	if (!cur_uleb32(c, &s->log2) || !cur_uleb(c, &s->count) || !cur_uleb(c, &s->min_ns) ||
	    !cur_uleb(c, &s->max_ns))
		return false;
	for (int k = 0; k < 4; k++) {
		if (!cur_u64(c, &v[k]))
			return false;
	}
	s->sum_n = bits_f64(v[0]);
	s->sum_t = bits_f64(v[1]);
	s->sum_t2 = bits_f64(v[2]);
	s->sum_nt = bits_f64(v[3]);
	return s->log2 <= MAX_LOG2;
}

static int read_model(struct cur *c, const struct recording *r, struct rec_size_model *m)
{
	if (!cur_uleb32(c, &m->name) || !cur_uleb32(c, &m->node) || !cur_uleb(c, &m->seen) ||
	    !uleb_count(c, MIN_SBUCKET, &m->nbuckets) || m->nbuckets > MAX_LOG2 + 1 || !m->name ||
	    m->name >= r->nstrings)
		return -EBADMSG;
	m->buckets = calloc(m->nbuckets ? m->nbuckets : 1, sizeof(*m->buckets));
	if (!m->buckets)
		return -ENOMEM;
	for (uint32_t k = 0; k < m->nbuckets; k++) {
		if (!read_bucket(c, &m->buckets[k]) ||
		    (k && m->buckets[k].log2 <= m->buckets[k - 1].log2))
			return -EBADMSG;
	}
	if (!uleb_count(c, MIN_SPOINT, &m->npoints) || m->npoints > m->seen)
		return -EBADMSG;
	m->points = calloc(m->npoints ? m->npoints : 1, sizeof(*m->points));
	if (!m->points)
		return -ENOMEM;
	for (uint32_t k = 0; k < m->npoints; k++) {
		if (!cur_uleb(c, &m->points[k].n) || !cur_uleb(c, &m->points[k].t_ns))
			return -EBADMSG;
	}
	return 0;
}

static int read_sthread(struct cur *c, const struct recording *r, struct rec_size_thread *t)
{
	int err = 0;

	if (!cur_uleb32(c, &t->pid) || !cur_uleb32(c, &t->tid) || !cur_uleb(c, &t->over) ||
	    !uleb_count(c, MIN_SMODEL, &t->nmodels))
		return -EBADMSG;
	t->models = calloc(t->nmodels ? t->nmodels : 1, sizeof(*t->models));
	if (!t->models)
		return -ENOMEM;
	for (uint32_t i = 0; !err && i < t->nmodels; i++)
		err = read_model(c, r, &t->models[i]);
	return err;
}

/* Replace the size thread with t's pid and tid, or add t (taking its memory). */
static int add_sthread(struct loaded *L, struct rec_size_thread *t)
{
	struct recording *r = &L->r;
	uint64_t key = (uint64_t)t->pid << 32 | t->tid, idx;

	if (u64map__get(&L->sthread_tab, key, &idx)) {
		free_sthread(&r->sthreads[idx]);
		r->sthreads[idx] = *t;
		return 0;
	}
	if (vec_grow(&r->sthreads, &L->cap_sthreads, r->nsthreads + 1, sizeof(*t), 16) ||
	    u64map__put(&L->sthread_tab, key, r->nsthreads))
		return -ENOMEM;
	r->sthreads[r->nsthreads++] = *t;
	return 0;
}

/* Read whole before anything changes: a damaged block replaces nothing. */
int parse_sizes(struct loaded *L, struct cur *c)
{
	struct rec_size_thread *v;
	uint32_t n, i;
	int err = 0;

	if (!cur_count(c, MIN_STHREAD, &n))
		return -EBADMSG;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; !err && i < n; i++)
		err = read_sthread(c, &L->r, &v[i]);
	if (!err && c->left)
		err = -EBADMSG;
	for (uint32_t j = 0; j < n; j++) {
		if (!err && !(err = add_sthread(L, &v[j])))
			continue;
		free_sthread(&v[j]); /* not added: add_sthread failing adds nothing */
	}
	free(v);
	return err;
}

void sizes_free(struct loaded *L)
{
	for (size_t i = 0; i < L->r.nsthreads; i++)
		free_sthread(&L->r.sthreads[i]);
	free(L->r.sthreads);
	u64map__clear(&L->sthread_tab);
}
