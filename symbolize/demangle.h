/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * C++ name demangling for the symbolizer, through the C++ runtime's __cxa_demangle.
 */
#ifndef PERCH_DEMANGLE_H
#define PERCH_DEMANGLE_H

#include <stdbool.h>

/*
 * The demangled form of raw (a mangled C++ name), malloc'd; NULL when raw is not a mangled name,
 * cannot be demangled, or no C++ runtime is available. The caller frees it.
 */
char *demangle__name(const char *raw);

/* Whether demangling is possible at all: a C++ runtime was found (see demangle.c). */
bool demangle__available(void);

#endif /* PERCH_DEMANGLE_H */
