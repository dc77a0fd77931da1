/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch report`: the text report (header, regions, top functions by self and total, bounded
 * call tree), folded stacks, the CSV of regions, and the short summary `perch record` prints when
 * the command exits.
 */
#ifndef PERCH_REPORT_H
#define PERCH_REPORT_H

#include <stdio.h>
#include "format/recording.h"

enum report_format {
	REPORT_TEXT = 0,
	REPORT_FOLDED,
	REPORT_CSV,   /* the regions table: one row per region and thread, and over all threads */
	REPORT_STATS, /* "key value" lines: the recording's META, STATS and END keys, and counts */
};

struct report_opts {
	size_t sz;
	enum report_format format;
	double min_percent; /* call tree: hide nodes below this share of all samples */
	unsigned int top;   /* rows in each top-functions table */
	bool lines;	    /* functions by source line (file:line) */
	bool no_demangle;   /* keep C++ names mangled */
	const char *region; /* text, folded: only samples inside this region (NULL: all) */
};

int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out);
/* 0 when the recording has a region called name, -ENOENT when not, -ENOMEM. */
int report__find_region(const struct recording *r, const char *name);
/* The recording's region names in name order, ", " between them ("" for none); the caller frees
 * it. NULL on ENOMEM. */
char *report__region_names(const struct recording *r);
void report__summary(const struct recording *r, const char *path, FILE *out);

#endif /* PERCH_REPORT_H */
