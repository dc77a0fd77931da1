// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch annotate`'s disassembly, for samples the recording has no source line for: the
 * function's bytes read from the module file its frames name, its bounds from the module's
 * symbol table (.symtab, else .dynsym) or, for the MODULE+0xSTART? names of code no symbol names,
 * from the .eh_frame FDE that starts at file offset START (the bounds the symbolizer gave it,
 * symbolize/fdesyms.c), decoded by capstone, each instruction with the samples whose sampled
 * address falls in it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "annotate.h"
#include "common.h"
#include "lib/ehframe.h"
#include "lib/elfinit.h"
#include "lib/log.h"
#include "lib/safefile.h"

#define MAX_CODE (16u << 20) /* a function's bytes: more is not a function */

/* The function's place in its module: virtual address, file offset and bytes. */
struct fn_code {
	uint64_t addr, off, size;
	uint16_t machine;
	uint8_t *bytes;
	const char *bounds; /* where its bounds came from, for the heading */
};

/* name's FUNC symbol in the symbol table scn, with its section's address and offset. */
static bool find_in(Elf *e, Elf_Scn *scn, const char *name, struct fn_code *fc)
{
	size_t len = strcspn(name, "@"); /* "name@@VERSION": the table has name */
	GElf_Shdr sh, ts;
	Elf_Data *d = elf_getdata(scn, NULL);
	GElf_Sym sym;

	if (!d || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return false;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *s;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_size || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		s = elf_strptr(e, sh.sh_link, sym.st_name);
		if (!s || strncmp(s, name, len) || s[len] ||
		    !gelf_getshdr(elf_getscn(e, sym.st_shndx), &ts))
			continue;
		fc->addr = sym.st_value;
		fc->size = sym.st_size;
		fc->off = sym.st_value - ts.sh_addr + ts.sh_offset;
		fc->bounds = "symbol table";
		return true;
	}
	return false;
}

static bool find_symbol(Elf *e, const char *name, struct fn_code *fc)
{
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && find_in(e, scn, name, fc))
			return true;
		if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
	}
	return dyn && find_in(e, dyn, name, fc);
}

/* START of an inferred name "MODULE+0xSTART?" (fdesyms.c); false for any other name. */
static bool fde_start(const char *name, uint64_t *start)
{
	const char *hex = strrchr(name, '+');
	char *end;

	if (!hex || strncmp(hex, "+0x", 3) || !isxdigit((unsigned char)hex[3]))
		return false;
	errno = 0;
	*start = strtoull(hex + 3, &end, 16);
	return !errno && end[0] == '?' && !end[1];
}

/* The virtual address of file offset off through the PT_LOAD segments; false when none has it. */
static bool offset_vaddr(Elf *e, uint64_t off, uint64_t *vaddr)
{
	size_t n;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off - ph.p_offset < ph.p_filesz) {
			*vaddr = off - ph.p_offset + ph.p_vaddr;
			return true;
		}
	}
	return false;
}

/* The bounds of an inferred name's FDE: the one starting at START, cut where the next begins, as
 * the symbolizer bounded it. */
static bool find_fde(Elf *e, const char *name, struct fn_code *fc)
{
	struct eh_range *r = NULL;
	struct eh_section sec;
	size_t n = 0, skipped = 0;
	uint64_t lo;
	bool found = false;

	if (!fde_start(name, &fc->off) || !offset_vaddr(e, fc->off, &lo) || !eh_frame_of(e, &sec) ||
	    eh_fde_ranges(&sec, &r, &n, &skipped))
		return false;
	n = eh_ranges_disjoint(r, n);
	for (size_t i = 0; i < n && !found; i++) {
		found = r[i].lo == lo;
		if (found)
			*fc = (struct fn_code){.addr = lo,
					       .off = fc->off,
					       .size = r[i].hi - lo,
					       .bounds = ".eh_frame FDE"};
	}
	free(r);
	return found;
}

/* The function's code from path: 0, -errno (logged). */
static int read_code(const char *path, const char *name, struct fn_code *fc)
{
	/* a path the recording names: never a FIFO (which would block) nor through a symlink */
	int fd = safefile__open(AT_FDCWD, path, O_RDONLY, 0), err = 0;
	Elf *e = NULL;
	GElf_Ehdr eh;

	if (fd < 0 || perch_elf_init()) {
		err = fd < 0 ? fd : -ENOTSUP;
		log_warn("annotate: cannot read %s: %s", path, strerror(-err));
		goto cleanup;
	}
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || !gelf_getehdr(e, &eh) || !(find_symbol(e, name, fc) || find_fde(e, name, fc)) ||
	    fc->size > MAX_CODE) {
		err = -ENOENT;
		log_warn("annotate: %s: no symbol %s in its symbol table, nor an .eh_frame FDE "
			 "(bounds unknown)",
			 path, name);
		goto cleanup;
	}
	fc->machine = eh.e_machine;
	fc->bytes = malloc(fc->size);
	if (!fc->bytes || pread(fd, fc->bytes, fc->size, (off_t)fc->off) != (ssize_t)fc->size) {
		err = fc->bytes ? -EIO : -ENOMEM;
		log_warn("annotate: %s: cannot read %s's bytes: %s", path, name, strerror(-err));
	}
cleanup:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return err;
}

static int open_capstone(uint16_t machine, csh *h)
{
	cs_arch arch = machine == EM_AARCH64 ? CS_ARCH_ARM64 : CS_ARCH_X86;
	cs_mode mode = machine == EM_AARCH64 ? CS_MODE_ARM : CS_MODE_64;

	if (machine != EM_X86_64 && machine != EM_AARCH64) {
		log_warn("annotate: no disassembler for ELF machine %u", machine);
		return -ENOTSUP;
	}
	if (cs_open(arch, mode, h) != CS_ERR_OK) {
		log_warn("annotate: capstone cannot open its disassembler");
		return -ENOTSUP;
	}
	return 0;
}

/* Samples of module at file offsets [off, off + size). */
static uint64_t samples_in(const struct annot_pc *pcs, size_t n, const char *module, uint64_t off,
			   uint64_t size)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(pcs[i].module, module) && pcs[i].offset >= off &&
		    pcs[i].offset - off < size)
			sum += pcs[i].count;
	}
	return sum;
}

static int print_code(const char *module, const struct fn_code *fc, const struct annot_pc *pcs,
		      size_t n, uint64_t all, FILE *out)
{
	uint64_t inside = samples_in(pcs, n, module, fc->off, fc->size), module_all;
	cs_insn *insn = NULL;
	size_t count;
	csh h;

	if (open_capstone(fc->machine, &h))
		return -ENOTSUP;
	count = cs_disasm(h, fc->bytes, fc->size, fc->addr, 0, &insn);
	fprintf(out,
		"\n%s: no source lines; disassembly of 0x%" PRIx64 "-0x%" PRIx64
		" (%s), file offset 0x%" PRIx64 "\n",
		module, fc->addr, fc->addr + fc->size, fc->bounds, fc->off);
	fprintf(out, "%8s %9s %16s  %s\n", "percent", "samples", "address", "instruction");
	for (size_t i = 0; i < count; i++) {
		uint64_t c = samples_in(pcs, n, module, insn[i].address - fc->addr + fc->off,
					insn[i].size);

		if (c)
			fprintf(out, "%7.2f%% %9" PRIu64 " %16" PRIx64 ":  %s %s\n",
				report_pct(c, all), c, insn[i].address, insn[i].mnemonic,
				insn[i].op_str);
		else
			fprintf(out, "%8s %9s %16" PRIx64 ":  %s %s\n", "", "", insn[i].address,
				insn[i].mnemonic, insn[i].op_str);
	}
	module_all = samples_in(pcs, n, module, 0, UINT64_MAX);
	if (module_all > inside)
		fprintf(out, "%" PRIu64 " samples of %s lie outside the function's bounds\n",
			module_all - inside, module);
	cs_free(insn, count);
	cs_close(&h);
	return 0;
}

int annotate_asm(const char *name, const struct annot_pc *pcs, size_t n, uint64_t all, FILE *out)
{
	int shown = 0, err = 0;

	for (size_t i = 0; i < n; i++) {
		struct fn_code fc = {0};
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(pcs[j].module, pcs[i].module);
		if (seen)
			continue;
		err = read_code(pcs[i].module, *pcs[i].symbol ? pcs[i].symbol : name, &fc);
		if (!err)
			err = print_code(pcs[i].module, &fc, pcs, n, all, out);
		shown += !err;
		free(fc.bytes);
	}
	return shown ? 0 : -ENODATA;
}
