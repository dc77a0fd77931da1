// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's ticks (see sampler_impl.h): the events it samples on (-e, format/events.h;
 * cycles where the machine has a PMU, else cpu-clock, when none was asked for), each sampled
 * every -c events or at -F Hz, one perf event per event and CPU (-C: the CPUs listed), the BPF
 * program attached to each with the event's index as its cookie.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "record/cpulist.h"
#include "record/proc.h"
#include "sampler_impl.h"

/* The events of o, each with its period (0: at o->freq Hz). 0 or PERCH_EXIT_USAGE (logged). */
int sampler_ticks_setup(struct sampler *sp, const struct record_opts *o)
{
	size_t used = 0;

	sp->nevents = o->nevents ? o->nevents : 1;
	if (sp->nevents > REC_EVENTS_MAX)
		return log_usage(NULL, "at most %d events at once", REC_EVENTS_MAX);
	for (size_t i = 0; i < o->nevents; i++) {
		const struct rec_event_def *d = rec_event_find(o->events[i]);

		if (!d)
			return log_usage(NULL, "unknown event '%s' (%s)", o->events[i],
					 rec_event_names());
		sp->events[i] = d;
		sp->periods[i] = o->period ? o->period : !d->clock && !o->freq_given ? 1 : 0;
	}
	if (!o->nevents) { /* the default: cycles, or cpu-clock where there is no PMU */
		sp->events[0] = rec_event_find("cycles");
		sp->periods[0] = o->period;
		sp->default_event = true;
	}
	for (size_t i = 0; i < sp->nevents; i++)
		used += snprintf(sp->event_names + used, sizeof(sp->event_names) - used, "%s%s",
				 i ? "," : "", sp->events[i]->name);
	if (o->cpus) {
		sp->cpus = calloc(sp->ncpus, sizeof(*sp->cpus));
		if (!sp->cpus || cpulist_parse(o->cpus, sp->ncpus, sp->cpus))
			return sp->cpus ? log_usage(NULL, "bad CPU list '%s'", o->cpus)
					: PERCH_EXIT_INTERNAL;
	}
	return 0;
}

static int open_tick_event(struct sampler *sp, int cpu, size_t ev)
{
	const struct rec_event_def *d = sp->events[ev];
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = d->type,
		.config = d->config,
	};
	int fd;

	if (sp->periods[ev]) {
		attr.sample_period = sp->periods[ev];
	} else {
		attr.freq = 1;
		attr.sample_freq = sp->freq;
	}
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static bool no_pmu(int fd)
{
	return fd == -ENOENT || fd == -EOPNOTSUPP || fd == -ENODEV;
}

/* A perf event refused: the line and the status to end with. */
static int refused(struct sampler *sp, int cpu, size_t ev, int fd)
{
	unsigned int max = 0;

	if (sp->events[ev]->hardware && no_pmu(fd)) {
		log_err("event '%s' needs a hardware PMU, which this machine does not have "
			"(perf_event_open: %s): use a software event (-e cpu-clock)",
			sp->events[ev]->name, strerror(-fd));
		return PERCH_EXIT_NOPMU;
	}
	if (fd == -EINVAL && !sp->periods[ev]) {
		proc_read_uint("/proc/sys/kernel/perf_event_max_sample_rate", &max);
		log_err("perf_event_open at %u Hz: %s (kernel.perf_event_max_sample_rate is %u)",
			sp->freq, strerror(EINVAL), max);
		return PERCH_EXIT_USAGE;
	}
	log_err("perf_event_open of %s on CPU %d: %s", sp->events[ev]->name, cpu, strerror(-fd));
	return fd == -EACCES || fd == -EPERM ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
}

/* The default event's first perf event: cycles, or cpu-clock where the PMU is missing (a VM). */
static int open_default(struct sampler *sp, int cpu)
{
	int fd = open_tick_event(sp, cpu, 0);

	if (no_pmu(fd)) {
		sp->events[0] = rec_event_find("cpu-clock");
		snprintf(sp->event_names, sizeof(sp->event_names), "%s", sp->events[0]->name);
		fd = open_tick_event(sp, cpu, 0);
	}
	sp->default_event = false;
	return fd;
}

static int attach_one(struct sampler *sp, int cpu, size_t ev)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = ev);
	size_t slot = ev * sp->ncpus + cpu;
	int fd = sp->default_event ? open_default(sp, cpu) : open_tick_event(sp, cpu, ev);

	if (fd == -ENODEV && !sp->events[ev]->hardware)
		return 0; /* CPU offline */
	if (fd < 0)
		return refused(sp, cpu, ev, fd);
	sp->perf_fds[slot] = fd;
	sp->tick_links[slot] =
		bpf_program__attach_perf_event_opts(sp->skel->progs.on_tick, fd, &opts);
	if (!sp->tick_links[slot]) {
		log_err("attach sampler to perf event on CPU %d: %s", cpu, strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

int sampler_attach_ticks(struct sampler *sp)
{
	size_t n = sp->nevents * sp->ncpus;
	int ret = 0;

	sp->perf_fds = malloc(n * sizeof(*sp->perf_fds));
	sp->tick_links = calloc(n, sizeof(*sp->tick_links));
	if (!sp->perf_fds || !sp->tick_links)
		return PERCH_EXIT_INTERNAL;
	for (size_t i = 0; i < n; i++)
		sp->perf_fds[i] = -1;
	sp->nticks = n;
	for (size_t ev = 0; !ret && ev < sp->nevents; ev++)
		for (int cpu = 0; !ret && cpu < sp->ncpus; cpu++)
			if (!sp->cpus || sp->cpus[cpu])
				ret = attach_one(sp, cpu, ev);
	return ret;
}

void sampler_ticks_free(struct sampler *sp)
{
	for (size_t i = 0; sp->tick_links && i < sp->nticks; i++)
		bpf_link__destroy(sp->tick_links[i]);
	for (size_t i = 0; sp->perf_fds && i < sp->nticks; i++)
		if (sp->perf_fds[i] >= 0)
			close(sp->perf_fds[i]);
	free(sp->tick_links);
	free(sp->perf_fds);
	free(sp->cpus);
}

const char *sampler__event_name(const struct sampler *sp)
{
	return sp->event_names;
}

void sampler__periods(const struct sampler *sp, char *buf, size_t len)
{
	size_t used = 0;
	bool any = false;

	buf[0] = '\0';
	for (size_t i = 0; i < sp->nevents; i++) {
		any |= sp->periods[i] != 0;
		used += snprintf(buf + used, used < len ? len - used : 0, "%s%llu", i ? "," : "",
				 (unsigned long long)sp->periods[i]);
	}
	if (!any || used >= len)
		buf[0] = '\0';
}
