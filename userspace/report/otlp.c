// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=otlp: the recording as one OpenTelemetry ExportProfilesServiceRequest (protobuf, not
 * compressed: the body `perch push --otlp` gzips), the profiles signal of opentelemetry-proto
 * v1.11.0 (package opentelemetry.proto.profiles.v1development; report/otlp.proto, perch's own
 * copy of its field numbers). One ResourceProfiles (service.name: the command's name, else
 * "perch"; host.name), one ScopeProfiles (perch and its version), one Profile per sample type,
 * as --format=pprof has them: with --view=cpu (the default) samples/count and cpu/nanoseconds
 * (an event that is not a clock: EVENT/count and EVENT/events), gpu/nanoseconds too where the
 * recording has launch stacks; --view=off off_cpu/nanoseconds; --view=wall wall/nanoseconds and
 * its on-CPU part, cpu/nanoseconds. Every Profile's samples point into one ProfilesDictionary:
 * index 0 of each table its zero value; one Mapping per module (memory_start 0, addresses are
 * file offsets as in pprof's), its GNU build-id as the attribute process.executable.build_id.gnu;
 * one Location per recording frame with its inline chain as Lines (innermost first); Functions
 * by (name, file); each distinct stack once (leaf first); per sample the attributes
 * process.pid, process.executable.name, thread.id, thread.name, container.id for a process in a
 * container's control group (CGROUPS), inside regions perch.region
 * (the innermost) and perch.region_stack (outermost;...;innermost), perch.origin for a merged
 * recording. The stacks and counts are the other formats': the same profile (report/common.c)
 * keeps and folds them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "lib/hash.h"
#include "lib/idxtab.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "model/gpupaths.h"
#include "otlp.pb-c.h"
#include "strtab.h"

#ifndef PERCH_RELEASE /* the Makefile's PERCH_VERSION */
#define PERCH_RELEASE "dev"
#endif

#define MAX_ATTRS \
	8 /* process.pid, .executable.name, thread.id, .name, container, origin, region, \
		     * stack */
#define MAX_TYPES 3

typedef Otlp__Mapping o_mapping;
typedef Otlp__Location o_location;
typedef Otlp__Line o_line;
typedef Otlp__Function o_function;
typedef Otlp__Stack o_stack;
typedef Otlp__KeyValueAndUnit o_attr;
typedef Otlp__AnyValue o_value;
typedef Otlp__Sample o_sample;
typedef Otlp__Profile o_profile;
typedef Otlp__ValueType o_type;

/* An attribute as the dictionary keys it: key string, and a string value or an int. */
struct attr_key {
	int32_t key;
	int32_t str; /* string table index of a string value; -1: int */
	int64_t num;
};

/* One kept recording sample: its stack, attributes and values (one per profile). */
struct row {
	size_t sample; /* its recording sample */
	bool gpu;      /* the GPU time launched from it, not its ticks */
	int32_t stack;
	uint32_t nattrs;
	int32_t attrs[MAX_ATTRS];
	int64_t values[MAX_TYPES];
};

struct otlp {
	const struct recording *r;
	uint32_t cg_pid;   /* the last pid container_of() looked up */
	const char *cg_id; /* its container id, or NULL */
	char cg_buf[65];
	const struct profile *p;
	uint64_t frequency, period;
	const char *counted;
	enum report_view view;
	const char *service; /* service.name, NULL: the command's */
	struct strtab st;
	/* mappings: module string id -> index (0: none yet); index 0 the zero Mapping */
	uint32_t *mapping_of;
	o_mapping *maps;
	int32_t *map_attr; /* each mapping's build-id attribute (0: none) */
	size_t nmaps, cap_maps, cap_map_attr;
	struct u64map func_of; /* (profile function << 32 | file string id) -> index */
	o_function *funcs;
	size_t nfuncs, cap_funcs;
	int32_t *location_of; /* recording frame -> location index (0: none) */
	int32_t folded_loc;   /* "[folded]"'s location (0: none) */
	o_location *locs;
	o_line *lines;
	o_line **line_ptrs;
	size_t nlocs;
	/* stacks: locations leaf first, each distinct list once */
	int32_t *stack_locs; /* every stack's location indices, one after another */
	size_t nstack_locs, cap_stack_locs;
	size_t *stack_start; /* stack i's first in stack_locs; stack_start[i + 1] its end */
	size_t nstacks, cap_stacks;
	struct idxtab stack_tab;
	/* attributes */
	struct attr_key *attr_keys;
	size_t nattrs, cap_attrs;
	struct idxtab attr_tab;
	struct u64map proc_name; /* pid -> string index of its process's name */
	struct row *rows;
	size_t nrows, cap_rows;
	uint64_t *gpu_ns; /* GPU time launched from each sample (NULL: no GPU type) */
	/* --timeline: each tick's Unix time, by sample (ts + ts_start[i], ts_start[i + 1] -
	 * ts_start[i] of them); NULL when not every kept sample's ticks are on the timeline */
	uint64_t *ts;
	size_t *ts_start;
	int64_t *ones, *periods; /* per-timestamp values: 1s, each tick's ns */
	size_t max_ticks;
	uint64_t start_unix, start_mono, span_ns; /* the profiles' time range */
	int ntypes;
	const char *types[MAX_TYPES][2];
};

/* ---- the dictionary ---------------------------------------------------------------------- */

static bool attr_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !memcmp(&((const struct otlp *)ctx)->attr_keys[idx], key, sizeof(struct attr_key));
}

/* The attribute (key, string value) or (key, int) in the table, added on first use; -ENOMEM. */
static int32_t attr_id(struct otlp *x, const char *key, const char *str, int64_t num)
{
	struct attr_key k = {.key = (int32_t)strtab__id(&x->st, key), .str = -1, .num = num};
	struct idxtab_slot *slot;
	uint32_t h;

	if (str)
		k.str = (int32_t)strtab__id(&x->st, str);
	if (k.key < 0 || (str && k.str < 0) || x->nattrs >= INT32_MAX ||
	    idxtab__reserve(&x->attr_tab) ||
	    vec_grow(&x->attr_keys, &x->cap_attrs, x->nattrs + 1, sizeof(*x->attr_keys), 64))
		return -ENOMEM;
	h = hash32(fnv64_bytes(FNV64_OFFSET, &k, sizeof(k)));
	slot = idxtab__find(&x->attr_tab, h, attr_eq, x, &k);
	if (slot->idx1)
		return (int32_t)slot->idx1 - 1;
	x->attr_keys[x->nattrs] = k;
	idxtab__set(&x->attr_tab, slot, (uint32_t)x->nattrs, h);
	return (int32_t)x->nattrs++;
}

/* The mapping of a module (string id), made on first use; addresses are file offsets. */
static int32_t mapping_id(struct otlp *x, uint32_t module, uint64_t offset)
{
	o_mapping *m;

	if (module >= x->r->nstrings)
		module = 0;
	if (!x->mapping_of[module]) {
		int64_t name = strtab__id(&x->st, x->r->strings[module]);
		const char *bid = report_build_id(x->r, module);
		int32_t attr = *bid ? attr_id(x, "process.executable.build_id.gnu", bid, 0) : 0;

		if (name < 0 || attr < 0 ||
		    vec_grow(&x->maps, &x->cap_maps, x->nmaps + 1, sizeof(*x->maps), 16) ||
		    vec_grow(&x->map_attr, &x->cap_map_attr, x->nmaps + 1, sizeof(*x->map_attr),
			     16))
			return -ENOMEM;
		m = &x->maps[x->nmaps];
		otlp__mapping__init(m);
		m->filename_strindex = (int32_t)name;
		x->map_attr[x->nmaps] = attr;
		x->mapping_of[module] = (uint32_t)x->nmaps++;
	}
	m = &x->maps[x->mapping_of[module]];
	if (offset >= m->memory_limit)
		m->memory_limit = offset + 1;
	return (int32_t)x->mapping_of[module];
}

/* The function of profile function func in source file file (string id), made on first use. */
static int32_t function_id(struct otlp *x, uint32_t func, uint32_t file)
{
	uint64_t key = (uint64_t)func << 32 | file, id;
	int64_t name, filename;
	o_function *f;

	if (u64map__get(&x->func_of, key, &id))
		return (int32_t)id;
	name = strtab__id(&x->st, profile__func_name(x->p, func));
	filename = strtab__id(&x->st, recording__string(x->r, file));
	if (name < 0 || filename < 0 || x->nfuncs >= INT32_MAX ||
	    vec_grow(&x->funcs, &x->cap_funcs, x->nfuncs + 1, sizeof(*x->funcs), 256))
		return -ENOMEM;
	f = &x->funcs[x->nfuncs];
	otlp__function__init(f);
	f->name_strindex = (int32_t)name;
	f->filename_strindex = (int32_t)filename;
	if (u64map__put(&x->func_of, key, x->nfuncs))
		return -ENOMEM;
	return (int32_t)x->nfuncs++;
}

/* Location l for recording frame i, its lines innermost first from lines. */
static int add_location(struct otlp *x, uint32_t i, o_location *l, o_line *lines, o_line **ptrs)
{
	const struct rec_frame *fr = &x->r->frames[i];
	const uint32_t *fns;
	uint32_t n = profile__frame_funcs(x->p, i, &fns);
	const uint32_t *li = profile__frame_lines(x->p, i);
	int32_t map = mapping_id(x, fr->module, fr->offset);

	if (map < 0)
		return -ENOMEM;
	otlp__location__init(l);
	l->mapping_index = map;
	l->address = fr->offset;
	l->n_lines = n;
	l->lines = ptrs;
	for (uint32_t k = 0; k < n; k++) {
		const struct rec_line *rl =
			li[n - 1 - k] < fr->nlines ? &fr->lines[li[n - 1 - k]] : NULL;
		int32_t fn = function_id(x, fns[n - 1 - k], rl ? rl->file : 0);

		if (fn < 0)
			return -ENOMEM;
		otlp__line__init(&lines[k]);
		lines[k].function_index = fn;
		lines[k].line = rl ? rl->line : 0;
		ptrs[k] = &lines[k];
	}
	return 0;
}

/* Every frame's location (region frames have none: samples carry their regions apart), and
 * "[folded]"'s where --fold took every frame of a sample. */
static int add_locations(struct otlp *x)
{
	const struct recording *r = x->r;
	size_t nlines = 1, used = 0;
	const uint32_t *fns;
	uint32_t folded = profile__folded_func(x->p);

	for (size_t i = 0; i < r->nframes; i++)
		nlines += profile__frame_funcs(x->p, i, &fns);
	x->locs = calloc(r->nframes + 2, sizeof(*x->locs));
	x->lines = calloc(nlines, sizeof(*x->lines));
	x->line_ptrs = calloc(nlines, sizeof(*x->line_ptrs));
	x->location_of = calloc(r->nframes + 1, sizeof(*x->location_of));
	x->mapping_of = calloc(r->nstrings + 1, sizeof(*x->mapping_of));
	if (!x->locs || !x->lines || !x->line_ptrs || !x->location_of || !x->mapping_of ||
	    vec_grow(&x->maps, &x->cap_maps, 1, sizeof(*x->maps), 16) ||
	    vec_grow(&x->map_attr, &x->cap_map_attr, 1, sizeof(*x->map_attr), 16) ||
	    vec_grow(&x->funcs, &x->cap_funcs, 1, sizeof(*x->funcs), 256) ||
	    vec_grow(&x->attr_keys, &x->cap_attrs, 1, sizeof(*x->attr_keys), 64))
		return -ENOMEM;
	/* index 0 of each table: the zero value */
	otlp__mapping__init(&x->maps[0]);
	x->map_attr[0] = 0;
	x->nmaps = 1;
	otlp__function__init(&x->funcs[0]);
	x->nfuncs = 1;
	otlp__location__init(&x->locs[0]);
	x->nlocs = 1;
	x->attr_keys[0] = (struct attr_key){0};
	x->nattrs = 1;
	for (size_t i = 0; i < r->nframes; i++) {
		uint32_t n = profile__frame_funcs(x->p, i, &fns);

		if (!n)
			continue;
		if (add_location(x, i, &x->locs[x->nlocs], x->lines + used, x->line_ptrs + used))
			return -ENOMEM;
		x->location_of[i] = (int32_t)x->nlocs++;
		used += n;
	}
	if (folded != UINT32_MAX) {
		int32_t fn = function_id(x, folded, 0);
		o_location *l = &x->locs[x->nlocs];

		if (fn < 0)
			return -ENOMEM;
		otlp__location__init(l);
		otlp__line__init(&x->lines[used]);
		x->lines[used].function_index = fn;
		x->line_ptrs[used] = &x->lines[used];
		l->n_lines = 1;
		l->lines = &x->line_ptrs[used];
		x->folded_loc = (int32_t)x->nlocs++;
	}
	return 0;
}

struct stack_key {
	const int32_t *locs;
	size_t n;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct otlp *x = ctx;
	const struct stack_key *k = key;
	size_t start = x->stack_start[idx], n = x->stack_start[idx + 1] - start;

	return n == k->n && !memcmp(x->stack_locs + start, k->locs, n * sizeof(*k->locs));
}

/* The stack of the n locations at x->stack_locs + x->nstack_locs (just appended), each distinct
 * list once: a list seen before is taken back off. -ENOMEM. */
static int32_t stack_id(struct otlp *x, size_t n)
{
	struct stack_key k = {x->stack_locs + x->nstack_locs, n};
	struct idxtab_slot *slot;
	uint32_t h;

	if (x->nstacks >= INT32_MAX || idxtab__reserve(&x->stack_tab) ||
	    vec_grow(&x->stack_start, &x->cap_stacks, x->nstacks + 2, sizeof(*x->stack_start), 256))
		return -ENOMEM;
	h = hash32(fnv64_bytes(FNV64_OFFSET, k.locs, n * sizeof(*k.locs)));
	slot = idxtab__find(&x->stack_tab, h, stack_eq, x, &k);
	if (slot->idx1)
		return (int32_t)slot->idx1 - 1;
	x->nstack_locs += n;
	x->stack_start[x->nstacks + 1] = x->nstack_locs;
	idxtab__set(&x->stack_tab, slot, (uint32_t)x->nstacks, h);
	return (int32_t)x->nstacks++;
}

/* ---- the samples ------------------------------------------------------------------------- */

/* The string index of pid's process name (its main thread's name), looked up once. */
static int32_t proc_name(struct otlp *x, uint32_t pid)
{
	uint64_t id;
	int64_t s;

	if (u64map__get(&x->proc_name, pid, &id))
		return (int32_t)id;
	s = strtab__id(&x->st, report_metric_proc_name(x->r, pid));
	if (s < 0 || u64map__put(&x->proc_name, pid, (uint64_t)s))
		return -ENOMEM;
	return (int32_t)s;
}

/* The sample's region attributes: the innermost, and the whole stack. */
static int region_attrs(struct otlp *x, struct row *row, const struct rec_sample *s)
{
	char *stack = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&stack, &len);
	int32_t inner, all;
	int64_t sid;

	if (!f)
		return -ENOMEM;
	for (uint32_t j = 0; j < s->nregions; j++)
		fprintf(f, "%s%s", j ? ";" : "", recording__string(x->r, s->regions[j]));
	if (fclose(f)) {
		free(stack);
		return -ENOMEM;
	}
	inner = attr_id(x, "perch.region", recording__string(x->r, s->regions[s->nregions - 1]), 0);
	sid = strtab__intern(&x->st, stack, true);
	all = sid < 0 ? -ENOMEM : attr_id(x, "perch.region_stack", x->st.strs[sid], 0);
	if (inner < 0 || all < 0)
		return -ENOMEM;
	row->attrs[row->nattrs++] = inner;
	row->attrs[row->nattrs++] = all;
	return 0;
}

/* Whether process pid is in a container's control group: its id in x->cg_id (samples come
 * grouped by process: one lookup a run of them). */
static bool container_of(struct otlp *x, uint32_t pid)
{
	if (pid != x->cg_pid || !x->cg_pid) {
		x->cg_pid = pid;
		x->cg_id = x->r->ncgroups
				   ? rec_container_id(recording__cgroup(x->r, pid), x->cg_buf)
				   : NULL;
	}
	return x->cg_id != NULL;
}

/* Row for the first nframes frames of recording sample s. */
static int add_row(struct otlp *x, const struct rec_sample *s, uint32_t nframes,
		   const int64_t *values, bool gpu)
{
	const struct rec_origin *o = x->r->norigins ? recording__origin(x->r, s->pid) : NULL;
	int32_t pname = proc_name(x, s->pid);
	struct row *row;
	size_t n = 0;

	if (pname < 0 || vec_grow(&x->rows, &x->cap_rows, x->nrows + 1, sizeof(*x->rows), 256) ||
	    vec_grow(&x->stack_locs, &x->cap_stack_locs, x->nstack_locs + nframes + 1,
		     sizeof(*x->stack_locs), 1024))
		return -ENOMEM;
	for (uint32_t j = 0; j < nframes; j++) {
		int32_t id = x->location_of[s->frames[nframes - 1 - j]];

		if (id) /* not a frame the query folded */
			x->stack_locs[x->nstack_locs + n++] = id;
	}
	if (!n && profile__sample_folded(x->p, (size_t)(s - x->r->samples)))
		x->stack_locs[x->nstack_locs + n++] = x->folded_loc;
	row = &x->rows[x->nrows];
	*row = (struct row){
		.sample = (size_t)(s - x->r->samples), .gpu = gpu, .stack = stack_id(x, n)};
	memcpy(row->values, values, sizeof(row->values));
	row->attrs[0] = attr_id(x, "process.pid", NULL, s->pid);
	row->attrs[1] = attr_id(x, "process.executable.name", x->st.strs[pname], 0);
	row->attrs[2] = attr_id(x, "thread.id", NULL, s->tid);
	row->attrs[3] = attr_id(x, "thread.name", report_sample_comm(x->r, s), 0);
	row->nattrs = 4;
	if (container_of(x, s->pid))
		row->attrs[row->nattrs++] = attr_id(x, "container.id", x->cg_id, 0);
	if (o)
		row->attrs[row->nattrs++] =
			attr_id(x, "perch.origin", recording__string(x->r, o->origin), 0);
	if (s->nregions && region_attrs(x, row, s))
		return -ENOMEM;
	for (uint32_t k = 0; k < row->nattrs; k++)
		if (row->attrs[k] < 0)
			return -ENOMEM;
	if (row->stack < 0)
		return -ENOMEM;
	x->nrows++;
	return 0;
}

/* Sample s's values in the profiles' order (see the top). */
static void cpu_values(const struct otlp *x, const struct rec_sample *s, int64_t v[MAX_TYPES])
{
	memset(v, 0, MAX_TYPES * sizeof(*v));
	if (x->view == REPORT_VIEW_OFF) {
		v[0] = (int64_t)s->count; /* the view's ns (model/sampleset.h) */
		return;
	}
	if (x->view == REPORT_VIEW_WALL) {
		v[0] = (int64_t)s->count;
		v[1] = (int64_t)(s->count - s->offcpu_ns);
		return;
	}
	v[0] = (int64_t)s->count;
	if (x->period) /* the events (nanoseconds for a clock) the samples stand for */
		v[1] = (int64_t)(s->count * x->period);
	else if (x->frequency) /* in 128 bits: a count times 1e9 passes 2^64 from 2^34 on */
		v[1] = (int64_t)((unsigned __int128)s->count * 1000000000u / x->frequency);
}

static int add_rows(struct otlp *x)
{
	int64_t v[MAX_TYPES];
	int err = 0;

	for (size_t i = 0; i < x->r->nsamples && !err; i++) {
		const struct rec_sample *s = &x->r->samples[i];

		/* a count of 0: a stack only a GPU launch or an attach-mode call names */
		if (!s->count || !profile__sample_kept(x->p, i))
			continue;
		cpu_values(x, s, v);
		err = add_row(x, s, s->nframes, v, false);
	}
	for (size_t i = 0; x->gpu_ns && i < x->r->nsamples && !err; i++) {
		const struct rec_sample *s = &x->r->samples[i];

		if (!x->gpu_ns[i] || !profile__sample_kept(x->p, i))
			continue;
		memset(v, 0, sizeof(v));
		v[x->ntypes - 1] = (int64_t)x->gpu_ns[i];
		err = add_row(x, s, gpu_paths__program_frames(x->r, s), v, true);
	}
	return err;
}

/* ---- time ------------------------------------------------------------------------------- */

/* The profiles' time range: the recording's span on CLOCK_MONOTONIC (its windows, ticks, spans)
 * in Unix time, by META realtime_offset_ns (exact), else META start_time (to the second, taken
 * as the span's start). */
static void time_range(struct otlp *x)
{
	const char *off = report_meta(x->r, REC_META_realtime_offset_ns);
	const char *st = report_meta(x->r, REC_META_start_time);
	uint64_t end;
	struct tm tm = {0};
	const char *rest;
	bool window_end = false;

	report_time_span(x->r, &x->start_mono, &end);
	for (size_t i = 0; i < x->r->nwindows && !window_end; i++)
		window_end = x->r->windows[i].end_ns == end && end > x->start_mono;
	/* A window's end is not in it (the next one starts there: perch agent's intervals meet
	 * end to start); a tick's time is: the last inside [start, start + span). */
	x->span_ns = end - x->start_mono + !window_end;
	if (off && *off) {
		x->start_unix = (uint64_t)(strtoll(off, NULL, 10) + (long long)x->start_mono);
		return;
	}
	rest = st ? strptime(st, "%Y-%m-%dT%H:%M:%S%z", &tm) : NULL;
	if (rest) {
		time_t t = timegm(&tm) - tm.tm_gmtoff;

		x->start_unix = t > 0 ? (uint64_t)t * 1000000000u : 0;
	}
}

/* --timeline with view cpu: each kept sample's ticks, as Unix times, when the timeline has every
 * one of them (a timeline capped by --max-size has not: the samples then carry counts alone, as
 * every sample of a profile has one shape). */
static int tick_times(struct otlp *x)
{
	size_t *n;
	bool whole = x->r->nevents > 0 && x->view == REPORT_VIEW_CPU && x->start_unix;

	if (!whole)
		return 0;
	n = calloc(x->r->nsamples + 1, sizeof(*n));
	x->ts_start = calloc(x->r->nsamples + 1, sizeof(*x->ts_start));
	x->ts = calloc(x->r->nevents, sizeof(*x->ts));
	if (!n || !x->ts_start || !x->ts) {
		free(n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->r->nevents; i++)
		if (x->r->events[i].sample < x->r->nsamples)
			n[x->r->events[i].sample]++;
	for (size_t i = 0; i < x->nrows && whole; i++) {
		const struct rec_sample *s = &x->r->samples[x->rows[i].sample];

		whole = x->rows[i].gpu || n[x->rows[i].sample] == s->count;
	}
	for (size_t i = 0; i < x->r->nsamples; i++) {
		x->ts_start[i + 1] = x->ts_start[i] + n[i];
		x->max_ticks = n[i] > x->max_ticks ? n[i] : x->max_ticks;
		n[i] = x->ts_start[i];
	}
	for (size_t i = 0; whole && i < x->r->nevents; i++) {
		const struct rec_event *e = &x->r->events[i];

		if (e->sample < x->r->nsamples) /* in time order: each sample's too */
			x->ts[n[e->sample]++] = x->start_unix + (e->time_ns - x->start_mono);
	}
	free(n);
	x->ones = calloc(x->max_ticks + 1, sizeof(*x->ones));
	x->periods = calloc(x->max_ticks + 1, sizeof(*x->periods));
	if (!x->ones || !x->periods)
		return -ENOMEM;
	for (size_t i = 0; i < x->max_ticks; i++) {
		int64_t v[MAX_TYPES];

		cpu_values(x, &(const struct rec_sample){.count = 1}, v);
		x->ones[i] = v[0];
		x->periods[i] = v[1];
	}
	if (!whole) { /* counts alone */
		free(x->ts);
		x->ts = NULL;
	}
	return 0;
}

/* ---- the message ------------------------------------------------------------------------- */

/* The sample types (see the top). */
static void choose_types(struct otlp *x)
{
	x->ntypes = 0;
	if (x->view == REPORT_VIEW_OFF) {
		x->types[x->ntypes][0] = "off_cpu";
		x->types[x->ntypes++][1] = "nanoseconds";
	} else if (x->view == REPORT_VIEW_WALL) {
		x->types[x->ntypes][0] = "wall";
		x->types[x->ntypes++][1] = "nanoseconds";
		x->types[x->ntypes][0] = "cpu";
		x->types[x->ntypes++][1] = "nanoseconds";
	} else {
		x->types[x->ntypes][0] = x->counted ? x->counted : "samples";
		x->types[x->ntypes++][1] = "count";
		x->types[x->ntypes][0] = x->counted ? x->counted : "cpu";
		x->types[x->ntypes++][1] = x->counted ? "events" : "nanoseconds";
	}
	if (x->gpu_ns) {
		x->types[x->ntypes][0] = "gpu";
		x->types[x->ntypes++][1] = "nanoseconds";
	}
}

/* Everything the message points to, built: arrays of pointers into x for protobuf-c. */
struct msg {
	Otlp__ExportProfilesServiceRequest req;
	Otlp__ProfilesDictionary dict;
	Otlp__ResourceProfiles rp, *rp_ptr;
	Otlp__Resource res;
	Otlp__KeyValue res_kv[2], *res_kv_ptrs[2];
	o_value res_val[2];
	Otlp__ScopeProfiles sp, *sp_ptr;
	Otlp__InstrumentationScope scope;
	o_profile profiles[MAX_TYPES], *profile_ptrs[MAX_TYPES];
	o_type types[MAX_TYPES], period_type;
	o_sample *samples; /* ntypes x nrows */
	o_sample **sample_ptrs;
	o_stack *stacks;
	o_attr *attrs;
	o_value *values;
	void **map_ptrs, **loc_ptrs, **func_ptrs, **stack_ptrs, **attr_ptrs;
	int32_t *map_attr_ptrs;
	Otlp__Link link0, *link_ptr;
	char hostname[256], service[256];
};

static void **pointers(void *base, size_t n, size_t elem)
{
	void **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = (char *)base + i * elem;
	return v;
}

static int build_dictionary(struct otlp *x, struct msg *m)
{
	Otlp__ProfilesDictionary *d = &m->dict;

	otlp__profiles_dictionary__init(d);
	for (size_t i = 1; i < x->nmaps; i++) {
		if (x->map_attr[i]) {
			x->maps[i].n_attribute_indices = 1;
			x->maps[i].attribute_indices = &x->map_attr[i];
		}
	}
	m->stacks = calloc(x->nstacks + 1, sizeof(*m->stacks));
	m->attrs = calloc(x->nattrs + 1, sizeof(*m->attrs));
	m->values = calloc(x->nattrs + 1, sizeof(*m->values));
	if (!m->stacks || !m->attrs || !m->values)
		return -ENOMEM;
	for (size_t i = 0; i < x->nstacks; i++) {
		otlp__stack__init(&m->stacks[i]);
		m->stacks[i].n_location_indices = x->stack_start[i + 1] - x->stack_start[i];
		m->stacks[i].location_indices = x->stack_locs + x->stack_start[i];
	}
	for (size_t i = 0; i < x->nattrs; i++) {
		const struct attr_key *k = &x->attr_keys[i];

		otlp__key_value_and_unit__init(&m->attrs[i]);
		if (!i)
			continue; /* the zero value */
		otlp__any_value__init(&m->values[i]);
		if (k->str >= 0) {
			m->values[i].value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
			m->values[i].string_value = x->st.strs[k->str];
		} else {
			m->values[i].value_case = OTLP__ANY_VALUE__VALUE_INT_VALUE;
			m->values[i].int_value = k->num;
		}
		m->attrs[i].key_strindex = k->key;
		m->attrs[i].value = &m->values[i];
	}
	otlp__link__init(&m->link0);
	m->link_ptr = &m->link0;
	m->map_ptrs = pointers(x->maps, x->nmaps, sizeof(*x->maps));
	m->loc_ptrs = pointers(x->locs, x->nlocs, sizeof(*x->locs));
	m->func_ptrs = pointers(x->funcs, x->nfuncs, sizeof(*x->funcs));
	m->stack_ptrs = pointers(m->stacks, x->nstacks, sizeof(*m->stacks));
	m->attr_ptrs = pointers(m->attrs, x->nattrs, sizeof(*m->attrs));
	if (!m->map_ptrs || !m->loc_ptrs || !m->func_ptrs || !m->stack_ptrs || !m->attr_ptrs)
		return -ENOMEM;
	d->n_mapping_table = x->nmaps;
	d->mapping_table = (o_mapping **)m->map_ptrs;
	d->n_location_table = x->nlocs;
	d->location_table = (o_location **)m->loc_ptrs;
	d->n_function_table = x->nfuncs;
	d->function_table = (o_function **)m->func_ptrs;
	d->n_link_table = 1;
	d->link_table = &m->link_ptr;
	d->n_attribute_table = x->nattrs;
	d->attribute_table = (o_attr **)m->attr_ptrs;
	d->n_stack_table = x->nstacks;
	d->stack_table = (o_stack **)m->stack_ptrs;
	return 0;
}

/* Profile t: its type, the period, the times, and a sample per row with a value of it. */
static int build_profile(struct otlp *x, struct msg *m, int t, uint64_t start, uint64_t duration)
{
	o_profile *p = &m->profiles[t];
	o_sample *s = m->samples + (size_t)t * x->nrows;
	o_sample **ptrs = m->sample_ptrs + (size_t)t * x->nrows;
	size_t n = 0;
	int64_t type = strtab__id(&x->st, x->types[t][0]),
		unit = strtab__id(&x->st, x->types[t][1]);

	if (type < 0 || unit < 0)
		return -ENOMEM;
	otlp__profile__init(p);
	otlp__value_type__init(&m->types[t]);
	m->types[t].type_strindex = (int32_t)type;
	m->types[t].unit_strindex = (int32_t)unit;
	p->sample_type = &m->types[t];
	p->period_type = &m->period_type;
	p->period = x->period	   ? (int64_t)x->period
		    : x->frequency ? (int64_t)(1000000000u / x->frequency)
				   : 0;
	p->time_unix_nano = start;
	p->duration_nano = duration;
	for (size_t i = 0; i < x->nrows; i++) {
		struct row *row = &x->rows[i];

		if (!row->values[t])
			continue;
		otlp__sample__init(&s[n]);
		s[n].stack_index = row->stack;
		s[n].n_attribute_indices = row->nattrs;
		s[n].attribute_indices = row->attrs;
		s[n].n_values = 1;
		s[n].values = &row->values[t];
		if (x->ts && !row->gpu) { /* per tick: its time and value */
			size_t k = x->ts_start[row->sample + 1] - x->ts_start[row->sample];

			s[n].n_timestamps_unix_nano = k;
			s[n].timestamps_unix_nano = x->ts + x->ts_start[row->sample];
			s[n].n_values = k;
			s[n].values = t ? x->periods : x->ones;
		}
		ptrs[n] = &s[n];
		n++;
	}
	p->n_samples = n;
	p->samples = ptrs;
	m->profile_ptrs[t] = p;
	return 0;
}

/* service.name and host.name. */
static int build_resource(struct otlp *x, struct msg *m, const char *name)
{
	const char *command = report_meta(x->r, REC_META_command);
	const char *host = report_meta(x->r, REC_META_hostname);
	char *service = m->service;
	size_t len;

	/* the command's name: its first word, past its last '/' */
	service[0] = '\0';
	if (command && *command) {
		const char *end = strchr(command, ' '), *slash;

		len = end ? (size_t)(end - command) : strlen(command);
		slash = memrchr(command, '/', len);
		if (slash) {
			len -= (size_t)(slash + 1 - command);
			command = slash + 1;
		}
		snprintf(service, sizeof(m->service), "%.*s", (int)len, command);
	}
	otlp__resource__init(&m->res);
	for (int i = 0; i < 2; i++) {
		otlp__key_value__init(&m->res_kv[i]);
		otlp__any_value__init(&m->res_val[i]);
		m->res_val[i].value_case = OTLP__ANY_VALUE__VALUE_STRING_VALUE;
		m->res_kv[i].value = &m->res_val[i];
		m->res_kv_ptrs[i] = &m->res_kv[i];
	}
	m->res_kv[0].key = "service.name";
	if (name)
		snprintf(service, sizeof(m->service), "%s", name);
	m->res_val[0].string_value = *service ? service : "perch";
	snprintf(m->hostname, sizeof(m->hostname), "%s", host ? host : "");
	m->res_kv[1].key = "host.name";
	m->res_val[1].string_value = m->hostname;
	m->res.n_attributes = host ? 2 : 1;
	m->res.attributes = m->res_kv_ptrs;
	/* every string of the message is UTF-8, as protobuf wants */
	for (int i = 0; i < 2; i++) {
		int64_t id = strtab__id(&x->st, m->res_val[i].string_value);

		if (id < 0)
			return -ENOMEM;
		m->res_val[i].string_value = x->st.strs[id];
	}
	return 0;
}

static int build_message(struct otlp *x, struct msg *m)
{
	uint64_t start = x->start_unix, duration = x->span_ns;
	int64_t ptype, punit;

	m->samples = calloc((size_t)x->ntypes * x->nrows + 1, sizeof(*m->samples));
	m->sample_ptrs = calloc((size_t)x->ntypes * x->nrows + 1, sizeof(*m->sample_ptrs));
	ptype = strtab__id(&x->st, x->counted ? x->counted : "cpu");
	punit = strtab__id(&x->st, x->counted ? "events" : "nanoseconds");
	if (!m->samples || !m->sample_ptrs || ptype < 0 || punit < 0 ||
	    build_resource(x, m, x->service) || build_dictionary(x, m))
		return -ENOMEM;
	otlp__value_type__init(&m->period_type);
	m->period_type.type_strindex = (int32_t)ptype;
	m->period_type.unit_strindex = (int32_t)punit;
	for (int t = 0; t < x->ntypes; t++)
		if (build_profile(x, m, t, start, duration))
			return -ENOMEM;
	otlp__instrumentation_scope__init(&m->scope);
	m->scope.name = "perch";
	m->scope.version = PERCH_RELEASE;
	otlp__scope_profiles__init(&m->sp);
	m->sp.scope = &m->scope;
	m->sp.n_profiles = (size_t)x->ntypes;
	m->sp.profiles = m->profile_ptrs;
	m->sp_ptr = &m->sp;
	otlp__resource_profiles__init(&m->rp);
	m->rp.resource = &m->res;
	m->rp.n_scope_profiles = 1;
	m->rp.scope_profiles = &m->sp_ptr;
	m->rp_ptr = &m->rp;
	otlp__export_profiles_service_request__init(&m->req);
	m->req.n_resource_profiles = 1;
	m->req.resource_profiles = &m->rp_ptr;
	m->req.dictionary = &m->dict;
	/* last: everything above may add strings */
	m->dict.n_string_table = x->st.n;
	m->dict.string_table = x->st.strs;
	return 0;
}

static void msg_free(struct msg *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->stacks);
	free(m->attrs);
	free(m->values);
	free(m->map_ptrs);
	free(m->loc_ptrs);
	free(m->func_ptrs);
	free(m->stack_ptrs);
	free(m->attr_ptrs);
}

static void otlp_free(struct otlp *x)
{
	strtab__free(&x->st);
	free(x->mapping_of);
	free(x->maps);
	free(x->map_attr);
	u64map__clear(&x->func_of);
	free(x->funcs);
	free(x->location_of);
	free(x->locs);
	free(x->lines);
	free(x->line_ptrs);
	free(x->stack_locs);
	free(x->stack_start);
	idxtab__clear(&x->stack_tab);
	free(x->attr_keys);
	idxtab__clear(&x->attr_tab);
	u64map__clear(&x->proc_name);
	free(x->rows);
	free(x->gpu_ns);
	free(x->ts);
	free(x->ts_start);
	free(x->ones);
	free(x->periods);
}

/* The GPU time of each launch stack, when the recording has launch stacks (--gpu) and the
 * view is not off. */
static int gpu_times(struct otlp *x)
{
	return x->view == REPORT_VIEW_OFF ? 0 : report_gpu_sample_ns(x->r, &x->gpu_ns);
}

static int export(struct otlp *x, FILE *out)
{
	struct msg *m = calloc(1, sizeof(*m));
	uint8_t *buf = NULL;
	size_t len;
	int err = -ENOMEM;

	if (!m)
		return -ENOMEM;
	if (vec_grow(&x->stack_start, &x->cap_stacks, 2, sizeof(*x->stack_start), 256) ||
	    vec_grow(&x->stack_locs, &x->cap_stack_locs, 1, sizeof(*x->stack_locs), 1024) ||
	    strtab__id(&x->st, "") < 0 || gpu_times(x))
		goto out;
	x->stack_start[0] = 0;
	choose_types(x);
	/* stack 0: the zero value, no location */
	time_range(x);
	if (stack_id(x, 0) != 0 || add_locations(x) || add_rows(x) || tick_times(x) ||
	    build_message(x, m))
		goto out;
	len = otlp__export_profiles_service_request__get_packed_size(&m->req);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	otlp__export_profiles_service_request__pack(&m->req, buf);
	err = fwrite(buf, 1, len, out) == len ? 0 : -errno ?: -EIO;
out:
	free(buf);
	msg_free(m);
	free(m);
	return err;
}

int report_otlp(const struct recording *r, const char *path, const struct report_opts *o, FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct otlp x = {.r = r, .p = p, .view = o->view, .service = o->service};
	struct report_event e; /* x.counted is its name */
	int err;

	(void)path;
	if (!p)
		return -errno;
	report_sample_weight(r, o, &e, &x.frequency, &x.period, &x.counted);
	err = export(&x, out);
	otlp_free(&x);
	profile__free(p);
	return err;
}
