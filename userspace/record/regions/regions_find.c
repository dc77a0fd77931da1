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
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "record/modfile.h"
#include "regions_impl.h"

#define REGISTRY_SECTION ".perch_registry"

/* What a file holds, in its module slot (procs.h). */
struct module {
	bool has;
	uint64_t vaddr;
	struct modfile_loads loads;
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

static bool scan_module(void *ctx, Elf *e)
{
	struct module *mod = ctx;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t section = 0, dynsym = 0;
	bool in_section = false, in_dynsym = false;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
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
	if (mod->has)
		modfile_loads(e, &mod->loads);
	return mod->has;
}

static const struct module *get_module(struct regions *rg, uint32_t pid, const struct proc_map *m,
				       struct procs_module *pm)
{
	struct module **slot = (struct module **)procs__module_slot(pm, rg->id), *mod;

	if (*slot)
		return *slot;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	*slot = mod;
	modfile_scan(pid, m, scan_module, mod);
	return mod;
}

bool regions_find(struct regions *rg, uint32_t pid, const struct proc_map *m,
		  struct procs_module *pm, uint64_t *addr)
{
	const struct module *mod = get_module(rg, pid, m, pm);

	return mod && mod->has && modfile_place(&mod->loads, m, mod->vaddr, addr);
}
