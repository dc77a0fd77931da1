// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for the recording loader: any bytes must load or be refused with a documented
 * error, never crash, and whatever loads must only hold ids that resolve (region frames, REGIONS
 * trees and version 4's windows, timeline, spans and modules included).
 *
 *   make fuzz && build-fuzz/fuzz_recording -max_total_time=60 CORPUS_DIR tests/corpus
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "fuzz_common.h"

static void check_ids(const struct recording *r)
{
	fuzz_check(r->nstrings >= 1 && r->strings[0][0] == '\0');
	for (size_t i = 0; i < r->nframes; i++) {
		fuzz_check(r->frames[i].kind <= REC_FRAME_REGION);
		fuzz_check(r->frames[i].module < r->nstrings && r->frames[i].name < r->nstrings);
	}
	for (size_t i = 0; i < r->nthreads; i++)
		fuzz_check(r->threads[i].comm < r->nstrings);
	for (size_t i = 0; i < r->nsamples; i++) {
		const struct rec_sample *s = &r->samples[i];

		for (uint32_t j = 0; j < s->nframes; j++)
			fuzz_check(s->frames[j] < r->nframes &&
				   r->frames[s->frames[j]].kind != REC_FRAME_REGION);
		for (uint32_t j = 0; j < s->nregions; j++)
			fuzz_check(s->regions[j] && s->regions[j] < r->nstrings);
	}
	for (size_t i = 0; i < r->nregion_names; i++)
		fuzz_check(r->region_names[i] && r->region_names[i] < r->nstrings);
}

/* REGIONS: node 0 is the root (name 0), every other names a string and has an earlier parent. */
static void check_regions(const struct recording *r)
{
	for (size_t i = 0; i < r->nrthreads; i++) {
		const struct rec_region_thread *t = &r->rthreads[i];

		fuzz_check(t->nnodes >= 1 && !t->nodes[0].name);
		for (uint32_t j = 1; j < t->nnodes; j++) {
			fuzz_check(t->nodes[j].name && t->nodes[j].name < r->nstrings);
			fuzz_check(t->nodes[j].parent < j);
		}
	}
}

/* Version 4: windows in time order, their counts on samples ascending; events in time order on
 * samples; spans and modules naming defined strings. */
static void check_time_axis(const struct recording *r)
{
	for (size_t i = 0; i < r->nwindows; i++) {
		const struct rec_window *w = &r->windows[i];

		fuzz_check(w->start_ns <= w->end_ns);
		fuzz_check(!i || r->windows[i - 1].end_ns <= w->start_ns);
		for (uint32_t j = 0; j < w->ncounts; j++) {
			fuzz_check(w->counts[j].sample < r->nsamples);
			fuzz_check(!j || w->counts[j - 1].sample < w->counts[j].sample);
		}
	}
	for (size_t i = 0; i < r->nevents; i++) {
		fuzz_check(r->events[i].sample < r->nsamples);
		fuzz_check(!i || r->events[i - 1].time_ns <= r->events[i].time_ns);
	}
	for (size_t i = 0; i < r->nspans; i++)
		fuzz_check(r->spans[i].kind <= REC_SPAN_MARK && r->spans[i].name &&
			   r->spans[i].name < r->nstrings);
	for (size_t i = 0; i < r->nmodules; i++)
		fuzz_check(r->modules[i].path && r->modules[i].path < r->nstrings &&
			   r->modules[i].build_id < r->nstrings);
}

/* Touch every key and value, so the sanitizers see a bad pointer among them. */
static void check_kv(const struct rec_kv *kv, size_t n, bool with_str)
{
	for (size_t i = 0; i < n; i++)
		fuzz_check(kv[i].key && (!with_str || kv[i].str));
}

static void check_loaded(const struct recording *r, int err, size_t size)
{
	if (!r) {
		fuzz_check(err == -EPROTO || err == -EPROTONOSUPPORT);
		return;
	}
	fuzz_check(!err || err == -EBADMSG || err == -ENODATA);
	fuzz_check(r->good_size <= size);
	check_ids(r);
	check_regions(r);
	check_time_axis(r);
	check_kv(r->meta, r->nmeta, true);
	check_kv(r->stats, r->nstats, false);
	check_kv(r->end, r->nend, false);
	recording__meta(r, "command");
	recording__stat(r, "lost", NULL);
	recording__end(r, "duration_ns", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load(data, size, check_loaded);
	return 0;
}
