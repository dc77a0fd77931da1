// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording reader (recording.h): what `perch report` loads. It owns everything a loaded
 * recording points to and trusts no byte of the file: every length, count and id is checked
 * against what the file has defined so far, and a block that fails a check leaves nothing of
 * itself behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/vec.h"
#include "reader_impl.h"

#define ARENA_CHUNK (64u << 10)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	char data[];
};

static char *arena_strndup(struct loaded *L, const uint8_t *s, size_t len)
{
	struct arena_chunk *c = L->arena;
	char *p;

	if (!c || c->size - c->used < len + 1) {
		size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;

		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		c->next = L->arena;
		L->arena = c;
	}
	p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

static int parse_strings(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	const uint8_t *s;
	uint32_t n, len;

	if (!cur_count(c, MIN_STR, &n) || n > UINT32_MAX - r->nstrings)
		return -EBADMSG;
	if (vec_grow(&r->strings, &L->cap_strings, r->nstrings + n, sizeof(char *), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_str(c, &s, &len))
			return -EBADMSG;
		r->strings[r->nstrings] = arena_strndup(L, s, len);
		if (!r->strings[r->nstrings])
			return -ENOMEM;
		r->nstrings++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_frame(struct cur *c, const struct recording *r, struct rec_frame *f)
{
	f->lines = NULL;
	f->nlines = 0;
	return cur_u8(c, &f->kind) && cur_u32(c, &f->module) && cur_u32(c, &f->name) &&
	       cur_u64(c, &f->offset) && f->kind <= REC_FRAME_REGION && f->module < r->nstrings &&
	       f->name < r->nstrings;
}

static int parse_frames(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n;

	if (!cur_count(c, MIN_FRAME, &n) || n > UINT32_MAX - r->nframes)
		return -EBADMSG;
	if (vec_grow(&r->frames, &L->cap_frames, r->nframes + n, sizeof(*r->frames), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		const struct rec_frame *f = &r->frames[r->nframes];

		if (!read_frame(c, r, &r->frames[r->nframes]))
			return -EBADMSG;
		r->nframes++;
		if (f->kind != REC_FRAME_REGION || !f->name)
			continue;
		if (vec_grow(&r->region_names, &L->cap_region_names, r->nregion_names + 1,
			     sizeof(*r->region_names), 16))
			return -ENOMEM;
		r->region_names[r->nregion_names++] = f->name;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_thread(struct cur *c, const struct recording *r, struct rec_thread *t)
{
	return cur_u32(c, &t->pid) && cur_u32(c, &t->tid) && cur_u32(c, &t->ppid) &&
	       cur_u32(c, &t->comm) && t->comm < r->nstrings;
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

/* Add t, or replace the thread with its pid and tid: the last definition wins. */
static int add_thread(struct loaded *L, const struct rec_thread *t)
{
	struct recording *r = &L->r;
	uint64_t idx;

	if (u64map__get(&L->thread_tab, thread_key(t->pid, t->tid), &idx)) {
		r->threads[idx] = *t;
		return 0;
	}
	if (vec_grow(&r->threads, &L->cap_threads, r->nthreads + 1, sizeof(*t), 16) ||
	    u64map__put(&L->thread_tab, thread_key(t->pid, t->tid), r->nthreads))
		return -ENOMEM;
	r->threads[r->nthreads++] = *t;
	return 0;
}

/* Checked whole before any thread changes, as a replaced thread could not be put back. */
static int parse_threads(struct loaded *L, struct cur *c)
{
	struct rec_thread t;
	struct cur check;
	uint32_t n;
	int err = 0;

	if (!cur_count(c, MIN_THREAD, &n))
		return -EBADMSG;
	check = *c;
	for (uint32_t i = 0; i < n; i++) {
		if (!read_thread(&check, &L->r, &t))
			return -EBADMSG;
	}
	if (check.left)
		return -EBADMSG;
	for (uint32_t i = 0; !err && i < n; i++) {
		read_thread(c, &L->r, &t);
		err = add_thread(L, &t);
	}
	return err;
}

/* A frame of a stack, taken apart: a region frame's name (0 for one named 0: dropped), or
 * UINT32_MAX for a function frame. */
static uint32_t region_of(const struct recording *r, uint32_t id)
{
	const struct rec_frame *f = &r->frames[id];

	return f->kind == REC_FRAME_REGION ? f->name : UINT32_MAX;
}

/* The stack of s, ids[0..n) (checked frame ids), into the pool: the names of its region frames
 * first (its regions, in their order), then its function frames. */
int place_stack(struct loaded *L, const uint32_t *ids, uint32_t n, struct rec_sample *s)
{
	uint32_t reg, *regions, *frames;

	s->nregions = s->nframes = 0;
	if (!n)
		return 0; /* nothing to place (and the pool may not exist yet) */
	for (uint32_t i = 0; i < n; i++) {
		reg = region_of(&L->r, ids[i]);
		s->nregions += reg && reg != UINT32_MAX;
		s->nframes += reg == UINT32_MAX;
	}
	if (vec_grow(&L->pool, &L->cap_pool, L->npool + n, sizeof(*L->pool), 16))
		return -ENOMEM;
	regions = L->pool + L->npool;
	frames = regions + s->nregions;
	for (uint32_t i = 0; i < n; i++) {
		reg = region_of(&L->r, ids[i]);
		if (reg == UINT32_MAX)
			*frames++ = ids[i];
		else if (reg)
			*regions++ = reg;
	}
	L->npool += s->nregions + s->nframes;
	return 0;
}

/* The stack of s, n frame ids on disk (through L->stack). */
static int read_stack(struct loaded *L, struct cur *c, struct rec_sample *s, uint32_t n)
{
	s->nregions = s->nframes = 0;
	if (n > c->left / 4)
		return -EBADMSG;
	if (vec_grow(&L->stack, &L->cap_stack, n ? n : 1, sizeof(*L->stack), 64))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_u32(c, &L->stack[i]) || L->stack[i] >= L->r.nframes)
			return -EBADMSG;
	}
	return place_stack(L, L->stack, n, s);
}

/* Sample frames point into the pool only once it stops moving: see finish(). */
static int parse_samples(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_sample *s;
	uint32_t n, nstack;
	int err;

	bool named = r->version >= 3;

	if (!cur_count(c, named ? MIN_SAMPLE : MIN_SAMPLE - 4, &n))
		return -EBADMSG;
	if (vec_grow(&r->samples, &L->cap_samples, r->nsamples + n, sizeof(*s), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		s = &r->samples[r->nsamples];
		*s = (struct rec_sample){0};
		if (!cur_u32(c, &s->pid) || !cur_u32(c, &s->tid) || !cur_u64(c, &s->count) ||
		    !cur_u32(c, &s->flags) || (named && !cur_u32(c, &s->comm)) ||
		    s->comm >= r->nstrings || !cur_u32(c, &nstack))
			return -EBADMSG;
		err = read_stack(L, c, s, nstack);
		if (err)
			return err;
		r->nsamples++;
	}
	return c->left ? -EBADMSG : 0;
}

static bool read_line_entry(struct cur *c, const struct recording *r, struct rec_line *l)
{
	return cur_u32(c, &l->function) && cur_u32(c, &l->file) && cur_u32(c, &l->line) &&
	       l->function < r->nstrings && l->file < r->nstrings;
}

/* Checked whole before anything changes, as a replaced chain could not be put back. */
static int check_lines(const struct recording *r, struct cur c, uint32_t n, size_t *total)
{
	struct rec_line l;
	uint32_t frame, k;

	*total = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!cur_u32(&c, &frame) || !cur_u32(&c, &k) || frame >= r->nframes ||
		    k > MAX_LINES || k > c.left / LINE_SIZE)
			return -EBADMSG;
		for (uint32_t j = 0; j < k; j++) {
			if (!read_line_entry(&c, r, &l))
				return -EBADMSG;
		}
		*total += k;
	}
	return c.left ? -EBADMSG : 0;
}

/* Frame chains point into the lines pool only once it stops moving: see finish(). */
static int parse_lines(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	uint32_t n, frame = 0, k = 0; /* checked by check_lines() */
	size_t total;
	int err;

	if (!cur_count(c, MIN_LINES, &n))
		return -EBADMSG;
	err = check_lines(r, *c, n, &total);
	if (err)
		return err;
	if (vec_grow(&L->lines, &L->cap_lines, L->nlines + total, sizeof(*L->lines), 16) ||
	    vec_grow(&L->line_off, &L->cap_line_off, r->nframes, sizeof(*L->line_off), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		cur_u32(c, &frame);
		cur_u32(c, &k);
		L->line_off[frame] = L->nlines;
		r->frames[frame].nlines = k;
		for (uint32_t j = 0; j < k; j++)
			read_line_entry(c, r, &L->lines[L->nlines++]);
	}
	return 0;
}

static int read_kv(struct loaded *L, struct cur *c, struct rec_kv *kv, bool with_str)
{
	const uint8_t *s;
	uint32_t len;

	if (!cur_str(c, &s, &len))
		return -EBADMSG;
	kv->key = arena_strndup(L, s, len);
	if (!kv->key)
		return -ENOMEM;
	if (!with_str)
		return cur_u64(c, &kv->value) ? 0 : -EBADMSG;
	if (!cur_str(c, &s, &len))
		return -EBADMSG;
	kv->str = arena_strndup(L, s, len);
	return kv->str ? 0 : -ENOMEM;
}

/* Replace *arr with the block's pairs; never NULL after, so an empty END still reads as ended. */
static int parse_kv(struct loaded *L, struct cur *c, struct rec_kv **arr, size_t *narr,
		    bool with_str)
{
	struct rec_kv *kv;
	uint32_t n;
	int err = 0;

	if (!cur_count(c, with_str ? MIN_KV_STR : MIN_KV_U64, &n))
		return -EBADMSG;
	kv = calloc(n ? n : 1, sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (uint32_t i = 0; !err && i < n; i++)
		err = read_kv(L, c, &kv[i], with_str);
	if (!err && c->left)
		err = -EBADMSG;
	if (err) {
		free(kv);
		return err;
	}
	free(*arr);
	*arr = kv;
	*narr = n;
	return 0;
}

static int parse_meta(struct loaded *L, struct cur *c)
{
	return parse_kv(L, c, &L->r.meta, &L->r.nmeta, true);
}

/* A STATS block holds the counters that changed since the one before it (every counter, in files
 * of perch before that): each counter keeps its last value. */
static int parse_stats(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	struct rec_kv *add = NULL, *t;
	size_t nadd = 0, k;
	int err = parse_kv(L, c, &add, &nadd, false);

	if (err)
		return err;
	if (vec_grow(&r->stats, &L->cap_stats, r->nstats + nadd + 1, sizeof(*t), 16)) {
		free(add);
		return -ENOMEM;
	}
	t = r->stats;
	for (size_t i = 0; i < nadd; i++) {
		for (k = 0; k < r->nstats && strcmp(t[k].key, add[i].key); k++)
			;
		t[k] = add[i];
		if (k == r->nstats)
			r->nstats++;
	}
	free(add);
	return 0;
}

static int parse_end(struct loaded *L, struct cur *c)
{
	return parse_kv(L, c, &L->r.end, &L->r.nend, false);
}

static bool read_rnode(struct cur *c, struct rec_region_node *n)
{
	return cur_u32(c, &n->name) && cur_u32(c, &n->parent) && cur_u64(c, &n->calls) &&
	       cur_u64(c, &n->total_ns) && cur_u64(c, &n->self_ns) && cur_u64(c, &n->min_ns) &&
	       cur_u64(c, &n->max_ns) && cur_u64(c, &n->size_sum) && cur_u64(c, &n->untimed) &&
	       cur_u32(c, &n->open) && cur_u64(c, &n->sum_ns);
}

/* One region thread into t (nodes allocated); -EBADMSG when it breaks the rules. */
static int read_rthread(struct cur *c, const struct recording *r, struct rec_region_thread *t)
{
	if (!cur_u32(c, &t->pid) || !cur_u32(c, &t->tid) || !cur_u64(c, &t->mismatches) ||
	    !cur_u32(c, &t->nnodes) || !t->nnodes || t->nnodes > c->left / RNODE_SIZE)
		return -EBADMSG;
	t->nodes = malloc(t->nnodes * sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		if (!read_rnode(c, &t->nodes[i]) || !codec_rnode_ok(&t->nodes[i], i, r->nstrings)) {
			free(t->nodes);
			t->nodes = NULL;
			return -EBADMSG;
		}
	}
	return 0;
}

/* Replace the region thread with t's pid and tid, or add t. */
static int add_rthread(struct loaded *L, struct rec_region_thread *t)
{
	struct recording *r = &L->r;
	uint64_t idx;

	if (u64map__get(&L->rthread_tab, thread_key(t->pid, t->tid), &idx)) {
		free(r->rthreads[idx].nodes);
		r->rthreads[idx] = *t;
		return 0;
	}
	if (vec_grow(&r->rthreads, &L->cap_rthreads, r->nrthreads + 1, sizeof(*t), 16) ||
	    u64map__put(&L->rthread_tab, thread_key(t->pid, t->tid), r->nrthreads))
		return -ENOMEM;
	r->rthreads[r->nrthreads++] = *t;
	return 0;
}

/* Read whole before anything changes: a replaced thread could not be put back. */
static int parse_regions(struct loaded *L, struct cur *c)
{
	struct rec_region_thread *v;
	uint32_t n, i;
	int err = 0;

	if (!cur_count(c, MIN_RTHREAD, &n))
		return -EBADMSG;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; !err && i < n; i++)
		err = read_rthread(c, &L->r, &v[i]);
	if (!err && c->left)
		err = -EBADMSG;
	for (uint32_t j = 0; j < n; j++) {
		if (!err)
			err = add_rthread(L, &v[j]);
		else
			free(v[j].nodes); /* not added (add_rthread failing adds nothing) */
	}
	free(v);
	return err;
}

typedef int (*parse_fn)(struct loaded *L, struct cur *c);

static const parse_fn parsers[] = {
	[REC_META] = parse_meta,	 [REC_STRINGS] = parse_strings,
	[REC_FRAMES] = parse_frames,	 [REC_THREADS] = parse_threads,
	[REC_SAMPLES] = parse_samples,	 [REC_STATS] = parse_stats,
	[REC_END] = parse_end,		 [REC_LINES] = parse_lines,
	[REC_REGIONS] = parse_regions,	 [REC_STACKS] = parse_stacks,
	[REC_KEYS] = parse_keys,	 [REC_WINDOWS] = parse_windows,
	[REC_TIMELINE] = parse_timeline, [REC_SPANS] = parse_spans,
	[REC_MODULES] = parse_modules,	 [REC_GPU] = parse_gpu,
	[REC_ORIGINS] = parse_origins,	 [REC_METRICS] = parse_metrics,
	[REC_OFFCPU] = parse_offcpu,	 [REC_STEPS] = parse_steps,
	[REC_SIZES] = parse_sizes,	 [REC_OFFSPANS] = parse_offspans,
	[REC_CGROUPS] = parse_cgroups,
};

static void cut_back(struct loaded *L, const struct mark *m)
{
	L->r.nstrings = m->nstrings;
	L->r.nframes = m->nframes;
	L->r.nsamples = m->nsamples;
	L->npool = m->npool;
	L->r.nregion_names = m->nregion_names;
	L->nnodes = m->nnodes;
	L->nkeys = m->nkeys;
	L->r.nwindows = m->nwindows;
	L->ncounts = m->ncounts;
	L->r.nevents = m->nevents;
	L->r.nspans = m->nspans;
	L->r.nmodules = m->nmodules;
	L->r.ngpu = m->ngpu;
	L->r.ngpu_notes = m->ngpu_notes;
	L->r.ngpu_calls = m->ngpu_calls;
}

static int load_payload(struct loaded *L, uint32_t type, const uint8_t *p, size_t len)
{
	const struct recording *r = &L->r;
	struct mark m = {r->nstrings, r->nframes,  r->nsamples, L->npool,      r->nregion_names,
			 L->nnodes,   L->nkeys,	   r->nwindows, L->ncounts,    r->nevents,
			 r->nspans,   r->nmodules, r->ngpu,	r->ngpu_notes, r->ngpu_calls};
	struct cur c = {p, len};
	int err;

	if (type >= ARRAY_SIZE(parsers) || !parsers[type])
		return 0; /* a block type from a later perch: skipped */
	if (type >= REC_STACKS && r->version < 4)
		return 0; /* as a perch of that version did */
	err = parsers[type](L, &c);
	if (err)
		cut_back(L, &m);
	return err;
}

/* The file being loaded, read a block at a time: memory follows what the blocks define, not the
 * file's size (a sparse file, a zero-filled tail). */
struct src {
	int fd;
	uint32_t version;
	uint64_t size, pos; /* size when opened: a file still being written ends there */
	struct buf payload; /* the current block's, reused */
};

/* len bytes at the current position; -ENODATA when the file ends first. */
static int read_exact(struct src *s, void *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(s->fd, (uint8_t *)p + done, len - done);

		if (n == 0)
			return -ENODATA;
		if (n < 0 && errno != EINTR)
			return -errno;
		done += n > 0 ? (size_t)n : 0;
	}
	s->pos += len;
	return 0;
}

/*
 * The next block's header and payload (in s->payload). -ENODATA: the file ends inside it;
 * -EBADMSG: it can't be a block. Type 0 is none: a zero-filled tail (a file extended and never
 * written, or a disk that lost the last writes) is damage, not millions of empty blocks.
 */
static int read_block(struct src *s, uint32_t *type)
{
	uint8_t h[BLOCK_HDR_SIZE];
	uint32_t plen;
	int err;

	if (s->size - s->pos < BLOCK_HDR_SIZE)
		return -ENODATA;
	err = read_exact(s, h, sizeof(h));
	if (err)
		return err;
	*type = le32_get(h);
	plen = le32_get(h + 4);
	if (!*type || !plen || plen > MAX_BLOCK || le32_get(h + 12))
		return -EBADMSG;
	if (s->size - s->pos < plen)
		return -ENODATA;
	s->payload.len = 0;
	if (buf_reserve(&s->payload, plen))
		return -ENOMEM;
	err = read_exact(s, s->payload.data, plen);
	if (err)
		return err;
	s->payload.len = plen;
	return codec_crc(s->payload.data, plen) == le32_get(h + 8) ? 0 : -EBADMSG;
}

static int load_blocks(struct loaded *L, struct src *s)
{
	while (s->pos < s->size) {
		uint32_t type;
		int err = read_block(s, &type);

		if (!err)
			err = load_payload(L, type, s->payload.data, s->payload.len);
		if (err)
			return err;
		L->r.nblocks++;
		L->r.good_size = s->pos;
	}
	return 0;
}

/* Point every sample at its regions and frames, now that the pool has its final address. */
static void finish(struct loaded *L)
{
	size_t off = 0;

	for (size_t i = 0; i < L->r.nsamples; i++) {
		struct rec_sample *s = &L->r.samples[i];

		s->regions = L->pool ? L->pool + off : NULL;
		s->frames = L->pool ? L->pool + off + s->nregions : NULL;
		off += s->nregions + s->nframes;
	}
	for (size_t i = 0; i < L->r.nframes; i++)
		L->r.frames[i].lines = L->r.frames[i].nlines ? L->lines + L->line_off[i] : NULL;
	time_finish(L);
	u64map__clear(&L->thread_tab);
	u64map__clear(&L->rthread_tab);
}

/*
 * Open path for reading as s, and check its header; s->pos is where the blocks start. Only a
 * regular file: a FIFO or a device (/dev/zero) has no end to stop at (-EINVAL; opened without
 * blocking, so a FIFO with no writer can't hang us either).
 */
static int open_src(const char *path, struct src *s)
{
	uint8_t hdr[FILE_HDR_SIZE];
	struct stat st;
	uint32_t start;
	int err;

	s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	if (fstat(s->fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	s->size = (uint64_t)st.st_size;
	err = s->size < FILE_HDR_SIZE ? -EPROTO : read_exact(s, hdr, sizeof(hdr));
	if (err)
		return err;
	if (memcmp(hdr, PERCH_FILE_MAGIC, 8))
		return -EPROTO;
	s->version = le32_get(hdr + 8);
	if (s->version < 1 || s->version > PERCH_FILE_VERSION)
		return -EPROTONOSUPPORT;
	start = le32_get(hdr + 12);
	if (start < FILE_HDR_SIZE || start > s->size)
		return -EPROTO;
	if (start > FILE_HDR_SIZE && lseek(s->fd, start, SEEK_SET) < 0)
		return -errno;
	s->pos = start;
	return 0;
}

static struct loaded *loaded_new(size_t start)
{
	struct loaded *L = calloc(1, sizeof(*L));

	if (!L)
		return NULL;
	L->r.good_size = start;
	if (vec_grow(&L->r.strings, &L->cap_strings, 1, sizeof(char *), 16))
		goto err_out;
	L->r.strings[0] = arena_strndup(L, (const uint8_t *)"", 0);
	if (!L->r.strings[0])
		goto err_out;
	L->r.nstrings = 1;
	return L;
err_out:
	recording__free(&L->r);
	errno = ENOMEM;
	return NULL;
}

int recording__load(const char *path, struct recording **out)
{
	struct src s = {.fd = -1};
	struct loaded *L = NULL;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = open_src(path, &s);
	if (err)
		goto cleanup;
	L = loaded_new(s.pos);
	if (!L) {
		err = -ENOMEM;
		goto cleanup;
	}
	L->r.version = s.version;
	err = load_blocks(L, &s);
	finish(L);
	if (!err || err == -EBADMSG || err == -ENODATA) {
		*out = &L->r;
		L = NULL;
	}
cleanup:
	if (L)
		recording__free(&L->r);
	if (s.fd >= 0)
		close(s.fd);
	free(s.payload.data);
	return err;
}

void recording__free(struct recording *r)
{
	struct loaded *L = (struct loaded *)r;
	struct arena_chunk *c, *next;

	if (!r)
		return;
	for (c = L->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(r->meta);
	free(r->strings);
	free(r->frames);
	free(r->region_names);
	free(r->threads);
	free(r->samples);
	free(r->stats);
	free(r->end);
	for (size_t i = 0; i < r->nrthreads; i++)
		free(r->rthreads[i].nodes);
	free(r->rthreads);
	free(L->pool);
	free(L->lines);
	free(L->line_off);
	free(L->stack);
	free(r->metrics);
	free(L->metric_points);
	free(r->steps);
	free(L->step_counts);
	time_free(L);
	sizes_free(L);
	u64map__clear(&L->thread_tab);
	u64map__clear(&L->rthread_tab);
	free(L);
}

static const struct rec_kv *kv_find(const struct rec_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; kv && key && i < n; i++) {
		if (!strcmp(kv[i].key, key))
			return &kv[i];
	}
	return NULL;
}

const char *recording__meta(const struct recording *r, const char *key)
{
	const struct rec_kv *kv = r ? kv_find(r->meta, r->nmeta, key) : NULL;

	return kv ? kv->str : NULL;
}

static bool kv_value(const struct rec_kv *kv, size_t n, const char *key, uint64_t *value)
{
	const struct rec_kv *found = kv_find(kv, n, key);

	if (found && value)
		*value = found->value;
	return found;
}

bool recording__stat(const struct recording *r, const char *key, uint64_t *value)
{
	return r && kv_value(r->stats, r->nstats, key, value);
}

bool recording__end(const struct recording *r, const char *key, uint64_t *value)
{
	return r && kv_value(r->end, r->nend, key, value);
}

const char *recording__string(const struct recording *r, uint32_t id)
{
	return r && id < r->nstrings ? r->strings[id] : "";
}
