// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Diagnostics on stderr: errors and warnings always, debug lines with -v; each one line, under
 * the terminal rule (escape.h): names and a server's reply in it come from the target. */
#include <stdarg.h>
#include <stdio.h>
#include "escape.h"
#include "exitcodes.h"
#include "log.h"

static int verbose;

void log_set_verbose(int level)
{
	verbose = level;
}

int log_verbose(void)
{
	return verbose;
}

__attribute__((format(printf, 2, 0))) static void vlog(const char *prefix, const char *fmt,
						       va_list ap)
{
	char line[1024], shown[4 * sizeof(line)];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "perch: %s%s\n", prefix, esc_term_buf(shown, sizeof(shown), line));
}

int log_vlibrary(int level, const char *fmt, va_list ap)
{
	return verbose >= level ? vfprintf(stderr, fmt, ap) : 0;
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}

int log_usage(const char *cmd, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (cmd)
		log_err("%s: %s (see perch %s --help)", cmd, line, cmd);
	else
		log_err("%s (see perch --help)", line);
	return PERCH_EXIT_USAGE;
}
