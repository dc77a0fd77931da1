// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: what perch reads out of a runtime's memory, taken apart (see regions_impl.h):
 * the list of thread blocks and one block's tree. Every byte is the target's: the list may come
 * back on itself (th->next = th) or run on through fake blocks, a tree may name nodes that are
 * not its own. Memory comes through a peek function, so the fuzz harness (tests/fuzz_regions.c)
 * runs exactly this code over bytes of its own.
 */
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "regions_impl.h"

/* Past this many addresses remembered, the seen set starts over (each walk is bounded anyway). */
#define SEEN_MAX (4 * (size_t)REGIONS_MAX_BLOCKS)

void regions_walk_free(struct regions_walk *wk)
{
	u64map__clear(&wk->seen);
	free(wk->blocks);
	memset(wk, 0, sizeof(*wk));
}

/* Mark addr seen by this walk; false when it was already (the list came back to it). */
static int see(struct regions_walk *wk, uint64_t addr)
{
	uint64_t gen;

	if (u64map__get(&wk->seen, addr, &gen) && gen == wk->gen)
		return 0;
	return u64map__put(&wk->seen, addr, wk->gen) ? -1 : 1;
}

int regions_walk(struct regions_walk *wk, uint64_t first, regions_peek_fn peek, void *ctx)
{
	uint64_t addr = first;

	wk->nblocks = 0;
	if (wk->seen.len > SEEN_MAX)
		u64map__clear(&wk->seen);
	wk->gen++;
	while (addr && wk->nblocks < REGIONS_MAX_BLOCKS) {
		int fresh = see(wk, addr);

		if (!fresh)
			return REGIONS_WALK_CYCLE;
		if (fresh < 0 ||
		    vec_grow(&wk->blocks, &wk->cap, wk->nblocks + 1, sizeof(*wk->blocks), 64))
			return 0; /* out of memory: the blocks so far */
		wk->blocks[wk->nblocks++] = addr;
		if (peek(ctx, addr + offsetof(struct perch_abi_thread, next), &addr, sizeof(addr)))
			return 0;
	}
	return addr ? REGIONS_WALK_LONG : 0;
}

static uint64_t to_ns(uint64_t ticks, double scale)
{
	double ns = (double)ticks * scale + 0.5;

	return ns < 18446744073709549568.0 ? (uint64_t)ns : UINT64_MAX;
}

static void convert_node(struct rec_region_node *out, const struct perch_abi_node *in, double scale)
{
	out->calls = in->calls;
	out->total_ns = to_ns(in->total_ticks, scale);
	out->self_ns = to_ns(in->self_ticks, scale);
	out->min_ns = to_ns(in->min_ticks, scale);
	out->max_ns = to_ns(in->max_ticks, scale);
	out->size_sum = in->size_sum;
	out->untimed = in->unmatched;
	out->open = in->open;
	out->sum_ns = to_ns(in->sum_ticks, scale);
}

/* The tree of a block (nodes[0 .. n), n <= PERCH_NODE_OTHER, and its PERCH_NODE_OTHER node) into
 * t->nodes (room for n + 1), each name through name(ctx, id) (0: it could not be made); false
 * when it is not a tree the runtime writes (a parent not before its child, a node with no name). */
bool regions_parse_tree(const struct perch_abi_node *nodes, uint32_t n,
			const struct perch_abi_node *other, double scale, regions_name_fn name,
			void *ctx, struct rec_region_thread *t)
{
	if (!n || n > PERCH_NODE_OTHER)
		return false;
	memset(t->nodes, 0, ((size_t)n + 1) * sizeof(*t->nodes));
	t->nnodes = n;
	for (uint32_t i = 1; i < n; i++) {
		if (nodes[i].parent >= i || !nodes[i].name)
			return false;
		t->nodes[i].name = name(ctx, nodes[i].name);
		t->nodes[i].parent = nodes[i].parent;
		if (!t->nodes[i].name)
			return false;
		convert_node(&t->nodes[i], &nodes[i], scale);
	}
	if (other->calls || other->open) {
		t->nodes[n].name = name(ctx, PERCH_NAME_OTHER);
		if (!t->nodes[n].name)
			return false;
		convert_node(&t->nodes[n], other, scale);
		t->nnodes++;
	}
	return true;
}
