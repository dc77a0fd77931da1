// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A module's ELF symbol index (see module.h): function symbols from .symtab and .dynsym, merged
 * by address (aliases to one preferred name, zero-size symbols extended to the next), their
 * STT_FILE source names, the PT_LOAD segments that turn file offsets into virtual addresses, and
 * the GNU build-id. Built once with libelf; the names are copied so the ELF handle can close.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "lib/log.h"
#include "lib/vec.h"

/* A symbol as read from the ELF file, before duplicates are merged. */
struct cand {
	uint64_t addr;
	uint64_t size;
	uint64_t sec_end; /* end of its section: bounds a zero-size symbol */
	const char *name; /* points into libelf's string table until the index is built */
	size_t len; /* of the name without its symbol version ("@@GLIBC_2.34", "@GLIBC_2.2.5") */
	unsigned char version; /* enum sym_version */
	unsigned char bind;
	uint32_t src; /* index into cand_vec.files, or NO_SRC */
};

struct cand_vec {
	struct cand *v;
	size_t nr;
	size_t cap;
	const char **files; /* STT_FILE names in table order, into libelf's string table */
	size_t nr_files;
	size_t cap_files;
};

static void log_elf(const char *path, const char *what)
{
	log_warn("symbolize: %s: %s: %s", path, what, elf_errmsg(-1));
}

static int cand_push(struct cand_vec *cv, const struct cand *c)
{
	if (vec_grow(&cv->v, &cv->cap, cv->nr + 1, sizeof(*cv->v), 256))
		return -ENOMEM;
	cv->v[cv->nr++] = *c;
	return 0;
}

static int file_push(struct cand_vec *cv, const char *name)
{
	if (vec_grow(&cv->files, &cv->cap_files, cv->nr_files + 1, sizeof(*cv->files), 64))
		return -ENOMEM;
	cv->files[cv->nr_files++] = name;
	return 0;
}

static unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/*
 * A debug file's .symtab spells a versioned symbol with its version ("__libc_start_main@@GLIBC_2.34"
 * is the default one programs link to, "__libc_start_main@GLIBC_2.2.5" a compatibility one); .dynsym
 * keeps versions apart (.gnu.version). Names are shown without them, so one address gets one name
 * whether the module's symbols came from .symtab or .dynsym.
 */
enum sym_version { SV_NONE, SV_DEFAULT, SV_COMPAT };

static size_t unversioned_len(const char *name)
{
	const char *at = strchr(name, '@');

	return at && at != name ? (size_t)(at - name) : strlen(name);
}

static enum sym_version split_version(const char *name, size_t *len)
{
	*len = unversioned_len(name);
	if (!name[*len])
		return SV_NONE;
	return name[*len + 1] == '@' ? SV_DEFAULT : SV_COMPAT;
}

/* Names compared without their versions. */
static int name_cmp(const struct cand *a, const struct cand *b)
{
	int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len == b->len ? 0 : a->len < b->len ? -1 : 1;
}

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/*
 * By address; among aliases at one address the one to show first: one with a size (it bounds the
 * function), then global over weak over local, then a name that is not a compatibility version
 * (free over cfree@GLIBC_2.2.5), then the name with fewer leading underscores (getpid over __getpid,
 * freelocale@@GLIBC_2.3 over __freelocale), then by name (without version, then with) so the choice
 * does not depend on qsort.
 */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	unsigned int ua, ub;
	int c;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	if ((a->version == SV_COMPAT) != (b->version == SV_COMPAT))
		return a->version == SV_COMPAT ? 1 : -1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	c = name_cmp(a, b);
	return c ? c : strcmp(a->name, b->name);
}

static uint64_t section_end(Elf *elf, size_t shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);

	if (!scn || !gelf_getshdr(scn, &sh))
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/*
 * Which STT_FILE entry a symbol was defined under, the way GNU addr2line (BFD) decides when no line
 * table covers an address: the last one before it in the table; for a global symbol only while no
 * other symbol came between two STT_FILE entries (after that, globals of every file follow).
 */
enum file_state { NOTHING_SEEN, SYMBOL_SEEN, FILE_AFTER_SYMBOL_SEEN };

static uint32_t symbol_src(const struct cand_vec *cv, enum file_state state, unsigned char bind)
{
	if (!cv->nr_files || (bind != STB_LOCAL && state == FILE_AFTER_SYMBOL_SEEN))
		return NO_SRC;
	return (uint32_t)(cv->nr_files - 1);
}

/* Function symbols of one symbol table (SHT_SYMTAB or SHT_DYNSYM) into cv. */
static int collect_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct cand_vec *cv)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	enum file_state state = NOTHING_SEEN;
	size_t i, n, first_file = cv->nr_files;
	int err;

	if (!data || !sh->sh_entsize)
		return -ENOEXEC;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		struct cand c;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			return -ENOEXEC;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FILE) {
			c.name = elf_strptr(elf, sh->sh_link, sym.st_name);
			err = file_push(cv, c.name ? c.name : "");
			if (err)
				return err;
			if (state == SYMBOL_SEEN)
				state = FILE_AFTER_SYMBOL_SEEN;
			continue;
		}
		if (state == NOTHING_SEEN)
			state = SYMBOL_SEEN;
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		/* Undefined (imports) and special sections (absolute, common) name no code here. */
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		c.name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!c.name || !*c.name)
			continue;
		c.version = split_version(c.name, &c.len);
		c.addr = sym.st_value;
		c.size = sym.st_size;
		c.sec_end = c.size ? 0 : section_end(elf, sym.st_shndx);
		c.bind = GELF_ST_BIND(sym.st_info);
		c.src = cv->nr_files > first_file ? symbol_src(cv, state, c.bind) : NO_SRC;
		err = cand_push(cv, &c);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A zero-size symbol (hand-written assembly, _start) covers the room up to the next symbol, and no
 * further than its section. cv is sorted, so walk it backwards remembering the next start.
 */
static void extend_zero_size(struct cand_vec *cv)
{
	uint64_t next = 0, cur = 0;
	bool have_next = false, have_cur = false;
	size_t i;

	for (i = cv->nr; i-- > 0;) {
		struct cand *c = &cv->v[i];
		uint64_t end;

		if (!have_cur || c->addr != cur) {
			have_next = have_cur;
			next = cur;
			cur = c->addr;
			have_cur = true;
		}
		if (c->size)
			continue;
		end = have_next ? next : c->sec_end;
		if (c->sec_end > c->addr && c->sec_end < end)
			end = c->sec_end;
		c->size = end > c->addr ? end - c->addr : 1;
	}
}

/* Copy the STT_FILE names into their own arena (they point into libelf's string table). */
static int copy_srcs(struct sym_module *m, const struct cand_vec *cv)
{
	size_t i, len = 0;
	char *p;

	if (!cv->nr_files)
		return 0;
	for (i = 0; i < cv->nr_files; i++)
		len += strlen(cv->files[i]) + 1;
	m->srcs = calloc(cv->nr_files, sizeof(*m->srcs));
	m->src_names = malloc(len);
	if (!m->srcs || !m->src_names)
		return -ENOMEM;
	p = m->src_names;
	for (i = 0; i < cv->nr_files; i++) {
		len = strlen(cv->files[i]) + 1;
		memcpy(p, cv->files[i], len);
		m->srcs[i] = p;
		p += len;
	}
	m->nr_srcs = cv->nr_files;
	return 0;
}

/*
 * A local alias of a global or weak symbol at the same address (glibc's __GI___libc_malloc of
 * malloc): DWARF's linkage name is often the internal one, and resolve_inline() swaps it for the
 * public name as perf shows, so keep these aside.
 */
static bool hidden_alias(const struct cand *kept, const struct cand *c)
{
	return c->bind == STB_LOCAL && kept->bind != STB_LOCAL && kept->size == c->size;
}

/* Copy the kept names (syms, aliases), without versions, into one arena so the ELF handle can be
 * closed. */
static int copy_names(struct sym_module *m)
{
	size_t i, names_len = 0;
	char *p;

	for (i = 0; i < m->nr_syms; i++)
		names_len += unversioned_len(m->syms[i].name) + 1;
	for (i = 0; i < m->nr_aliases; i++)
		names_len += unversioned_len(m->aliases[i].name) + 1;
	m->names = malloc(names_len ? names_len : 1);
	if (!m->names)
		return -ENOMEM;
	p = m->names;
	for (i = 0; i < m->nr_syms + m->nr_aliases; i++) {
		const char **name =
			i < m->nr_syms ? &m->syms[i].name : &m->aliases[i - m->nr_syms].name;
		size_t len = unversioned_len(*name);

		memcpy(p, *name, len);
		p[len] = '\0';
		*name = p;
		p += len + 1;
	}
	return 0;
}

/* Merge aliases: one entry per address, the preferred name; hidden aliases aside. */
static int build_index(struct sym_module *m, struct cand_vec *cv)
{
	const struct cand *kept = NULL;
	size_t i, n = 0;
	int err;

	if (!cv->nr)
		return 0;
	err = copy_srcs(m, cv);
	if (err)
		return err;
	qsort(cv->v, cv->nr, sizeof(*cv->v), cand_cmp);
	extend_zero_size(cv);
	m->syms = calloc(cv->nr, sizeof(*m->syms));
	m->aliases = calloc(cv->nr, sizeof(*m->aliases));
	if (!m->syms || !m->aliases)
		return -ENOMEM;
	for (i = 0; i < cv->nr; i++) {
		const struct cand *c = &cv->v[i];

		if (kept && kept->addr == c->addr) {
			if (hidden_alias(kept, c))
				m->aliases[m->nr_aliases++] = (struct sym_alias){c->addr, c->name};
			continue;
		}
		kept = c;
		m->syms[n] = (struct func_sym){c->addr, c->addr + c->size, c->name, c->src};
		n++;
	}
	m->nr_syms = n;
	return copy_names(m);
}

static int index_segments(struct sym_module *m, Elf *elf, const char *path)
{
	size_t i, phnum;

	if (elf_getphdrnum(elf, &phnum)) {
		log_elf(path, "read program headers");
		return -ENOEXEC;
	}
	m->segs = calloc(phnum ? phnum : 1, sizeof(*m->segs));
	if (!m->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			log_elf(path, "read program header");
			return -ENOEXEC;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (ph.p_flags & PF_X) {
			if (!m->text_hi || ph.p_vaddr < m->text_lo)
				m->text_lo = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_memsz > m->text_hi)
				m->text_hi = ph.p_vaddr + ph.p_memsz;
		}
		m->segs[m->nr_segs].offset = ph.p_offset;
		m->segs[m->nr_segs].vaddr = ph.p_vaddr;
		m->segs[m->nr_segs].filesz = ph.p_filesz;
		m->nr_segs++;
	}
	return 0;
}

static int read_build_id(struct sym_module *m, Elf *elf)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	size_t i;

	if (n <= 0)
		return 0; /* none, or a note we cannot read: the module works without it */
	m->build_id = malloc((size_t)n);
	m->build_id_hex = malloc(2 * (size_t)n + 1);
	if (!m->build_id || !m->build_id_hex)
		return -ENOMEM;
	memcpy(m->build_id, id, (size_t)n);
	m->build_id_len = (size_t)n;
	for (i = 0; i < (size_t)n; i++)
		snprintf(m->build_id_hex + 2 * i, 3, "%02x", m->build_id[i]);
	return 0;
}

int elfsyms_index_symbols(struct sym_module *m, Elf *elf, const char *path)
{
	struct cand_vec cv = {0};
	Elf_Scn *scn = NULL;
	int err = 0;

	/* Both tables: .symtab has the internal functions, .dynsym is all a stripped binary has,
	 * and duplicates merge in build_index(). */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			log_elf(path, "read section header");
			err = -ENOEXEC;
			goto cleanup;
		}
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		m->has_symtab |= sh.sh_type == SHT_SYMTAB;
		err = collect_syms(elf, scn, &sh, &cv);
		if (err) {
			if (err == -ENOEXEC)
				log_elf(path, "read symbol table");
			goto cleanup;
		}
	}
	err = build_index(m, &cv);
cleanup:
	free(cv.v);
	free(cv.files);
	return err;
}

int elfsyms_load(struct sym_module *m, int fd, const char *path)
{
	GElf_Ehdr eh;
	Elf *elf;
	int err;

	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC; /* libelf refuses files it cannot map or parse at all */
	if (elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	if (!gelf_getehdr(elf, &eh)) {
		log_elf(path, "read ELF header");
		err = -ENOEXEC;
		goto cleanup;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = index_segments(m, elf, path);
	if (!err)
		err = elfsyms_index_symbols(m, elf, path);
	if (!err)
		err = read_build_id(m, elf);
cleanup:
	elf_end(elf);
	return err;
}
