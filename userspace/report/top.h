/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch top`'s table (report/top.c): the functions of the samples a recording writer has
 * counted, drain by drain, self and total over the last refresh interval and since the start,
 * printed as a screen of rows. The terminal (raw mode, clearing) is the CLI's.
 */
#ifndef PERCH_REPORT_TOP_H
#define PERCH_REPORT_TOP_H

#include <stdint.h>
#include <stdio.h>

struct rec_writer;
struct top_table;

struct top_view {
	double interval_s;  /* the refresh interval the "last" columns cover */
	unsigned int rows;  /* function rows at most */
	unsigned int width; /* terminal columns (names are cut to fit); 0: no limit */
};

struct top_table *top_table__new(void); /* NULL + errno */
void top_table__free(struct top_table *t);
/* The counts w holds since its last window (format/writer_peek.h), into the current interval.
 * 0 or -ENOMEM. */
int top_table__add(struct top_table *t, const struct rec_writer *w);
/* Print the table (functions by self in the interval, then since the start), then close the
 * interval: its counts join the totals. */
void top_table__print(struct top_table *t, const struct top_view *v, FILE *out);
/* Samples in the current interval and since the start (the interval's included). */
void top_table__samples(const struct top_table *t, uint64_t *interval, uint64_t *all);

#endif /* PERCH_REPORT_TOP_H */
