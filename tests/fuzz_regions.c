// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for what perch reads out of a region runtime and what it writes of it: the bytes
 * are a target's memory (at FAKE_BASE). The thread list is walked as perch walks it (each block
 * once, bounded, whatever the next pointers say), each block's tree taken apart as perch does
 * (record/regions/regions_parse.c) and handed to the recording writer, and the rest of the bytes
 * fed to every timed block writer as hostile values. Whatever the writer accepts, its reader must
 * load: recording__load() returns 0, and the trees come back as they were written.
 *
 *   make fuzz && build-fuzz/fuzz_regions -max_total_time=60 CORPUS_DIR tests/corpus
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "record/regions/regions_impl.h"

#define FAKE_BASE  0x10000ull
#define THREAD_HD  offsetof(struct perch_abi_thread, nodes)
#define MAX_TREES  8 /* blocks taken apart per input: the walk itself covers the rest */
#define MAX_WRITES 64

struct mem {
	const uint8_t *p;
	size_t len;
};

static int peek(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < FAKE_BASE || addr - FAKE_BASE > m->len || len > m->len - (addr - FAKE_BASE))
		return -1;
	memcpy(buf, m->p + (addr - FAKE_BASE), len);
	return 0;
}

static uint64_t u64_at(const struct mem *m, size_t off)
{
	uint64_t v = 0;

	if (off + 8 <= m->len)
		memcpy(&v, m->p + off, 8);
	return v;
}

static uint32_t name_of(void *ctx, uint32_t id)
{
	char name[32];

	snprintf(name, sizeof(name), "r%u", id);
	return rec_writer__string(ctx, name);
}

/* The walk: every block once, within the bound. */
static void walk(struct regions_walk *wk, const struct mem *m)
{
	int r = regions_walk(wk, u64_at(m, 0), peek, (void *)m);

	fuzz_check(wk->nblocks <= REGIONS_MAX_BLOCKS);
	fuzz_check(r == 0 || r == REGIONS_WALK_CYCLE || r == REGIONS_WALK_LONG);
	for (size_t i = 1; i < wk->nblocks && i < 64; i++)
		for (size_t j = 0; j < i; j++)
			fuzz_check(wk->blocks[i] != wk->blocks[j]);
}

/* Block addr's tree as perch takes it apart, written; how many trees were written. */
static size_t tree(struct rec_writer *w, const struct mem *m, uint64_t addr, uint32_t tid)
{
	static struct perch_abi_node nodes[PERCH_MAX_NODES];
	static struct rec_region_node out[PERCH_MAX_NODES + 1];
	struct perch_abi_thread head;
	struct perch_abi_node other = {0};
	struct rec_region_thread t = {.pid = 1, .tid = tid, .nodes = out};
	uint32_t n;

	if (peek((void *)m, addr, &head, THREAD_HD))
		return 0;
	n = head.nnodes;
	if (!n || n > PERCH_NODE_OTHER ||
	    peek((void *)m, addr + THREAD_HD, nodes, n * sizeof(*nodes)))
		return 0;
	peek((void *)m, addr + THREAD_HD + PERCH_NODE_OTHER * sizeof(other), &other, sizeof(other));
	if (!regions_parse_tree(nodes, n, &other, 0.4, name_of, w, &t))
		return 0;
	fuzz_check(rec_writer__regions(w, &t, 1) == 0); /* what perch takes apart it can write */
	return 1;
}

/* Hostile values from the bytes to every timed block writer: refused or written, never both. */
static void hostile_writes(struct rec_writer *w, const struct mem *m, uint32_t key)
{
	for (size_t i = 0; i < MAX_WRITES && 8 + i * 16 + 16 <= m->len; i++) {
		uint64_t a = u64_at(m, 8 + i * 16), b = u64_at(m, 16 + i * 16);
		struct rec_span s = {1, 2, a, (uint8_t)(b % 3), 1, b};
		struct rec_gpu g = {.kind = REC_GPU_KERNEL, .start_ns = a, .end_ns = b, .pid = 1};
		struct rec_step st = {REC_STEP_STEP, 1, b, a, b, 0, NULL};

		switch (a % 5) {
		case 0:
			rec_writer__event(w, b, key);
			break;
		case 1:
			rec_writer__span(w, &s);
			break;
		case 2:
			rec_writer__gpu(w, &g);
			break;
		case 3:
			rec_writer__offspan(w, key, a, b);
			break;
		default:
			rec_writer__steps(w, &st, 1);
		}
		if (i == MAX_WRITES / 2)
			rec_writer__flush(w); /* later entries start their deltas over */
	}
}

static size_t ntrees_written;

static void check(const struct recording *r, int err, size_t size)
{
	(void)size;
	fuzz_check(err == 0 && r);
	fuzz_check(r->nrthreads <= ntrees_written);
	for (size_t i = 0; i < r->nrthreads; i++)
		for (uint32_t j = 1; j < r->rthreads[i].nnodes; j++)
			fuzz_check(r->rthreads[i].nodes[j].parent < j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct regions_walk wk; /* kept between inputs, as between drains */
	static const uint32_t frame0[] = {0};
	struct mem m = {data, size};
	struct rec_sample s = {.pid = 1, .tid = 2, .nframes = 1, .frames = frame0};
	struct recording *r = NULL;
	struct rec_writer *w;
	char path[64];
	uint32_t key = 0;
	int err;

	walk(&wk, &m);
	snprintf(path, sizeof(path), "/dev/shm/perch-fuzz-regions-%d.data", (int)getpid());
	unlink(path);
	w = rec_writer__open(path);
	if (!w)
		return 0;
	rec_writer__string(w, "r1");
	rec_writer__frame(w, REC_FRAME_USER, 1, 1, 0);
	rec_writer__key(w, &s, &key);
	ntrees_written = 0;
	for (size_t i = 0; i < wk.nblocks && i < MAX_TREES; i++)
		ntrees_written += tree(w, &m, wk.blocks[i], (uint32_t)i);
	hostile_writes(w, &m, key);
	fuzz_check(rec_writer__close(w) == 0);
	err = recording__load(path, &r); /* before check(): its arguments' order is open */
	check(r, err, size);
	recording__free(r);
	unlink(path);
	return 0;
}
