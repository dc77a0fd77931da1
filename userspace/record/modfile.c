// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A module's file (see modfile.h): opened through the process's map_files first, its loadable
 * segments, and a file address placed through a mapping.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "lib/elfinit.h"
#include "modfile.h"

static bool scan_path(const char *path, bool (*scan)(void *ctx, Elf *e), void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found = false;
	Elf *e;

	if (fd < 0)
		return false;
	if (!perch_elf_init()) {
		e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		found = e && elf_kind(e) == ELF_K_ELF && scan(ctx, e);
		elf_end(e);
	}
	close(fd);
	return found;
}

void modfile_scan(uint32_t pid, const struct proc_map *m, bool (*scan)(void *ctx, Elf *e),
		  void *ctx)
{
	char *path = NULL;
	bool found = false;

	if (asprintf(&path, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end) > 0)
		found = scan_path(path, scan, ctx);
	free(path);
	if (!found && m->path && m->path[0] == '/')
		scan_path(m->path, scan, ctx);
}

void modfile_loads(Elf *e, struct modfile_loads *out)
{
	size_t n;

	out->n = 0;
	if (elf_getphdrnum(e, &n))
		return;
	for (size_t i = 0; i < n && out->n < MODFILE_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->load[out->n].vaddr = ph.p_vaddr;
		out->load[out->n].offset = ph.p_offset;
		out->load[out->n].filesz = ph.p_filesz;
		out->n++;
	}
}

bool modfile_place(const struct modfile_loads *l, const struct proc_map *m, uint64_t vaddr,
		   uint64_t *addr)
{
	for (uint32_t i = 0; i < l->n; i++) {
		const typeof(l->load[0]) *s = &l->load[i];

		if (m->pgoff < s->offset || m->pgoff >= s->offset + (s->filesz ? s->filesz : 1))
			continue;
		/* m->start is the file's address s->vaddr + (pgoff - offset) */
		*addr = m->start - (s->vaddr + (m->pgoff - s->offset)) + vaddr;
		return true;
	}
	return false;
}
