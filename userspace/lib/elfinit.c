// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libelf's version handshake, once (see elfinit.h). */
#include <errno.h>
#include <pthread.h>
#include <libelf.h>

#include "elfinit.h"
#include "log.h"

static int elf_init_err;

static void elf_init_once(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE) {
		elf_init_err = -ENOTSUP;
		log_warn("libelf initialization: %s", elf_errmsg(-1));
	}
}

int perch_elf_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, elf_init_once);
	return elf_init_err;
}
