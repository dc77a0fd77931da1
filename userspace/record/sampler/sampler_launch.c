// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CPU side of the GPU join (--gpu, see struct perch_launch): the sampler's uprobe on
 * perch_cuda_launch() in the injection library, and its records. A record names a key of one
 * counts buffer; at the drain of that buffer it gets the key id the drain gave the key and goes
 * to the launch function (record/gpu.c joins it to the correlation id's GPU activities). Records
 * of the other buffer wait for its drain, as --timeline's ticks do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cuda/perch_cuda.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "sampler_impl.h"

#define PROBE "perch_cuda_launch"

struct launch_probe {
	struct ring_buffer *rb;
	struct bpf_link *link;
	struct perch_launch *waiting; /* read, not yet drained: of the other buffer */
	size_t nwaiting, capwaiting;
	sampler_launch_fn fn;
	void *ctx;
	uint64_t unkeyed;
};

extern const struct sampler_part sampler_launch_part;

/* Its state (sampler_part_state()), or NULL: not asked for. */
static struct launch_probe *launch_of(const struct sampler *sp)
{
	return sampler_part_state(sp, &sampler_launch_part);
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct launch_probe *lc = ctx;

	if (len < sizeof(struct perch_launch) ||
	    vec_grow(&lc->waiting, &lc->capwaiting, lc->nwaiting + 1, sizeof(*lc->waiting), 64)) {
		lc->unkeyed++;
		return 0;
	}
	memcpy(&lc->waiting[lc->nwaiting++], data, sizeof(struct perch_launch));
	return 0;
}

/*
 * Where in the probe to attach. Its first instruction is a 5-byte NOP (x86-64), which Linux >= 6.16
 * optimizes into a call to its uprobe trampoline (the uprobe syscall) on the first hit: no int3
 * trap per launch. PERCH_GPU_PROBE=trap attaches at the `ret` after it instead, where every hit is
 * a trap, as on older kernels: bench/gpu_storm.sh measures both.
 */
static size_t probe_offset(void)
{
#if defined(__x86_64__)
	const char *mode = getenv("PERCH_GPU_PROBE");

	if (mode && !strcmp(mode, "trap"))
		return PERCH_CUDA_PROBE_TRAP_OFFSET;
	return PERCH_CUDA_PROBE_NOP_OFFSET;
#else
	return 0;
#endif
}

/*
 * Attached to every process that maps the library (pid -1): the program keeps only targets, and
 * the children a target forks are targets too. The library is the file perch hands the command,
 * so the probe is in place before the command's first launch.
 */
int sampler__probe_launches(struct sampler *sp, const char *library, sampler_launch_fn fn,
			    void *ctx)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = PROBE);
	struct launch_probe *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return PERCH_EXIT_INTERNAL;
	sampler_part_set_state(sp, &sampler_launch_part, lc);
	lc->fn = fn;
	lc->ctx = ctx;
	lc->rb = ring_buffer__new(bpf_map__fd(sp->skel->maps.launches), on_record, lc, NULL);
	if (!lc->rb) {
		log_err("launch ring buffer: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	lc->link = bpf_program__attach_uprobe_opts(sp->skel->progs.on_launch, -1, library,
						   probe_offset(), &opts);
	if (!lc->link) {
		log_err("gpu: uprobe on %s in %s: %s", PROBE, library, strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

/* Loaded only for the runs that attach it (the kernel verifies each program it loads: ~10 ms
 * apiece here); --gpu attaches it. Its ring takes a page when unused. */
static void launch_setup(struct sampler *sp)
{
	struct sample_bpf *skel = sp->skel;

	bpf_program__set_autoattach(skel->progs.on_launch, false);
	bpf_program__set_autoload(skel->progs.on_launch, sp->gpu_launches);
	if (!sp->gpu_launches)
		bpf_map__set_max_entries(skel->maps.launches, 4096);
}

static void launch_free(struct sampler *sp)
{
	struct launch_probe *lc = launch_of(sp);

	if (!lc)
		return;
	bpf_link__destroy(lc->link);
	ring_buffer__free(lc->rb);
	free(lc->waiting);
	free(lc);
	sampler_part_set_state(sp, &sampler_launch_part, NULL);
}

uint64_t sampler__launches_unkeyed(const struct sampler *sp)
{
	const struct launch_probe *lc = launch_of(sp);

	return lc ? lc->unkeyed : 0;
}

static void launch_drained(struct sampler *sp, const struct sampler_drain *d)
{
	struct launch_probe *lc = launch_of(sp);
	size_t kept = 0;

	if (!lc)
		return;
	ring_buffer__consume(lc->rb);
	for (size_t i = 0; i < lc->nwaiting; i++) {
		const struct perch_launch *l = &lc->waiting[i];
		uint32_t key;

		if (l->buf != d->which) {
			lc->waiting[kept++] = *l;
			continue;
		}
		key = sampler_key_id(sp, &l->key, d->n, d->key_ids);
		if (key == SAMPLER_NO_KEY)
			lc->unkeyed++;
		lc->fn(lc->ctx, l, key);
	}
	lc->nwaiting = kept;
}

const struct sampler_part sampler_launch_part = {
	.name = "launch probe",
	.setup = launch_setup,
	.drained = launch_drained,
	.free = launch_free,
};
