/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Escaping the bytes the target controls (function, region, thread and module names, command
 * lines, paths, a server's reply) for each kind of output: one rule per kind, written once here,
 * applied where an output writes a name.
 *
 *   terminal  control bytes (C0, DEL, C1 as UTF-8) and bytes that are no UTF-8 as \xNN, a line
 *             break and a tab in a name as \n and \t: no escape sequence reaches a terminal raw
 *   JSON      '"' and '\\' escaped, control bytes as \u00XX, bytes that are no UTF-8 as \ufffd
 *   XML       & < > " ' as entities; bytes that are no UTF-8, control bytes but tab and line
 *             breaks, U+FFFE and U+FFFF (none is an XML character) as U+FFFD
 *   CSV       RFC 4180 quoting; a field that starts with = + - @ tab or CR (a spreadsheet
 *             formula) gets a leading ' (OWASP's rule); bytes that are no UTF-8 and control
 *             bytes but tab and line breaks as U+FFFD
 *   protobuf  strings are UTF-8 (strict decoders refuse others): bytes that are no UTF-8 as
 *             U+FFFD
 */
#ifndef PERCH_ESCAPE_H
#define PERCH_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the valid UTF-8 sequence at s (NUL-terminated), 0 when it is not one (overlong,
 * surrogate, past U+10FFFF, cut short); 1 for an ASCII byte. */
size_t esc_utf8_len(const char *s);
/* Whether all of s is valid UTF-8. */
bool esc_utf8_valid(const char *s);
/* A copy of s with each byte that is not part of valid UTF-8 as U+FFFD, malloc'd; NULL + errno. */
char *esc_utf8_dup(const char *s);

/* s inside a JSON string (the quotes are the caller's); and s quoted. */
void esc_json(FILE *f, const char *s);
void esc_json_str(FILE *f, const char *s);
/* s as XML character data or inside a quoted attribute value. */
void esc_xml(FILE *f, const char *s);
/* s as one CSV field; quote: always quoted (else only where RFC 4180 needs it). */
void esc_csv(FILE *f, const char *s, bool quote);

/* s, or its first n bytes, on a terminal (a name inside a line). */
void esc_term(FILE *f, const char *s);
void esc_term_n(FILE *f, const char *s, size_t n);
/* The same into buf, NUL-terminated (cut short when it needs more than len bytes: 4 x strlen(s)
 * + 1 always do); buf. */
char *esc_term_buf(char *buf, size_t len, const char *s);
/* A stream that writes to out what it is given under the terminal rule, line breaks and tabs
 * passed as they are: a whole text output through it (fclose() it; out stays open). Since names
 * are the only bytes of an output the target controls, what perch itself writes (UTF-8, line
 * structure) comes through unchanged. NULL + errno. */
FILE *esc_term_stream(FILE *out);

#endif /* PERCH_ESCAPE_H */
