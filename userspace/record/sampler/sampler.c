// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler, userspace side (see sampler.h and sampler_impl.h): the BPF object sized to the
 * machine and loaded (falling back to frame pointers where the kernel refuses the unwinder), its
 * perf events (sampler_ticks.c), its target map, its counters and its own cost. Its process events are
 * sampler_events.c's, the drain of its double buffers sampler_drain.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "record/btfcache.h"
#include "record/btfmin.h"
#include "record/cachedir.h"
#include "record/mmapwatch.h"
#include "record/proc.h"
#include "sampler_impl.h"
#include "symbolize/kdyn.h"

const char *sampler_kernel_btf(void)
{
	const char *path = getenv("PERCH_SYSFS_BTF");

	return path ? path : "/sys/kernel/btf/vmlinux";
}

__attribute__((format(printf, 2, 0))) static int libbpf_print(enum libbpf_print_level level,
							      const char *fmt, va_list ap)
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
 * and the batch reads and clears walk every bucket. `room`: stacks per tick of a period, in
 * powers of two from 1024 up to PERCH_STACK_ENTRIES; -c has no rate to size for: the most.
 */
static __u32 entries_for(const struct sampler *sp, uint64_t room)
{
	uint64_t ticks = (uint64_t)sp->ncpus * sp->freq * SAMPLER_DRAIN_MS / 1000 * room;
	__u32 n = 1024;

	for (size_t i = 0; i < sp->nevents; i++)
		if (sp->periods[i])
			ticks = PERCH_STACK_ENTRIES;

	while (n < ticks && n < PERCH_STACK_ENTRIES)
		n *= 2;
	return n;
}

/* Counts and DWARF stack buffers. */
static __u32 buffer_entries(const struct sampler *sp)
{
	return entries_for(sp, 8);
}

/*
 * Entries per stack map (stacks0/1), more than buffer_entries(). The kernel's stack map keeps one
 * stack per hash bucket and refuses one whose bucket another stack holds (-EEXIST: counted as
 * lost_*_stack_map_full, "[no stack]" when neither stack of a tick was kept), so the share lost
 * is about the share of buckets in use: a period's ticks put two stacks each (user and kernel),
 * in 64 times as many buckets under 1 % are lost even when every stack differs. Capped where
 * eight CPUs at 997 Hz already were: two maps of 16384 stacks of 1 KiB, allocated up front.
 */
static __u32 stack_entries(const struct sampler *sp)
{
	return entries_for(sp, 2 * 64);
}

static int open_and_load(struct sampler *sp, uint32_t mode, const char *btf)
{
	struct bpf_map *buffers[8];
	__u32 entries = buffer_entries(sp);
	int err;

	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);

	sp->skel = sample_bpf__open_opts(&opts); /* libbpf keeps its own copy of the path */
	if (!sp->skel)
		return -errno;
	buffers[0] = sp->skel->maps.stacks0;
	buffers[1] = sp->skel->maps.stacks1;
	buffers[2] = sp->skel->maps.counts0;
	buffers[3] = sp->skel->maps.counts1;
	buffers[4] = sp->skel->maps.dstacks0;
	buffers[5] = sp->skel->maps.dstacks1;
	/* Python stacks: one a tick at most, as the DWARF stacks (a batch read of 16384 buckets
	 * at every drain was the largest of them). */
	buffers[6] = sp->skel->maps.pystacks0;
	buffers[7] = sp->skel->maps.pystacks1;
	for (size_t i = 0; i < 8; i++)
		bpf_map__set_max_entries(buffers[i], i < 2 ? stack_entries(sp) : entries);
	sp->skel->rodata->unwind_mode = mode;
	sp->skel->rodata->multi_event = sp->nevents > 1;
	sp->skel->rodata->gate_steps = sp->gate_steps;
	sp->skel->rodata->only_region = sp->only_region;
	sp->unwind_mode = mode;
	sampler_parts_setup(sp);
	/* -a: every module of the machine, not one program's: four times the rows (48 MiB). */
	if (sp->all_cpus && mode != PERCH_UNWIND_FP)
		bpf_map__set_max_entries(sp->skel->maps.unwind_rows, PERCH_UNWIND_ROWS * 2);
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
	return 0;
}

/* The sampler, unwinding in the kernel unless --unwind=fp; a kernel that refuses the unwinder
 * (before 5.17: no bpf_loop) still samples with frame pointers under --unwind=auto. */
/* With the kernel's BTF cut down to what the object relocates (btfmin.h) when there is one; a
 * refusal with it is tried again with the whole (a cut that missed a type must not cost a run). */
static int load_with_btf(struct sampler *sp, uint32_t mode, const char *cut, const char *full)
{
	int err = open_and_load(sp, mode, cut ? cut : full);

	if (err && cut && err != -EPERM && err != -EACCES) {
		log_debug("BPF load with the cut BTF %s: %s; again with the whole", cut,
			  strerror(-err));
		err = open_and_load(sp, mode, full);
	}
	return err;
}

static int load_sampler(struct sampler *sp, enum record_unwind unwind)
{
	uint32_t mode = bpf_unwind_mode(unwind);
	char *full = btfcache__path(sampler_kernel_btf(), CACHEDIR_RUN), *cut = NULL;
	size_t obj_len = 0;
	const void *obj = sample_bpf__elf_bytes(&obj_len);
	int err;

	if (full && !getenv("PERCH_WHOLE_BTF"))
		cut = btfmin__path(full, obj, obj_len);
	err = load_with_btf(sp, mode, cut, full);
	if (err && mode == PERCH_UNWIND_AUTO && err != -EPERM && err != -EACCES) {
		log_warn("the kernel refused the DWARF unwinder (%s): frame-pointer stacks only",
			 strerror(-err));
		err = load_with_btf(sp, PERCH_UNWIND_FP, cut, full);
	}
	free(cut);
	free(full);
	return err;
}

static int load(struct sampler *sp, const struct record_opts *o)
{
	int err;

	libbpf_set_print(libbpf_print);
	sp->ncpus = libbpf_num_possible_cpus();
	if (sp->ncpus <= 0)
		return PERCH_EXIT_BPF;
	err = sampler_ticks_setup(sp, o);
	if (err)
		return err;
	err = load_sampler(sp, o->unwind);
	if (err) {
		err = -err;
		log_err("the kernel refused the BPF sampler: %s", strerror(err));
		return err == EPERM || err == EACCES ? PERCH_EXIT_PERM : PERCH_EXIT_BPF;
	}
	sp->fds = (struct sampler_fds){
		bpf_map__fd(sp->skel->maps.unwind_rows),   bpf_map__fd(sp->skel->maps.proc_unwind),
		bpf_map__fd(sp->skel->maps.early_until),   bpf_map__fd(sp->skel->maps.region_procs),
		bpf_map__fd(sp->skel->maps.region_stacks), bpf_map__fd(sp->skel->maps.py_procs)};
	if (sampler_listen(sp) < 0)
		return PERCH_EXIT_INTERNAL;
	if (sample_bpf__attach(sp->skel)) {
		log_err("attach process tracepoints: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	err = sampler_open_events(sp);
	if (!err)
		err = sampler_parts_open(sp);
	return err ? err : sampler_attach_ticks(sp);
}

int sampler__open(const struct record_opts *o, struct procs *ps, struct sampler **out)
{
	struct sampler *sp = calloc(1, sizeof(*sp));
	int ret;

	*out = sp;
	if (!sp)
		return PERCH_EXIT_INTERNAL;
	sp->freq = o->freq;
	sp->timeline = o->timeline;
	sp->gpu_calls = o->gpu && !o->argv;
	sp->gpu_launches = o->gpu && o->argv;
	sp->o = o;
	sp->all_cpus = o->all_cpus;
	sp->gate_steps = o->steps;
	sp->only_region = o->only_region != NULL;
	sp->procs = ps;
	ret = sampler_drain_alloc(sp);
	return ret ? ret : load(sp, o);
}

void sampler__free(struct sampler *sp)
{
	if (!sp)
		return;
	sampler_ticks_free(sp);
	ring_buffer__free(sp->rb);
	mmap_watch__free(sp->mw);
	kdyn__free(sp->kdyn);
	sampler_parts_free(sp);
	sample_bpf__destroy(sp->skel);
	sampler_drain_free(sp);
	free(sp);
}

int sampler__add_target(struct sampler *sp, pid_t pid, bool launched)
{
	__u32 key = pid, gen = 0;

	if (launched) {
		sp->launched = pid;
		sp->skel->bss->launched_tgid = pid; /* its ticks before its exec are perch's */
	}
	if (bpf_map_update_elem(bpf_map__fd(sp->skel->maps.targets), &key, &gen, BPF_ANY)) {
		log_err("add target %d: %s", (int)pid, strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

/* Paused, the perf events are disabled too, so the targets take no tick at all: a paused perch
 * costs them nothing (README, bench/pause.sh). The flag stays for what runs without a tick
 * (off-CPU switches) and for the ticks under way when the events stop. The window's bounds go to
 * the BPF program before the flag (see struct perch_offspan): a block that ends between the two
 * is cut at them already. A second pause keeps the first's time. */
void sampler__pause(struct sampler *sp, bool paused)
{
	unsigned long req = paused ? PERF_EVENT_IOC_DISABLE : PERF_EVENT_IOC_ENABLE;
	struct sample_bpf__bss *bss = sp->skel->bss;
	struct timespec ts;
	uint64_t now;

	if (paused == !!bss->perch_paused)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (paused) {
		bss->paused_ns = now;
		__atomic_store_n(&bss->perch_paused, 1, __ATOMIC_SEQ_CST);
	} else {
		bss->resumed_before_ns = bss->resumed_ns;
		bss->resumed_ns = now;
	}
	/* every event's perf event on every CPU (sampler_ticks.c: event * ncpus + cpu) */
	for (size_t i = 0; sp->perf_fds && i < sp->nticks; i++) {
		if (sp->perf_fds[i] >= 0 && ioctl(sp->perf_fds[i], req, 0))
			log_debug("sampler: perf event of cpu %d: %s", (int)(i % sp->ncpus),
				  strerror(errno));
	}
	if (!paused)
		__atomic_store_n(&bss->perch_paused, 0, __ATOMIC_SEQ_CST);
}

/* Every counter at once (one syscall a drain, not one a counter); false when the kernel takes
 * no batch on an array. */
static bool stats_batch(const struct sampler *sp, uint64_t totals[PERCH_STAT_MAX],
			bool ok[PERCH_STAT_MAX])
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 keys[PERCH_STAT_MAX], count = PERCH_STAT_MAX, out = 0;
	uint64_t *vals = calloc((size_t)PERCH_STAT_MAX * sp->ncpus, sizeof(uint64_t));
	int err = vals ? bpf_map_lookup_batch(bpf_map__fd(sp->skel->maps.stats), NULL, &out, keys,
					      vals, &count, &opts)
		       : -ENOMEM;

	if ((err && err != -ENOENT) || count > PERCH_STAT_MAX) {
		free(vals);
		return false;
	}
	for (__u32 j = 0; j < count; j++) {
		if (keys[j] >= PERCH_STAT_MAX)
			continue;
		ok[keys[j]] = true;
		for (int c = 0; c < sp->ncpus; c++)
			totals[keys[j]] += vals[(size_t)j * sp->ncpus + c];
	}
	free(vals);
	return true;
}

void sampler__stats(const struct sampler *sp, uint64_t totals[PERCH_STAT_MAX],
		    bool ok[PERCH_STAT_MAX])
{
	uint64_t *percpu;

	memset(totals, 0, PERCH_STAT_MAX * sizeof(*totals));
	memset(ok, 0, PERCH_STAT_MAX * sizeof(*ok));
	if (stats_batch(sp, totals, ok))
		return;
	percpu = calloc(sp->ncpus, sizeof(uint64_t));
	for (__u32 i = 0; i < PERCH_STAT_MAX; i++) {
		totals[i] = 0;
		ok[i] = percpu &&
			!bpf_map_lookup_elem(bpf_map__fd(sp->skel->maps.stats), &i, percpu);
		for (int c = 0; ok[i] && c < sp->ncpus; c++)
			totals[i] += percpu[c];
	}
	free(percpu);
}

void sampler__cost(const struct sampler *sp, uint64_t *run_ns, uint64_t *runs, uint64_t *tick_ns,
		   uint64_t *ticks)
{
	struct bpf_program *progs[] = {sp->skel->progs.on_tick,	  sp->skel->progs.on_fork,
				       sp->skel->progs.on_exec,	  sp->skel->progs.on_exit,
				       sp->skel->progs.on_launch, sp->skel->progs.on_switch};

	*run_ns = *runs = *tick_ns = *ticks = 0;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*runs += info.run_cnt;
		if (i == 0) { /* on_tick: what each sample costs in the kernel */
			*tick_ns = info.run_time_ns;
			*ticks = info.run_cnt;
		}
	}
}

uint32_t sampler__unwind_mode(const struct sampler *sp)
{
	return sp->unwind_mode;
}

const struct sampler_fds *sampler__fds(const struct sampler *sp)
{
	return &sp->fds;
}
