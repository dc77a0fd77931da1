// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's side of --gpu -p PID (attach mode; see struct perch_gpu_call): uprobes on
 * libcuda.so's entry points and name lookups, pid-filtered, and their two ring buffers. A hit's
 * record names a key of one counts buffer: at the drain of that buffer it gets the key id the
 * drain gave the key and goes to the call function, as a launch probe hit does
 * (sampler_launch.c). Name records need no key: they go to the name function as they are read,
 * and always before the hits of the same drain, so a launch after a lookup finds its name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/vec.h"
#include "sampler_impl.h"

struct gpu_call_probe {
	struct ring_buffer *calls, *names;
	struct bpf_link **links;
	size_t nlinks, caplinks;
	struct perch_gpu_call *waiting; /* read, not yet drained: of the other buffer */
	size_t nwaiting, capwaiting;
	sampler_gpu_call_fn fn;
	sampler_gpu_name_fn name_fn;
	void *ctx;
	uint64_t unkeyed;
};

extern const struct sampler_part sampler_gpucall_part;

/* Its state (sampler_part_state()), or NULL: not asked for. */
static struct gpu_call_probe *gpucall_of(const struct sampler *sp)
{
	return sampler_part_state(sp, &sampler_gpucall_part);
}

static int on_call(void *ctx, void *data, size_t len)
{
	struct gpu_call_probe *gc = ctx;

	if (len < sizeof(struct perch_gpu_call) ||
	    vec_grow(&gc->waiting, &gc->capwaiting, gc->nwaiting + 1, sizeof(*gc->waiting), 64)) {
		gc->unkeyed++;
		return 0;
	}
	memcpy(&gc->waiting[gc->nwaiting++], data, sizeof(struct perch_gpu_call));
	return 0;
}

static int on_name(void *ctx, void *data, size_t len)
{
	struct gpu_call_probe *gc = ctx;

	if (len >= sizeof(struct perch_gpu_name))
		gc->name_fn(gc->ctx, data);
	return 0;
}

int sampler__gpu_calls(struct sampler *sp, sampler_gpu_call_fn fn, sampler_gpu_name_fn name_fn,
		       void *ctx)
{
	struct gpu_call_probe *gc = calloc(1, sizeof(*gc));

	if (!gc)
		return PERCH_EXIT_INTERNAL;
	sampler_part_set_state(sp, &sampler_gpucall_part, gc);
	gc->fn = fn;
	gc->name_fn = name_fn;
	gc->ctx = ctx;
	gc->calls = ring_buffer__new(bpf_map__fd(sp->skel->maps.gpu_calls), on_call, gc, NULL);
	gc->names = ring_buffer__new(bpf_map__fd(sp->skel->maps.gpu_names), on_name, gc, NULL);
	if (!gc->calls || !gc->names) {
		log_err("gpu: libcuda probes' ring buffers: %s", strerror(errno));
		return PERCH_EXIT_BPF;
	}
	return 0;
}

static int add_link(struct gpu_call_probe *gc, struct bpf_link *link)
{
	if (!link)
		return -errno;
	if (vec_grow(&gc->links, &gc->caplinks, gc->nlinks + 1, sizeof(*gc->links), 64)) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	gc->links[gc->nlinks++] = link;
	return 0;
}

int sampler__probe_gpu(struct sampler *sp, pid_t pid, const char *path, uint64_t off, bool namer,
		       uint32_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie);
	struct gpu_call_probe *gc = gpucall_of(sp);
	int err;

	if (!gc)
		return -EINVAL;
	if (!namer)
		return add_link(gc, bpf_program__attach_uprobe_opts(sp->skel->progs.on_gpu_call,
								    pid, path, off, &opts));
	err = add_link(gc, bpf_program__attach_uprobe_opts(sp->skel->progs.on_gpu_namer, pid, path,
							   off, &opts));
	if (err)
		return err;
	opts.retprobe = true;
	opts.bpf_cookie = 0;
	return add_link(gc, bpf_program__attach_uprobe_opts(sp->skel->progs.on_gpu_named, pid, path,
							    off, &opts));
}

void sampler__poll_gpu_calls(struct sampler *sp)
{
	struct gpu_call_probe *gc = gpucall_of(sp);

	if (!gc)
		return;
	ring_buffer__consume(gc->names);
	ring_buffer__consume(gc->calls); /* held until their drain; the ring stays free */
}

/* --gpu -p attaches them to libcuda.so (sampler__probe_gpu()); loaded only then, their rings
 * and maps a page or an entry when unused. */
static void gpucall_setup(struct sampler *sp)
{
	struct sample_bpf *skel = sp->skel;

	bpf_program__set_autoattach(skel->progs.on_gpu_call, false);
	bpf_program__set_autoattach(skel->progs.on_gpu_namer, false);
	bpf_program__set_autoattach(skel->progs.on_gpu_named, false);
	bpf_program__set_autoload(skel->progs.on_gpu_call, sp->gpu_calls);
	bpf_program__set_autoload(skel->progs.on_gpu_namer, sp->gpu_calls);
	bpf_program__set_autoload(skel->progs.on_gpu_named, sp->gpu_calls);
	if (!sp->gpu_calls) {
		bpf_map__set_max_entries(skel->maps.gpu_calls, 4096);
		bpf_map__set_max_entries(skel->maps.gpu_names, 4096);
		bpf_map__set_max_entries(skel->maps.gpu_pending, 1);
	}
}

static void gpucall_free(struct sampler *sp)
{
	struct gpu_call_probe *gc = gpucall_of(sp);

	if (!gc)
		return;
	for (size_t i = 0; i < gc->nlinks; i++)
		bpf_link__destroy(gc->links[i]);
	free(gc->links);
	ring_buffer__free(gc->calls);
	ring_buffer__free(gc->names);
	free(gc->waiting);
	free(gc);
	sampler_part_set_state(sp, &sampler_gpucall_part, NULL);
}

uint64_t sampler__gpu_calls_unkeyed(const struct sampler *sp)
{
	const struct gpu_call_probe *gc = gpucall_of(sp);

	return gc ? gc->unkeyed : 0;
}

static void gpucall_drained(struct sampler *sp, const struct sampler_drain *d)
{
	struct gpu_call_probe *gc = gpucall_of(sp);
	size_t kept = 0;

	if (!gc)
		return;
	ring_buffer__consume(gc->names);
	ring_buffer__consume(gc->calls);
	for (size_t i = 0; i < gc->nwaiting; i++) {
		const struct perch_gpu_call *c = &gc->waiting[i];
		uint32_t key;

		if (c->buf != d->which) {
			gc->waiting[kept++] = *c;
			continue;
		}
		key = sampler_key_id(sp, &c->key, d->n, d->key_ids);
		if (key == SAMPLER_NO_KEY)
			gc->unkeyed++;
		gc->fn(gc->ctx, c, key);
	}
	gc->nwaiting = kept;
}

const struct sampler_part sampler_gpucall_part = {
	.name = "libcuda probes",
	.setup = gpucall_setup,
	.drained = gpucall_drained,
	.free = gpucall_free,
};
