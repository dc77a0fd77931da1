// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch merge` (merge.h): loaded recordings into one version 4 file through the writer. Each
 * input's strings, frames, lines, processes (pids, with their ORIGINS and CGROUPS), keys, modules, region
 * tables, spans, GPU entries and off-CPU spans are defined in the output's ids; then every
 * input's metric series (after a marker of its origin), the windows of all inputs in one time
 * line, the timeline ticks in time order, the steps and program pauses of all (one STEPS table),
 * META, STATS and END.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/u64map.h"
#include "lib/vec.h"
#include "merge.h"
#include "metrics.h"
#include "writer_impl.h"

#define FIRST_FREE_PID 4194304u /* above the kernel's largest pid_max */

/* One input: its ids in the output's. */
struct min {
	const struct recording *r;
	const char *label_str;
	uint32_t label;
	uint32_t *str, *frame, *key; /* by string, frame, sample */
	struct u64map pid;	     /* its pid -> the output's */
};

struct merge {
	struct rec_writer *w;
	struct u64map used; /* the output's pids */
	uint32_t next_pid;
	uint32_t *ids; /* one sample's regions and frames; reused */
	size_t cap_ids;
};

/* A timed entry the writer dropped or refused (a time past REC_TIME_MAX, which a hand-made input
 * can hold: the reader loads any u64) is counted by it and fails nothing. */
static int kept(int err)
{
	return err == -ENOSPC || err == -ERANGE ? 0 : err;
}

static int map_strings(struct merge *m, struct min *in)
{
	const struct recording *r = in->r;

	in->str = calloc(r->nstrings + 1, sizeof(*in->str));
	if (!in->str)
		return -ENOMEM;
	for (size_t j = 1; j < r->nstrings; j++) {
		in->str[j] = rec_writer__string(m->w, r->strings[j]);
		if (!in->str[j] && r->strings[j][0])
			return -ENOMEM;
	}
	return 0;
}

static int map_lines(struct merge *m, struct min *in, const struct rec_frame *f, uint32_t out)
{
	struct rec_line lines[256];
	uint32_t n = f->nlines < 256 ? f->nlines : 256;

	for (uint32_t k = 0; k < n; k++)
		lines[k] = (struct rec_line){in->str[f->lines[k].function],
					     in->str[f->lines[k].file], f->lines[k].line};
	return n ? rec_writer__lines(m->w, out, lines, n) : 0;
}

/* Two frames of one input with equal fields are a leaf and a return address at one offset (see
 * REC_FRAME_CALL): the second stays a frame of its own, with its own LINES. */
static int map_frames(struct merge *m, struct min *in)
{
	const struct recording *r = in->r;
	struct u64map seen = {0};
	uint64_t dup;
	int err = 0;

	in->frame = calloc(r->nframes + 1, sizeof(*in->frame));
	if (!in->frame)
		return -ENOMEM;
	for (size_t j = 0; j < r->nframes && !err; j++) {
		const struct rec_frame *f = &r->frames[j];
		uint32_t id = rec_writer__frame(m->w, f->kind, in->str[f->module], in->str[f->name],
						f->offset);

		if (id != UINT32_MAX && u64map__get(&seen, id, &dup))
			id = rec_writer__frame(m->w, f->kind | REC_FRAME_CALL, in->str[f->module],
					       in->str[f->name], f->offset);
		in->frame[j] = id;
		err = id == UINT32_MAX || u64map__put(&seen, id, j) ? -ENOMEM
								    : map_lines(m, in, f, id);
	}
	u64map__clear(&seen);
	return err;
}

/* The origin of the input's pid: the input's label, or for an input that is itself a merge,
 * "LABEL/ITS_ORIGIN" and the pid it had there. */
static int add_origin(struct merge *m, const struct min *in, uint32_t pid, uint32_t out)
{
	const struct rec_origin *o = recording__origin(in->r, pid);
	char *both = NULL;
	uint32_t id = in->label;

	if (o) {
		if (asprintf(&both, "%s/%s", in->label_str, recording__string(in->r, o->origin)) <
		    0)
			return -ENOMEM;
		id = rec_writer__string(m->w, both);
		free(both);
		if (!id)
			return -ENOMEM;
		pid = o->source_pid;
	}
	return rec_writer__origin(m->w, out, id, pid);
}

/* The input's pid's control group (CGROUPS), for the output's pid. */
static int add_cgroup(struct merge *m, const struct min *in, uint32_t pid, uint32_t out)
{
	const char *cg = recording__cgroup(in->r, pid);
	uint32_t id;

	if (!cg)
		return 0;
	id = rec_writer__string(m->w, cg);
	return id ? rec_writer__cgroup(m->w, out, id) : -ENOMEM;
}

/* The output's pid for the input's pid: its own unless an earlier input took it. */
static int map_pid(struct merge *m, struct min *in, uint32_t pid, uint32_t *out)
{
	uint64_t v;
	int err;

	if (u64map__get(&in->pid, pid, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	*out = pid;
	if (u64map__get(&m->used, pid, &v)) {
		while (u64map__get(&m->used, m->next_pid, &v))
			m->next_pid++;
		*out = m->next_pid++;
	}
	err = u64map__put(&m->used, *out, 1);
	if (!err)
		err = u64map__put(&in->pid, pid, *out);
	if (!err)
		err = add_cgroup(m, in, pid, *out);
	return err ? err : add_origin(m, in, pid, *out);
}

static int map_threads(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->nthreads && !err; j++) {
		const struct rec_thread *t = &in->r->threads[j];
		uint32_t pid, ppid = t->ppid;
		uint64_t v;

		err = map_pid(m, in, t->pid, &pid);
		if (u64map__get(&in->pid, t->ppid, &v))
			ppid = (uint32_t)v;
		if (!err)
			err = rec_writer__thread(m->w, pid, t->tid, ppid, in->str[t->comm]);
	}
	return err;
}

/* Sample s in the output's ids into *o (its arrays in m->ids until the next call). */
static int map_sample(struct merge *m, struct min *in, const struct rec_sample *s,
		      struct rec_sample *o)
{
	uint32_t n = s->nregions + s->nframes;

	if (vec_grow(&m->ids, &m->cap_ids, n ? n : 1, sizeof(*m->ids), 64))
		return -ENOMEM;
	*o = *s;
	for (uint32_t k = 0; k < s->nregions; k++)
		m->ids[k] = in->str[s->regions[k]];
	for (uint32_t k = 0; k < s->nframes; k++)
		m->ids[s->nregions + k] = in->frame[s->frames[k]];
	o->comm = in->str[s->comm];
	o->regions = m->ids;
	o->frames = m->ids + s->nregions;
	return map_pid(m, in, s->pid, &o->pid);
}

static int map_keys(struct merge *m, struct min *in)
{
	const struct recording *r = in->r;
	int err = 0;

	in->key = calloc(r->nsamples + 1, sizeof(*in->key));
	if (!in->key)
		return -ENOMEM;
	for (size_t j = 0; j < r->nsamples && !err; j++) {
		struct rec_sample o;

		err = map_sample(m, in, &r->samples[j], &o);
		if (!err)
			err = rec_writer__key(m->w, &o, &in->key[j]);
		if (!err && r->samples[j].offcpu_ns) /* --off-cpu's time (OFFCPU) */
			err = rec_writer__offcpu(m->w, in->key[j], r->samples[j].offcpu_ns);
	}
	for (size_t j = 0; j < r->nmodules && !err; j++)
		err = rec_writer__module(m->w, in->str[r->modules[j].path],
					 recording__string(r, r->modules[j].build_id));
	return err;
}

static int map_regions(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->nrthreads && !err; j++) {
		struct rec_region_thread t = in->r->rthreads[j];
		struct rec_region_node *nodes = calloc(t.nnodes + 1, sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		for (uint32_t k = 0; k < t.nnodes; k++) {
			nodes[k] = t.nodes[k];
			nodes[k].name = in->str[t.nodes[k].name];
		}
		t.nodes = nodes;
		err = map_pid(m, in, t.pid, &t.pid);
		if (!err)
			err = rec_writer__regions(m->w, &t, 1);
		free(nodes);
	}
	return err;
}

/* SIZES: the cost-model data of sized regions, names and pids mapped. */
static int map_sizes(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->nsthreads && !err; j++) {
		struct rec_size_thread t = in->r->sthreads[j];
		struct rec_size_model *models = calloc(t.nmodels + 1, sizeof(*models));

		if (!models)
			return -ENOMEM;
		for (uint32_t k = 0; k < t.nmodels; k++) {
			models[k] = t.models[k];
			models[k].name = in->str[t.models[k].name];
		}
		t.models = models;
		err = map_pid(m, in, t.pid, &t.pid);
		if (!err)
			err = rec_writer__sizes(m->w, &t, 1);
		free(models);
	}
	return err;
}

static int map_spans(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->nspans && !err; j++) {
		struct rec_span s = in->r->spans[j];

		s.name = in->str[s.name];
		err = map_pid(m, in, s.pid, &s.pid);
		if (!err)
			err = kept(rec_writer__span(m->w, &s));
	}
	return err;
}

/* The LAUNCH entry of g's launch stack (the reader folded it into launch_key). */
static int map_launch(struct merge *m, struct min *in, const struct rec_gpu *g, struct u64map *done)
{
	struct rec_gpu l = {.kind = REC_GPU_LAUNCH, .pid = g->pid, .tid = g->tid};
	uint64_t k = (uint64_t)g->pid << 32 | g->correlation, v;

	if (!g->launch_key || u64map__get(done, k, &v))
		return 0;
	l.detail = in->key[g->launch_key - 1];
	l.correlation = g->correlation;
	l.start_ns = l.end_ns = g->launch_ns;
	return u64map__put(done, k, 1) ? -ENOMEM : kept(rec_writer__gpu(m->w, &l));
}

static int map_gpu(struct merge *m, struct min *in)
{
	struct u64map done = {0};
	int err = 0;

	for (size_t j = 0; j < in->r->ngpu && !err; j++) {
		struct rec_gpu g = in->r->gpu[j];

		g.name = in->str[g.name];
		g.launch_key = 0;
		if (g.pid || g.tid)
			err = map_pid(m, in, g.pid, &g.pid);
		if (!err)
			err = map_launch(m, in,
					 &(struct rec_gpu){.pid = g.pid,
							   .tid = g.tid,
							   .correlation = g.correlation,
							   .launch_ns = g.launch_ns,
							   .launch_key = in->r->gpu[j].launch_key},
					 &done);
		if (!err)
			err = kept(rec_writer__gpu(m->w, &g));
	}
	for (size_t j = 0; j < in->r->ngpu_notes && !err; j++)
		err = rec_writer__gpu(m->w,
				      &(struct rec_gpu){.kind = REC_GPU_NOTE,
							.name = in->str[in->r->gpu_notes[j]]});
	u64map__clear(&done);
	return err;
}

/* Attach mode's libcuda calls (perch record --gpu -p): each names its stack's key itself. */
static int map_gpu_calls(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->ngpu_calls && !err; j++) {
		struct rec_gpu g = in->r->gpu_calls[j];

		g.name = in->str[g.name];
		g.detail = in->key[g.launch_key - 1]; /* the reader set it from the key */
		g.launch_key = 0;
		err = map_pid(m, in, g.pid, &g.pid);
		if (!err)
			err = kept(rec_writer__gpu(m->w, &g));
	}
	return err;
}

/* --off-cpu --timeline's spans (OFFSPANS), on the input's keys in the output's ids. */
static int map_offspans(struct merge *m, struct min *in)
{
	int err = 0;

	for (size_t j = 0; j < in->r->noffspans && !err; j++) {
		const struct rec_offspan *o = &in->r->offspans[j];

		err = kept(rec_writer__offspan(m->w, in->key[o->sample], o->start_ns, o->end_ns));
	}
	return err;
}

/* A marker's label in the output: the input's own, or "LABEL/INNER" for a marker of an input
 * that is itself a merge (as ORIGINS compose). */
static int marker_label(struct merge *m, const struct min *in, const struct rec_metric *s,
			uint32_t *id)
{
	const char *inner = recording__string(in->r, s->subject);
	char *both = NULL;

	if (s->metric != REC_METRIC_ORIGIN) {
		*id = in->label;
		return 0;
	}
	if (asprintf(&both, "%s/%s", in->label_str, inner) < 0)
		return -ENOMEM;
	*id = rec_writer__string(m->w, both);
	free(both);
	return *id ? 0 : -ENOMEM;
}

/* One input's series after a marker of its label (unless its own first series is one): process
 * series follow their process's pid in the output, the points are the input's. */
static int input_metrics(struct merge *m, struct min *in, struct rec_metric **v, size_t *nv,
			 size_t *cap)
{
	const struct recording *r = in->r;
	int err = 0;

	if (!r->nmetrics && !r->metrics_note)
		return 0;
	for (size_t j = 0; j <= r->nmetrics && !err; j++) {
		struct rec_metric s = j ? r->metrics[j - 1] : (struct rec_metric){0};
		const struct rec_metric_info *info = rec_metric_info(s.metric);

		if (!j && r->nmetrics && r->metrics[0].metric == REC_METRIC_ORIGIN)
			continue; /* a merge's first marker names its first input */
		if (vec_grow(v, cap, *nv + 1, sizeof(**v), 64))
			return -ENOMEM;
		if (!j || s.metric == REC_METRIC_ORIGIN) {
			err = marker_label(m, in, &s, &s.subject);
			s = (struct rec_metric){.metric = REC_METRIC_ORIGIN, .subject = s.subject};
		} else if (info && info->subject == REC_MS_PROC) {
			err = map_pid(m, in, s.subject, &s.subject);
		}
		(*v)[(*nv)++] = s;
	}
	return err;
}

/* The inputs' notes as one line, each after its input's label. */
static int notes_line(struct merge *m, struct min *in, size_t n, uint32_t *note)
{
	char *line = NULL, *next;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (!in[i].r->metrics_note)
			continue;
		if (asprintf(&next, "%s%s%s: %s", line ? line : "", line ? "; " : "",
			     in[i].label_str,
			     recording__string(in[i].r, in[i].r->metrics_note)) < 0)
			err = -ENOMEM;
		free(line);
		line = err ? NULL : next;
	}
	*note = line ? rec_writer__string(m->w, line) : 0;
	if (line && !*note)
		err = -ENOMEM;
	free(line);
	return err;
}

/* METRICS: every input's series, in input order, each input's after a marker of its label
 * (REC_METRIC_ORIGIN); the first input's interval that has one. */
static int merge_metrics(struct merge *m, struct min *in, size_t n)
{
	struct rec_metric *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t interval = 0;
	uint32_t note = 0;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		err = input_metrics(m, &in[i], &v, &nv, &cap);
		if (!interval)
			interval = in[i].r->metrics_interval_ns;
	}
	if (!err)
		err = notes_line(m, in, n, &note);
	if (!err && nv)
		err = rec_writer__metrics(m->w, interval, note, v, nv);
	free(v);
	return err;
}

/* Everything of one input but its counts, ticks, META, STATS and END. */
static int define_input(struct merge *m, struct min *in, const char *label)
{
	int err = map_strings(m, in);

	in->label_str = label;
	in->label = err ? 0 : rec_writer__string(m->w, label);
	if (!err && !in->label)
		err = -ENOMEM;
	if (!err)
		err = map_frames(m, in);
	if (!err)
		err = map_threads(m, in);
	if (!err)
		err = map_keys(m, in);
	if (!err)
		err = map_regions(m, in);
	if (!err)
		err = map_sizes(m, in);
	if (!err)
		err = map_spans(m, in);
	if (!err)
		err = map_gpu(m, in);
	if (!err)
		err = map_gpu_calls(m, in);
	if (!err)
		err = map_offspans(m, in);
	return err ? err : rec_writer__flush(m->w);
}

/* A window of an input, for the one time line. */
struct wref {
	uint64_t start, end;
	uint32_t input, win;
};

static int cmp_wref(const void *a, const void *b)
{
	const struct wref *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return (x->input > y->input) - (x->input < y->input);
}

static int add_window_counts(struct merge *m, const struct min *in, const struct rec_window *win)
{
	int err = 0;

	for (uint32_t k = 0; k < win->ncounts && !err; k++)
		err = wr_count(m->w, in->key[win->counts[k].sample], win->counts[k].count);
	return err;
}

/* The windows of every input sorted by start, those that overlap merged into one. */
static int merge_windows(struct merge *m, struct min *in, size_t n)
{
	struct wref *v = NULL;
	size_t nv = 0, cap = 0;
	int err = 0;

	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t j = 0; j < in[i].r->nwindows; j++) {
			const struct rec_window *win = &in[i].r->windows[j];

			if (vec_grow(&v, &cap, nv + 1, sizeof(*v), 256)) {
				free(v);
				return -ENOMEM;
			}
			v[nv++] = (struct wref){win->start_ns, win->end_ns, i, j};
		}
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_wref);
	for (size_t j = 0; j < nv && !err;) {
		uint64_t start = v[j].start, end = v[j].end;

		for (; j < nv && !err && (v[j].start < end || v[j].start == start); j++) {
			end = v[j].end > end ? v[j].end : end;
			err = add_window_counts(m, &in[v[j].input],
						&in[v[j].input].r->windows[v[j].win]);
		}
		if (!err)
			err = rec_writer__window(m->w, start, end);
	}
	free(v);
	return err;
}

/* What the windows did not hold (the counts of a version 1 to 3 input): the untimed window. */
static int untimed_counts(struct merge *m, struct min *in)
{
	const struct recording *r = in->r;
	uint64_t *inwin = calloc(r->nsamples + 1, sizeof(*inwin));
	int err = 0;

	if (!inwin)
		return -ENOMEM;
	for (size_t j = 0; j < r->nwindows; j++) {
		for (uint32_t k = 0; k < r->windows[j].ncounts; k++)
			inwin[r->windows[j].counts[k].sample] += r->windows[j].counts[k].count;
	}
	for (size_t j = 0; j < r->nsamples && !err; j++) {
		if (r->samples[j].count > inwin[j])
			err = wr_count(m->w, in->key[j], r->samples[j].count - inwin[j]);
	}
	free(inwin);
	return err;
}

struct tick {
	uint64_t time;
	uint32_t key;
};

static int cmp_tick(const void *a, const void *b)
{
	const struct tick *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->key > y->key) - (x->key < y->key);
}

/* Every input's timeline ticks, in time order. */
static int merge_events(struct merge *m, struct min *in, size_t n)
{
	struct tick *v;
	size_t nv = 0, total = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		total += in[i].r->nevents;
	v = calloc(total + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < in[i].r->nevents; j++)
			v[nv++] = (struct tick){in[i].r->events[j].time_ns,
						in[i].key[in[i].r->events[j].sample]};
	}
	if (nv)
		qsort(v, nv, sizeof(*v), cmp_tick);
	for (size_t j = 0; j < nv && !err; j++)
		err = kept(rec_writer__event(m->w, v[j].time, v[j].key));
	free(v);
	return err;
}

/* END of a merge (merge.h): the longest duration, the first nonzero exit status, else sums. */
static uint64_t end_value(const struct rec_kv *acc, uint64_t v)
{
	if (!strcmp(acc->key, "duration_ns"))
		return v > acc->value ? v : acc->value;
	if (!strcmp(acc->key, "exit_status"))
		return acc->value ? acc->value : v;
	return acc->value + v;
}

/* kv of every input: STATS summed per key, in the order the keys first appear. */
static int sum_kv(struct min *in, size_t n, bool end, struct rec_kv **out, size_t *nout)
{
	size_t cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rec_kv *kv = end ? in[i].r->end : in[i].r->stats;
		size_t nkv = end ? in[i].r->nend : in[i].r->nstats;

		for (size_t j = 0; j < nkv; j++) {
			size_t k = 0;

			while (k < *nout && strcmp((*out)[k].key, kv[j].key))
				k++;
			if (k == *nout) {
				if (vec_grow(out, &cap, k + 1, sizeof(**out), 64))
					return -ENOMEM;
				(*out)[(*nout)++] = (struct rec_kv){.key = kv[j].key};
			}
			(*out)[k].value = end ? end_value(&(*out)[k], kv[j].value)
					      : (*out)[k].value + kv[j].value;
		}
	}
	return 0;
}

static int write_kv(struct merge *m, struct min *in, size_t n)
{
	struct rec_kv *stats = NULL, *end = NULL;
	size_t nstats = 0, nend = 0;
	int err = rec_writer__meta(m->w, in[0].r->meta, in[0].r->nmeta);

	if (!err)
		err = sum_kv(in, n, false, &stats, &nstats);
	if (!err && nstats)
		err = rec_writer__stats(m->w, stats, nstats);
	if (!err)
		err = sum_kv(in, n, true, &end, &nend);
	if (!err && nend)
		err = rec_writer__end(m->w, end, nend);
	free(stats);
	free(end);
	return err;
}

static void free_inputs(struct min *in, size_t n)
{
	for (size_t i = 0; in && i < n; i++) {
		free(in[i].str);
		free(in[i].frame);
		free(in[i].key);
		u64map__clear(&in[i].pid);
	}
	free(in);
}

/* Every input's steps and program pauses (STEPS) as one table, pids and keys the output's. */
static int merge_steps(struct merge *m, struct min *in, size_t n)
{
	size_t ns = 0, nc = 0, k = 0, c = 0;
	struct rec_count *counts;
	struct rec_step *v;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		ns += in[i].r->nsteps;
		for (size_t j = 0; j < in[i].r->nsteps; j++)
			nc += in[i].r->steps[j].ncounts;
	}
	if (!ns)
		return 0;
	v = calloc(ns, sizeof(*v));
	counts = calloc(nc + 1, sizeof(*counts));
	for (size_t i = 0; i < n && v && counts && !err; i++) {
		for (size_t j = 0; j < in[i].r->nsteps && !err; j++, k++) {
			const struct rec_step *s = &in[i].r->steps[j];

			v[k] = *s;
			v[k].counts = counts + c;
			for (uint32_t q = 0; q < s->ncounts; q++, c++)
				counts[c] = (struct rec_count){in[i].key[s->counts[q].sample],
							       s->counts[q].count};
			err = map_pid(m, &in[i], s->pid, &v[k].pid);
		}
	}
	if (!v || !counts)
		err = -ENOMEM;
	if (!err)
		err = rec_writer__steps(m->w, v, ns);
	free(v);
	free(counts);
	return err;
}

int rec_merge(const struct rec_merge_input *inputs, size_t n, const char *out)
{
	struct merge m = {.next_pid = FIRST_FREE_PID};
	struct min *in = calloc(n + 1, sizeof(*in));
	int err = in ? 0 : -ENOMEM;

	if (!err && !(m.w = rec_writer__open(out)))
		err = -errno;
	for (size_t i = 0; i < n && !err; i++) {
		in[i].r = inputs[i].r;
		err = define_input(&m, &in[i], inputs[i].label);
	}
	if (!err)
		err = merge_metrics(&m, in, n);
	if (!err)
		err = merge_windows(&m, in, n);
	for (size_t i = 0; i < n && !err; i++)
		err = untimed_counts(&m, &in[i]);
	if (!err)
		err = merge_events(&m, in, n);
	if (!err)
		err = merge_steps(&m, in, n);
	if (!err && n)
		err = write_kv(&m, in, n);
	if (m.w && err)
		rec_writer__discard(m.w); /* a merge that failed leaves what was at out as it was */
	else if (m.w)
		err = rec_writer__close(m.w);
	free_inputs(in, n);
	u64map__clear(&m.used);
	free(m.ids);
	return err;
}
