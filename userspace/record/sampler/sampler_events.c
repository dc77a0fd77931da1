// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's process events (see sampler_impl.h): forks, execs and exits from its ring
 * buffer and mappings from the mmap watch (mmapwatch.h), into the process table (procs.h); the
 * sampler's own listener, which drops an exited target from its map; and the pace of the waits
 * for events, quicker for a while after an exec so the unwind tables follow the new image.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "record/mmapwatch.h"
#include "sampler_impl.h"
#include "symbolize/kdyn.h"

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
/* At a low frequency (perch agent's 19 Hz) a process gets a tick every 1000 / freq ms: the
 * polls above are paced by that instead, a quarter of it after an exec and all of it otherwise
 * (up to POLL_MS_MAX), since a tick before the tables is walked later from its early copy
 * anyway. A host that keeps starting processes then wakes perch a few times an exec, not a
 * hundred (session 14: 248 wakeups a second at 19 Hz and 6 execs a second). */
#define POLL_MS_MAX 100

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

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

/* A kernel symbol registered or unregistered, whoever's: into the table of kernel symbols that
 * come and go (a full table counts the drop; a record it refuses names nothing). */
static void on_ksymbol(struct sampler *sp, const struct mmap_watch_event *e)
{
	size_t n = strlen(e->path);
	int err;

	if (e->ksym_gone)
		err = kdyn__unregister(sp->kdyn, e->start, e->len, e->ksym_bpf, e->path, n,
				       e->time_ns);
	else
		err = kdyn__register(sp->kdyn, e->start, e->len, e->ksym_bpf, e->path, n,
				     e->time_ns);
	if (err == -ENOSPC && kdyn__dropped(sp->kdyn) == 1)
		log_warn(
			"over %d BPF programs loaded at once: those loaded from now on and unloaded "
			"before a drain may stay unnamed",
			KDYN_MAX);
}

static void on_mmap_event(void *ctx, const struct mmap_watch_event *e)
{
	struct sampler *sp = ctx;
	__u32 pid = e->pid, v;
	struct proc_map m;

	if (e->type == MW_KSYMBOL) {
		on_ksymbol(sp, e);
		return;
	}
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
	sp->kdyn = kdyn__new();
	if (!sp->kdyn) {
		log_warn("no mmap events (%s): processes that exit within %d ms may stay unnamed",
			 strerror(errno), SAMPLER_DRAIN_MS);
		return;
	}
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

const struct kdyn *sampler__kernel_syms(const struct sampler *sp)
{
	return sp->mw ? sp->kdyn : NULL;
}

void sampler__read_events(struct sampler *sp, int timeout_ms)
{
	ring_buffer__poll(sp->rb, timeout_ms);
	if (sp->mw)
		mmap_watch__read(sp->mw);
	sampler_early_read(sp);
}

void sampler_events_catch_up(struct sampler *sp)
{
	if (sp->rb)
		ring_buffer__consume(sp->rb);
	if (sp->mw)
		mmap_watch__read(sp->mw);
}

/* The sampling period in ms (0: the events count something other than time, or at a high
 * frequency). */
static int tick_ms(const struct sampler *sp)
{
	return sp->freq ? (int)(1000 / sp->freq) : 0;
}

int sampler__wait_ms(struct sampler *sp, int wait_ms)
{
	uint64_t t = now_ns();
	int tick = tick_ms(sp);
	int most = tick > POLL_MS ? (tick < POLL_MS_MAX ? tick : POLL_MS_MAX) : POLL_MS;

	if (t < sp->spin_until) {
		/* Right after the exec: look every SPIN_NAP_NS (no busy spin: it would cost the
		 * whole window in CPU for a latency the nap barely changes). */
		struct timespec nap = {.tv_nsec = SPIN_NAP_NS};

		nanosleep(&nap, NULL);
		most = 0;
	} else if (t < sp->fast_poll_until) {
		/* System-wide, execs come from everywhere, several a second on a busy host: a tick a
		 * poll (its ticks before the tables are walked from their early copies), not four
		 * (perch record -a -F 99 woke 221 times a second at 6 execs a second). */
		int fast = sp->all_cpus ? tick : tick / 4;

		most = fast > FAST_POLL_MS ? fast : FAST_POLL_MS;
	}
	return wait_ms > most ? most : wait_ms;
}

int sampler_listen(struct sampler *sp)
{
	const struct procs_listener l = {.name = "sampler", .ctx = sp, .exit = target_exited};

	return procs__listen(sp->procs, &l);
}

int sampler_open_events(struct sampler *sp)
{
	sp->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.events), handle_event, sp, NULL);
	if (!sp->rb) {
		log_err("ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	start_mmap_watch(sp);
	return 0;
}
