// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record --gpu` (gpu.h): the channel from the injection library into the GPU block.
 *
 * The pipe is sized up (F_SETPIPE_SZ) so that the library, which writes whole records and blocks
 * when the pipe is full, rarely waits for perch's next look (at most a drain period, 100 ms).
 *
 * Launch sites (PERCH_CUDA_STACKS unset or "site"): the library takes the probe once per call
 * site and sends a SITE record for each other call of the site. Such a call is written as a
 * LAUNCH entry with the key of its site's probed call, once that key has come from the sampler
 * (at the drain of its buffer: the SITE record usually comes first and waits).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "cuda/gpu_join.h"
#include "cuda/gpu_records.h"
#include "gpu.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"

#define CHANNEL_BUF (256u << 10)
/* A SITE record whose site's key has not come this long after the call will not get it (the
 * site's probe was lost): the sampler hands keys on within a drain period or two (100 ms). */
#define SITE_WAIT_NS 2000000000ull
#define PIPE_BYTES   (1 << 20)
/* What the channel (the target) can make perch hold: kernel names (entries, bytes of text), the
 * library's notes, SITE records waiting for their key, the probed calls' keys per generation. */
#define MAX_NAMES	  (1u << 16)
#define MAX_NAME_BYTES	  (16u << 20)
#define MAX_NOTES	  64
#define MAX_SITES_PENDING (1u << 16)
#define MAX_KEYS	  (1u << 17)
#define POLL_BYTES	  (64u * CHANNEL_BUF)

#define SAME(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME(REC_GPU_KERNEL, PERCH_CUDA_KERNEL) && SAME(REC_GPU_MEMCPY, PERCH_CUDA_MEMCPY) &&
		       SAME(REC_GPU_MEMSET, PERCH_CUDA_MEMSET) &&
		       SAME(REC_GPU_SYNC, PERCH_CUDA_SYNC) && SAME(REC_GPU_API, PERCH_CUDA_API) &&
		       SAME(REC_GPU_NOTE, PERCH_CUDA_NOTE),
	       "GPU block kinds are the channel's");
_Static_assert(SAME(REC_GPU_COPY_HTOD, PERCH_CUDA_COPY_HTOD) &&
		       SAME(REC_GPU_COPY_PTOP, PERCH_CUDA_COPY_PTOP),
	       "copy directions are the channel's");
_Static_assert(REC_GPU_F_LAUNCH == PERCH_CUDA_F_LAUNCH && REC_GPU_F_GRAPH == PERCH_CUDA_F_GRAPH,
	       "GPU flags are the channel's");
#undef SAME

/* A map in two generations: when the newer is full the older is forgotten; a key found in the
 * older moves to the newer, so what is still used stays. Bounded at 2 x MAX_KEYS. */
struct genmap {
	struct u64map cur, old;
};

struct site_wait {
	struct perch_cuda_rec rec;
	uint64_t arrived_ns; /* perch's clock (rec's own times are the target's) */
};

struct gpu {
	struct rec_writer *w;
	char library[PATH_MAX];
	int rfd, wfd;	     /* perch's end (non-blocking), the command's end (-1 once launched) */
	struct stat pipe_st; /* the channel's device and inode, named in PERCH_CUDA_FD */
	char fd_env[64];
	struct gpu_join *join;
	uint8_t *buf; /* bytes read, not yet a whole record */
	size_t len;
	struct u64map names;	   /* pid << 32 | the library's name id -> string id */
	size_t name_bytes;	   /* of the names bound, against MAX_NAME_BYTES */
	size_t nnotes;		   /* the library's notes written, against MAX_NOTES */
	bool sites;		   /* the library keys launch sites: keep the probed calls' keys */
	struct genmap probed;	   /* pid << 32 | correlation id of a probed call -> key id + 1 */
	struct genmap reprobed;	   /* the same of a re-probe -> the key its site's calls get + 1, 0
				 * while its SITE record waits */
	struct site_wait *pending; /* SITE records whose site's key has not come yet */
	size_t npending, cappending;
	bool new_keys; /* keys came since the pending records were last looked at */
	uint64_t stats[GPU_STAT_NR];
	bool eof, damaged, finished, stopped, nomem_said;
};

static void genmap__clear(struct genmap *m)
{
	u64map__clear(&m->cur);
	u64map__clear(&m->old);
}

static int genmap__put(struct genmap *m, uint64_t key, uint64_t val)
{
	if (m->cur.len >= MAX_KEYS) {
		u64map__clear(&m->old);
		m->old = m->cur;
		m->cur = (struct u64map){0};
	}
	return u64map__put(&m->cur, key, val);
}

static bool genmap__get(struct genmap *m, uint64_t key, uint64_t *val)
{
	if (u64map__get(&m->cur, key, val))
		return true;
	if (!u64map__get(&m->old, key, val))
		return false;
	genmap__put(m, key, *val); /* failing, it is still found this once */
	return true;
}

int gpu_find_library(char *buf, size_t len)
{
	static const char *const rel[] = {"libperch_cuda.so", "../lib/perch/libperch_cuda.so"};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/%s", exe, rel[i]) >= (int)sizeof(path) ||
		    access(path, R_OK))
			continue;
		if (!realpath(path, buf) || strlen(buf) >= len)
			continue;
		return 0;
	}
	return -ENOENT;
}

int gpu_set_stacks(const char *mode)
{
	return setenv(PERCH_CUDA_STACKS_ENV, mode, 1) ? -errno : 0;
}

static uint32_t kernel_name(const struct gpu *g, uint32_t pid, uint32_t name_id)
{
	uint64_t id = 0;

	u64map__get(&g->names, (uint64_t)pid << 32 | name_id, &id);
	return (uint32_t)id;
}

/* One GPU entry, unless the recording stopped (--max-size): then counted. */
static int put_gpu(struct gpu *g, const struct rec_gpu *e)
{
	if (g->stopped) {
		g->stats[GPU_SIZE_DROPPED]++;
		return -ENOSPC;
	}
	return rec_writer__gpu(g->w, e);
}

/* An activity, with its launch or (launch NULL) none known. */
static void on_joined(void *ctx, const struct gpu_launch *l, const struct perch_cuda_rec *a)
{
	struct gpu *g = ctx;
	struct rec_gpu e = {
		.kind = (uint8_t)a->kind,
		.start_ns = a->start_ns,
		.end_ns = a->end_ns < a->start_ns ? a->start_ns : a->end_ns,
		.device = a->device,
		.stream = a->stream,
		.bytes = a->bytes,
		.detail = a->kind == PERCH_CUDA_KERNEL ? 0 : a->detail,
		.name = a->kind == PERCH_CUDA_KERNEL ? kernel_name(g, a->pid, a->detail) : 0,
		.correlation = a->correlation_id,
		.flags = a->flags & PERCH_CUDA_F_GRAPH,
		.graph = a->graph_id,
		.pid = a->pid,
		.tid = l ? l->tid : 0,
		.launch_ns = l && l->tid ? l->time_ns : 0,
	};

	put_gpu(g, &e);
}

struct gpu *gpu__new(struct rec_writer *w, const char *library)
{
	struct gpu *g = calloc(1, sizeof(*g));
	int fds[2];

	if (!g)
		return NULL;
	g->rfd = g->wfd = -1;
	snprintf(g->library, sizeof(g->library), "%s", library);
	g->w = w;
	g->sites = !getenv(PERCH_CUDA_STACKS_ENV) || strcmp(getenv(PERCH_CUDA_STACKS_ENV), "every");
	g->buf = malloc(CHANNEL_BUF);
	g->join = gpu_join__new(on_joined, g);
	if (!g->buf || !g->join || pipe2(fds, O_CLOEXEC))
		goto err_out;
	g->rfd = fds[0];
	g->wfd = fds[1];
	if (fcntl(g->rfd, F_SETFL, O_NONBLOCK) || fstat(g->wfd, &g->pipe_st))
		goto err_out;
	if (fcntl(g->rfd, F_SETPIPE_SZ, PIPE_BYTES) < 0)
		log_warn("gpu: channel of %d bytes: %s (the default size is used)", PIPE_BYTES,
			 strerror(errno));
	return g;
err_out:
	gpu__free(g);
	errno = errno ? errno : ENOMEM;
	return NULL;
}

void gpu__free(struct gpu *g)
{
	if (!g)
		return;
	if (g->rfd >= 0)
		close(g->rfd);
	if (g->wfd >= 0)
		close(g->wfd);
	gpu_join__free(g->join);
	u64map__clear(&g->names);
	genmap__clear(&g->probed);
	genmap__clear(&g->reprobed);
	free(g->pending);
	free(g->buf);
	free(g);
}

void gpu__child(void *ctx)
{
	struct gpu *g = ctx;

	/* The command's end, for the command alone: no longer closed on its exec. */
	if (fcntl(g->wfd, F_SETFD, 0))
		return;
	snprintf(g->fd_env, sizeof(g->fd_env), "%d:%llu:%llu", g->wfd,
		 (unsigned long long)g->pipe_st.st_dev, (unsigned long long)g->pipe_st.st_ino);
	setenv(PERCH_CUDA_FD_ENV, g->fd_env, 1);
	setenv("CUDA_INJECTION64_PATH", g->library, 1);
}

void gpu__launched(struct gpu *g)
{
	if (g->wfd >= 0)
		close(g->wfd);
	g->wfd = -1;
}

static int write_note(struct gpu *g, const char *text)
{
	struct rec_gpu e = {.kind = REC_GPU_NOTE, .name = rec_writer__string(g->w, text)};

	return e.name ? put_gpu(g, &e) : -ENOMEM;
}

/* A note from the channel: the first MAX_NOTES. */
static void library_note(struct gpu *g, const char *text)
{
	if (g->nnotes >= MAX_NOTES) {
		g->stats[GPU_REFUSED]++;
		return;
	}
	g->nnotes++;
	write_note(g, text);
}

/* The text of a NAME or NOTE record, NUL-terminated in out (PERCH_CUDA_NAME_MAX + 1 bytes). */
static const char *record_text(const struct perch_cuda_rec *r, const char *name, char *out)
{
	memcpy(out, name ? name : "", name ? r->name_len : 0);
	out[name ? r->name_len : 0] = '\0';
	return out;
}

/* An API call: written as it is (the CPU side of the timeline), then to the join. */
static void api_record(struct gpu *g, const struct perch_cuda_rec *r)
{
	struct rec_gpu e = {
		.kind = REC_GPU_API,
		.start_ns = r->start_ns,
		.end_ns = r->end_ns < r->start_ns ? r->start_ns : r->end_ns,
		.detail = r->detail,
		.correlation = r->correlation_id,
		.flags = r->flags & PERCH_CUDA_F_LAUNCH,
		.pid = r->pid,
		.tid = r->tid,
		.launch_ns = r->end_ns,
	};

	put_gpu(g, &e);
}

static int write_launch(struct gpu *g, uint32_t pid, uint32_t tid, uint32_t correlation_id,
			uint64_t time_ns, uint32_t key)
{
	struct rec_gpu e = {
		.kind = REC_GPU_LAUNCH,
		.start_ns = time_ns,
		.end_ns = time_ns,
		.detail = key,
		.correlation = correlation_id,
		.pid = pid,
		.tid = tid,
		.launch_ns = time_ns,
	};

	return put_gpu(g, &e);
}

/* The key the probe of (pid, corr) took; false: not come yet. */
static bool probed_key(struct gpu *g, uint32_t pid, uint32_t corr, uint32_t *key)
{
	uint64_t v;

	if (!genmap__get(&g->probed, (uint64_t)pid << 32 | corr, &v))
		return false;
	*key = (uint32_t)(v - 1);
	return true;
}

/* The key the calls of a site get from its probed call (pid, corr): the probe's own, or for a
 * re-probe what its check decided; false: not known yet. */
static bool site_key(struct gpu *g, uint32_t pid, uint32_t corr, uint32_t *key)
{
	uint64_t v;

	if (!genmap__get(&g->reprobed, (uint64_t)pid << 32 | corr, &v))
		return probed_key(g, pid, corr, key);
	*key = (uint32_t)(v - 1);
	return v != 0;
}

/*
 * A re-probe's check. Its fresh stack becomes the site's when it is the one the site's previous
 * probe took too (two probes in a row agree: a first stack cut short, before perch had read a
 * library's unwind tables, heals so); a fresh stack unlike the previous one (a probe whose stack
 * came out damaged) is counted and not used: the site keeps the key it had.
 */
static bool reprobe_resolve(struct gpu *g, const struct perch_cuda_rec *r)
{
	uint32_t fresh, prev, kept;

	if (!probed_key(g, r->pid, r->correlation_id, &fresh) ||
	    !probed_key(g, r->pid, r->detail, &prev) || !site_key(g, r->pid, r->detail, &kept))
		return false;
	g->stats[GPU_REPROBES]++;
	g->stats[GPU_REPROBES_DIFFER] += fresh != kept;
	genmap__put(&g->reprobed, (uint64_t)r->pid << 32 | r->correlation_id,
		    (uint64_t)(fresh == prev ? fresh : kept) + 1);
	return true;
}

/* A SITE record whose site's key is known: the call's LAUNCH entry (or, a re-probe, the check
 * that its fresh stack is the site's). false: the key has not come yet. */
static bool site_resolve(struct gpu *g, const struct perch_cuda_rec *r)
{
	uint32_t site;

	if (r->flags & PERCH_CUDA_F_REPROBE)
		return reprobe_resolve(g, r);
	if (!site_key(g, r->pid, r->detail, &site))
		return false;
	g->stats[GPU_INHERITED]++;
	write_launch(g, r->pid, r->tid, r->correlation_id, r->start_ns, site);
	return true;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A SITE record that will not be resolved: counted. */
static void site_lost(struct gpu *g, const struct perch_cuda_rec *r)
{
	g->stats[r->flags & PERCH_CUDA_F_REPROBE ? GPU_REPROBES : GPU_INHERITED_LOST]++;
}

/* The SITE records still waiting, once new keys came or the oldest waited SITE_WAIT_NS (or at
 * the end: final); those whose key will not come are counted, not kept. */
static void sites_pending(struct gpu *g, bool final)
{
	uint64_t now = mono_ns();
	size_t kept = 0;

	if (!g->npending ||
	    (!g->new_keys && !final && g->pending[0].arrived_ns + SITE_WAIT_NS > now))
		return;
	g->new_keys = false;
	for (size_t i = 0; i < g->npending; i++) {
		if (site_resolve(g, &g->pending[i].rec))
			continue;
		if (final || g->pending[i].arrived_ns + SITE_WAIT_NS <= now)
			site_lost(g, &g->pending[i].rec);
		else
			g->pending[kept++] = g->pending[i];
	}
	g->npending = kept;
}

static void site_record(struct gpu *g, const struct perch_cuda_rec *r)
{
	if (site_resolve(g, r))
		return;
	/* The site's calls after a re-probe name it: they wait for its check. */
	if ((r->flags & PERCH_CUDA_F_REPROBE) &&
	    genmap__put(&g->reprobed, (uint64_t)r->pid << 32 | r->correlation_id, 0)) {
		g->stats[GPU_REPROBES]++;
		return;
	}
	if (g->npending >= MAX_SITES_PENDING) {
		g->stats[GPU_REFUSED]++;
		site_lost(g, r);
		return;
	}
	if (vec_grow(&g->pending, &g->cappending, g->npending + 1, sizeof(*g->pending), 1024)) {
		g->stats[GPU_INHERITED_LOST]++;
		return;
	}
	g->pending[g->npending++] = (struct site_wait){*r, mono_ns()};
}

/* A kernel name bound to its id: the first MAX_NAMES, MAX_NAME_BYTES of text in all, under the
 * --max-size cap. */
static void name_record(struct gpu *g, const struct perch_cuda_rec *r, const char *name)
{
	char text[PERCH_CUDA_NAME_MAX + 1];
	uint32_t id;

	if (g->names.len >= MAX_NAMES || g->name_bytes + r->name_len > MAX_NAME_BYTES) {
		g->stats[GPU_REFUSED]++;
		return;
	}
	if (rec_writer__gpu_charge(g->w, r->name_len))
		return; /* past --max-size: counted by the writer */
	g->name_bytes += r->name_len;
	id = rec_writer__string(g->w, record_text(r, name, text));
	if (id)
		u64map__put(&g->names, (uint64_t)r->pid << 32 | r->detail, id);
}

static void handle(struct gpu *g, const struct perch_cuda_rec *r, const char *name)
{
	char text[PERCH_CUDA_NAME_MAX + 1];

	switch (r->kind) {
	case PERCH_CUDA_NAME:
		name_record(g, r, name);
		return;
	case PERCH_CUDA_NOTE:
		library_note(g, record_text(r, name, text));
		return;
	case PERCH_CUDA_END:
		g->stats[GPU_PROBES] += r->bytes;
		return;
	case PERCH_CUDA_SITE:
		site_record(g, r);
		return;
	case PERCH_CUDA_API:
		api_record(g, r);
		break;
	default:
		break;
	}
	if (gpu_join__channel(g->join, r) && !g->nomem_said) {
		g->nomem_said = true;
		log_warn("gpu: join: %s", strerror(ENOMEM));
	}
}

/* Every whole record in the buffer; the partial one left moves to its start. */
static void parse(struct gpu *g)
{
	struct perch_cuda_rec r;
	const char *name;
	size_t off = 0;
	int rc;

	while ((rc = gpu_stream_next(g->buf, g->len, &off, &r, &name)) == 1) {
		if (g->stopped)
			g->stats[GPU_SIZE_DROPPED]++;
		else
			handle(g, &r, name);
	}
	if (rc < 0) { /* a damaged stream: nothing after it can be trusted */
		g->damaged = true;
		g->stats[GPU_DAMAGED]++;
		log_warn("gpu: the channel from the injection library is damaged; the rest of it "
			 "is read and ignored");
		off = g->len;
	}
	memmove(g->buf, g->buf + off, g->len - off);
	g->len -= off;
}

/* A damaged channel is still read, and what it holds thrown away: the program writing it (the
 * injection library blocks on a full pipe) must never wait for perch. At most POLL_BYTES a call:
 * a flood does not keep perch from its other work. */
static void poll_bytes(struct gpu *g, size_t budget)
{
	gpu_join__tick(g->join, mono_ns());
	while (!g->eof && budget >= CHANNEL_BUF) {
		ssize_t n = read(g->rfd, g->buf + g->len, CHANNEL_BUF - g->len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			g->eof = n == 0;
			break;
		}
		budget -= (size_t)n;
		g->len += (size_t)n;
		g->stats[GPU_BYTES] += (uint64_t)n;
		if (g->damaged)
			g->len = 0;
		else
			parse(g);
	}
}

void gpu__poll(struct gpu *g)
{
	if (!g)
		return;
	poll_bytes(g, POLL_BYTES);
	sites_pending(g, false);
}

void gpu__stop(struct gpu *g)
{
	if (g)
		g->stopped = true;
}

void gpu__finish(struct gpu *g)
{
	const struct gpu_join_stats *st;

	if (!g || g->finished)
		return;
	g->finished = true;
	gpu__launched(g);
	poll_bytes(g, 4 * POLL_BYTES);
	sites_pending(g, true);
	gpu_join__finish(g->join);
	st = gpu_join__stats(g->join);
	g->stats[GPU_ACTIVITIES] = st->activities;
	g->stats[GPU_JOINED] = st->joined;
	g->stats[GPU_ACTIVITIES_UNMATCHED] = st->activities_unmatched;
	g->stats[GPU_LAUNCHES_UNMATCHED] = st->launches_unmatched;
	g->stats[GPU_DROPPED] = st->dropped;
	g->stats[GPU_LAUNCHES_DROPPED] = st->launches_dropped;
	g->stats[GPU_WAITS_CUT] = st->waits_cut;
	if (!g->stats[GPU_BYTES])
		write_note(g,
			   "no GPU data: the command never loaded perch's CUDA injection library "
			   "(no CUDA driver, or no CUDA calls)");
}

int gpu__launch_key(struct gpu *g, uint32_t pid, uint32_t tid, uint32_t correlation_id,
		    uint64_t time_ns, uint32_t key)
{
	if (g->sites) {
		if (genmap__put(&g->probed, (uint64_t)pid << 32 | correlation_id,
				(uint64_t)key + 1))
			return -ENOMEM;
		g->new_keys = true;
	}
	return write_launch(g, pid, tid, correlation_id, time_ns, key);
}

uint64_t gpu__stat(const struct gpu *g, enum gpu_stat i)
{
	const struct gpu_join_stats *st;

	if (!g || i >= GPU_STAT_NR)
		return 0;
	if (i == GPU_SIZE_DROPPED)
		return g->stats[i] + rec_writer__gpu_dropped(g->w);
	if (g->finished)
		return g->stats[i];
	st = gpu_join__stats(g->join);
	switch (i) {
	case GPU_LAUNCHES_DROPPED:
		return st->launches_dropped;
	case GPU_WAITS_CUT:
		return st->waits_cut;
	case GPU_ACTIVITIES:
		return st->activities;
	case GPU_JOINED:
		return st->joined;
	case GPU_DROPPED:
		return st->dropped;
	default:
		return g->stats[i];
	}
}
