// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: switching a runtime on and back off (see regions_impl.h). A launched command's
 * runtime is on from its environment; an attached process's is claimed, one perch at a time
 * (its registry names the owner), in a new epoch. At the end an attached runtime is switched off
 * and a launched one released from its exit handshake.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "lib/log.h"
#include "record/proc.h"
#include "regions_impl.h"

#define CLAIM_LOCK    "perch-regions-claim" /* abstract socket name: perches claim one at a time */
#define CLAIM_WAIT_MS 2000

static void unreadable(struct regions *rg, struct rproc *p)
{
	rg->stats[REGIONS_UNREADABLE]++;
	p->state = P_DONE;
	if (!rg->warned)
		log_warn("regions: cannot read or write the memory of process %u (%s): no region "
			 "figures for it",
			 p->pid, strerror(errno));
	rg->warned = true;
}

/* Ready once the runtime's constructor ran (it sets tls_offset on x86 and the tick unit). */
static bool constructed(const struct perch_abi_registry *r)
{
#if defined(__x86_64__)
	return r->tls_offset != 0;
#else
	return r->tick_unit == PERCH_TICKS_NS;
#endif
}

/* Perches take runtimes one at a time: a machine-wide lock (an abstract socket, which the
 * kernel frees when its perch dies however it dies) around reading the owner and writing ours.
 * Returns the socket to close, or -1 (no lock: go on unlocked rather than not at all). */
static int claim_lock(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(CLAIM_LOCK);
	struct timespec ms = {0, 1000000};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(a.sun_path + 1, CLAIM_LOCK, strlen(CLAIM_LOCK));
	for (int i = 0; fd >= 0 && i < CLAIM_WAIT_MS; i++) {
		if (!bind(fd, (struct sockaddr *)&a, len))
			return fd;
		if (errno != EADDRINUSE)
			break;
		nanosleep(&ms, NULL);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The registry names a live profiler other than this perch: a pid that is gone, or that now
 * belongs to a process started at another time, owns nothing. */
static bool owned_by_other(const struct regions *rg, const struct perch_abi_registry *r)
{
	uint64_t start;

	if (!r->profiler_pid || r->profiler_pid == rg->me)
		return false;
	if (proc_start_time((pid_t)r->profiler_pid, &start))
		return false;
	return !r->profiler_start || r->profiler_start == start;
}

/* The runtime's timeline rings on with --timeline, before it is switched on (a launched one has
 * them on from its environment), else off (another perch may have left them on); a runtime of
 * ABI 3 has none, counted. false when the memory can't be written. */
static bool switch_timeline(struct regions *rg, struct rproc *p)
{
	p->timeline = rg->timeline && p->reg.version >= 4;
	if (rg->timeline && !p->timeline)
		rg->stats[REGIONS_NO_TIMELINE]++;
	if (p->reg.version < 4 || !p->reg.timeline == !p->timeline)
		return true;
	return !regions_poke_u32(p, REG_FIELD(timeline), p->timeline);
}

/* Make this perch the owner of an attached process's runtime and switch it on, in a new epoch
 * (figures start now); -EBUSY, with p->owner set, when another perch owns it. */
static int claim(struct regions *rg, struct rproc *p)
{
	int lock = claim_lock(), err = 0;

	if (regions_read_registry(p)) {
		err = -errno;
	} else if (owned_by_other(rg, &p->reg)) {
		p->owner = p->reg.profiler_pid;
		err = -EBUSY;
	} else if (!switch_timeline(rg, p) || !regions_ctl_on(rg, p) ||
		   regions_poke_u32(p, REG_FIELD(epoch), p->reg.epoch + 1) ||
		   regions_poke_u32(p, REG_FIELD(profiler_pid), rg->me) ||
		   regions_poke_u64(p, REG_FIELD(profiler_start), rg->me_start) ||
		   regions_poke_u32(p, REG_FIELD(collector), PERCH_COLLECT_AT_EXIT) ||
		   regions_poke_u32(p, REG_FIELD(active), 1) || regions_read_registry(p)) {
		err = -errno;
	}
	if (lock >= 0)
		close(lock);
	return err;
}

/* Launched by this perch (PERCH_REGIONS_ACTIVE), or a fork of a process it times. */
static bool launched_here(const struct regions *rg, const struct perch_abi_registry *r)
{
	return r->active && r->collector == PERCH_COLLECT_AT_EXIT && r->profiler_pid == rg->me;
}

void regions_switch_on(struct regions *rg, struct rproc *p)
{
	int err;

	if (regions_read_registry(p)) {
		if (errno == EPROTO && !p->reg.magic)
			return; /* zeros: the loader has not mapped a libperch.so's data segment over
				 * the registry yet (perch saw its first mmap): regions__poll() comes
				 * back */
		if (errno == EPROTO) {
			log_warn("regions: process %u has a region runtime of another perch "
				 "(ABI %u, this perch reads %u): no region figures for it",
				 p->pid, p->reg.version, PERCH_ABI_VERSION);
			p->state = P_DONE;
			return;
		}
		unreadable(rg, p);
		return;
	}
	if (!constructed(&p->reg))
		return; /* mapped, not yet initialized: regions__poll() comes back */
	if (launched_here(rg, &p->reg)) {
		/* The environment named this perch's pid only; the start time makes it certain. */
		regions_poke_u64(p, REG_FIELD(profiler_start), rg->me_start);
		if (!switch_timeline(rg, p) || !regions_ctl_on(rg, p)) {
			unreadable(rg, p);
			return;
		}
	} else {
		p->attached = true;
		err = claim(rg, p);
		if (err == -EBUSY) {
			rg->stats[REGIONS_BUSY]++;
			p->state = P_DONE;
			return;
		}
		if (err) {
			unreadable(rg, p);
			return;
		}
	}
	p->state = P_ON;
	rg->stats[REGIONS_PROCS]++;
	log_debug(
		"regions: process %u: runtime at 0x%" PRIx64 ", tls offset %" PRId64 ", epoch %u%s",
		p->pid, p->addr, p->reg.tls_offset, p->reg.epoch, p->attached ? " (attached)" : "");
}

/* Switch an attached runtime back off (markers cost a nanosecond again), or release a
 * launched one waiting at exit; either way give up ownership, so another perch may come. */
void regions_release(struct regions *rg, struct rproc *p)
{
	if (regions_read_registry(p) || p->reg.profiler_pid != rg->me)
		return;
	if (p->attached) {
		if (p->reg.version >= 4)
			regions_poke_u32(p, REG_FIELD(timeline), 0);
		regions_poke_u32(p, REG_FIELD(active), 0);
		regions_poke_u32(p, REG_FIELD(collector), 0);
	} else {
		regions_poke_u32(p, REG_FIELD(collector), PERCH_COLLECTED);
	}
	regions_poke_u32(p, REG_FIELD(profiler_pid), 0);
}
