/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython 3.11+ location tables (a code object's co_linetable; the format: CPython's
 * Objects/locations.md): which source line a code unit of the code object belongs to. The bytes
 * come from a profiled process: every read is bounded, every value checked.
 */
#ifndef PERCH_SYMBOLIZE_PYLINE_H
#define PERCH_SYMBOLIZE_PYLINE_H

#include <stddef.h>
#include <stdint.h>

/* The line of code unit `unit` (an instruction's index, in 2-byte code units from
 * co_code_adaptive) in table; firstlineno: co_firstlineno. 0 and *line set; -ENOENT when the table
 * gives that unit no line; -EINVAL when the table is damaged or ends before unit. */
int pyline_find(const uint8_t *table, size_t len, int firstlineno, uint32_t unit, int *line);

#endif /* PERCH_SYMBOLIZE_PYLINE_H */
