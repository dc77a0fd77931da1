// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MiniDebugInfo (gdb's name; Fedora and others ship it): a module's .gnu_debugdata section holds
 * an xz-compressed ELF file whose .symtab names the local functions the stripped module's .dynsym
 * leaves out. Decompressed with liblzma into memory and indexed by elfsyms.c like any symbol
 * table; the buffer is dropped once the names are copied. Corrupt or oversized data is ignored
 * (the module keeps its other names), counted by the caller and logged.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/vec.h"
#include "module.h"

/* A compressed symbol table inflating past this is not one: refuse it rather than fill memory. */
#define MINIDEBUG_MAX (256u << 20)

/* .gnu_debugdata's bytes (borrowed from libelf); false when the module has none. */
static bool find_debugdata(Elf *elf, const uint8_t **data, size_t *size)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".gnu_debugdata"))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || !d->d_size)
			return false;
		*data = d->d_buf;
		*size = d->d_size;
		return true;
	}
	return false;
}

/* Inflate the xz stream [in, in + len) into *out (malloc'd), *out_len bytes. 0, -EBADMSG (not a
 * complete xz stream), -EFBIG, -ENOMEM. */
static int unxz(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	lzma_stream z = LZMA_STREAM_INIT;
	size_t cap = 0;
	lzma_ret ret;
	int err = 0;

	*out = NULL;
	*out_len = 0;
	if (lzma_stream_decoder(&z, MINIDEBUG_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	z.next_in = in;
	z.avail_in = len;
	do {
		if (*out_len == cap) {
			if (cap >= MINIDEBUG_MAX) {
				err = -EFBIG;
				break;
			}
			if (vec_grow(out, &cap, cap + 1, 1, 4 * len + 4096)) {
				err = -ENOMEM;
				break;
			}
		}
		z.next_out = *out + *out_len;
		z.avail_out = cap - *out_len;
		ret = lzma_code(&z, LZMA_FINISH);
		*out_len = cap - z.avail_out;
	} while (ret == LZMA_OK);
	if (!err && ret != LZMA_STREAM_END)
		err = ret == LZMA_MEM_ERROR ? -ENOMEM : -EBADMSG;
	lzma_end(&z);
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

int minidebug_load(Elf *elf, const char *path, struct sym_module *d)
{
	const uint8_t *packed;
	uint8_t *buf = NULL;
	size_t len, n;
	Elf *mini;
	int err;

	if (!find_debugdata(elf, &packed, &len))
		return 0;
	err = unxz(packed, len, &buf, &n);
	if (err) {
		log_warn("symbolize: %s: .gnu_debugdata: %s (ignored)", path,
			 err == -EBADMSG ? "not a valid, complete xz stream" : strerror(-err));
		return err;
	}
	mini = elf_memory((char *)buf, n);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		log_warn("symbolize: %s: .gnu_debugdata: not an ELF file (ignored)", path);
		err = -EBADMSG;
	} else {
		err = elfsyms_index_symbols(d, mini, path);
		if (err == -ENOEXEC)
			err = -EBADMSG;
	}
	elf_end(mini);
	free(buf);
	return err;
}
