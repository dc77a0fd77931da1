// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record`: the loader. Checks what the user can get wrong before anything starts, loads
 * the sampler (bpf/sample.bpf.c) and attaches it to one perf_event per CPU, starts the command
 * stopped (or adds the PIDs to attach to), and then drains the kernel's double-buffered counts
 * every DRAIN_MS into the recording file until the targets are gone. With --unwind=auto|dwarf it
 * also keeps the sampler's unwind tables in step with the targets' mappings (unwinder.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sample.skel.h"
#include "btfcache.h"
#include "cachedir.h"
#include "collect.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "mmapwatch.h"
#include "perch_abi.h"
#include "procs.h"
#include "record.h"
#include "format/keys.h"
#include "format/recording.h"
#include "regions.h"
#include "lib/u64map.h"
#include "unwinder.h"

#define DRAIN_MS 100
/* After an exec, poll the mmap records this often for a while, so the new image's unwind tables
 * are in the kernel within a millisecond of its libraries being mapped; after the launched
 * command's exec, every 100 us: it reaches main about a millisecond after the dynamic loader
 * mapped its libraries, and its first ticks should unwind as completely as the rest. */
#define FAST_POLL_MS  1
#define FAST_POLL_FOR 100000000ull /* ns */
#define SPIN_FOR      30000000ull  /* ns */
#define SPIN_NAP_NS   100000	   /* ns */
/* Ticks run for microseconds; after flipping `active`, this is ample for every tick that read the
 * old value to finish before the idle buffer is drained. */
#define FLIP_GRACE_NS 2000000

struct session {
	const struct record_opts *o;
	struct sample_bpf *skel;
	struct bpf_link **tick_links;
	int *perf_fds;
	int ncpus;
	const char *event_name;
	struct ring_buffer *rb;
	struct mmap_watch *mw;
	struct procs *procs; /* the targets; every part below listens to it */
	struct regions *rg;
	struct rec_writer *w;
	struct collector *col;
	struct unwinder *uw;  /* NULL with --unwind=fp */
	uint32_t unwind_mode; /* enum perch_unwind_mode the sampler runs with */
	uint64_t fast_poll_until, spin_until;
	uint32_t rframes[PERCH_REGION_DEPTH]; /* one sample's region frames */
	bool spun;
	uint64_t *stack_buf;
	struct perch_key *keys;
	uint64_t *vals;
	uint64_t *dkeys; /* one period's dwarf stacks: hashes, stacks, hash -> index */
	struct perch_ustack *dvals;
	struct u64map dindex;
	pid_t child;
	int child_status;
	bool child_done;
	int *pidfds;
	size_t live_targets;
	uint64_t start_ns;
	uint64_t drains;
	unsigned int max_stack;
	struct rlimit user_nofile; /* the limit perch was started with, which CMD gets back */
	bool nofile_raised;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbose() < 2)
		return 0;
	if (level == LIBBPF_INFO && !log_verbose())
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* ---- checks before anything starts ---------------------------------------------------------- */

static int check_caps(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};
	bool admin, bpf, perfmon;

	if (syscall(SYS_capget, &hdr, data))
		return 0; /* can't tell: let the kernel decide */
#define HAS(cap) (!!(data[(cap) / 32].effective & (1u << ((cap) % 32))))
	admin = HAS(CAP_SYS_ADMIN);
	bpf = HAS(CAP_BPF);
	perfmon = HAS(CAP_PERFMON);
#undef HAS
	if (admin || (bpf && perfmon))
		return 0;
	log_err("permission denied: missing %s%s%s (run as root, or grant CAP_BPF and CAP_PERFMON)",
		bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
		perfmon ? "" : "CAP_PERFMON");
	return PERCH_EXIT_PERM;
}

/* Where the kernel's BTF is (PERCH_SYSFS_BTF: for tests). */
static const char *sysfs_btf(void)
{
	const char *path = getenv("PERCH_SYSFS_BTF");

	return path ? path : "/sys/kernel/btf/vmlinux";
}

static int check_btf(void)
{
	const char *path = sysfs_btf();

	if (access(path, R_OK) == 0)
		return 0;
	log_err("kernel has no BTF (%s: %s); perch needs a kernel built with CONFIG_DEBUG_INFO_BTF=y",
		path, strerror(errno));
	return PERCH_EXIT_NOBTF;
}

/* The shell's rules: a name with a slash is a path, else search $PATH. Fills buf with the
 * executable file found and returns 0; -EACCES when only files that are not executable have
 * the name, -ENOENT when none does. */
static int resolve_command(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	bool found = false;

	if (strchr(cmd, '/')) {
		struct stat st;

		snprintf(buf, len, "%s", cmd);
		if (access(cmd, F_OK))
			return -ENOENT;
		if (access(cmd, X_OK) || stat(cmd, &st) || !S_ISREG(st.st_mode))
			return -EACCES;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0) {
			struct stat st;

			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
				return 0;
		}
		if (access(buf, F_OK) == 0)
			found = true;
		path += n + (path[n] == ':');
	}
	return found ? -EACCES : -ENOENT;
}

static int check_command(const char *cmd)
{
	char buf[PATH_MAX];
	int err = resolve_command(cmd, buf, sizeof(buf));

	if (err == -ENOENT) {
		log_err("%s: command not found", cmd);
		return PERCH_EXIT_NOTFOUND;
	}
	if (err == -EACCES && strchr(cmd, '/')) {
		log_err("%s: permission denied: not an executable file", cmd);
		return PERCH_EXIT_NOTEXEC;
	}
	if (err == -EACCES) {
		log_err("%s: permission denied: not executable", cmd);
		return PERCH_EXIT_NOTEXEC;
	}
	return 0;
}

static int check_pids(const struct record_opts *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		if (o->pids[i] <= 0 || (kill(o->pids[i], 0) && errno == ESRCH)) {
			log_err("no such process: %d", (int)o->pids[i]);
			return PERCH_EXIT_NOPID;
		}
	}
	return 0;
}

/* ---- BPF and perf events -------------------------------------------------------------------- */

static int open_tick_event(struct session *s, int cpu, bool hw)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = hw ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE,
		.config = hw ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->o->freq,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int read_sysctl_uint(const char *path, unsigned int *out)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%u", out) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int attach_ticks(struct session *s)
{
	bool hw = true;
	int cpu, fd;

	s->perf_fds = calloc(s->ncpus, sizeof(*s->perf_fds));
	s->tick_links = calloc(s->ncpus, sizeof(*s->tick_links));
	if (!s->perf_fds || !s->tick_links)
		return PERCH_EXIT_INTERNAL;
	for (cpu = 0; cpu < s->ncpus; cpu++) {
		s->perf_fds[cpu] = -1;
		fd = open_tick_event(s, cpu, hw);
		if (hw && (fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV) && cpu == 0) {
			hw = false; /* no PMU (a VM): the software clock ticks instead */
			fd = open_tick_event(s, cpu, hw);
		}
		if (fd == -ENODEV)
			continue; /* CPU offline */
		if (fd == -EINVAL) {
			unsigned int max = 0;

			read_sysctl_uint("/proc/sys/kernel/perf_event_max_sample_rate", &max);
			log_err("perf_event_open at %u Hz: %s (kernel.perf_event_max_sample_rate is %u)",
				s->o->freq, strerror(EINVAL), max);
			return PERCH_EXIT_USAGE;
		}
		if (fd < 0) {
			log_err("perf_event_open on CPU %d: %s", cpu, strerror(-fd));
			return fd == -EACCES || fd == -EPERM ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
		}
		s->perf_fds[cpu] = fd;
		s->tick_links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_tick, fd);
		if (!s->tick_links[cpu]) {
			log_err("attach sampler to perf event on CPU %d: %s", cpu, strerror(errno));
			return PERCH_EXIT_BPF;
		}
	}
	s->event_name = hw ? "cycles" : "cpu-clock";
	return 0;
}

/* An exec: poll the mmap records often for a while, so that the unwind tables follow them. */
static void follow_exec(struct session *s, uint32_t pid)
{
	if (s->unwind_mode == PERCH_UNWIND_FP)
		return;
	s->fast_poll_until = now_ns() + FAST_POLL_FOR;
	if ((pid_t)pid == s->child && !s->spun) {
		s->spin_until = now_ns() + SPIN_FOR;
		s->spun = true;
	}
}

/* The sampler's process events, into the process table. */
static int handle_event(void *ctx, void *data, size_t len)
{
	struct session *s = ctx;
	const struct perch_event *e = data;

	if (len < sizeof(*e))
		return 0;
	procs__comm(s->procs, e->pid, e->comm);
	switch (e->type) {
	case PERCH_EV_FORK:
		procs__fork(s->procs, e->ppid, e->gen, e->pid);
		break;
	case PERCH_EV_EXEC:
		follow_exec(s, e->pid);
		if (s->mw)
			break; /* the exec comes again, in order with the mmap records */
		/* No mmap records: what /proc shows now (the libraries may come later). */
		procs__exec(s->procs, e->pid);
		procs__snapshot(s->procs, e->pid, NULL);
		break;
	case PERCH_EV_EXIT:
		procs__exit(s->procs, e->pid);
		break;
	}
	return 0;
}

static void on_mmap_event(void *ctx, const struct mmap_watch_event *e)
{
	struct session *s = ctx;
	__u32 pid = e->pid, v;
	struct proc_map m;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.targets), &pid, &v))
		return; /* another process on the system */
	if (e->type == MW_EXEC) {
		procs__exec(s->procs, pid);
		return;
	}
	m = (struct proc_map){.start = e->start,
			      .end = e->start + e->len,
			      .pgoff = e->pgoff,
			      .dev_major = e->maj,
			      .dev_minor = e->min,
			      .inode = e->ino,
			      .path = (char *)e->path};
	procs__mmap(s->procs, pid, &m);
}

/* Side-band events first (forks, exits), then the mmap records they make relevant, then forget
 * the targets that exited: their last mmap records have been read. */
static void read_events(struct session *s, int timeout_ms)
{
	ring_buffer__poll(s->rb, timeout_ms);
	if (s->mw)
		mmap_watch__read(s->mw);
	regions__poll(s->rg);
	procs__flush(s->procs);
}

static void start_mmap_watch(struct session *s)
{
	s->mw = mmap_watch__new(s->ncpus, on_mmap_event, s);
	if (!s->mw)
		log_warn("no mmap events (%s): processes that exit within %d ms may stay unnamed",
			 strerror(errno), DRAIN_MS);
}

/* The sampler's own listener: a target that exited leaves its map. */
static void target_exited(void *ctx, struct procs_proc *p)
{
	struct session *s = ctx;

	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &p->pid);
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
static __u32 buffer_entries(const struct session *s)
{
	uint64_t ticks = (uint64_t)s->ncpus * s->o->freq * DRAIN_MS / 1000 * 8;
	__u32 n = 1024;

	while (n < ticks && n < PERCH_STACK_ENTRIES)
		n *= 2;
	return n;
}

static int open_and_load(struct session *s, uint32_t mode)
{
	struct bpf_map *buffers[6];
	__u32 entries = buffer_entries(s);
	int err;

	char *btf = btfcache__path(sysfs_btf(), CACHEDIR_RUN);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);

	s->skel = sample_bpf__open_opts(&opts);
	err = -errno;
	free(btf); /* libbpf keeps its own copy of the path */
	if (!s->skel)
		return err;
	buffers[0] = s->skel->maps.stacks0;
	buffers[1] = s->skel->maps.stacks1;
	buffers[2] = s->skel->maps.counts0;
	buffers[3] = s->skel->maps.counts1;
	buffers[4] = s->skel->maps.dstacks0;
	buffers[5] = s->skel->maps.dstacks1;
	for (size_t i = 0; i < 6; i++)
		bpf_map__set_max_entries(buffers[i], entries);
	s->skel->rodata->unwind_mode = mode;
	if (mode == PERCH_UNWIND_FP) {
		/* Nothing to unwind from: don't allocate the tables. */
		bpf_map__set_max_entries(s->skel->maps.unwind_rows, 1);
		bpf_map__set_max_entries(s->skel->maps.proc_unwind, 1);
	}
	err = sample_bpf__load(s->skel);
	if (err) {
		sample_bpf__destroy(s->skel);
		s->skel = NULL;
		return err;
	}
	s->unwind_mode = mode;
	return 0;
}

/* The sampler, unwinding in the kernel unless --unwind=fp; a kernel that refuses the unwinder
 * (before 5.17: no bpf_loop) still samples with frame pointers under --unwind=auto. */
static int load_sampler(struct session *s)
{
	uint32_t mode = bpf_unwind_mode(s->o->unwind);
	int err = open_and_load(s, mode);

	if (err && mode == PERCH_UNWIND_AUTO && err != -EPERM && err != -EACCES) {
		log_warn("the kernel refused the DWARF unwinder (%s): frame-pointer stacks only",
			 strerror(-err));
		err = open_and_load(s, PERCH_UNWIND_FP);
	}
	return err;
}

/* The parts that follow the targets, in the order they hear of them: the unwinder first (the
 * sampler needs its tables from a process's next tick on), only when the sampler unwinds. */
static int add_listeners(struct session *s)
{
	const struct procs_listener sampler = {.name = "sampler", .ctx = s, .exit = target_exited};

	if (s->unwind_mode != PERCH_UNWIND_FP) {
		s->uw = unwinder__new(bpf_map__fd(s->skel->maps.unwind_rows),
				      bpf_map__fd(s->skel->maps.proc_unwind), s->procs);
		if (!s->uw) {
			log_err("unwind tables: %s", strerror(errno));
			return PERCH_EXIT_BPF;
		}
	}
	s->col = collector__new(s->w, s->max_stack, s->procs);
	if (!s->col)
		return PERCH_EXIT_INTERNAL;
	collector__set_lines(s->col, !s->o->no_lines);
	s->rg = regions__new(s->w, bpf_map__fd(s->skel->maps.region_procs),
			     bpf_map__fd(s->skel->maps.region_stacks), s->procs);
	if (!s->rg || procs__listen(s->procs, &sampler) < 0)
		return PERCH_EXIT_INTERNAL;
	return 0;
}

static int load_bpf(struct session *s)
{
	int err;

	libbpf_set_print(libbpf_print);
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return PERCH_EXIT_BPF;
	err = load_sampler(s);
	if (err) {
		err = -err;
		log_err("the kernel refused the BPF sampler: %s", strerror(err));
		return err == EPERM || err == EACCES ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
	}
	err = add_listeners(s);
	if (err)
		return err;
	if (sample_bpf__attach(s->skel)) {
		log_err("attach process tracepoints: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), handle_event, s, NULL);
	if (!s->rb) {
		log_err("ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	start_mmap_watch(s);
	return attach_ticks(s);
}

static int add_target(struct session *s, pid_t pid)
{
	__u32 key = pid, gen = 0;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &key, &gen, BPF_ANY)) {
		log_err("add target %d: %s", (int)pid, strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

/* ---- draining ------------------------------------------------------------------------------- */

static const uint64_t *lookup_stack(struct session *s, int map_fd, __s32 id, uint64_t *buf)
{
	if (id < 0)
		return NULL;
	memset(buf, 0, PERCH_MAX_STACK * sizeof(*buf));
	if (bpf_map_lookup_elem(map_fd, &id, buf))
		return NULL;
	(void)s;
	return buf;
}

static void clear_stacks(int map_fd)
{
	__u32 key, next, *prev = NULL;
	__u32 *ids = NULL;
	size_t n = 0, cap = 0;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			__u32 *t = realloc(ids, ncap * sizeof(*ids));

			if (!t)
				break;
			ids = t;
			cap = ncap;
		}
		ids[n++] = next;
		key = next;
		prev = &key;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &ids[i]);
	free(ids);
}

/* Read every (key, count) of the idle counts map and delete it. */
static size_t take_counts(struct session *s, int map_fd)
{
	__u32 count = PERCH_COUNT_ENTRIES;
	struct perch_key cursor, *prev = NULL;
	size_t n = 0;
	void *out_batch = &cursor;
	int err;

	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, out_batch, s->keys, s->vals, &count,
					      NULL);
	if (err == 0 || errno == ENOENT)
		return count;
	/* No batch operations on this kernel: one key at a time. */
	while (n < PERCH_COUNT_ENTRIES && bpf_map_get_next_key(map_fd, prev, &s->keys[n]) == 0) {
		if (bpf_map_lookup_elem(map_fd, &s->keys[n], &s->vals[n]) == 0)
			n++;
		cursor = s->keys[n ? n - 1 : 0];
		prev = &cursor;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &s->keys[i]);
	return n;
}

/* Read every stack of the idle dwarf stack map, delete them, and index them by hash. */
static void take_dwarf_stacks(struct session *s, int map_fd)
{
	__u32 count = PERCH_STACK_ENTRIES;
	__u64 cursor, *prev = NULL;
	size_t n = 0;
	int err;

	u64map__clear(&s->dindex);
	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, &cursor, s->dkeys, s->dvals, &count,
					      NULL);
	if (err == 0 || errno == ENOENT) {
		n = count;
	} else {
		/* No batch operations on this kernel: one key at a time. */
		while (n < PERCH_STACK_ENTRIES &&
		       bpf_map_get_next_key(map_fd, prev, &s->dkeys[n]) == 0) {
			if (bpf_map_lookup_elem(map_fd, &s->dkeys[n], &s->dvals[n]) == 0)
				n++;
			cursor = s->dkeys[n ? n - 1 : 0];
			prev = &cursor;
		}
		for (size_t i = 0; i < n; i++)
			bpf_map_delete_elem(map_fd, &s->dkeys[i]);
	}
	for (size_t i = 0; i < n; i++)
		u64map__put(&s->dindex, s->dkeys[i], i);
}

/* The user stack a DWARF key names, zero-terminated in buf, leaf first. */
static const uint64_t *dwarf_stack(struct session *s, const struct perch_key *key, uint64_t *buf)
{
	const struct perch_ustack *st;
	uint64_t idx;
	uint32_t n;

	if (key->ustack_id < 0 || !u64map__get(&s->dindex, key->ustack_hash, &idx))
		return NULL;
	st = &s->dvals[idx];
	n = st->n < PERCH_MAX_STACK ? st->n : PERCH_MAX_STACK;
	memcpy(buf, st->pc, n * sizeof(*buf));
	memset(buf + n, 0, (PERCH_MAX_STACK - n) * sizeof(*buf));
	return buf;
}

static void drain_buffer(struct session *s, unsigned int which)
{
	struct bpf_map *cmap = which ? s->skel->maps.counts1 : s->skel->maps.counts0;
	struct bpf_map *smap = which ? s->skel->maps.stacks1 : s->skel->maps.stacks0;
	struct bpf_map *dmap = which ? s->skel->maps.dstacks1 : s->skel->maps.dstacks0;
	int sfd = bpf_map__fd(smap);
	uint64_t *ubuf = s->stack_buf, *kbuf = s->stack_buf + PERCH_MAX_STACK;
	size_t n = take_counts(s, bpf_map__fd(cmap));

	if (s->unwind_mode != PERCH_UNWIND_FP)
		take_dwarf_stacks(s, bpf_map__fd(dmap));
	for (size_t i = 0; i < n; i++) {
		const struct perch_key *key = &s->keys[i];
		const uint64_t *u = key->flags & PERCH_KEY_DWARF
					    ? dwarf_stack(s, key, ubuf)
					    : lookup_stack(s, sfd, key->ustack_id, ubuf);
		const uint64_t *k = lookup_stack(s, sfd, key->kstack_id, kbuf);
		uint32_t nr = regions__frames(s->rg, key->tgid, key->region_hash, s->rframes,
					      PERCH_REGION_DEPTH);

		if (key->flags & PERCH_KEY_REGION_LOST || (key->region_hash && !nr))
			regions__count_lost(s->rg, s->vals[i]);
		collector__add(s->col, key, s->vals[i], s->rframes, nr, u, k);
	}
	clear_stacks(sfd);
}

/* The sampler's own cost, as the kernel measures it (kernel.bpf_stats_enabled=1; else 0). */
static void bpf_cost(struct session *s, uint64_t *run_ns, uint64_t *runs)
{
	struct bpf_program *progs[] = {s->skel->progs.on_tick, s->skel->progs.on_fork,
				       s->skel->progs.on_exec, s->skel->progs.on_exit};

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

/* perch's own costs run on while the targets idle: written once a second and at the end, so an
 * idle recording grows by one small STATS block a second (the writer drops unchanged counters). */
#define COST_EVERY_DRAINS (1000 / DRAIN_MS)

/* One STATS entry per key of format/keys.h, from the part that counts it. */
static struct rec_kv stat_kv(enum rec_stat key, uint64_t value)
{
	return (struct rec_kv){.key = (char *)rec_stat_keys[key], .value = value};
}

static void write_stats(struct session *s, bool final)
{
	uint64_t totals[PERCH_STAT_MAX] = {};
	uint64_t *percpu = calloc(s->ncpus, sizeof(uint64_t));
	struct rec_kv kv[REC_STAT_NR];
	uint64_t cost[4];
	bool bpf_ok[PERCH_STAT_MAX] = {};
	struct rusage ru;
	size_t n = 0;

	if (!percpu)
		return;
	for (__u32 i = 0; i < PERCH_STAT_MAX; i++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &i, percpu))
			continue;
		bpf_ok[i] = true;
		for (int c = 0; c < s->ncpus; c++)
			totals[i] += percpu[c];
	}
	free(percpu);
#define BPF_KV(k, i)   \
	if (bpf_ok[i]) \
		kv[n++] = stat_kv(REC_STAT_##k, totals[i]);
	REC_STATS_BPF(BPF_KV)
#define COLLECT_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, collector__stat(s->col, i));
	REC_STATS_COLLECT(COLLECT_KV)
#define UNWINDER_KV(k, i) \
	if (s->uw)        \
		kv[n++] = stat_kv(REC_STAT_##k, unwinder__stat(s->uw, i));
	REC_STATS_UNWINDER(UNWINDER_KV)
#define REGIONS_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, regions__stat(s->rg, i));
	REC_STATS_REGIONS(REGIONS_KV)
	if (!final && s->drains % COST_EVERY_DRAINS) {
		rec_writer__stats(s->w, kv, n);
		return;
	}
	bpf_cost(s, &cost[0], &cost[1]);
	getrusage(RUSAGE_SELF, &ru);
	cost[2] = ru.ru_utime.tv_sec * 1000000ull + ru.ru_utime.tv_usec;
	cost[3] = ru.ru_stime.tv_sec * 1000000ull + ru.ru_stime.tv_usec;
#define COST_KV(k, i) kv[n++] = stat_kv(REC_STAT_##k, cost[i]);
	REC_STATS_COST(COST_KV)
	rec_writer__stats(s->w, kv, n);
}

static void flip_and_drain(struct session *s)
{
	unsigned int old = s->skel->bss->active;
	struct timespec grace = {.tv_nsec = FLIP_GRACE_NS};

	read_events(s, 0); /* fork/exec/mmap events first: they say whose maps to use */
	s->skel->bss->active = !old;
	nanosleep(&grace, NULL);
	drain_buffer(s, old);
	collector__drained(s->col);
	regions__collect(s->rg);
	rec_writer__flush(s->w);
	write_stats(s, false);
	s->drains++;
}

/* ---- targets -------------------------------------------------------------------------------- */

static int launch(struct session *s, int *go_fd, int *err_fd)
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		log_err("pipe: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	s->child = fork();
	if (s->child < 0) {
		log_err("fork: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	if (s->child == 0) {
		char c, pid[16];
		int e;

		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Wait until the sampler follows this process: nothing of CMD runs unsampled. */
		if (read(go[0], &c, 1) != 1)
			_exit(PERCH_EXIT_INTERNAL);
		/* A program with region markers times them from its first instruction. */
		snprintf(pid, sizeof(pid), "%d", (int)getppid());
		setenv(PERCH_ENV_ACTIVE, pid, 1);
		/* CMD runs with the user's limits, not perch's (a program may size tables by it). */
		if (s->nofile_raised)
			setrlimit(RLIMIT_NOFILE, &s->user_nofile);
		execvp(s->o->argv[0], s->o->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(PERCH_EXIT_INTERNAL);
		_exit(e == ENOENT ? PERCH_EXIT_NOTFOUND : PERCH_EXIT_NOTEXEC);
	}
	close(go[0]);
	close(err[1]);
	*go_fd = go[1];
	*err_fd = err[0];
	return 0;
}

static int start_launched(struct session *s)
{
	int go_fd = -1, err_fd = -1, e = 0, ret;
	char exe[PATH_MAX];

	ret = launch(s, &go_fd, &err_fd);
	if (ret)
		return ret;
	/* What it will exec, before its first tick (the unwinder builds the table now). */
	if (resolve_command(s->o->argv[0], exe, sizeof(exe)))
		snprintf(exe, sizeof(exe), "%s", s->o->argv[0]);
	procs__snapshot(s->procs, s->child, exe);
	ret = add_target(s, s->child);
	if (write(go_fd, "g", 1) != 1 && !ret)
		ret = PERCH_EXIT_INTERNAL;
	close(go_fd);
	if (read(err_fd, &e, sizeof(e)) == sizeof(e)) {
		log_err("%s: %s", s->o->argv[0], strerror(e));
		ret = e == ENOENT ? PERCH_EXIT_NOTFOUND : PERCH_EXIT_NOTEXEC;
	}
	close(err_fd);
	return ret;
}

static int start_attached(struct session *s)
{
	const char *delay = getenv("PERCH_TEST_ATTACH_DELAY_MS");
	int ret = 0;

	s->pidfds = calloc(s->o->npids, sizeof(*s->pidfds));
	if (!s->pidfds)
		return PERCH_EXIT_INTERNAL;
	for (size_t i = 0; i < s->o->npids; i++) {
		int err;

		s->pidfds[i] = syscall(SYS_pidfd_open, s->o->pids[i], 0);
		/* Its tables first, so that its first ticks unwind. */
		err = procs__snapshot(s->procs, s->o->pids[i], NULL);
		if (add_target(s, s->o->pids[i]))
			return PERCH_EXIT_BPF;
		if (err == -EBUSY) {
			log_err("process %d: its region markers are being recorded by another perch "
				"(pid %u); one perch at a time",
				(int)s->o->pids[i], regions__owner(s->rg, s->o->pids[i]));
			return PERCH_EXIT_BUSY;
		}
	}
	/* For tests: widen the window in which a target can exit while perch attaches. */
	if (delay)
		usleep(atoi(delay) * 1000);
	for (size_t i = 0; i < s->o->npids; i++) {
		if (s->pidfds[i] < 0 || kill(s->o->pids[i], 0)) {
			log_err("process %d exited while perch attached to it", (int)s->o->pids[i]);
			ret = PERCH_EXIT_PIDGONE;
			if (s->pidfds[i] >= 0)
				close(s->pidfds[i]);
			s->pidfds[i] = -1;
			continue;
		}
		s->live_targets++;
	}
	return ret;
}

/* True when the recording should end. */
static bool targets_done(struct session *s)
{
	if (s->o->argv) {
		int st;

		if (!s->child_done && waitpid(s->child, &st, WNOHANG) == s->child) {
			s->child_done = true;
			s->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		return s->child_done;
	}
	for (size_t i = 0; i < s->o->npids; i++) {
		struct pollfd p = {.fd = s->pidfds[i], .events = POLLIN};

		if (s->pidfds[i] >= 0 && poll(&p, 1, 0) == 1) {
			close(s->pidfds[i]);
			s->pidfds[i] = -1;
			s->live_targets--;
		}
	}
	return s->live_targets == 0;
}

static void run_loop(struct session *s)
{
	uint64_t deadline = s->o->duration_s > 0 ? s->start_ns + s->o->duration_s * 1e9 : 0;
	uint64_t next_drain = now_ns() + DRAIN_MS * 1000000ull;
	bool forwarded = false;

	for (;;) {
		uint64_t t = now_ns();
		/* Rounded up: rounded down, the last part of a millisecond before a drain would be
		 * spent polling with no timeout, over and over. */
		int wait_ms = t < next_drain ? (int)((next_drain - t + 999999) / 1000000) : 0;
		int most = 20;

		if (t < s->spin_until) {
			/* Right after the exec: look every SPIN_NAP_NS (no busy spin: it would cost
			 * the whole window in CPU for a latency the nap barely changes). */
			struct timespec nap = {.tv_nsec = SPIN_NAP_NS};

			nanosleep(&nap, NULL);
			most = 0;
		} else if (t < s->fast_poll_until) {
			most = FAST_POLL_MS;
		}

		read_events(s, wait_ms > most ? most : wait_ms);
		if (targets_done(s))
			break;
		if (stop_signal) {
			if (!s->o->argv)
				break;
			/* A launched command gets the signal too (or now); wait for it to exit. */
			if (!forwarded)
				kill(s->child, stop_signal);
			forwarded = true;
		}
		t = now_ns();
		if (deadline && t >= deadline) {
			if (!s->o->argv)
				break;
			if (!forwarded)
				kill(s->child, SIGTERM);
			forwarded = true;
		}
		if (t >= next_drain) {
			flip_and_drain(s);
			next_drain = t + DRAIN_MS * 1000000ull;
		}
	}
}

/* ---- the file ------------------------------------------------------------------------------- */

static void format_pids(const struct session *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (s->o->argv) {
		snprintf(buf, len, "%d", (int)s->child);
		return;
	}
	for (size_t i = 0; i < s->o->npids && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%d", i ? "," : "", (int)s->o->pids[i]);
}

static void format_command(const struct session *s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (s->o->argv) {
		for (size_t i = 0; s->o->argv[i] && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", s->o->argv[i]);
		return;
	}
	/* Attached: the targets' own command lines are what the user knows them by. */
	for (size_t i = 0; i < s->o->npids && off < len; i++) {
		char path[64], cmd[512] = "";
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)s->o->pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, cmd, sizeof(cmd) - 1) : -1;
		if (fd >= 0)
			close(fd);
		for (ssize_t j = 0; j + 1 < n; j++)
			if (!cmd[j])
				cmd[j] = ' ';
		off += snprintf(buf + off, len - off, "%s%s", i ? "; " : "", n > 0 ? cmd : "?");
	}
}

static int write_meta(struct session *s)
{
	static const char *const unwind_names[] = {[PERCH_UNWIND_FP] = "fp",
						   [PERCH_UNWIND_AUTO] = "auto",
						   [PERCH_UNWIND_DWARF] = "dwarf"};
	char command[4096], pids[1024], freq[32], start[64], maxstack[32];
	struct utsname u;
	time_t now = time(NULL);
	struct rec_kv kv[10];
	size_t n = 0;

	format_command(s, command, sizeof(command));
	format_pids(s, pids, sizeof(pids));
	snprintf(freq, sizeof(freq), "%u", s->o->freq);
	snprintf(maxstack, sizeof(maxstack), "%u", s->max_stack);
	strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
	uname(&u);
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_command], .str = command};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_pids], .str = pids};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_mode],
				  .str = s->o->argv ? "launch" : "attach"};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_event],
				  .str = (char *)s->event_name};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_frequency], .str = freq};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_start_time], .str = start};
	kv[n++] =
		(struct rec_kv){.key = (char *)rec_meta_keys[REC_META_hostname], .str = u.nodename};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_kernel], .str = u.release};
	kv[n++] =
		(struct rec_kv){.key = (char *)rec_meta_keys[REC_META_max_stack], .str = maxstack};
	kv[n++] = (struct rec_kv){.key = (char *)rec_meta_keys[REC_META_unwind],
				  .str = (char *)unwind_names[s->unwind_mode]};
	return rec_writer__meta(s->w, kv, n);
}

static int finish(struct session *s, int status)
{
	struct rec_kv kv[3];
	int err;

	/* Both buffers: the active one holds the last period, the idle one is empty. */
	flip_and_drain(s);
	flip_and_drain(s);
	collector__finish(s->col);
	regions__finish(s->rg);
	write_stats(s, true);
	kv[0] = (struct rec_kv){.key = (char *)rec_end_keys[REC_END_duration_ns],
				.value = now_ns() - s->start_ns};
	kv[1] = (struct rec_kv){.key = (char *)rec_end_keys[REC_END_exit_status],
				.value = (uint64_t)status};
	kv[2] = (struct rec_kv){.key = (char *)rec_end_keys[REC_END_drains], .value = s->drains};
	rec_writer__end(s->w, kv, 3);
	err = rec_writer__close(s->w);
	s->w = NULL;
	if (err) {
		log_err("writing %s failed: %s; the recording is incomplete", s->o->output,
			strerror(-err));
		return PERCH_EXIT_OUTPUT;
	}
	return 0;
}

static void session_free(struct session *s)
{
	for (int i = 0; s->tick_links && i < s->ncpus; i++)
		bpf_link__destroy(s->tick_links[i]);
	for (int i = 0; s->perf_fds && i < s->ncpus; i++)
		if (s->perf_fds[i] >= 0)
			close(s->perf_fds[i]);
	for (size_t i = 0; s->pidfds && i < s->o->npids; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	free(s->tick_links);
	free(s->perf_fds);
	free(s->pidfds);
	ring_buffer__free(s->rb);
	mmap_watch__free(s->mw);
	regions__finish(s->rg); /* switch attached runtimes off, whatever went wrong */
	procs__free(s->procs);	/* before its listeners */
	unwinder__free(s->uw);
	regions__free(s->rg);
	sample_bpf__destroy(s->skel);
	collector__free(s->col);
	rec_writer__close(s->w);
	free(s->stack_buf);
	free(s->keys);
	free(s->vals);
	free(s->dkeys);
	free(s->dvals);
	u64map__clear(&s->dindex);
}

/* perf's rule: a frequency over kernel.perf_event_max_sample_rate is refused before anything
 * starts (the kernel would refuse the events, after the command was launched). Every tick of
 * every CPU runs the sampler, targets or not, so the limit is the machine's, not the target's. */
static int check_freq(const struct record_opts *o)
{
	unsigned int max = 0;

	if (read_sysctl_uint("/proc/sys/kernel/perf_event_max_sample_rate", &max) || !max ||
	    o->freq <= max)
		return 0;
	log_err("-F %u: over kernel.perf_event_max_sample_rate (%u Hz): use -F %u or less", o->freq,
		max, max);
	return PERCH_EXIT_USAGE;
}

static int preflight(const struct record_opts *o)
{
	int ret = check_freq(o);

	if (ret)
		return ret;
	if (o->argv)
		ret = check_command(o->argv[0]);
	else
		ret = check_pids(o);
	if (!ret)
		ret = check_caps();
	if (!ret)
		ret = check_btf();
	return ret;
}

/* The symbolizer keeps one open file per module it indexed, and perch opens one perf event
 * per CPU: raise the soft descriptor limit to the hard one. */
static void raise_fd_limit(struct session *s)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		s->user_nofile = rl;
		rl.rlim_cur = rl.rlim_max;
		s->nofile_raised = !setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int setup(struct session *s)
{
	raise_fd_limit(s);
	s->stack_buf = calloc(2 * PERCH_MAX_STACK, sizeof(uint64_t));
	s->keys = calloc(PERCH_COUNT_ENTRIES, sizeof(*s->keys));
	s->vals = calloc(PERCH_COUNT_ENTRIES, sizeof(*s->vals));
	/* Touched only as far as a period's stacks reach. */
	s->dkeys = calloc(PERCH_STACK_ENTRIES, sizeof(*s->dkeys));
	s->dvals = calloc(PERCH_STACK_ENTRIES, sizeof(*s->dvals));
	if (!s->stack_buf || !s->keys || !s->vals || !s->dkeys || !s->dvals)
		return PERCH_EXIT_INTERNAL;
	if (read_sysctl_uint("/proc/sys/kernel/perf_event_max_stack", &s->max_stack) ||
	    s->max_stack > PERCH_MAX_STACK)
		s->max_stack = PERCH_MAX_STACK;
	s->w = rec_writer__open(s->o->output);
	if (!s->w) {
		log_err("cannot write %s: %s", s->o->output, strerror(errno));
		return PERCH_EXIT_OUTPUT;
	}
	s->procs = procs__new();
	if (!s->procs)
		return PERCH_EXIT_INTERNAL;
	return load_bpf(s);
}

int record__run(const struct record_opts *o, bool *complete)
{
	struct session s = {.o = o, .child = -1};
	struct sigaction sa = {.sa_handler = on_signal};
	int ret, status = 0, end;

	*complete = false;
	ret = preflight(o);
	if (ret)
		return ret;
	ret = setup(&s);
	if (ret)
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s.start_ns = now_ns();
	ret = o->argv ? start_launched(&s) : start_attached(&s);
	/* From here on, whatever happens, what was collected is written. */
	write_meta(&s);
	if (ret && (o->argv || s.live_targets == 0 || ret == PERCH_EXIT_BUSY)) {
		if (o->argv && s.child > 0)
			waitpid(s.child, NULL, 0);
		status = ret;
		goto end;
	}
	run_loop(&s);
	status = o->argv ? s.child_status : ret;
end:
	end = finish(&s, status);
	*complete = !end && status != PERCH_EXIT_BUSY;
	ret = end ? end : status;
out:
	session_free(&s);
	return ret;
}
