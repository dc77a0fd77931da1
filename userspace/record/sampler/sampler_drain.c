// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's drain (see sampler_impl.h): flips the BPF program to its other buffer, then
 * reads every (key, count) of the one it filled, with the stacks the keys name (frame-pointer
 * stacks by id, DWARF stacks by hash), hands each bucket on (and with --timeline the ticks
 * counted in them), and clears the buffer for its next turn. Batch map operations where the kernel has them, one key at a time where not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "lib/exitcodes.h"
#include "lib/hash.h"
#include "lib/vec.h"
#include "sampler_impl.h"
#include "symbolize/kdyn.h"

/* Ticks run for microseconds; after flipping `active`, this is ample for every tick that read the
 * old value to finish before the idle buffer is drained. */
#define FLIP_GRACE_NS 2000000

int sampler_drain_alloc(struct sampler *sp)
{
	sp->stack_buf = calloc(2 * PERCH_MAX_STACK, sizeof(uint64_t));
	sp->keys = calloc(PERCH_COUNT_ENTRIES, sizeof(*sp->keys));
	sp->vals = calloc(PERCH_COUNT_ENTRIES, sizeof(*sp->vals));
	sp->key_ids = calloc(PERCH_COUNT_ENTRIES, sizeof(*sp->key_ids));
	/* Touched only as far as a period's stacks reach. */
	sp->dkeys = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->dkeys));
	sp->dvals = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->dvals));
	sp->pkeys = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->pkeys));
	sp->pvals = calloc(PERCH_STACK_ENTRIES, sizeof(*sp->pvals));
	sp->pyframes = calloc(PERCH_PY_DEPTH, sizeof(*sp->pyframes));
	if (!sp->stack_buf || !sp->keys || !sp->vals || !sp->key_ids || !sp->dkeys || !sp->dvals ||
	    !sp->pkeys || !sp->pvals || !sp->pyframes)
		return PERCH_EXIT_INTERNAL;
	return 0;
}

void sampler_drain_free(struct sampler *sp)
{
	free(sp->stack_buf);
	free(sp->keys);
	free(sp->vals);
	free(sp->key_ids);
	free(sp->dkeys);
	free(sp->dvals);
	free(sp->pkeys);
	free(sp->pvals);
	free(sp->pyframes);
	u64map__clear(&sp->dindex);
	u64map__clear(&sp->pindex);
	u64map__clear(&sp->kindex);
}

static uint64_t key_hash(const struct perch_key *key)
{
	return fnv64_bytes(FNV64_OFFSET, key, sizeof(*key));
}

/* The drained buckets by key, for the records that name them (--timeline's ticks, launches). */
static void index_keys(struct sampler *sp, size_t n)
{
	u64map__clear(&sp->kindex);
	for (size_t i = 0; i < n; i++)
		u64map__put(&sp->kindex, key_hash(&sp->keys[i]), i);
}

uint32_t sampler_key_id(struct sampler *sp, const struct perch_key *key, size_t n,
			const uint32_t *key_ids)
{
	uint64_t i;

	if (!sp->kindexed) {
		index_keys(sp, n);
		sp->kindexed = true;
	}
	if (!u64map__get(&sp->kindex, key_hash(key), &i) || i >= n ||
	    memcmp(&sp->keys[i], key, sizeof(*key)))
		return SAMPLER_NO_KEY;
	return key_ids[i];
}

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

/* Read every stack of an idle stack map keyed by hash (vals: vsize bytes each), delete them, and
 * index them by hash. */
static void take_hashed(int map_fd, uint64_t *keys, void *vals, size_t vsize, struct u64map *index)
{
	__u32 count = PERCH_STACK_ENTRIES;
	__u64 cursor, *prev = NULL;
	size_t n = 0;
	int err;

	u64map__clear(index);
	err = bpf_map_lookup_and_delete_batch(map_fd, NULL, &cursor, keys, vals, &count, NULL);
	if (err == 0 || errno == ENOENT) {
		n = count;
	} else {
		/* No batch operations on this kernel: one key at a time. */
		while (n < PERCH_STACK_ENTRIES &&
		       bpf_map_get_next_key(map_fd, prev, &keys[n]) == 0) {
			if (bpf_map_lookup_elem(map_fd, &keys[n], (char *)vals + n * vsize) == 0)
				n++;
			cursor = keys[n ? n - 1 : 0];
			prev = &cursor;
		}
		for (size_t i = 0; i < n; i++)
			bpf_map_delete_elem(map_fd, &keys[i]);
	}
	for (size_t i = 0; i < n; i++)
		u64map__put(index, keys[i], i);
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

static size_t stack_len(const uint64_t *s)
{
	size_t n = 0;

	while (s && n < PERCH_MAX_STACK && s[n])
		n++;
	return n;
}

/* What the tick program's key says, in the collector's terms: the flags of the kernel side
 * become the sample's, the region stack's map key and the step are handed on as handles. */
void sampler_raw_sample(const struct perch_key *key, uint64_t count, const uint64_t *ustack,
			const uint64_t *kstack, struct raw_sample *out)
{
	static const struct {
		uint32_t key, raw;
	} flag[] = {
		{PERCH_KEY_DWARF, RAW_UNWOUND},
		{PERCH_KEY_TRUNCATED, RAW_TRUNCATED},
		{PERCH_KEY_UNWIND_FAILED, RAW_UNWIND_STOPPED},
		{PERCH_KEY_FP_LEAF, RAW_LEAF_BY_FP},
		{PERCH_KEY_PREEMPTED, RAW_PREEMPTED},
		{PERCH_KEY_REGION_LOST, RAW_REGIONS_LOST},
		{PERCH_KEY_PY_TRUNCATED, RAW_PY_TRUNCATED},
		{PERCH_KEY_PY_LOST, RAW_PY_LOST},
	};

	*out = (struct raw_sample){
		.pid = key->tgid,
		.tid = key->tid,
		.gen = key->gen,
		.event = key->flags >> PERCH_KEY_EVENT_SHIFT,
		.count = count,
		.ustack = ustack,
		.nu = stack_len(ustack),
		.kstack = kstack,
		.nk = stack_len(kstack),
		.user_ret = key->user_ret,
		.region_stack = key->region_hash,
		.step = key->step,
	};
	for (size_t i = 0; i < sizeof(flag) / sizeof(flag[0]); i++)
		if (key->flags & flag[i].key)
			out->flags |= flag[i].raw;
	if (key->ustack_id < 0)
		out->flags |= RAW_USER_LOST;
	/* -EFAULT: the tick came in user mode, so there was no kernel part to lose. */
	if (key->kstack_id < 0 && key->kstack_id != -EFAULT)
		out->flags |= RAW_KERNEL_LOST;
	_Static_assert(sizeof(out->comm) > sizeof(key->comm), "comm sizes");
	memcpy(out->comm, key->comm, sizeof(key->comm)); /* the NUL: *out's zeroed tail */
}

void sampler_raw_sample_py(struct sampler *sp, const struct perch_key *key, uint64_t count,
			   const uint64_t *ustack, const uint64_t *kstack, struct raw_sample *out)
{
	const struct perch_pystack *st;
	uint64_t idx;

	sampler_raw_sample(key, count, ustack, kstack, out);
	if (!key->py_hash)
		return;
	if (!u64map__get(&sp->pindex, key->py_hash, &idx)) {
		out->flags |= RAW_PY_LOST; /* an early tick handed on after its buffer's drain */
		return;
	}
	st = &sp->pvals[idx];
	out->npy = st->n < PERCH_PY_DEPTH ? st->n : PERCH_PY_DEPTH;
	for (size_t i = 0; i < out->npy; i++)
		sp->pyframes[i] = (struct raw_pyframe){
			.code = st->f[i].code,
			.tag = st->f[i].tag,
			.instr = st->f[i].instr,
			.flags = st->f[i].flags & PERCH_PY_ENTRY ? RAW_PY_ENTRY : 0,
		};
	out->py = sp->pyframes;
}

static void drain_buffer(struct sampler *sp, unsigned int which, uint64_t flip,
			 sampler_sample_fn fn, void *ctx)
{
	struct bpf_map *cmap = which ? sp->skel->maps.counts1 : sp->skel->maps.counts0;
	struct bpf_map *smap = which ? sp->skel->maps.stacks1 : sp->skel->maps.stacks0;
	struct bpf_map *dmap = which ? sp->skel->maps.dstacks1 : sp->skel->maps.dstacks0;
	int sfd = bpf_map__fd(smap);
	uint64_t *ubuf = sp->stack_buf, *kbuf = sp->stack_buf + PERCH_MAX_STACK;
	size_t n = take_counts(sp, bpf_map__fd(cmap));

	if (sp->unwind_mode != PERCH_UNWIND_FP)
		take_hashed(bpf_map__fd(dmap), sp->dkeys, sp->dvals, sizeof(*sp->dvals),
			    &sp->dindex);
	take_hashed(bpf_map__fd(which ? sp->skel->maps.pystacks1 : sp->skel->maps.pystacks0),
		    sp->pkeys, sp->pvals, sizeof(*sp->pvals), &sp->pindex);
	for (size_t i = 0; i < n; i++) {
		const struct perch_key *key = &sp->keys[i];
		const uint64_t *u = key->flags & PERCH_KEY_DWARF
					    ? dwarf_stack(sp, key, ubuf)
					    : lookup_stack(sfd, key->ustack_id, ubuf);
		struct raw_sample raw;

		sampler_raw_sample_py(sp, key, sp->vals[i], u,
				      lookup_stack(sfd, key->kstack_id, kbuf), &raw);
		sp->key_ids[i] = fn(ctx, &raw);
	}
	sp->kindexed = false; /* indexed for the first part that asks */
	sampler_parts_drained(sp, &(const struct sampler_drain){which, n, sp->key_ids, fn, ctx,
								sp->ending, flip});
	clear_stacks(sfd);
}

/* PERCH_TEST_DRAIN_DELAY_MS (tests only, under 1000): that long between the caller's read of
 * the process events and the flip, and again between the catch-up's read and the parts' drains,
 * as a slow drain has (the sanitizer build on a busy machine). */
static void test_delay(void)
{
	const char *v = getenv("PERCH_TEST_DRAIN_DELAY_MS");
	struct timespec d = {.tv_nsec = (v ? atol(v) : 0) * 1000000};

	if (d.tv_nsec > 0 && d.tv_nsec < 1000000000)
		nanosleep(&d, NULL);
}

uint64_t sampler__drain(struct sampler *sp, sampler_sample_fn fn, void *ctx)
{
	unsigned int old = sp->skel->bss->active;
	struct timespec grace = {.tv_nsec = FLIP_GRACE_NS}, now;
	uint64_t flip;

	test_delay();
	sp->skel->bss->active = !old;
	sp->skel->bss->flips++; /* --off-cpu: the user stacks kept for reuse are gone */
	/* After the switch: a tick takes its time before it reads `active` (sample.bpf.c). */
	clock_gettime(CLOCK_MONOTONIC, &now);
	nanosleep(&grace, NULL);
	/* Every fork, exec and mmap before the buffer's last tick into the process table: one after
	 * the caller's read (a child forked then, sampled, and exec'd before this read of its maps)
	 * would have its ticks looked up in a process the table does not know as forked, in the maps
	 * /proc shows after its exec (samples_without_mappings). */
	sampler_events_catch_up(sp);
	test_delay();
	flip = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	/* The buffer's ticks were taken between the last flip and this one: the BPF programs then. */
	if (sp->kdyn)
		kdyn__window(sp->kdyn, sp->last_flip, flip);
	drain_buffer(sp, old, flip, fn, ctx);
	sp->last_flip = flip;
	return flip;
}
