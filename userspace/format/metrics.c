// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The METRICS block (recording.h) and the metric table (format/metrics.h): both sides here, as
 * ORIGINS. The writer keeps the latest block's payload, so compaction keeps exactly it; the
 * reader keeps the last block it loads.
 */
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "metrics.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_SERIES 4 /* metric, subject, start, npoints: a byte each at least */
#define MIN_POINT  2 /* duration, value delta */

#define REC_METRIC_INFO(e, id, nm, subj, mrg, u) [id] = {nm, u, subj, mrg},
static const struct rec_metric_info infos[REC_METRIC_MAX_ID] = {REC_METRIC_LIST(REC_METRIC_INFO)};
#undef REC_METRIC_INFO

const struct rec_metric_info *rec_metric_info(uint32_t id)
{
	return id < REC_METRIC_MAX_ID && infos[id].name ? &infos[id] : NULL;
}

uint64_t rec_metric_merge(uint8_t merge, uint64_t a, uint64_t da, uint64_t b, uint64_t db)
{
	if (merge == REC_MM_SUM)
		return a + b;
	if (merge == REC_MM_MAX)
		return a > b ? a : b;
	if (!da && !db)
		return (a + b) / 2;
	/* Shares are <= 10000 a point and durations far below 2^50 ns: no overflow. */
	return (a * da + b * db + (da + db) / 2) / (da + db);
}

void rec_series__init(struct rec_series *s, uint32_t metric, uint32_t subject)
{
	const struct rec_metric_info *info = rec_metric_info(metric);

	*s = (struct rec_series){.m = {.metric = metric, .subject = subject},
				 .per = 1,
				 .merge = info ? info->merge : REC_MM_SUM};
}

/* Neighbours pairwise: the budget holds twice the time from now on. */
static void halve(struct rec_series *s)
{
	uint64_t prev_end = s->m.start_ns;
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->m.npoints; i += 2, n++) {
		struct rec_metric_point a = s->pts[i];

		if (i + 1 < s->m.npoints) {
			const struct rec_metric_point *b = &s->pts[i + 1];

			a.value = rec_metric_merge(s->merge, a.value, a.end_ns - prev_end, b->value,
						   b->end_ns - a.end_ns);
			a.end_ns = b->end_ns;
		}
		prev_end = a.end_ns;
		s->pts[n] = a;
	}
	s->m.npoints = n;
	s->per *= 2;
	s->fill = s->per; /* the last point is closed */
}

int rec_series__add(struct rec_series *s, uint64_t start, uint64_t end, uint64_t v, uint32_t budget)
{
	uint32_t n = s->m.npoints;

	if (!n)
		s->m.start_ns = start;
	if (n && s->fill < s->per) {
		struct rec_metric_point *last = &s->pts[n - 1];
		uint64_t prev_end = n > 1 ? s->pts[n - 2].end_ns : s->m.start_ns;

		last->value = rec_metric_merge(s->merge, last->value, last->end_ns - prev_end, v,
					       end - last->end_ns);
		last->end_ns = end;
		s->fill++;
		return 0;
	}
	if (vec_grow(&s->pts, &s->cap, (size_t)n + 1, sizeof(*s->pts), 16))
		return -ENOMEM;
	s->pts[s->m.npoints++] = (struct rec_metric_point){end, v};
	s->m.points = s->pts;
	s->fill = 1;
	if (s->m.npoints > budget)
		halve(s);
	return 0;
}

void rec_series__free(struct rec_series *s)
{
	free(s->pts);
	s->pts = NULL;
	s->m.points = NULL;
	s->m.npoints = 0;
}

static void put_series(struct buf *b, const struct rec_metric *m)
{
	uint64_t prev_end = m->start_ns, prev = 0;

	put_uleb(b, m->metric);
	put_uleb(b, m->subject);
	put_uleb(b, m->start_ns);
	put_uleb(b, m->npoints);
	for (uint32_t i = 0; i < m->npoints; i++) {
		put_uleb(b, m->points[i].end_ns - prev_end);
		put_sleb(b, (int64_t)(m->points[i].value - prev));
		prev_end = m->points[i].end_ns;
		prev = m->points[i].value;
	}
}

static int check_series(const struct rec_metric *m, size_t n, size_t nstrs, size_t *bytes)
{
	*bytes = 2 * ULEB_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t end = m[i].start_ns;

		if ((!rec_metric_info(m[i].metric) && m[i].metric != REC_METRIC_ORIGIN) ||
		    (m[i].npoints && !m[i].points) ||
		    (m[i].metric == REC_METRIC_ORIGIN &&
		     (m[i].npoints || !m[i].subject || m[i].subject >= nstrs)))
			return -EINVAL;
		for (uint32_t j = 0; j < m[i].npoints; j++) {
			if (m[i].points[j].end_ns < end)
				return -EINVAL;
			end = m[i].points[j].end_ns;
		}
		*bytes += (size_t)(4 + 2 * (size_t)m[i].npoints) * ULEB_MAX;
	}
	return *bytes + COUNT_SIZE > MAX_BLOCK ? -EFBIG : 0;
}

static int write_metrics(struct rec_writer *w);

int rec_writer__metrics(struct rec_writer *w, uint64_t interval_ns, uint32_t note,
			const struct rec_metric *m, size_t n)
{
	struct buf *keep;
	size_t bytes;
	int err;

	if (!w || (n && !m) || n > UINT32_MAX || note >= w->nstrs)
		return -EINVAL;
	err = check_series(m, n, w->nstrs, &bytes);
	if (!err)
		err = rec_writer__flush(w); /* the note's string first */
	if (err)
		return err; /* the block kept before stays whole: compaction writes it again */
	keep = &w->metrics;
	keep->len = 0;
	if (buf_reserve(keep, bytes)) {
		w->has_metrics = false;
		return -ENOMEM;
	}
	put_uleb(keep, interval_ns);
	put_uleb(keep, note);
	for (size_t i = 0; i < n; i++)
		put_series(keep, &m[i]);
	w->nmetrics = (uint32_t)n;
	w->has_metrics = true;
	return write_metrics(w);
}

static int write_metrics(struct rec_writer *w)
{
	int err;

	if (!w->has_metrics)
		return 0;
	err = wr_block_start(&w->block);
	if (!err && buf_reserve(&w->block, w->metrics.len))
		err = -ENOMEM;
	if (err)
		return err;
	put_bytes(&w->block, w->metrics.data, w->metrics.len);
	return wr_write_block(w, REC_METRICS, &w->block, w->nmetrics);
}

/* The latest METRICS block again (compaction). */
static int rewrite_metrics(struct rec_writer *w, const struct wr_rewrite *rw)
{
	(void)rw;
	return write_metrics(w);
}

static void free_metrics(struct rec_writer *w)
{
	free(w->metrics.data);
}

const struct wr_block wr_metrics_block = {REC_METRICS, NULL, rewrite_metrics, NULL, free_metrics};

/* One series' points into pts (room for k checked by the caller's cur_count on the block). */
static int parse_points(struct cur *c, struct rec_metric *m, struct rec_metric_point *pts)
{
	uint64_t end = m->start_ns, value = 0;

	for (uint32_t j = 0; j < m->npoints; j++) {
		uint64_t d;
		int64_t dv;

		if (!cur_uleb(c, &d) || !cur_sleb(c, &dv) || end + d < end)
			return -EBADMSG;
		end += d;
		value += (uint64_t)dv;
		pts[j] = (struct rec_metric_point){end, value};
	}
	m->points = pts;
	return 0;
}

static bool read_header(struct cur *c, struct rec_metric *m)
{
	return cur_uleb32(c, &m->metric) && cur_uleb32(c, &m->subject) &&
	       cur_uleb(c, &m->start_ns) && cur_uleb32(c, &m->npoints) &&
	       m->npoints <= c->left / MIN_POINT;
}

/* Two passes: the headers and the number of points, then the points into one array. */
static int parse_all(struct cur *c, struct rec_metric *ms, uint32_t n,
		     struct rec_metric_point **pts)
{
	struct rec_metric_point scratch[1];
	struct cur first = *c;
	size_t total = 0, at = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (!read_header(c, &ms[i]))
			return -EBADMSG;
		for (uint32_t j = 0; j < ms[i].npoints; j++) {
			struct rec_metric one = {.npoints = 1};

			if (parse_points(c, &one, scratch))
				return -EBADMSG;
		}
		total += ms[i].npoints;
	}
	if (c->left)
		return -EBADMSG;
	*pts = calloc(total ? total : 1, sizeof(**pts));
	if (!*pts)
		return -ENOMEM;
	*c = first;
	for (uint32_t i = 0; i < n; i++) {
		read_header(c, &ms[i]);
		if (parse_points(c, &ms[i], *pts + at))
			return -EBADMSG;
		at += ms[i].npoints;
	}
	return 0;
}

int parse_metrics(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_metric_point *pts = NULL;
	struct rec_metric *ms = NULL;
	uint64_t interval;
	uint32_t n, note;
	int err = -EBADMSG;

	if (!cur_count(c, MIN_SERIES, &n) || !cur_uleb(c, &interval) || !cur_uleb32(c, &note) ||
	    note >= r->nstrings)
		return -EBADMSG;
	ms = calloc(n ? n : 1, sizeof(*ms));
	if (!ms)
		return -ENOMEM;
	err = parse_all(c, ms, n, &pts);
	if (err) {
		free(ms);
		free(pts);
		return err;
	}
	free(r->metrics); /* the last block wins */
	free(L->metric_points);
	r->metrics = ms;
	r->nmetrics = n;
	r->metrics_interval_ns = interval;
	r->metrics_note = note;
	L->metric_points = pts;
	return 0;
}
