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
	uint64_t v;

	(void)path;
	(void)o;
	for (int k = 0; k < REC_META_NR; k++) {
		if (report_meta(r, k))
			fprintf(out, "%s %s\n", rec_meta_keys[k], report_meta(r, k));
	}
	for (int k = 0; k < REC_STAT_NR; k++)
		fprintf(out, "%s %" PRIu64 "\n", rec_stat_keys[k], report_stat(r, k));
	for (int k = 0; k < REC_END_NR; k++) {
		if (report_end(r, k, &v))
			fprintf(out, "%s %" PRIu64 "\n", rec_end_keys[k], v);
	}
	fprintf(out, "sampled %" PRIu64 "\nprocesses %zu\nthreads %zu\n", report_sample_total(r),
		nproc, nthreads);
	return 0;
}
