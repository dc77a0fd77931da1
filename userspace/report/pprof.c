// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=pprof: the recording as pprof's profile.proto (report/profile.proto), gzip-compressed,
 * as `go tool pprof` and the other pprof readers open it. Two sample types, samples/count and
 * cpu/nanoseconds (count / frequency; count x period with perch record -c); a recording of an
 * event that is not a clock (perch record -e page-faults) names them EVENT/count and
 * EVENT/events (count x period) instead; one Location per recording frame, its inline chain as
 * Lines (innermost first, as pprof orders them); Functions by (name, file) with the names the
 * text report uses; one Mapping per module, with its build-id when the recording has it;
 * labels pid, tid, thread, and, inside regions, region (the innermost) and region_stack
 * (outermost;...;innermost). --region keeps the samples the text report keeps.
 *
 * --view=off|wall (a recording of perch record --off-cpu): the first sample type is
 * offcpu/nanoseconds or wall/nanoseconds (the samples weighed by report/view.c), the second
 * cpu/nanoseconds the on-CPU part of it (ticks x period; 0 for off).
 *
 * GPU (a recording of perch record --gpu with launch stacks): a third sample type,
 * gpu/nanoseconds, and one more sample per launch stack (its program's frames as locations, its
 * thread and region labels as a CPU sample's) valued at the device time of the kernels, copies
 * and memsets launched from it; CPU samples have 0 there, GPU samples 0 in the CPU types. A
 * recording without launch stacks gives the two types and the same bytes as before.
 *
 * Streamed: a protobuf message is the concatenation of its fields, in any order, repeated ones
 * adding up, and pprof's readers resolve string indices after reading all of it. So each sample
 * is packed and deflated as it is made (one Profile.sample field), and the rest of the Profile
 * (types, mappings, locations, functions, the string table) follows as one more message: what is
 * held is bounded by the program (its frames, functions, modules and distinct label strings),
 * not by the number of samples, and the output is never held whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "common.h"
#include "model/gpupaths.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "profile.pb-c.h"
#include "strtab.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

#define MAX_LABELS 6 /* pid, tid, thread, origin (perch merge), region, region_stack */

struct pprof {
	const struct recording *r;
	const struct profile *p;
	uint64_t frequency;   /* Hz; 0 when the recording does not say */
	uint64_t period;      /* perch record -c (or an event that is not a clock): events per
			     * sample, 0: sampled at frequency Hz */
	const char *counted;  /* such an event that is not a clock (page-faults): its name is the
			      * sample types' (count, and events: count x period), else NULL */
	struct strtab st;     /* the string table; st.strs[0] == "" */
	uint64_t *mapping_of; /* module string id -> mapping id (0: none yet) */
	pb_mapping *maps;
	size_t nmaps, cap_maps;
	struct u64map func_of; /* (profile function << 32 | file string id) -> function id */
	pb_function *funcs;
	size_t nfuncs, cap_funcs;
	uint64_t *location_of; /* recording frame -> location id (0: a region or folded frame) */
	uint64_t folded_loc;   /* "[folded]"'s location: stacks the query folded away (0: none) */
	pb_location *locs;
	size_t nlocs;
	pb_line *lines;
	uint64_t *location_ids; /* the sample being written's */
	size_t cap_ids;
	uint8_t *packed; /* the sample being written, packed */
	size_t cap_packed;
	int64_t comment; /* the recorded command's string */
	uint64_t *
		gpu_ns; /* GPU time launched from each sample (a launch stack); NULL: no GPU type */
	enum report_view view; /* --view: off and wall weigh samples in ns (report/view.c) */
};

/* The index of s in the string table, added on first use (strtab.h); with own, this exporter
 * frees s. -ENOMEM. */
static int64_t intern_str(struct pprof *x, char *s, bool own)
{
	return strtab__intern(&x->st, s, own);
}

/* A string that lives as long as the recording or the profile. */
static int64_t str_id(struct pprof *x, const char *s)
{
	return intern_str(x, (char *)s, false);
}

/* The mapping of a module (string id), created on first use. Its addresses are the frames'
 * offsets in the module's file (the kernel's: addresses), so it starts at 0 with file offset
 * 0. build_id: the module's, where the recording has it (pprof's readers name and match
 * binaries by it; they symbolize nothing here, since every location carries its functions and
 * lines). */
static int64_t mapping_id(struct pprof *x, uint32_t module, uint64_t offset, bool inlines)
{
	pb_mapping *m;

	if (module >= x->r->nstrings)
		module = 0;
	if (!x->mapping_of[module]) {
		int64_t name = str_id(x, x->r->strings[module]);
		int64_t bid = str_id(x, report_build_id(x->r, module));

		if (name < 0 || bid < 0 ||
		    vec_grow(&x->maps, &x->cap_maps, x->nmaps + 1, sizeof(*x->maps), 16))
			return -ENOMEM;
		m = &x->maps[x->nmaps++];
		perftools__profiles__mapping__init(m);
		m->id = x->nmaps;
		m->filename = name;
		m->build_id = bid;
		m->has_functions = m->has_filenames = m->has_line_numbers = true;
		x->mapping_of[module] = m->id;
	}
	m = &x->maps[x->mapping_of[module] - 1];
	if (offset >= m->memory_limit)
		m->memory_limit = offset + 1;
	m->has_inline_frames |= inlines;
	return (int64_t)m->id;
}

/* The function of profile function func with source file file (string id), created on first
 * use; its name is the one every other output prints. */
static int64_t function_id(struct pprof *x, uint32_t func, uint32_t file)
{
	uint64_t key = (uint64_t)func << 32 | file, id;
	int64_t name, filename;
	pb_function *f;

	if (u64map__get(&x->func_of, key, &id))
		return (int64_t)id;
	name = str_id(x, profile__func_name(x->p, func));
	filename = str_id(x, recording__string(x->r, file));
	if (name < 0 || filename < 0 ||
	    vec_grow(&x->funcs, &x->cap_funcs, x->nfuncs + 1, sizeof(*x->funcs), 256))
		return -ENOMEM;
	f = &x->funcs[x->nfuncs++];
	perftools__profiles__function__init(f);
	f->id = x->nfuncs;
	f->name = name;
	f->filename = filename;
	if (u64map__put(&x->func_of, key, f->id))
		return -ENOMEM;
	return (int64_t)f->id;
}

/* Location l for recording frame i: its lines innermost first, as both the recording's LINES
 * and pprof's Location.line order them (profile__frame_funcs gives the outermost first). */
static int add_location(struct pprof *x, uint32_t i, pb_location *l, pb_line *lines)
{
	const struct rec_frame *fr = &x->r->frames[i];
	const uint32_t *fns;
	uint32_t n = profile__frame_funcs(x->p, i, &fns);
	const uint32_t *li = profile__frame_lines(x->p, i);
	int64_t map = mapping_id(x, fr->module, fr->offset, n > 1);

	if (map < 0)
		return -ENOMEM;
	perftools__profiles__location__init(l);
	l->line = calloc(n, sizeof(*l->line));
	if (!l->line)
		return -ENOMEM;
	l->id = ++x->nlocs;
	l->mapping_id = (uint64_t)map;
	l->address = fr->offset;
	l->n_line = n;
	for (uint32_t k = 0; k < n; k++) {
		const struct rec_line *rl =
			li[n - 1 - k] < fr->nlines ? &fr->lines[li[n - 1 - k]] : NULL;
		int64_t fn = function_id(x, fns[n - 1 - k], rl ? rl->file : 0);

		if (fn < 0)
			return -ENOMEM;
		perftools__profiles__line__init(&lines[k]);
		lines[k].function_id = (uint64_t)fn;
		lines[k].line = rl ? rl->line : 0;
		l->line[k] = &lines[k];
	}
	return 0;
}

/* "[folded]" (--fold took every frame of a sample): a location of its own, in the slots
 * add_locations() keeps past the frames'. */
static int add_folded_location(struct pprof *x, pb_location *l, pb_line *line)
{
	uint32_t folded = profile__folded_func(x->p);
	int64_t fn = folded == UINT32_MAX ? 0 : function_id(x, folded, 0);

	if (folded == UINT32_MAX)
		return 0;
	if (fn < 0)
		return -ENOMEM;
	perftools__profiles__location__init(l);
	l->line = calloc(1, sizeof(*l->line));
	if (!l->line)
		return -ENOMEM;
	l->id = ++x->nlocs;
	perftools__profiles__line__init(line);
	line->function_id = (uint64_t)fn;
	l->line[0] = line;
	l->n_line = 1;
	x->folded_loc = l->id;
	return 0;
}

static int add_locations(struct pprof *x)
{
	const struct recording *r = x->r;
	size_t nlines = 0, used = 0;
	const uint32_t *fns;

	for (size_t i = 0; i < r->nframes; i++)
		nlines += profile__frame_funcs(x->p, i, &fns);
	x->locs = calloc(r->nframes + 1, sizeof(*x->locs));
	x->lines = calloc(nlines + 1, sizeof(*x->lines));
	x->location_of = calloc(r->nframes + 1, sizeof(*x->location_of));
	x->mapping_of = calloc(r->nstrings + 1, sizeof(*x->mapping_of));
	if (!x->locs || !x->lines || !x->location_of || !x->mapping_of)
		return -ENOMEM;
	for (size_t i = 0; i < r->nframes; i++) {
		pb_location *l = &x->locs[x->nlocs];
		uint32_t n = profile__frame_funcs(x->p, i, &fns);

		if (!n)
			continue; /* a region frame: samples carry their regions apart */
		if (add_location(x, i, l, x->lines + used))
			return -ENOMEM;
		x->location_of[i] = l->id;
		used += n;
	}
	return add_folded_location(x, &x->locs[x->nlocs], x->lines + used);
}

static pb_label *label(pb_sample *s, int64_t key)
{
	pb_label *l = s->label[s->n_label++];

	perftools__profiles__label__init(l);
	l->key = key;
	return l;
}

/* The region labels of a sample inside regions: the innermost, and the whole stack. */
static int region_labels(struct pprof *x, pb_sample *ps, const struct rec_sample *s)
{
	char *stack = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&stack, &len);
	int64_t k_region = str_id(x, "region"), k_stack = str_id(x, "region_stack"), inner, all;

	if (!f)
		return -ENOMEM;
	for (uint32_t j = 0; j < s->nregions; j++)
		fprintf(f, "%s%s", j ? ";" : "", recording__string(x->r, s->regions[j]));
	if (fclose(f)) {
		free(stack);
		return -ENOMEM;
	}
	inner = str_id(x, recording__string(x->r, s->regions[s->nregions - 1]));
	all = intern_str(x, stack, true);
	if (k_region < 0 || k_stack < 0 || inner < 0 || all < 0)
		return -ENOMEM;
	label(ps, k_region)->str = inner;
	label(ps, k_stack)->str = all;
	return 0;
}

/* A merged recording's (perch merge): the label of the input the sample's process came from. */
static int origin_label(struct pprof *x, pb_sample *ps, uint32_t pid)
{
	const struct rec_origin *o = recording__origin(x->r, pid);
	int64_t key = str_id(x, "origin"), value;

	if (!o)
		return 0;
	value = str_id(x, recording__string(x->r, o->origin));
	if (key < 0 || value < 0)
		return -ENOMEM;
	label(ps, key)->str = value;
	return 0;
}

/* Sample ps for the first nframes frames of recording sample s; ids is where its location ids go
 * (the leaf first); values (samples, cpu, and gpu with launch stacks) are the caller's. */
static int add_sample(struct pprof *x, pb_sample *ps, const struct rec_sample *s, uint32_t nframes,
		      uint64_t *ids, int64_t *values)
{
	int64_t k_pid = str_id(x, "pid"), k_tid = str_id(x, "tid"), k_thread = str_id(x, "thread");
	int64_t comm = str_id(x, report_sample_comm(x->r, s));

	if (k_pid < 0 || k_tid < 0 || k_thread < 0 || comm < 0)
		return -ENOMEM;
	ps->n_location_id = 0;
	ps->location_id = ids;
	for (uint32_t j = 0; j < nframes; j++) {
		uint64_t id = x->location_of[s->frames[nframes - 1 - j]];

		if (id) /* not a frame the query folded */
			ids[ps->n_location_id++] = id;
	}
	if (!ps->n_location_id && profile__sample_folded(x->p, (size_t)(s - x->r->samples)))
		ids[ps->n_location_id++] = x->folded_loc;
	ps->n_value = x->gpu_ns ? 3 : 2;
	ps->value = values;
	label(ps, k_pid)->num = s->pid;
	label(ps, k_tid)->num = s->tid;
	label(ps, k_thread)->str = comm;
	if (x->r->norigins && origin_label(x, ps, s->pid))
		return -ENOMEM;
	return s->nregions ? region_labels(x, ps, s) : 0;
}

/* The key of field 2 (Profile.sample), length-delimited, and len as a varint: what
 * protobuf-c writes before each element of a repeated message field. */
static size_t sample_header(uint8_t buf[11], size_t len)
{
	size_t n = 0;

	buf[n++] = 2 << 3 | 2;
	do {
		buf[n++] = (uint8_t)(len & 0x7f) | (len > 0x7f ? 0x80 : 0);
		len >>= 7;
	} while (len);
	return n;
}

/* Sample s's values: its count, its CPU time, and no GPU time. */
static void cpu_values(const struct pprof *x, const struct rec_sample *s, int64_t values[3])
{
	values[0] = (int64_t)s->count;
	values[2] = 0;
	if (x->view != REPORT_VIEW_CPU) {
		/* the count is the view's ns (model/sampleset.h); its on-CPU part second */
		values[1] = x->view == REPORT_VIEW_WALL ? (int64_t)(s->count - s->offcpu_ns) : 0;
		return;
	}
	if (x->period) { /* the events (nanoseconds for a clock) the samples stand for */
		values[1] = (int64_t)(s->count * x->period);
		return;
	}
	/* in 128 bits: a count times 1e9 passes 2^64 from 2^34 samples on */
	values[1] = x->frequency
			    ? (int64_t)((unsigned __int128)s->count * 1000000000u / x->frequency)
			    : 0;
}

/* Recording sample i as one Profile.sample field, packed and written at once: with gpu, the GPU
 * time launched from it (its program's frames), else its CPU sample. */
static int write_sample(struct pprof *x, ProtobufCBuffer *out, size_t i, bool gpu)
{
	const struct rec_sample *s = &x->r->samples[i];
	pb_label labels[MAX_LABELS], *label_ptrs[MAX_LABELS];
	pb_sample ps = PERFTOOLS__PROFILES__SAMPLE__INIT;
	uint32_t nframes = gpu ? gpu_paths__program_frames(x->r, s) : s->nframes;
	int64_t values[3] = {0, 0, gpu ? (int64_t)x->gpu_ns[i] : 0};
	uint8_t head[11];
	size_t len;

	if (vec_grow(&x->location_ids, &x->cap_ids, s->nframes + 1, sizeof(*x->location_ids), 64))
		return -ENOMEM;
	ps.label = label_ptrs;
	for (size_t k = 0; k < MAX_LABELS; k++)
		label_ptrs[k] = &labels[k];
	if (!gpu)
		cpu_values(x, s, values);
	if (add_sample(x, &ps, s, nframes, x->location_ids, values))
		return -ENOMEM;
	len = perftools__profiles__sample__get_packed_size(&ps);
	if (vec_grow(&x->packed, &x->cap_packed, len + 1, 1, 4096))
		return -ENOMEM;
	perftools__profiles__sample__pack(&ps, x->packed);
	out->append(out, sample_header(head, len), head);
	out->append(out, len, x->packed);
	return 0;
}

/* Every kept sample, each packed and written at once as one Profile.sample field: a protobuf
 * message is the concatenation of its fields, in any order, so the rest of the Profile follows
 * (write_rest) and nothing per sample is held. Then the GPU time of each kept launch stack. */
static int write_samples(struct pprof *x, ProtobufCBuffer *out)
{
	int err = 0;

	for (size_t i = 0; i < x->r->nsamples && !err; i++) {
		/* a count of 0: a stack only a GPU launch or an attach-mode call names */
		if (x->r->samples[i].count && profile__sample_kept(x->p, i))
			err = write_sample(x, out, i, false);
	}
	for (size_t i = 0; x->gpu_ns && i < x->r->nsamples && !err; i++) {
		if (x->gpu_ns[i] && profile__sample_kept(x->p, i))
			err = write_sample(x, out, i, true);
	}
	return err;
}

/* An array of pointers to each of n elements of size elem at base (protobuf-c's repeated
 * messages); NULL on ENOMEM. */
static void **pointers(void *base, size_t n, size_t elem)
{
	void **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++)
		v[i] = (char *)base + i * elem;
	return v;
}

/* The message's header and tables but its samples (written before), pointing into x. */
static int fill_profile(struct pprof *x, pb_profile *pb, pb_value_type types[4],
			pb_value_type **type_ptrs)
{
	/* the sample types, the period's, and gpu last: a profile without it interns no "gpu" */
	static const char *const names[4][2] = {{"samples", "count"},
						{"cpu", "nanoseconds"},
						{"cpu", "nanoseconds"},
						{"gpu", "nanoseconds"}};
	const char *command = report_meta(x->r, REC_META_command);
	int ntypes = x->gpu_ns ? 4 : 3;
	uint64_t duration;

	for (int i = 0; i < ntypes; i++) {
		perftools__profiles__value_type__init(&types[i]);
		types[i].type = str_id(x, names[i][0]);
		types[i].unit = str_id(x, names[i][1]);
		if (types[i].type < 0 || types[i].unit < 0)
			return -ENOMEM;
		type_ptrs[i] = &types[i];
	}
	if (x->view != REPORT_VIEW_CPU) { /* the first type is the view's */
		types[0].type = str_id(x, x->view == REPORT_VIEW_WALL ? "wall" : "offcpu");
		types[0].unit = str_id(x, "nanoseconds");
		if (types[0].type < 0 || types[0].unit < 0)
			return -ENOMEM;
	}
	if (x->counted) { /* perch record -e page-faults: its count, and its events */
		types[0].type = types[1].type = types[2].type = str_id(x, x->counted);
		types[1].unit = types[2].unit = str_id(x, "events");
		if (types[0].type < 0 || types[1].unit < 0)
			return -ENOMEM;
	}
	type_ptrs[2] = &types[3]; /* the third sample type, when there is one */
	pb->n_sample_type = x->gpu_ns ? 3 : 2;
	pb->sample_type = type_ptrs;
	pb->period_type = &types[2];
	pb->period = x->period	    ? (int64_t)x->period
		     : x->frequency ? (int64_t)(1000000000u / x->frequency)
				    : 0;
	if (report_end(x->r, REC_END_duration_ns, &duration))
		pb->duration_nanos = (int64_t)duration;
	pb->n_mapping = x->nmaps;
	pb->mapping = (pb_mapping **)pointers(x->maps, x->nmaps, sizeof(*x->maps));
	pb->n_location = x->nlocs;
	pb->location = (pb_location **)pointers(x->locs, x->nlocs, sizeof(*x->locs));
	pb->n_function = x->nfuncs;
	pb->function = (pb_function **)pointers(x->funcs, x->nfuncs, sizeof(*x->funcs));
	if (!pb->mapping || !pb->location || !pb->function)
		return -ENOMEM;
	if (command && *command) {
		x->comment = str_id(x, command);
		pb->n_comment = x->comment > 0;
		pb->comment = &x->comment;
	}
	pb->n_string_table = x->st.n; /* last: everything above may add strings */
	pb->string_table = x->st.strs;
	return 0;
}

/* protobuf-c's output buffer, deflating into a gzip stream (no name, no time: the same recording
 * gives the same bytes). */
struct gz_out {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int err;
	unsigned char chunk[65536];
};

/* Deflate what z holds with flush, writing every full chunk. */
static void gz_drain(struct gz_out *g, int flush)
{
	int zerr;

	do {
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		zerr = deflate(&g->z, flush);
		if (zerr == Z_STREAM_ERROR) {
			g->err = g->err ?: -EIO;
			return;
		}
		size_t n = sizeof(g->chunk) - g->z.avail_out;
		if (!g->err && n && fwrite(g->chunk, 1, n, g->out) != n)
			g->err = -errno ?: -EIO;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && zerr != Z_STREAM_END));
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_out *g = (struct gz_out *)b;

	g->z.next_in = (unsigned char *)data;
	g->z.avail_in = (uInt)len;
	gz_drain(g, Z_NO_FLUSH);
}

/* The profile into out, gzipped: the samples as they are made, then the rest. */
static int write_gzip(struct pprof *x, FILE *out)
{
	struct gz_out *g = calloc(1, sizeof(*g));
	pb_profile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type types[4], *type_ptrs[4];
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->out = out;
	/* 15 + 16: the largest window, with a gzip header and trailer */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	err = write_samples(x, &g->base);
	if (!err)
		err = fill_profile(x, &pb, types, type_ptrs);
	if (!err)
		protobuf_c_message_pack_to_buffer(&pb.base, &g->base);
	gz_drain(g, Z_FINISH);
	deflateEnd(&g->z);
	err = err ?: g->err; /* the CLI names the file that could not be written */
	free(g);
	free(pb.mapping);
	free(pb.location);
	free(pb.function);
	return err;
}

static void pprof_free(struct pprof *x)
{
	for (size_t i = 0; i < x->nlocs; i++)
		free(x->locs[i].line);
	strtab__free(&x->st);
	free(x->mapping_of);
	free(x->maps);
	u64map__clear(&x->func_of);
	free(x->funcs);
	free(x->location_of);
	free(x->locs);
	free(x->lines);
	free(x->location_ids);
	free(x->packed);
	free(x->gpu_ns);
}

/* The GPU time of each launch stack, when the recording has launch stacks (--gpu). */
static int gpu_times(struct pprof *x)
{
	return report_gpu_sample_ns(x->r, &x->gpu_ns);
}

static int export(struct pprof *x, FILE *out)
{
	if (str_id(x, "") < 0 || add_locations(x) || gpu_times(x))
		return -ENOMEM;
	return write_gzip(x, out);
}

int report_pprof(const struct recording *r, const char *path, const struct report_opts *o,
		 FILE *out)
{
	struct profile *p = report_profile(r, o);
	struct pprof x = {.r = r, .p = p, .view = o->view};
	struct report_event e; /* x.counted is its name */
	int err;

	(void)path;
	if (!p)
		return -errno;
	report_sample_weight(r, o, &e, &x.frequency, &x.period, &x.counted);
	err = export(&x, out);
	pprof_free(&x);
	profile__free(p);
	return err;
}
