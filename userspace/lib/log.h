/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Diagnostics on stderr, one line each, prefixed "perch: ". */
#ifndef PERCH_LOG_H
#define PERCH_LOG_H

#include <stdarg.h>

void log_set_verbose(int level);
int log_verbose(void);
void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A library's own message (libbpf's print callback), which brings its prefix and newline: passed
 * through as it is, at debug level (verbosity >= level). Returns what vfprintf() returns, or 0. */
int log_vlibrary(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* A usage error of `perch [CMD]`: one line pointing at the help; returns PERCH_EXIT_USAGE. */
int log_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* PERCH_LOG_H */
