// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fuzz harness for `perch report` (userspace/report/) on whatever the loader accepts: every
 * output of its table, with and without lines and a region filter, and the summary
 * `perch record` prints, as userspace/cli/ drives them. Nothing may crash or trip a sanitizer.
 *
 *   make fuzz && build-fuzz/fuzz_report -max_total_time=60 CORPUS_DIR tests/corpus
 *
 * make check-unit runs it over tests/corpus/ without libFuzzer (tests/fuzz_replay.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "report/report.h"

static FILE *sink(void)
{
	static FILE *out;

	if (!out)
		out = fopen("/dev/null", "w");
	return out;
}

/* A region the recording names (its first), as --region=NAME would give. */
static const char *some_region(const struct recording *r)
{
	return r->nregion_names ? recording__string(r, r->region_names[0]) : NULL;
}

static void print_as(const struct recording *r, enum report_format format, bool lines,
		     const char *region, bool keyed)
{
	struct report_opts o = {.format = format,
				.min_percent = 0,
				.top = 5,
				.lines = lines,
				.region = region,
				.by_function = true};
	int err;

	if (keyed) { /* --sort=comm,pid,tid,function */
		o.keys[0] = PROFILE_KEY_COMM;
		o.keys[1] = PROFILE_KEY_PID;
		o.keys[2] = PROFILE_KEY_TID;
		o.nkeys = 3;
	}
	if (region && report__find_region(r, region))
		return; /* cli/report.c stops at an unknown region */
	err = report__print(r, "fuzz.data", &o, sink());
	fuzz_check(!err || err == -ENOMEM);
}

static void report_all(const struct recording *r, int err, size_t size)
{
	const char *region;
	char *names;

	(void)err;
	(void)size;
	if (!r || !sink())
		return;
	region = some_region(r);
	for (int f = 0; f < REPORT_NR; f++) { /* every output of report/'s table */
		print_as(r, f, false, NULL, false);
		print_as(r, f, true, region, false);
		print_as(r, f, false, NULL, true);
	}
	report__summary(r, "fuzz.data", sink());
	names = report__region_names(r);
	free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_load(data, size, report_all);
	return 0;
}
