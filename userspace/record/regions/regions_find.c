// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: finding the runtime's registry in a module (see regions_impl.h). What a file
 * holds (the registry's ELF address and the loadable segments to place it) lives in its module
 * slot of the process table, so a library many processes map is read once.
 *
 * The runtime puts its registry in an ELF section of its own (".perch_registry"), so perch finds
 * it in stripped executables too; a program linked with libperch.so usually holds a copy of it
 * (a copy relocation), found through the program's dynamic symbol table.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/elfinit.h"
#include "regions_impl.h"

#define REGISTRY_SECTION ".perch_registry"
#define MAX_LOADS	 8

/* What a file holds, in its module slot (procs.h). */
struct module {
	bool has;
	uint64_t vaddr;
	uint32_t nloads;
	struct {
		uint64_t vaddr, offset, filesz;
	} load[MAX_LOADS];
};

/* A defined perch_registry (of ABI 3's size at least) in the dynamic symbol table: where the
 * live registry is when the executable took a copy of libperch.so's (a copy relocation), and in
 * libperch.so. */
static bool dynsym_registry(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t *vaddr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_size < REG_V3_SIZE)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (name && !strcmp(name, "perch_registry")) {
			*vaddr = sym.st_value;
			return true;
		}
	}
	return false;
}

static void scan_module(struct module *mod, const char *path)
{
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, n;
	uint64_t section = 0, dynsym = 0;
	bool in_section = false, in_dynsym = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (perch_elf_init())
		goto out;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !in_dynsym)
			in_dynsym = dynsym_registry(e, scn, &sh, &dynsym);
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_ALLOC) && name && !strcmp(name, REGISTRY_SECTION) &&
		    sh.sh_size >= REG_V3_SIZE) {
			in_section = true;
			section = sh.sh_addr;
		}
	}
	/* The section finds it in stripped programs; an exported symbol takes precedence. */
	mod->has = in_section || in_dynsym;
	mod->vaddr = in_dynsym ? dynsym : section;
	if (mod->has && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n && mod->nloads < MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			mod->load[mod->nloads].vaddr = ph.p_vaddr;
			mod->load[mod->nloads].offset = ph.p_offset;
			mod->load[mod->nloads].filesz = ph.p_filesz;
			mod->nloads++;
		}
	}
out:
	elf_end(e);
	close(fd);
}

static const struct module *get_module(struct regions *rg, uint32_t pid, const struct proc_map *m,
				       struct procs_module *pm)
{
	struct module **slot = (struct module **)procs__module_slot(pm, rg->id), *mod;
	char *path = NULL;

	if (*slot)
		return *slot;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	*slot = mod;
	/* Through map_files: the process's own file, whatever its mount namespace. */
	if (asprintf(&path, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end) > 0)
		scan_module(mod, path);
	free(path);
	if (!mod->has && m->path && m->path[0] == '/')
		scan_module(mod, m->path);
	return mod;
}

/* The registry's address in the process, from the executable mapping m of its module. */
static bool place(const struct module *mod, const struct proc_map *m, uint64_t *addr)
{
	for (uint32_t i = 0; i < mod->nloads; i++) {
		const typeof(mod->load[0]) *l = &mod->load[i];

		if (m->pgoff < l->offset || m->pgoff >= l->offset + (l->filesz ? l->filesz : 1))
			continue;
		/* m->start is the module's address vaddr = l->vaddr + (pgoff - offset). */
		*addr = m->start - (l->vaddr + (m->pgoff - l->offset)) + mod->vaddr;
		return true;
	}
	return false;
}

bool regions_find(struct regions *rg, uint32_t pid, const struct proc_map *m,
		  struct procs_module *pm, uint64_t *addr)
{
	const struct module *mod = get_module(rg, pid, m, pm);

	return mod && mod->has && place(mod, m, addr);
}
