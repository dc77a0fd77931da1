// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: the spans of --timeline (see regions_impl.h and include/perch_abi.h). Each
 * thread block of a runtime holds a ring its thread writes every timed begin, end and mark to,
 * without ever waiting; perch reads the ring out of the target's memory at every drain with a
 * cursor of its own per block, converts the runtime's ticks to CLOCK_MONOTONIC and writes the
 * entries as rec_writer__span. What the thread overwrote before perch came is counted lost.
 * Everything read is untrusted: heads are bounded, unknown kinds skipped.
 */
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "regions_impl.h"

#define RING_AT offsetof(struct perch_abi_thread, ring_head)
#define ENTRY_AT(i)                                \
	(offsetof(struct perch_abi_thread, ring) + \
	 ((i) % PERCH_RING_ENTRIES) * sizeof(struct perch_abi_event))

/* A runtime's ticks to CLOCK_MONOTONIC ns: from a reading of both clocks taken now, at the ratio
 * measured over the recording (the one the region tables are converted with). */
struct clock_map {
	uint64_t tsc, ns;
	double scale;
	bool ticks_are_ns;
};

uint64_t regions_ring_valid_from(uint64_t cursor, uint64_t h1, uint64_t h2, uint64_t n)
{
	uint64_t from = cursor;

	/* Entry i is rewritten as entry i + n, which may be under way while the head is h2. */
	if (h2 + 1 > n && from < h2 + 1 - n)
		from = h2 + 1 - n;
	return from < h1 ? from : h1;
}

void regions_free_rings(struct rproc *p)
{
	free(p->rings);
	p->rings = NULL;
	p->nrings = p->caprings = 0;
	u64map__clear(&p->ring_index);
}

static uint64_t to_mono(const struct clock_map *c, uint64_t ticks)
{
	if (c->ticks_are_ns)
		return ticks;
	return regions_ticks_ns(ticks, c->tsc, c->ns, c->scale);
}

/* The cursor of the block at addr; a new one starts at ring_start, but only for a block of this
 * epoch (another epoch's entries are not this recording's), with the thread the block names
 * until a PERCH_RING_THREAD entry says (a thread that took its block before the timeline was on
 * wrote none). NULL when it has none, or past REGIONS_MAX_BLOCKS cursors (refused, counted: a
 * list that brings new fake blocks at every read). */
static struct ring_cursor *cursor_of(struct regions *rg, struct rproc *p,
				     const struct perch_abi_thread *head, uint64_t addr,
				     uint64_t ring_start)
{
	struct ring_cursor *c;
	uint64_t idx;

	if (u64map__get(&p->ring_index, addr, &idx))
		return &p->rings[idx];
	if (head->epoch != p->reg.epoch)
		return NULL;
	if (p->nrings >= REGIONS_MAX_BLOCKS) {
		rg->stats[REGIONS_THREADS_REFUSED]++;
		return NULL;
	}
	if (vec_grow(&p->rings, &p->caprings, p->nrings + 1, sizeof(*p->rings), 16) ||
	    u64map__put(&p->ring_index, addr, p->nrings))
		return NULL;
	c = &p->rings[p->nrings++];
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->next = ring_start;
	c->tid = head->tid;
	return c;
}

/* Entries [from, to) of the ring at addr (to - from < PERCH_RING_ENTRIES), in one or two reads. */
static int read_entries(uint32_t pid, uint64_t addr, uint64_t from, uint64_t to,
			struct perch_abi_event *out)
{
	uint64_t n = to - from, first = PERCH_RING_ENTRIES - from % PERCH_RING_ENTRIES;

	if (first > n)
		first = n;
	if (first && regions_peek(pid, addr + ENTRY_AT(from), out, first * sizeof(*out)))
		return -1;
	if (n > first &&
	    regions_peek(pid, addr + ENTRY_AT(0), out + first, (n - first) * sizeof(*out)))
		return -1;
	return 0;
}

/* One entry into a span (false: not one, or its thread unknown). */
static bool to_span(struct regions *rg, struct rproc *p, struct ring_cursor *c,
		    const struct clock_map *clk, const struct perch_abi_event *e,
		    struct rec_span *s)
{
	uint32_t kind = e->word >> PERCH_RING_KIND_SHIFT, id = e->word & PERCH_RING_ID_MASK;

	switch (kind) {
	case PERCH_RING_THREAD:
		c->tid = (uint32_t)e->value;
		return false;
	case PERCH_RING_SIZE:
		c->size = e->value;
		c->has_size = true;
		return false;
	case PERCH_RING_BEGIN:
	case PERCH_RING_END:
	case PERCH_RING_MARK:
		break;
	default:
		return false;
	}
	*s = (struct rec_span){.pid = p->pid, .tid = c->tid, .time_ns = to_mono(clk, e->value)};
	s->kind = kind == PERCH_RING_BEGIN ? REC_SPAN_BEGIN
		  : kind == PERCH_RING_END ? REC_SPAN_END
					   : REC_SPAN_MARK;
	s->name = regions_name_string(rg, p, id);
	if (kind == PERCH_RING_BEGIN)
		s->size = e->aux == UINT32_MAX && c->has_size ? c->size : e->aux;
	c->has_size = false;
	return c->tid != 0;
}

/* The entries e[0 .. n) in spans; those from the first timed one at or past limit on wait for
 * the next read (they belong to the next window). A time outside the run is garbage: that entry
 * is refused (counted), never waited for. Returns how many were taken. */
static uint64_t take_entries(struct regions *rg, struct rproc *p, struct ring_cursor *c,
			     const struct clock_map *clk, const struct perch_abi_event *e,
			     uint64_t n, uint64_t limit)
{
	struct rec_span s;
	uint64_t i;

	for (i = 0; i < n; i++) {
		bool timed = e[i].word >> PERCH_RING_KIND_SHIFT <= PERCH_RING_MARK;
		uint64_t t = timed ? to_mono(clk, e[i].value) : 0;

		if (timed && !regions_time_in_run(rg, t, clk->ns)) {
			rg->stats[REGIONS_SPANS_REFUSED]++;
			c->has_size = false;
			continue;
		}
		if (timed && t >= limit)
			break;
		if (to_span(rg, p, c, clk, &e[i], &s))
			rec_writer__span(rg->w, &s);
		else if (timed)
			rg->stats[REGIONS_SPANS_LOST]++; /* its thread is unknown */
	}
	return i;
}

/* The entries of one block since perch last read it, up to limit; how many it read. */
static uint64_t read_ring(struct regions *rg, struct rproc *p, uint64_t addr,
			  const struct perch_abi_thread *bhead, const struct clock_map *clk,
			  struct perch_abi_event *buf, uint64_t limit)
{
	uint64_t head[2], h2, copied, from;
	struct ring_cursor *c;

	if (regions_peek(p->pid, addr + RING_AT, head, sizeof(head)))
		return 0;
	c = cursor_of(rg, p, bhead, addr, head[1]);
	if (!c)
		return 0;
	if (head[0] < c->next) /* not what the runtime writes: go on from where it is */
		c->next = head[0];
	/* buf[0] is entry `copied`: the oldest that may still be intact. */
	copied = head[0] - c->next >= PERCH_RING_ENTRIES ? head[0] - (PERCH_RING_ENTRIES - 1)
							 : c->next;
	if (copied == head[0] || read_entries(p->pid, addr, copied, head[0], buf) ||
	    regions_peek(p->pid, addr + RING_AT, &h2, sizeof(h2)))
		return 0;
	from = regions_ring_valid_from(copied, head[0], h2, PERCH_RING_ENTRIES);
	rg->stats[REGIONS_SPANS_LOST] += from - c->next;
	if (from > c->next)
		c->has_size = false;
	c->next = from + take_entries(rg, p, c, clk, buf + (from - copied), head[0] - from, limit);
	return head[0] - copied;
}

/* Each block of the thread list as collect walked it (each once), up to REGIONS_SPAN_BUDGET
 * entries a read: the rest wait in their rings for the next read. */
void regions_read_spans(struct regions *rg, struct rproc *p)
{
	struct perch_abi_thread *head = rg->head;
	struct clock_map clk = {.scale = regions_ns_per_tick(rg, p)};
	uint64_t limit = UINT64_MAX, read = 0;

	if (!p->timeline)
		return;
	/* A process done (its exit handshake) is read to its last span. */
	if (rg->spans_until && p->state != P_DONE)
		limit = rg->spans_until;
	clk.ticks_are_ns = p->reg.tick_unit == PERCH_TICKS_NS;
	regions_clock_now(&clk.tsc, &clk.ns);
	for (size_t k = 0; k < p->walk.nblocks && read < REGIONS_SPAN_BUDGET; k++) {
		uint64_t addr = p->walk.blocks[k];

		if (regions_peek(p->pid, addr, head, offsetof(struct perch_abi_thread, node_at)))
			break;
		read += read_ring(rg, p, addr, head, &clk, rg->ring, limit);
	}
}
