// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * System metrics (metrics.h): the series, the sampling at drains, and the METRICS blocks.
 * Each source is a file kept open and read again with pread() (/proc/stat, a target's stat,
 * statm and io; its threads' status through its kept task directory), so a sample costs a few
 * reads, not opens. A series holds at most REC_METRIC_BUDGET points (format/metrics.h: past it,
 * neighbours merge pairwise and a point holds twice the samples from then on, as the
 * recording's windows do).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "format/metrics.h"
#include "format/recording.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "metrics.h"
#include "nvml.h"
#include "procs.h"
#include "sysread.h"

#define MAX_CPUS  4096
#define MAX_PROCS 256 /* targets with series; later ones are counted, not sampled */
/* busy_only: how often a process with no tick since its last sample is read all the same (its
 * counters' delta then spans the whole time; a process can read and write without a tick). */
#define IDLE_EVERY_NS 10000000000ull
/* The series are written again every second, or every sixteenth of the run so far when that is
 * longer: each block holds every series whole, so a streamed (FIFO) recording grows by
 * O(log run) blocks, not one a second, and a killed perch loses at most 1/16 of the run. */
#define WRITE_EVERY_NS	 1000000000ull
#define WRITE_AGE_FACTOR 16

/* A target's series, in this order from its first. */
static const uint32_t proc_metrics[] = {
	REC_METRIC_USER, REC_METRIC_SYSTEM, REC_METRIC_RSS,  REC_METRIC_MINFLT, REC_METRIC_MAJFLT,
	REC_METRIC_VCSW, REC_METRIC_IVCSW,  REC_METRIC_READ, REC_METRIC_WRITE,
};
#define NPROC_METRICS (sizeof(proc_metrics) / sizeof(proc_metrics[0]))

/* A target (the process table's slot). */
struct pstate {
	uint32_t pid;
	int stat_fd, statm_fd, io_fd, task_fd;
	uint64_t prev[NPROC_METRICS]; /* cumulative values at prev_ns (RSS: unused) */
	uint64_t prev_ns;
	size_t first; /* its first series */
	bool busy;    /* busy_only: it had a tick since its last sample (or none yet) */
};

struct metrics {
	struct rec_writer *w;
	struct procs *ps;
	bool busy_only; /* -a: a process without ticks is read every IDLE_EVERY_NS only */
	int lid;	/* listener id */
	uint64_t interval_ns, last_ns, written_ns, start_ns;
	int stat_fd;
	struct sys_cpu *cpus, *prev_cpus;
	size_t ncpus, nprev_cpus;
	size_t *cpu_series; /* by position in cpus */
	char *buf;
	size_t cap_buf;
	struct rec_series *ser;
	size_t nser, cap_ser;
	struct rec_metric *out; /* the block's series; reused */
	size_t cap_out;
	struct nvml *nvml;
	size_t gpu_first;
	uint32_t note;
	uint64_t tick_ns, page;
	size_t nprocs, untracked;
	unsigned int write_failed;
	uint64_t samples, cost_ns;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A new series; SIZE_MAX out of memory. */
static size_t add_series(struct metrics *m, uint32_t metric, uint32_t subject)
{
	if (vec_grow(&m->ser, &m->cap_ser, m->nser + 1, sizeof(*m->ser), 64))
		return SIZE_MAX;
	rec_series__init(&m->ser[m->nser], metric, subject);
	return m->nser++;
}

static void add_point(struct rec_series *s, uint64_t start, uint64_t end, uint64_t v)
{
	if (rec_series__add(s, start, end, v, REC_METRIC_BUDGET))
		log_debug("metrics: out of memory: a point lost");
}

/* fd's whole text into m->buf (NUL-terminated). 0 or -errno. */
static int read_text(struct metrics *m, int fd)
{
	for (;;) {
		ssize_t n;

		if (m->cap_buf < 4096 && vec_grow(&m->buf, &m->cap_buf, 4096, 1, 4096))
			return -ENOMEM;
		n = pread(fd, m->buf, m->cap_buf, 0);
		if (n < 0)
			return -errno;
		if ((size_t)n < m->cap_buf) {
			m->buf[n] = '\0';
			return 0;
		}
		if (vec_grow(&m->buf, &m->cap_buf, m->cap_buf * 2, 1, 4096))
			return -ENOMEM;
	}
}

/* Each CPU's busy share since the last sample; the first sample is the baseline. */
static void sample_cpus(struct metrics *m, uint64_t now)
{
	struct sys_cpu *t;
	size_t n;

	if (m->stat_fd < 0 || read_text(m, m->stat_fd) ||
	    sysread_cpus(m->buf, m->cpus, MAX_CPUS, &n))
		return;
	for (size_t i = 0; i < n && i < m->nprev_cpus; i++) {
		const struct sys_cpu *a = &m->prev_cpus[i], *b = &m->cpus[i];
		uint64_t total = b->total - a->total, busy = b->busy - a->busy;

		if (a->cpu != b->cpu || b->total < a->total || b->busy < a->busy || !total)
			continue; /* a CPU went offline or came back: no point this time */
		if (m->cpu_series[i] == SIZE_MAX)
			m->cpu_series[i] = add_series(m, REC_METRIC_CPU_BUSY, b->cpu);
		/* a position keeps its series while the CPUs online stay the same */
		if (m->cpu_series[i] != SIZE_MAX && m->ser[m->cpu_series[i]].m.subject == b->cpu)
			add_point(&m->ser[m->cpu_series[i]], m->last_ns, now,
				  busy * REC_METRIC_SHARE_ONE / total);
	}
	t = m->prev_cpus;
	m->prev_cpus = m->cpus;
	m->cpus = t;
	m->nprev_cpus = n;
}

/* A thread's switches, summed over the live threads (an exited thread's drop out). */
static void read_switches(struct metrics *m, struct pstate *st, uint64_t *vol, uint64_t *inv)
{
	int dfd = st->task_fd >= 0 ? dup(st->task_fd) : -1;
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *e;

	*vol = *inv = 0;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		char path[sizeof(e->d_name) + sizeof("/status")];
		uint64_t v, iv;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/status", e->d_name);
		fd = openat(st->task_fd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!read_text(m, fd) && !sysread_ctxsw(m->buf, &v, &iv)) {
			*vol += v;
			*inv += iv;
		}
		close(fd);
	}
	closedir(d);
}

/* The cumulative values, in proc_metrics' order, and *at the time stat was read (perch may be
 * preempted between targets: a time taken once for all would skew the intervals' rates). -errno
 * when the process is gone. */
static int read_proc(struct metrics *m, struct pstate *st, uint64_t *v, uint64_t *at)
{
	struct sys_pstat ps;
	uint64_t resident = 0;
	int err = read_text(m, st->stat_fd);

	*at = clock_ns(CLOCK_MONOTONIC);
	if (!err)
		err = sysread_pid_stat(m->buf, &ps);
	if (err)
		return err;
	memset(v, 0, NPROC_METRICS * sizeof(*v));
	v[0] = ps.utime * m->tick_ns;
	v[1] = ps.stime * m->tick_ns;
	if (!read_text(m, st->statm_fd) && !sysread_statm(m->buf, &resident))
		v[2] = resident * m->page;
	v[3] = ps.minflt;
	v[4] = ps.majflt;
	read_switches(m, st, &v[5], &v[6]);
	if (st->io_fd >= 0 && !read_text(m, st->io_fd))
		sysread_io(m->buf, &v[7], &v[8]);
	return 0;
}

static void sample_proc(struct metrics *m, struct pstate *st)
{
	uint64_t v[NPROC_METRICS], now;

	if (st->stat_fd < 0 || read_proc(m, st, v, &now))
		return;
	for (size_t k = 0; k < NPROC_METRICS; k++) {
		struct rec_series *s = &m->ser[st->first + k];
		uint64_t x = v[k];

		if (s->merge == REC_MM_SUM) /* a counter: the interval's part (never negative) */
			x = v[k] > st->prev[k] ? v[k] - st->prev[k] : 0;
		add_point(s, st->prev_ns, now, x);
		st->prev[k] = v[k];
	}
	st->prev_ns = now;
}

static void sample_gpus(struct metrics *m, uint64_t now)
{
	for (unsigned int i = 0; i < nvml__devices(m->nvml); i++) {
		unsigned int util;
		uint64_t used;

		if (nvml__read(m->nvml, i, &util, &used))
			continue;
		add_point(&m->ser[m->gpu_first + 2 * i], m->last_ns, now,
			  (uint64_t)util * REC_METRIC_SHARE_ONE / 100);
		add_point(&m->ser[m->gpu_first + 2 * i + 1], m->last_ns, now, used);
	}
}

static void sample(struct metrics *m, uint64_t now)
{
	sample_cpus(m, now);
	for (size_t i = 0; i < procs__count(m->ps); i++) {
		struct procs_proc *p = procs__at(m->ps, i);
		struct pstate *st = *procs__slot(p, m->lid);

		if (!st || p->exited ||
		    (m->busy_only && !st->busy && now - st->prev_ns < IDLE_EVERY_NS))
			continue;
		sample_proc(m, st);
		st->busy = false;
	}
	sample_gpus(m, now);
	m->last_ns = now;
	m->samples++;
}

/* Every series with a point, as one METRICS block. */
static void write_series(struct metrics *m)
{
	size_t n = 0;
	int err;

	if (vec_grow(&m->out, &m->cap_out, m->nser + 1, sizeof(*m->out), 64))
		return;
	for (size_t i = 0; i < m->nser; i++) {
		if (!m->ser[i].m.npoints)
			continue;
		m->out[n++] = m->ser[i].m;
	}
	err = rec_writer__metrics(m->w, m->interval_ns, m->note, m->out, n);
	if (err && !m->write_failed++) /* once: the writer says the rest */
		log_warn("metrics: writing the series: %s", strerror(-err));
}

static int open_in(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_CLOEXEC);
}

static void close_fds(struct pstate *st)
{
	int *fds[] = {&st->stat_fd, &st->statm_fd, &st->io_fd, &st->task_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* A target's files and series; NULL when it is gone, out of memory or past MAX_PROCS. */
static struct pstate *track(struct metrics *m, uint32_t pid)
{
	struct pstate *st;
	char path[32];
	int dir;

	if (m->nprocs == MAX_PROCS) {
		if (!m->untracked++)
			log_warn("metrics: more than %d targets: the later ones have no metrics",
				 MAX_PROCS);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%u", pid);
	dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	st = dir >= 0 ? calloc(1, sizeof(*st)) : NULL;
	if (!st)
		goto out;
	/* busy: read at the next sample, so each process has its values once (busy_only) */
	*st = (struct pstate){.pid = pid, .first = m->nser, .busy = true};
	st->stat_fd = open_in(dir, "stat");
	st->statm_fd = open_in(dir, "statm");
	st->io_fd = open_in(dir, "io");
	st->task_fd = openat(dir, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (size_t k = 0; k < NPROC_METRICS; k++) {
		if (add_series(m, proc_metrics[k], pid) == SIZE_MAX) {
			m->nser = st->first;
			close_fds(st);
			free(st);
			st = NULL;
			goto out;
		}
	}
	m->nprocs++;
out:
	if (dir >= 0)
		close(dir);
	return st;
}

/* A process perch attached to or launched: its counters so far are before the recording. */
static int on_start(void *ctx, struct procs_proc *p, const struct proc_maps *maps, const char *exe)
{
	struct metrics *m = ctx;
	void **slot = procs__slot(p, m->lid);
	struct pstate *st;

	(void)maps;
	(void)exe;
	if (*slot)
		return 0; /* an exec seen again: the same process, its counters go on */
	st = track(m, p->pid);
	if (st && (st->stat_fd < 0 || read_proc(m, st, st->prev, &st->prev_ns)))
		close_fds(st);
	*slot = st;
	return 0;
}

/* A child forked while perch watched: its counters start at 0 there. */
static void on_fork(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct metrics *m = ctx;
	void **slot = procs__slot(child, m->lid);
	struct pstate *st;

	(void)parent;
	if (*slot)
		return;
	st = track(m, child->pid);
	if (st)
		st->prev_ns = clock_ns(CLOCK_MONOTONIC);
	*slot = st;
}

static void on_exit_(void *ctx, struct procs_proc *p)
{
	struct metrics *m = ctx;
	struct pstate *st = *procs__slot(p, m->lid);

	if (st)
		close_fds(st);
}

static void on_drop(void *ctx, void *slot)
{
	(void)ctx;
	close_fds(slot);
	free(slot);
}

static int open_sources(struct metrics *m)
{
	char why[256];

	m->stat_fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	m->cpus = calloc(MAX_CPUS, sizeof(*m->cpus));
	m->prev_cpus = calloc(MAX_CPUS, sizeof(*m->prev_cpus));
	m->cpu_series = malloc(MAX_CPUS * sizeof(*m->cpu_series));
	if (!m->cpus || !m->prev_cpus || !m->cpu_series)
		return -ENOMEM;
	for (size_t i = 0; i < MAX_CPUS; i++)
		m->cpu_series[i] = SIZE_MAX;
	m->nvml = nvml__open(why, sizeof(why));
	if (!m->nvml) {
		m->note = rec_writer__string(m->w, why);
		log_debug("metrics: %s", why);
	}
	m->gpu_first = m->nser;
	for (unsigned int i = 0; i < nvml__devices(m->nvml); i++) {
		if (add_series(m, REC_METRIC_GPU_UTIL, i) == SIZE_MAX ||
		    add_series(m, REC_METRIC_GPU_MEM, i) == SIZE_MAX)
			return -ENOMEM;
	}
	return 0;
}

struct metrics *metrics__new(struct rec_writer *w, struct procs *ps, unsigned int interval_ms)
{
	struct metrics *m = calloc(1, sizeof(*m));
	struct procs_listener l = {.name = "metrics",
				   .start = on_start,
				   .fork = on_fork,
				   .exit = on_exit_,
				   .drop = on_drop};
	int err = -ENOMEM;

	if (!m)
		return NULL;
	*m = (struct metrics){.w = w, .ps = ps, .interval_ns = interval_ms * 1000000ull};
	m->tick_ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
	m->page = (uint64_t)sysconf(_SC_PAGESIZE);
	err = open_sources(m);
	l.ctx = m;
	m->lid = err ? err : procs__listen(ps, &l);
	if (m->lid < 0) {
		err = m->lid;
		goto err_out;
	}
	m->last_ns = m->written_ns = m->start_ns = clock_ns(CLOCK_MONOTONIC);
	sample_cpus(m, m->last_ns); /* the baseline */
	return m;
err_out:
	metrics__free(m);
	errno = -err;
	return NULL;
}

void metrics__busy_only(struct metrics *m)
{
	if (m)
		m->busy_only = true;
}

void metrics__sampled(struct metrics *m, uint32_t pid)
{
	struct procs_proc *p;
	struct pstate *st;

	if (!m || !m->busy_only || !(p = procs__find(m->ps, pid)))
		return;
	st = *procs__slot(p, m->lid);
	if (st)
		st->busy = true;
}

void metrics__drained(struct metrics *m)
{
	uint64_t now, cpu;

	if (!m)
		return;
	now = clock_ns(CLOCK_MONOTONIC);
	if (now - m->last_ns < m->interval_ns)
		return;
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sample(m, now);
	if (now - m->written_ns >= WRITE_EVERY_NS &&
	    now - m->written_ns >= (now - m->start_ns) / WRITE_AGE_FACTOR) {
		write_series(m);
		m->written_ns = now;
	}
	m->cost_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
}

void metrics__finish(struct metrics *m)
{
	uint64_t cpu;

	if (!m)
		return;
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sample(m, clock_ns(CLOCK_MONOTONIC));
	write_series(m);
	m->cost_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
}

uint64_t metrics__samples(const struct metrics *m)
{
	return m ? m->samples : 0;
}

uint64_t metrics__cost_ns(const struct metrics *m)
{
	return m ? m->cost_ns : 0;
}

/* After procs__free() (which dropped the targets' slots). */
void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	if (m->stat_fd >= 0)
		close(m->stat_fd);
	for (size_t i = 0; i < m->nser; i++)
		rec_series__free(&m->ser[i]);
	free(m->ser);
	free(m->out);
	free(m->cpus);
	free(m->prev_cpus);
	free(m->cpu_series);
	free(m->buf);
	nvml__close(m->nvml);
	free(m);
}
