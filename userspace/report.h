/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch report`: the text report (header, top functions by self and total, bounded call tree),
 * folded stacks, and the short summary `perch record` prints when the command exits.
 */
#ifndef PERCH_REPORT_H
#define PERCH_REPORT_H

#include <stdio.h>
#include "recording.h"

enum report_format {
	REPORT_TEXT = 0,
	REPORT_FOLDED,
};

struct report_opts {
	size_t sz;
	enum report_format format;
	double min_percent; /* call tree: hide nodes below this share of all samples */
	unsigned int top;   /* rows in each top-functions table */
	bool lines;	    /* functions by source line (file:line) */
	bool no_demangle;   /* keep C++ names mangled */
};

int report__print(const struct recording *r, const char *path, const struct report_opts *o,
		  FILE *out);
void report__summary(const struct recording *r, const char *path, FILE *out);

#endif /* PERCH_REPORT_H */
