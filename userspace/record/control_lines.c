// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --control FIFO's lines of control_lines.h: cut into lines, bounded, parsed.
 */
#include <string.h>
#include "control_lines.h"

static const char *const words[] = {
	[CONTROL_ENABLE] = "enable", [CONTROL_DISABLE] = "disable", [CONTROL_PING] = "ping"};

enum control_cmd control_lines__parse(const char *line, size_t len)
{
	for (int i = CONTROL_ENABLE; i <= CONTROL_PING; i++)
		if (len == strlen(words[i]) && !memcmp(line, words[i], len))
			return (enum control_cmd)i;
	return CONTROL_UNKNOWN;
}

/* The line is complete: its command, then its text made printable, to fn; start over. */
static void end_line(struct control_lines *l, control_line_fn *fn, void *ctx)
{
	enum control_cmd cmd = l->cut ? CONTROL_UNKNOWN : control_lines__parse(l->line, l->len);

	for (size_t i = 0; i < l->len; i++)
		if ((unsigned char)l->line[i] < 0x20 || (unsigned char)l->line[i] >= 0x7f)
			l->line[i] = '?';
	l->line[l->len] = '\0';
	l->len = 0;
	l->cut = false;
	fn(ctx, cmd, l->line);
}

void control_lines__feed(struct control_lines *l, const char *buf, size_t n, control_line_fn *fn,
			 void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n')
			end_line(l, fn, ctx);
		else if (l->len + 1 < sizeof(l->line))
			l->line[l->len++] = buf[i];
		else
			l->cut = true;
	}
}
