/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch symbolize -e FILE [-i] [--no-demangle] [ADDR...]`: addresses of one ELF file to
 * function and file:line, with the inline chain under -i, like `addr2line -f -i -e FILE`.
 */
#ifndef PERCH_SYMCMD_H
#define PERCH_SYMCMD_H

/* argv[0] is "symbolize". Returns perch's exit status (enum perch_exit). */
int symcmd__run(int argc, char **argv);

#endif /* PERCH_SYMCMD_H */
