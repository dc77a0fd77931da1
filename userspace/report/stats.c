// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --format=stats: every count the recording holds as "key value" lines, for scripts and tests
 * (tests/lib.sh: stat FILE KEY).
 */
#include <inttypes.h>
#include "common.h"

/* One "key value" line per key of format/keys.h the recording holds (every STATS key, 0 when
 * absent), then the counts the text header derives. */
int report_stats(const struct recording *r, const char *path, const struct report_opts *o,
		 FILE *out)
{
	size_t nthreads, nproc = report_count_processes(r, &nthreads);
	struct report_time_axis t;
	uint64_t v;

	(void)path;
	(void)o;
	for (int k = 0; k < REC_META_NR; k++) {
		if (report_meta(r, k))
			fprintf(out, "%s %s\n", rec_meta_keys[k], report_meta(r, k));
	}
	for (int k = 0; k < REC_STAT_NR; k++) {
		/* The writer's counters, only where a writer of version 4 wrote them. */
		if (k >= REC_STAT_timeline_events_dropped &&
		    !recording__stat(r, rec_stat_keys[k], &v))
			continue;
		fprintf(out, "%s %" PRIu64 "\n", rec_stat_keys[k], report_stat(r, k));
	}
	for (int k = 0; k < REC_END_NR; k++) {
		if (report_end(r, k, &v))
			fprintf(out, "%s %" PRIu64 "\n", rec_end_keys[k], v);
	}
	fprintf(out, "sampled %" PRIu64 "\nprocesses %zu\nthreads %zu\n", report_sample_total(r),
		nproc, nthreads);
	if (report_time_axis(r, &t))
		fprintf(out,
			"time_start_ns %" PRIu64 "\ntime_end_ns %" PRIu64 "\nwindows %zu\n"
			"window_ns %" PRIu64 "\nevents %zu\nspans %zu\n",
			t.start_ns, t.end_ns, t.nwindows, t.resolution_ns, r->nevents, r->nspans);
	return 0;
}
