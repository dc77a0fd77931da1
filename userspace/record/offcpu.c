// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --off-cpu, a part of the recording run (run.h): the sampler's blocked times (sampler_offcpu.c)
 * into the recording's OFFCPU block, with --timeline each block as a span into OFFSPANS
 * (format/offcpu.c, format/offspans.c), and what it counted into STATS.
 */
#include "format/keys.h"
#include "record/sampler/sampler_offcpu.h"
#include "run.h"

/* A key's blocked time. */
static void add_offcpu(void *ctx, uint32_t key, uint64_t ns)
{
	struct record_run *r = ctx;

	rec_writer__offcpu(r->w, key, ns);
}

/* One block's span (past --max-size: dropped, counted by the writer). */
static void add_offspan(void *ctx, uint32_t key, uint64_t start_ns, uint64_t end_ns)
{
	struct record_run *r = ctx;

	rec_writer__offspan(r->w, key, start_ns, end_ns);
}

static int offcpu_open(struct record_run *r)
{
	sampler__on_off_cpu(r->sp, add_offcpu, r);
	sampler__on_off_span(r->sp, add_offspan, r);
	return 0;
}

/* A block whose key got no key id is lost too; with --timeline, the spans written, lost (ring
 * full, or no key id) and dropped past --max-size. */
static size_t offcpu_stats(const struct record_run *r, const struct run_counters *c,
			   struct rec_kv *kv)
{
	uint64_t ring = c->ok[PERCH_STAT_OFFSPAN_LOST] ? c->totals[PERCH_STAT_OFFSPAN_LOST] : 0;
	size_t n = 0;

	if (!r->o->off_cpu)
		return 0;
#define OFFCPU_KV(k, i)                                                                         \
	if (c->ok[i])                                                                           \
		kv[n++] = run_stat_kv(REC_STAT_##k,                                             \
				      c->totals[i] + (i == PERCH_STAT_OFF_CPU_LOST              \
							      ? sampler__off_cpu_unkeyed(r->sp) \
							      : 0));
	REC_STATS_OFFCPU(OFFCPU_KV)
	if (!r->o->timeline)
		return n;
	kv[n++] = run_stat_kv(REC_STAT_off_cpu_spans, sampler__off_spans(r->sp));
	kv[n++] =
		run_stat_kv(REC_STAT_off_cpu_spans_lost, ring + sampler__off_spans_unkeyed(r->sp));
	kv[n++] = run_stat_kv(REC_STAT_off_cpu_spans_dropped, rec_writer__offspans_dropped(r->w));
	return n;
}

const struct record_part run_offcpu_part = {
	.name = "off-CPU",
	.open = offcpu_open,
	.stats = offcpu_stats,
};
