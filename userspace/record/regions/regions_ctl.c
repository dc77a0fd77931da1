// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: steps and pauses (ABI 5, see regions_impl.h and include/perch_abi.h). At
 * switch-on the sampler gets the address of the runtime's ctl block (which it reads at every
 * tick) and the runtime gets --steps and --only-region; from then on the program's control log
 * (perch_profile_pause/resume, perch_step/perch_step_end) is read with a cursor of perch's own
 * and handed, on CLOCK_MONOTONIC, to the run's ctl function.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "lib/log.h"
#include "regions_impl.h"

_Static_assert(offsetof(struct perch_abi_ctl, paused) == offsetof(struct perch_ctl, paused) &&
		       offsetof(struct perch_abi_ctl, in_step) ==
			       offsetof(struct perch_ctl, in_step) &&
		       offsetof(struct perch_abi_ctl, step) == offsetof(struct perch_ctl, step) &&
		       offsetof(struct perch_abi_ctl, first) == offsetof(struct perch_ctl, first) &&
		       offsetof(struct perch_abi_ctl, last) == offsetof(struct perch_ctl, last) &&
		       offsetof(struct perch_abi_ctl, gate) == offsetof(struct perch_ctl, gate) &&
		       offsetof(struct perch_abi_ctl, only) == offsetof(struct perch_ctl, only) &&
		       sizeof(struct perch_abi_ctl) == sizeof(struct perch_ctl),
	       "sampler and runtime disagree on the ctl block");

#define CTL_FIELD(f) (REG_FIELD(ctl) + offsetof(struct perch_abi_ctl, f))

void regions__set_ctl(struct regions *rg, bool steps, uint64_t first, uint64_t last,
		      const char *only, regions_ctl_fn fn, void *ctx)
{
	if (!rg)
		return;
	rg->steps = steps;
	rg->first = first;
	rg->last = last;
	rg->only = only && *only ? only : NULL;
	rg->ctl_fn = fn;
	rg->ctl_ctx = ctx;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void emit(struct regions *rg, const struct rproc *p, uint32_t kind, uint64_t t,
		 uint64_t value)
{
	if (rg->ctl_fn)
		rg->ctl_fn(rg->ctl_ctx, p->pid, kind, t, value);
}

/* --only-region's name into the runtime, then its id if the name is registered already (else
 * the runtime sets it when it registers the name: both look, so neither order misses it). */
static int set_only(struct regions *rg, struct rproc *p)
{
	char name[PERCH_NAME_LEN] = {0};

	strncpy(name, rg->only, sizeof(name) - 1);
	if (regions_poke(p, REG_FIELD(only_name), name, sizeof(name)) || regions_read_names(p))
		return -1;
	for (uint32_t id = 1; id <= p->nnames; id++) {
		if (!strncmp(p->names[id - 1], name, PERCH_NAME_LEN - 1))
			return regions_poke_u32(p, CTL_FIELD(only), id);
	}
	return 0;
}

/* A runtime switched on after the program paused or began a step: that state, as of now. */
static void state_now(struct regions *rg, struct rproc *p)
{
	uint64_t t = mono_ns();

	if (p->reg.ctl.paused)
		emit(rg, p, PERCH_LOG_PAUSE, t, 0);
	if (p->reg.ctl.in_step)
		emit(rg, p, PERCH_LOG_STEP, t, p->reg.ctl.step);
}

bool regions_ctl_on(struct regions *rg, struct rproc *p)
{
	struct perch_region_proc rp = {.registry = p->addr};

	if (p->reg.version < 5) {
		if ((rg->steps || rg->only) && !rg->warned_old)
			log_warn("regions: process %u has a region runtime of ABI %u: no steps or "
				 "pauses, so --steps and --only-region count none of its samples",
				 p->pid, p->reg.version);
		rg->warned_old = true;
		return true;
	}
	if (rg->steps && (regions_poke_u64(p, CTL_FIELD(first), rg->first) ||
			  regions_poke_u64(p, CTL_FIELD(last), rg->last) ||
			  regions_poke_u32(p, CTL_FIELD(gate), 1)))
		return false;
	if (rg->only && set_only(rg, p))
		return false;
	/* A launched command logged from its constructor on; a fork or an attached process has
	 * entries that are not this recording's. */
	p->log_next = p->forked || p->attached ? p->reg.log_head : 0;
	if (p->forked || p->attached)
		state_now(rg, p);
	rg->stats[REGIONS_STEPS_PROCS]++;
	rp.ctl = p->addr + REG_FIELD(ctl);
	if (bpf_map_update_elem(rg->procs_fd, &p->pid, &rp, BPF_ANY))
		log_debug("regions: region_procs: %s", strerror(errno));
	return true;
}

/* The entries [p->log_next, head) still in the log, to the ctl function, at the clock now. */
static void read_entries(struct regions *rg, struct rproc *p, uint64_t head)
{
	const struct perch_abi_log *log = p->reg.log;
	double scale = regions_ns_per_tick(rg, p);
	uint64_t tsc, ns, from;

	regions_clock_now(&tsc, &ns);
	from = regions_ring_valid_from(p->log_next, head, head, PERCH_LOG_ENTRIES);
	if (from > p->log_next)
		rg->stats[REGIONS_LOG_LOST] += from - p->log_next;
	for (uint64_t i = from; i < head; i++) {
		const struct perch_abi_log *e = &log[i & (PERCH_LOG_ENTRIES - 1)];
		uint64_t t = e->time;

		if (p->reg.tick_unit != PERCH_TICKS_NS)
			t = regions_ticks_ns(t, tsc, ns, scale);
		if (!regions_time_in_run(rg, t, ns)) {
			rg->stats[REGIONS_LOG_REFUSED]++; /* garbage: not the program's doing */
			continue;
		}
		emit(rg, p, e->kind, t, e->value);
	}
	p->log_next = head;
}

void regions_read_log(struct regions *rg, struct rproc *p)
{
	uint64_t head;

	if (p->reg.version < 5 ||
	    regions_peek(p->pid, p->addr + REG_FIELD(log_head), &head, sizeof(head)) ||
	    head == p->log_next)
		return;
	/* The log as it stands (a whole registry read is a few KiB: only when it moved). */
	if (regions_read_registry(p))
		return;
	head = p->reg.log_head;
	if (head > p->log_next)
		read_entries(rg, p, head);
}

void regions_ctl_gone(struct regions *rg, struct rproc *p)
{
	if (p->reg.version >= 5)
		emit(rg, p, REGIONS_CTL_GONE, mono_ns(), 0);
}
