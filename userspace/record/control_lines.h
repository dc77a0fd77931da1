/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The --control FIFO's lines (record/control.c reads them): bytes as they come, a read at a
 * time, cut into lines, each line one of perf's commands. Anyone who can write the FIFO writes
 * these bytes: a line longer than any command is cut (and is then unknown), nothing else is
 * kept, and the text handed on for a message is printable ASCII.
 */
#ifndef PERCH_RECORD_CONTROL_LINES_H
#define PERCH_RECORD_CONTROL_LINES_H

#include <stdbool.h>
#include <stddef.h>

enum control_cmd { CONTROL_UNKNOWN, CONTROL_ENABLE, CONTROL_DISABLE, CONTROL_PING };

struct control_lines {
	char line[64]; /* the line read so far, its first 63 bytes */
	size_t len;
	bool cut; /* it was longer */
};

/* A complete line: its command and its text for a message (NUL-terminated, without its
 * newline, cut to 63 bytes, anything but printable ASCII shown as '?'). */
typedef void control_line_fn(void *ctx, enum control_cmd cmd, const char *text);

/* The lines that buf[0..n) completes, after what came before, each to fn in order. */
void control_lines__feed(struct control_lines *l, const char *buf, size_t n, control_line_fn *fn,
			 void *ctx);
/* The command line[0..len) (without its newline) is: exactly one of perf's words. */
enum control_cmd control_lines__parse(const char *line, size_t len);

#endif /* PERCH_RECORD_CONTROL_LINES_H */
