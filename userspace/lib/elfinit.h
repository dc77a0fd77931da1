/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libelf's version handshake, done once for the process by whichever part opens an ELF file
 * first (the symbolizer, the unwind table builder, the region finder, the unwinder's vDSO copy).
 */
#ifndef PERCH_ELFINIT_H
#define PERCH_ELFINIT_H

/* 0, or -ENOTSUP (logged once) when this libelf cannot speak EV_CURRENT. Thread-safe. */
int perch_elf_init(void);

#endif /* PERCH_ELFINIT_H */
