// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler, userspace side (see sampler.h): the BPF object and its perf events, its target
 * map, the process events it and the mmap watch report, and the drain of its double buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sample.skel.h"
#include "btfcache.h"
#include "cachedir.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "mmapwatch.h"
#include "proc.h"
#include "sampler.h"

/* After an exec, poll the mmap records this often for a while, so the new image's unwind tables
 * are in the kernel within a millisecond of its libraries being mapped; after the launched
 * command's exec, every 100 us: it reaches main about a millisecond after the dynamic loader
 * mapped its libraries, and its first ticks should unwind as completely as the rest. */
#define FAST_POLL_MS  1
#define FAST_POLL_FOR 100000000ull /* ns */
#define SPIN_FOR      30000000ull  /* ns */
#define SPIN_NAP_NS   100000	   /* ns */
/* The longest wait for events otherwise. */
#define POLL_MS 20
/* Ticks run for microseconds; after flipping `active`, this is ample for every tick that read the
 * old value to finish before the idle buffer is drained. */
#define FLIP_GRACE_NS 2000000

struct sampler {
	unsigned int freq;
	struct procs *procs; /* borrowed: where the process events go */
	struct sample_bpf *skel;
	struct bpf_link **tick_links;
	int *perf_fds;
	int ncpus;
	const char *event_name;
	uint32_t unwind_mode; /* enum perch_unwind_mode the sampler runs with */
	struct sampler_fds fds;
	struct ring_buffer *rb;
	struct mmap_watch *mw;
	pid_t launched; /* the command perch launched, or 0 */
	uint64_t fast_poll_until, spin_until;
	bool spun;
	uint64_t *stack_buf; /* one bucket's user and kernel stacks */
	struct perch_key *keys;
	uint64_t *vals;
	uint64_t *dkeys; /* one period's dwarf stacks: hashes, stacks, hash -> index */
	struct perch_ustack *dvals;
	struct u64map dindex;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

const char *sampler_kernel_btf(void)
{
	const char *path = getenv("PERCH_SYSFS_BTF");

	return path ? path : "/sys/kernel/btf/vmlinux";
}

/* ---- loading -------------------------------------------------------------------------------- */

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* warnings always, info with -v, debug with -vv */
	return log_vlibrary(level == LIBBPF_DEBUG ? 2 : level == LIBBPF_INFO ? 1 : 0, fmt, ap);
}

static uint32_t bpf_unwind_mode(enum record_unwind u)
{
	switch (u) {
	case RECORD_UNWIND_FP:
		return PERCH_UNWIND_FP;
	case RECORD_UNWIND_DWARF:
		return PERCH_UNWIND_DWARF;
	default:
		return PERCH_UNWIND_AUTO;
	}
}

/*
 * Entries per stack and counts buffer. A buffer holds one drain period's distinct stacks, at most
 * as many as the ticks of every CPU in the period; eight periods of room cover a drain that comes
 * late. Sized to the machine, not to the largest one: the kernel allocates stack maps up front,
 * and the batch reads and clears walk every bucket.
 */
static __u32 buffer_entries(const struct sampler *sp)
{
	uint64_t ticks = (uint64_t)sp->ncpus * sp->freq * SAMPLER_DRAIN_MS / 1000 * 8;
	__u32 n = 1024;

	while (n < ticks && n < PERCH_STACK_ENTRIES)
		n *= 2;
	return n;
}

static int open_and_load(struct sampler *sp, uint32_t mode)
{
	struct bpf_map *buffers[6];
	__u32 entries = buffer_entries(sp);
	int err;

	char *btf = btfcache__path(sampler_kernel_btf(), CACHEDIR_RUN);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);

	sp->skel = sample_bpf__open_opts(&opts);
	err = -errno;
	free(btf); /* libbpf keeps its own copy of the path */
	if (!sp->skel)
		return err;
	buffers[0] = sp->skel->maps.stacks0;
	buffers[1] = sp->skel->maps.stacks1;
	buffers[2] = sp->skel->maps.counts0;
	buffers[3] = sp->skel->maps.counts1;
	buffers[4] = sp->skel->maps.dstacks0;
	buffers[5] = sp->skel->maps.dstacks1;
	for (size_t i = 0; i < 6; i++)
		bpf_map__set_max_entries(buffers[i], entries);
	sp->skel->rodata->unwind_mode = mode;
	if (mode == PERCH_UNWIND_FP) {
		/* Nothing to unwind from: don't allocate the tables. */
		bpf_map__set_max_entries(sp->skel->maps.unwind_rows, 1);
		bpf_map__set_max_entries(sp->skel->maps.proc_unwind, 1);
	}
	err = sample_bpf__load(sp->skel);
	if (err) {
		sample_bpf__destroy(sp->skel);
		sp->skel = NULL;
		return err;
	}
	sp->unwind_mode = mode;
	return 0;
}

/* The sampler, unwinding in the kernel unless --unwind=fp; a kernel that refuses the unwinder
 * (before 5.17: no bpf_loop) still samples with frame pointers under --unwind=auto. */
static int load_sampler(struct sampler *sp, enum record_unwind unwind)
{
	uint32_t mode = bpf_unwind_mode(unwind);
	int err = open_and_load(sp, mode);

	if (err && mode == PERCH_UNWIND_AUTO && err != -EPERM && err != -EACCES) {
		log_warn("the kernel refused the DWARF unwinder (%s): frame-pointer stacks only",
			 strerror(-err));
		err = open_and_load(sp, PERCH_UNWIND_FP);
	}
	return err;
}

static int open_tick_event(struct sampler *sp, int cpu, bool hw)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = sp->freq,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int attach_ticks(struct sampler *sp)
{
	bool hw = true;
	int cpu, fd;

	sp->perf_fds = calloc(sp->ncpus, sizeof(*sp->perf_fds));
	sp->tick_links = calloc(sp->ncpus, sizeof(*sp->tick_links));
	if (!sp->perf_fds || !sp->tick_links)
		return PERCH_EXIT_INTERNAL;
	for (cpu = 0; cpu < sp->ncpus; cpu++) {
		sp->perf_fds[cpu] = -1;
		fd = open_tick_event(sp, cpu, hw);
		if (hw && (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) && cpu == 0) {
			hw = false; /* no PMU (a VM): the software clock ticks instead */
			fd = open_tick_event(sp, cpu, hw);
		}
		if (fd == -ENODEV)
			continue; /* CPU offline */
		if (fd == -EINVAL) {
			unsigned int max = 0;

			proc_read_uint("/proc/sys/kernel/perf_event_max_sample_rate", &max);
			log_err("perf_event_open at %u Hz: %s (kernel.perf_event_max_sample_rate is %u)",
				sp->freq, strerror(EINVAL), max);
			return PERCH_EXIT_USAGE;
		}
		if (fd < 0) {
			log_err("perf_event_open on CPU %d: %s", cpu, strerror(-fd));
			return fd == -EACCES || fd == -EPERM ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
		}
		sp->perf_fds[cpu] = fd;
		sp->tick_links[cpu] = bpf_program__attach_perf_event(sp->skel->progs.on_tick, fd);
		if (!sp->tick_links[cpu]) {
			log_err("attach sampler to perf event on CPU %d: %s", cpu, strerror(errno));
			return PERCH_EXIT_BPF;
		}
	}
	sp->event_name = hw ? "cycles" : "cpu-clock";
	return 0;
}

/* ---- process events ------------------------------------------------------------------------- */

/* An exec: poll the mmap records often for a while, so that the unwind tables follow them. */
static void follow_exec(struct sampler *sp, uint32_t pid)
{
	if (sp->unwind_mode == PERCH_UNWIND_FP)
		return;
	sp->fast_poll_until = now_ns() + FAST_POLL_FOR;
	if ((pid_t)pid == sp->launched && !sp->spun) {
		sp->spin_until = now_ns() + SPIN_FOR;
		sp->spun = true;
	}
}

/* The sampler's process events, into the process table. */
static int handle_event(void *ctx, void *data, size_t len)
{
	struct sampler *sp = ctx;
	const struct perch_event *e = data;

	if (len < sizeof(*e))
		return 0;
	procs__comm(sp->procs, e->pid, e->comm);
	switch (e->type) {
	case PERCH_EV_FORK:
		procs__fork(sp->procs, e->ppid, e->gen, e->pid);
		break;
	case PERCH_EV_EXEC:
		follow_exec(sp, e->pid);
		if (sp->mw)
			break; /* the exec comes again, in order with the mmap records */
		/* No mmap records: what /proc shows now (the libraries may come later). */
		procs__exec(sp->procs, e->pid);
		procs__snapshot(sp->procs, e->pid, NULL);
		break;
	case PERCH_EV_EXIT:
		procs__exit(sp->procs, e->pid);
		break;
	}
	return 0;
}

static void on_mmap_event(void *ctx, const struct mmap_watch_event *e)
{
	struct sampler *sp = ctx;
	__u32 pid = e->pid, v;
	struct proc_map m;

	if (bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.targets), &pid, &v))
		return; /* another process on the system */
	if (e->type == MW_EXEC) {
		procs__exec(sp->procs, pid);
		return;
	}
	m = (struct proc_map){.start = e->start,
			      .end = e->start + e->len,
			      .pgoff = e->pgoff,
			      .dev_major = e->maj,
			      .dev_minor = e->min,
			      .inode = e->ino,
			      .path = (char *)e->path};
	procs__mmap(sp->procs, pid, &m);
}

static void start_mmap_watch(struct sampler *sp)
{
	sp->mw = mmap_watch__new(sp->ncpus, on_mmap_event, sp);
	if (!sp->mw)
		log_warn("no mmap events (%s): processes that exit within %d ms may stay unnamed",
			 strerror(errno), SAMPLER_DRAIN_MS);
}

/* The sampler's own listener: a target that exited leaves its map. */
static void target_exited(void *ctx, struct procs_proc *p)
{
	struct sampler *sp = ctx;

	bpf_map_delete_elem(bpf_map__fd(sp->skel->maps.targets), &p->pid);
}

void sampler__read_events(struct sampler *sp, int timeout_ms)
{
	ring_buffer__poll(sp->rb, timeout_ms);
	if (sp->mw)
		mmap_watch__read(sp->mw);
}

int sampler__wait_ms(struct sampler *sp, int wait_ms)
{
	uint64_t t = now_ns();
	int most = POLL_MS;

	if (t < sp->spin_until) {
		/* Right after the exec: look every SPIN_NAP_NS (no busy spin: it would cost the
		 * whole window in CPU for a latency the nap barely changes). */
		struct timespec nap = {.tv_nsec = SPIN_NAP_NS};

		nanosleep(&nap, NULL);
		most = 0;
	} else if (t < sp->fast_poll_until) {
		most = FAST_POLL_MS;
	}
	return wait_ms > most ? most : wait_ms;
}

static int alloc_buffers(struct sampler *sp)
{
	sp->stack_buf = calloc(2 * PERCH_MAX_STACK, sizeof(uint64_t));
	sp->keys = calloc(PERCH_COUNT_ENTRIES, sizeof(*sp->keys));
	sp->vals = calloc(PERCH_COUNT_ENTRIES, sizeof(*sp->vals));
	/* Touched only as far as a period's stacks reach. */
	sp->dkeys = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->dkeys));
	sp->dvals = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->dvals));
	if (!sp->stack_buf || !sp->keys || !sp->vals || !sp->dkeys || !sp->dvals)
		return PERCH_EXIT_INTERNAL;
	return 0;
}

static int load(struct sampler *sp, const struct record_opts *o)
{
	const struct procs_listener l = {.name = "sampler", .ctx = sp, .exit = target_exited};
	int err;

	libbpf_set_print(libbpf_print);
	sp->ncpus = libbpf_num_possible_cpus();
	if (sp->ncpus <= 0)
		return PERCH_EXIT_BPF;
	err = load_sampler(sp, o->unwind);
	if (err) {
		err = -err;
		log_err("the kernel refused the BPF sampler: %s", strerror(err));
		return err == EPERM || err == EACCES ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
	}
	sp->fds = (struct sampler_fds){bpf_map__fd(sp->skel->maps.unwind_rows),
				       bpf_map__fd(sp->skel->maps.proc_unwind),
				       bpf_map__fd(sp->skel->maps.region_procs),
				       bpf_map__fd(sp->skel->maps.region_stacks)};
	if (procs__listen(sp->procs, &l) < 0)
		return PERCH_EXIT_INTERNAL;
	if (sample_bpf__attach(sp->skel)) {
		log_err("attach process tracepoints: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.events), handle_event, sp, NULL);
	if (!sp->rb) {
		log_err("ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	start_mmap_watch(sp);
	return attach_ticks(sp);
}

int sampler__open(const struct record_opts *o, struct procs *ps, struct sampler **out)
{
	struct sampler *sp = calloc(1, sizeof(*sp));
	int ret;

	*out = sp;
	if (!sp)
		return PERCH_EXIT_INTERNAL;
	sp->freq = o->freq;
	sp->procs = ps;
	ret = alloc_buffers(sp);
	return ret ? ret : load(sp, o);
}

void sampler__free(struct sampler *sp)
{
	if (!sp)
		return;
	for (int i = 0; sp->tick_links && i < sp->ncpus; i++)
		bpf_link__destroy(sp->tick_links[i]);
	for (int i = 0; sp->perf_fds && i < sp->ncpus; i++)
		if (sp->perf_fds[i] >= 0)
			close(sp->perf_fds[i]);
	free(sp->tick_links);
	free(sp->perf_fds);
	ring_buffer__free(sp->rb);
	mmap_watch__free(sp->mw);
	sample_bpf__destroy(sp->skel);
	free(sp->stack_buf);
	free(sp->keys);
	free(sp->vals);
	free(sp->dkeys);
	free(sp->dvals);
	u64map__clear(&sp->dindex);
	free(sp);
}

int sampler__add_target(struct sampler *sp, pid_t pid, bool launched)
{
	__u32 key = pid, gen = 0;

	if (launched)
		sp->launched = pid;
	if (bpf_map_update_elem(bpf_map__fd(sp->skel->maps.targets), &key, &gen, BPF_ANY)) {
		log_err("add target %d: %s", (int)pid, strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

/* ---- draining ------------------------------------------------------------------------------- */

static const uint64_t *lookup_stack(int map_fd, __s32 id, uint64_t *buf)
{
	if (id < 0)
		return NULL;
	memset(buf, 0, PERCH_MAX_STACK * sizeof(*buf));
	if (bpf_map_lookup_elem(map_fd, &id, buf))
		return NULL;
	return buf;
}

static void clear_stacks(int map_fd)
{
	__u32 key, next, *prev = NULL;
	__u32 *ids = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		if (vec_grow(&ids, &cap, n + 1, sizeof(*ids), 256))
			break;
		ids[n++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &ids[i]);
	free(ids);
}

/* Read every (key, count) of the idle counts map and delete it. */
static size_t take_counts(struct sampler *sp, int map_fd)
{
	__u32 count = PERCH_COUNT_ENTRIES;
	struct perch_key cursor, *prev = NULL;
	size_t n = 0;
	void *out_batch = &cursor;
	int err;

	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, out_batch, sp->keys, sp->vals, &count,
					      NULL);
	if (err == 0 || errno == ENOENT)
		return count;
	/* No batch operations on this kernel: one key at a time. */
	while (n < PERCH_COUNT_ENTRIES && bpf_map_get_next_key(map_fd, prev, &sp->keys[n]) == 0) {
		if (bpf_map_lookup_elem(map_fd, &sp->keys[n], &sp->vals[n]) == 0)
			n++;
		cursor = sp->keys[n ? n - 1 : 0];
		prev = &cursor;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &sp->keys[i]);
	return n;
}

/* Read every stack of the idle dwarf stack map, delete them, and index them by hash. */
static void take_dwarf_stacks(struct sampler *sp, int map_fd)
{
	__u32 count = PERCH_STACK_ENTRIES;
	__u64 cursor, *prev = NULL;
	size_t n = 0;
	int err;

	u64map__clear(&sp->dindex);
	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, &cursor, sp->dkeys, sp->dvals, &count,
					      NULL);
	if (err == 0 || errno == ENOENT) {
		n = count;
	} else {
		/* No batch operations on this kernel: one key at a time. */
		while (n < PERCH_STACK_ENTRIES &&
		       bpf_map_get_next_key(map_fd, prev, &sp->dkeys[n]) == 0) {
			if (bpf_map_lookup_elem(map_fd, &sp->dkeys[n], &sp->dvals[n]) == 0)
				n++;
			cursor = sp->dkeys[n ? n - 1 : 0];
			prev = &cursor;
		}
		for (size_t i = 0; i < n; i++)
			bpf_map_delete_elem(map_fd, &sp->dkeys[i]);
	}
	for (size_t i = 0; i < n; i++)
		u64map__put(&sp->dindex, sp->dkeys[i], i);
}

/* The user stack a DWARF key names, zero-terminated in buf, leaf first. */
static const uint64_t *dwarf_stack(struct sampler *sp, const struct perch_key *key, uint64_t *buf)
{
	const struct perch_ustack *st;
	uint64_t idx;
	uint32_t n;

	if (key->ustack_id < 0 || !u64map__get(&sp->dindex, key->ustack_hash, &idx))
		return NULL;
	st = &sp->dvals[idx];
	n = st->n < PERCH_MAX_STACK ? st->n : PERCH_MAX_STACK;
	memcpy(buf, st->pc, n * sizeof(*buf));
	memset(buf + n, 0, (PERCH_MAX_STACK - n) * sizeof(*buf));
	return buf;
}

static void drain_buffer(struct sampler *sp, unsigned int which, sampler_sample_fn fn, void *ctx)
{
	struct bpf_map *cmap = which ? sp->skel->maps.counts1 : sp->skel->maps.counts0;
	struct bpf_map *smap = which ? sp->skel->maps.stacks1 : sp->skel->maps.stacks0;
	struct bpf_map *dmap = which ? sp->skel->maps.dstacks1 : sp->skel->maps.dstacks0;
	int sfd = bpf_map__fd(smap);
	uint64_t *ubuf = sp->stack_buf, *kbuf = sp->stack_buf + PERCH_MAX_STACK;
	size_t n = take_counts(sp, bpf_map__fd(cmap));

	if (sp->unwind_mode != PERCH_UNWIND_FP)
		take_dwarf_stacks(sp, bpf_map__fd(dmap));
	for (size_t i = 0; i < n; i++) {
		const struct perch_key *key = &sp->keys[i];
		const uint64_t *u = key->flags & PERCH_KEY_DWARF
					    ? dwarf_stack(sp, key, ubuf)
					    : lookup_stack(sfd, key->ustack_id, ubuf);

		fn(ctx, key, sp->vals[i], u, lookup_stack(sfd, key->kstack_id, kbuf));
	}
	clear_stacks(sfd);
}

void sampler__drain(struct sampler *sp, sampler_sample_fn fn, void *ctx)
{
	unsigned int old = sp->skel->bss->active;
	struct timespec grace = {.tv_nsec = FLIP_GRACE_NS};

	sp->skel->bss->active = !old;
	nanosleep(&grace, NULL);
	drain_buffer(sp, old, fn, ctx);
}

/* ---- counters ------------------------------------------------------------------------------- */

void sampler__stats(const struct sampler *sp, uint64_t totals[PERCH_STAT_MAX],
		    bool ok[PERCH_STAT_MAX])
{
	uint64_t *percpu = calloc(sp->ncpus, sizeof(uint64_t));

	for (__u32 i = 0; i < PERCH_STAT_MAX; i++) {
		totals[i] = 0;
		ok[i] = percpu &&
			!bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.stats), &i, percpu);
		for (int c = 0; ok[i] && c < sp->ncpus; c++)
			totals[i] += percpu[c];
	}
	free(percpu);
}

void sampler__cost(const struct sampler *sp, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_program *progs[] = {sp->skel->progs.on_tick, sp->skel->progs.on_fork,
				       sp->skel->progs.on_exec, sp->skel->progs.on_exit};

	*run_ns = *runs = 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*runs += info.run_cnt;
	}
}

const char *sampler__event_name(const struct sampler *sp)
{
	return sp->event_name;
}

uint32_t sampler__unwind_mode(const struct sampler *sp)
{
	return sp->unwind_mode;
}

const struct sampler_fds *sampler__fds(const struct sampler *sp)
{
	return &sp->fds;
}
