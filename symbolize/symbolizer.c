// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space symbolizer. This part owns the module cache (a hash table keyed by (dev, inode), or
 * by path when no inode is known), one function index per module (built once with libelf from
 * .symtab and .dynsym, sorted by address, searched by binary search), the PT_LOAD table that turns
 * file offsets into ELF virtual addresses, and the open file of every module, kept so its bytes
 * stay readable after the process that mapped it is gone. Failures are cached as well, so a
 * module that cannot be read is tried once, not once per address.
 *
 * For sym_module__resolve_inline() a module also owns its DWARF index (dwarf_index.c), built on
 * first use from the module or the separate debug file debuginfo.c finds, and the demangled forms
 * of its symbol names. The module's build-id is read with the symbol table.
 *
 * A module without .symtab (distribution libraries) borrows the .symtab of its separate debug
 * file for sym_module__resolve() too, read without the DWARF. What GNU addr2line prints beyond the
 * inline chain is kept here as well: the source file of a symbol's STT_FILE entry, read with the
 * symbols, and line-table discriminators, read from .debug_line by a small line-program reader
 * on first use (or in a thread beside the DWARF index build: the index keeps none, and libdw
 * would decompress every debug section a second time).
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/vec.h"
#include "debugcache.h"
#include "debuginfo.h"
#include "demangle.h"
#include "lib/dwcursor.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/search.h"
#include "dwarf_index.h"
#include "line_program.h"
#include "symbolizer.h"

#define INITIAL_BUCKETS	   64
#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define MAX_DIRS	   2
#define NO_SRC		   UINT32_MAX

struct func_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
	uint32_t src; /* index into the module's srcs (its STT_FILE name), or NO_SRC */
};

struct load_seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct sym_module {
	struct sym_module *next; /* hash chain */
	struct symbolizer *s;	 /* the symbolizer it belongs to (NULL for debug_syms) */
	uint64_t dev;
	uint64_t inode;
	char *path; /* the key when inode == 0, else NULL */
	char *name; /* the path it was first seen under: where its own DWARF is said to come from */
	int err;    /* cached failure (-ENOENT, -ENOEXEC), or 0 */
	int fd;
	struct func_sym *syms; /* sorted by start, no two with the same start */
	size_t nr_syms;
	struct load_seg *segs;
	size_t nr_segs;
	char *names;	  /* one arena holding every name in syms */
	uint64_t text_lo; /* executable segments span [text_lo, text_hi] */
	uint64_t text_hi;
	uint8_t *build_id;
	size_t build_id_len;
	char *build_id_hex;
	char *dirs[MAX_DIRS + 1]; /* where the module was seen, for .gnu_debuglink; NULL-ended */
	bool dwarf_tried;
	struct dwarf_index *dwarf; /* NULL when no DWARF was found */
	char *debug_path;	   /* the file the DWARF index was built from */
	const char **sym_dem;	   /* demangled names of syms, built on first use */
	bool has_symtab;	   /* .symtab, not only .dynsym */
	/* The .symtab of the separate debug file when the module has none (distributions move it
	 * there): a module of its own so find_sym() and sym_name() serve both. */
	struct sym_module *debug_syms;
	bool debug_syms_tried; /* the debug file was looked for (by either path) */
	const char **srcs;     /* STT_FILE names that symbols refer to */
	size_t nr_srcs;
	char *src_names;	  /* one arena holding every name in srcs */
	struct line_discs *discs; /* line-table discriminators, read on first use */
	bool discs_tried;
	struct disc_job *disc_job; /* their read running beside the DWARF index build */
	bool dwarf_separate;	   /* the DWARF index came from a separate debug file */
};

/*
 * The discriminators of a module's line tables, read straight from .debug_line (the DWARF index
 * keeps none, and opening libdw again would decompress every debug section a second time). Rows
 * are kept per sequence, in address order; neighbours with the same discriminator are merged.
 */
struct disc_seq {
	uint64_t lo;
	uint64_t hi;	/* exclusive: the sequence's end */
	uint32_t first; /* its rows: rows[first..first + n) */
	uint32_t n;
};

struct disc_row {
	uint64_t addr;
	uint32_t disc;
};

struct line_discs {
	struct disc_seq *seqs; /* sorted by lo */
	size_t nr_seqs, cap_seqs;
	struct disc_row *rows;
	size_t nr_rows, cap_rows;
};

/* The module's executable segments span [lo, hi]. */
struct text_span {
	uint64_t lo;
	uint64_t hi;
};

/*
 * A read of the discriminators in a thread of its own (symbolizer__prefetch_discriminators()):
 * it owns its descriptor and touches nothing of the module, which collects ld when it needs it.
 */
struct disc_job {
	pthread_t thread;
	int fd;
	struct text_span text;
	struct line_discs *ld; /* the result; NULL when there are none */
};

struct symbolizer {
	struct sym_module **buckets;
	size_t nr_buckets; /* a power of two */
	size_t nr_modules;
	bool raw_names;	     /* symbolizer__set_demangle(s, false) */
	char *debug_root;    /* NULL: DEFAULT_DEBUG_ROOT */
	char *plain_dir;     /* symbolizer__set_debug_cache(); NULL: none */
	bool prefetch_discs; /* symbolizer__prefetch_discriminators(s, true) */
};

/* A symbol as read from the ELF file, before duplicates are merged. */
struct cand {
	uint64_t addr;
	uint64_t size;
	uint64_t sec_end; /* end of its section: bounds a zero-size symbol */
	const char *name; /* points into libelf's string table until the index is built */
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

static int elf_init_err;

static void elf_init_once(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		elf_init_err = -ENOTSUP;
}

static void log_elf(const char *path, const char *what)
{
	log_warn("symbolize: %s: %s: %s", path, what, elf_errmsg(-1));
}

static uint64_t hash_key(uint64_t dev, uint64_t inode, const char *path)
{
	if (inode)
		return mix64(mix64(dev) ^ inode);
	return mix64(fnv64_str(FNV64_OFFSET, path));
}

static bool module_matches(const struct sym_module *m, uint64_t dev, uint64_t inode,
			   const char *path)
{
	if (inode)
		return !m->path && m->dev == dev && m->inode == inode;
	return m->path && strcmp(m->path, path) == 0;
}

static void free_sym_dem(struct sym_module *m)
{
	size_t i;

	if (!m->sym_dem)
		return;
	for (i = 0; i < m->nr_syms; i++) {
		if (m->sym_dem[i] != m->syms[i].name)
			free((char *)m->sym_dem[i]);
	}
	free(m->sym_dem);
	m->sym_dem = NULL;
}

static void line_discs_free(struct line_discs *ld)
{
	if (!ld)
		return;
	free(ld->seqs);
	free(ld->rows);
	free(ld);
}

static void disc_job_start(struct sym_module *m, int fd); /* with the .debug_line reader below */

/* Wait for the module's discriminator read; keep its result as the module's, or drop it. */
static void disc_job_finish(struct sym_module *m, bool keep)
{
	struct disc_job *j = m->disc_job;

	if (!j)
		return;
	pthread_join(j->thread, NULL);
	if (keep && !m->discs_tried) {
		m->discs = j->ld;
		m->discs_tried = true;
	} else {
		line_discs_free(j->ld);
	}
	free(j);
	m->disc_job = NULL;
}

static void module_free(struct sym_module *m)
{
	size_t i;

	if (!m)
		return;
	disc_job_finish(m, false);
	line_discs_free(m->discs);
	if (m->fd >= 0)
		close(m->fd);
	free_sym_dem(m);
	module_free(m->debug_syms);
	dwarf_index__free(m->dwarf);
	free(m->debug_path);
	free(m->build_id);
	free(m->build_id_hex);
	for (i = 0; i < MAX_DIRS; i++)
		free(m->dirs[i]);
	free(m->syms);
	free(m->segs);
	free(m->names);
	free(m->srcs);
	free(m->src_names);
	free(m->path);
	free(m->name);
	free(m);
}

/* After a failed load: a cached failure keeps no half-built index. */
static void module_drop_index(struct sym_module *m)
{
	free(m->syms);
	free(m->segs);
	free(m->names);
	free(m->srcs);
	free(m->src_names);
	m->syms = NULL;
	m->segs = NULL;
	m->names = NULL;
	m->srcs = NULL;
	m->src_names = NULL;
	m->nr_syms = 0;
	m->nr_segs = 0;
	m->nr_srcs = 0;
	free(m->build_id);
	free(m->build_id_hex);
	m->build_id = NULL;
	m->build_id_hex = NULL;
	m->build_id_len = 0;
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
 * function), then global over weak over local, then the name with fewer leading underscores
 * (getpid over __getpid), then by name so the choice does not depend on qsort.
 */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	unsigned int ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (!a->size != !b->size)
		return a->size ? -1 : 1;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
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
 * Merge aliases (one entry per address, the preferred name) and copy the names into one arena so
 * the ELF handle can be closed.
 */
static int build_index(struct sym_module *m, struct cand_vec *cv)
{
	size_t i, n = 0, names_len = 0;
	char *p;
	int err;

	if (!cv->nr)
		return 0;
	err = copy_srcs(m, cv);
	if (err)
		return err;
	qsort(cv->v, cv->nr, sizeof(*cv->v), cand_cmp);
	extend_zero_size(cv);
	m->syms = calloc(cv->nr, sizeof(*m->syms));
	if (!m->syms)
		return -ENOMEM;
	for (i = 0; i < cv->nr; i++) {
		const struct cand *c = &cv->v[i];

		if (n && m->syms[n - 1].start == c->addr)
			continue;
		m->syms[n].start = c->addr;
		m->syms[n].end = c->addr + c->size;
		m->syms[n].name = c->name;
		m->syms[n].src = c->src;
		names_len += strlen(c->name) + 1;
		n++;
	}
	m->names = malloc(names_len);
	if (!m->names)
		return -ENOMEM;
	p = m->names;
	for (i = 0; i < n; i++) {
		size_t len = strlen(m->syms[i].name) + 1;

		memcpy(p, m->syms[i].name, len);
		m->syms[i].name = p;
		p += len;
	}
	m->nr_syms = n;
	return 0;
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

static int index_symbols(struct sym_module *m, Elf *elf, const char *path)
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

static int module_index(struct sym_module *m, int fd, const char *path)
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
		err = index_symbols(m, elf, path);
	if (!err)
		err = read_build_id(m, elf);
cleanup:
	elf_end(elf);
	return err;
}

/* Transient failures say nothing about the module and must not be cached. */
static bool is_transient(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EINTR;
}

/* Open and index the module; 0, or the -errno that open/indexing failed with. */
static int module_load(struct sym_module *m, const char *open_path)
{
	struct stat st;
	int fd, err;

	/* O_NONBLOCK so that a FIFO where a binary used to be does not hang us. */
	fd = open(open_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto err_out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto err_out;
	}
	err = module_index(m, fd, open_path);
	if (err)
		goto err_out;
	m->fd = fd;
	return 0;
err_out:
	close(fd);
	return err;
}

static int grow_buckets(struct symbolizer *s)
{
	size_t i, nr = s->nr_buckets * 2;
	struct sym_module **b = calloc(nr, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < s->nr_buckets; i++) {
		struct sym_module *m, *next;

		for (m = s->buckets[i]; m; m = next) {
			size_t h = hash_key(m->dev, m->inode, m->path) & (nr - 1);

			next = m->next;
			m->next = b[h];
			b[h] = m;
		}
	}
	free(s->buckets);
	s->buckets = b;
	s->nr_buckets = nr;
	return 0;
}

/* Add dirname(path) to the directories searched for the module's .gnu_debuglink file. */
static int add_dir(struct sym_module *m, const char *path)
{
	char *copy, *dir;
	size_t i;

	if (!path || path[0] != '/')
		return 0; /* "[vdso]", "//anon": no directory */
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	for (i = 0; i < MAX_DIRS && m->dirs[i]; i++) {
		if (strcmp(m->dirs[i], dir) == 0)
			break;
	}
	if (i < MAX_DIRS && !m->dirs[i]) {
		m->dirs[i] = strdup(dir);
		if (!m->dirs[i]) {
			free(copy);
			return -ENOMEM;
		}
	}
	free(copy);
	return 0;
}

/*
 * Where to look for the module's debuglink file, remembered at first sight because the paths
 * may stop working (the process exits) before the DWARF index is built: the directory the
 * process mapped it from, and the one we opened it in when that is a real directory (a
 * container's, through /proc/PID/root) rather than /proc/PID/map_files or /proc/self.
 */
static int remember_dirs(struct sym_module *m, const char *mapped, const char *open_path)
{
	int err = add_dir(m, mapped);

	if (!err && open_path &&
	    (strncmp(open_path, "/proc/", 6) != 0 || strstr(open_path, "/root/")))
		err = add_dir(m, open_path);
	return err;
}

/*
 * The module for id, loaded on first sight. Returns 0 with *out set (its err may hold a cached
 * failure), or -errno for failures that were not cached.
 */
static int get_module(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		      struct sym_module **out)
{
	const char *key_path = id->path ? id->path : open_path;
	struct sym_module *m;
	size_t h;
	int err;

	if (!id->inode && !key_path)
		return -EINVAL;
	h = hash_key(id->dev, id->inode, key_path) & (s->nr_buckets - 1);
	for (m = s->buckets[h]; m; m = m->next) {
		if (module_matches(m, id->dev, id->inode, key_path)) {
			*out = m;
			return 0;
		}
	}
	if (!open_path)
		return -ENOENT;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->s = s;
	m->dev = id->dev;
	m->inode = id->inode;
	m->name = strdup(key_path);
	if (!m->name || (!id->inode && !(m->path = strdup(key_path)))) {
		err = -ENOMEM;
		goto err_out;
	}
	err = module_load(m, open_path);
	if (!err)
		err = remember_dirs(m, key_path, open_path);
	if (is_transient(err))
		goto err_out;
	if (err) {
		/* The header promises -ENOENT for every file we cannot open (gone, EACCES, ...). */
		m->err = err == -ENOEXEC ? -ENOEXEC : -ENOENT;
		module_drop_index(m);
	}
	if (s->nr_modules >= s->nr_buckets && grow_buckets(s) == 0)
		h = hash_key(id->dev, id->inode, key_path) & (s->nr_buckets - 1);
	m->next = s->buckets[h];
	s->buckets[h] = m;
	s->nr_modules++;
	*out = m;
	return 0;
err_out:
	module_free(m);
	return err == -ENOMEM ? err : -ENOENT;
}

int symbolizer__module(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		       struct sym_module **out)
{
	struct sym_module *m;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!s || !id)
		return -EINVAL;
	err = get_module(s, id, open_path, &m);
	if (err)
		return err;
	if (m->err)
		return m->err;
	*out = m;
	return 0;
}

static bool offset_to_vaddr(const struct sym_module *m, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < m->nr_segs; i++) {
		const struct load_seg *g = &m->segs[i];

		if (off >= g->offset && off - g->offset < g->filesz) {
			*vaddr = off - g->offset + g->vaddr;
			return true;
		}
	}
	return false;
}

/* The file offset of vaddr through the PT_LOAD segments; false when no segment has it. */
static bool seg_offset(const struct sym_module *m, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < m->nr_segs; i++) {
		const struct load_seg *g = &m->segs[i];

		if (vaddr >= g->vaddr && vaddr - g->vaddr < g->filesz) {
			*off = vaddr - g->vaddr + g->offset;
			return true;
		}
	}
	return false;
}

static uint64_t vaddr_to_offset(const struct sym_module *m, uint64_t vaddr)
{
	uint64_t off;

	return seg_offset(m, vaddr, &off) ? off : 0;
}

/* The symbol covering vaddr: the last one starting at or below it, if vaddr is before its end. */
static const struct func_sym *find_sym(const struct sym_module *m, uint64_t vaddr)
{
	size_t lo = search_last_le(m->syms, m->nr_syms, start, vaddr);

	if (!lo || vaddr >= m->syms[lo - 1].end)
		return NULL;
	return &m->syms[lo - 1];
}

/* The symbol over vaddr, from the debug file's .symtab (it has the local functions) or the
 * module's own tables; *owner is the module whose table it is in. */
static const struct func_sym *find_any_sym(struct sym_module *m, uint64_t vaddr,
					   struct sym_module **owner)
{
	const struct func_sym *f = NULL;

	if (m->debug_syms) {
		f = find_sym(m->debug_syms, vaddr);
		*owner = m->debug_syms;
	}
	if (!f) {
		f = find_sym(m, vaddr);
		*owner = m;
	}
	return f;
}

/* The function symbols of the debug file, for a module stripped of its .symtab. */
static void index_debug_symbols(struct sym_module *m, Elf *elf, const char *path)
{
	struct sym_module *d;

	if (m->has_symtab || m->debug_syms)
		return;
	d = calloc(1, sizeof(*d));
	if (!d)
		return;
	d->fd = -1;
	if (index_symbols(d, elf, path) || !d->nr_syms) {
		module_free(d);
		return;
	}
	m->debug_syms = d;
}

/* What debuginfo__open() needs to find the separate debug file of m (elf: m's open file). */
static void debug_query(const struct symbolizer *s, struct sym_module *m, Elf *elf,
			struct debuginfo_query *q)
{
	memset(q, 0, sizeof(*q));
	q->elf = elf;
	q->fd = m->fd;
	q->build_id = m->build_id;
	q->build_id_len = m->build_id_len;
	q->dirs = (const char *const *)m->dirs;
	q->root = s->debug_root ? s->debug_root : DEFAULT_DEBUG_ROOT;
}

/*
 * For a module without .symtab: the function symbols of its separate debug file, and only those
 * (no DWARF), so that sym_module__resolve() names local functions at the cost of reading one
 * symbol table. Tried once per module (again after a transient failure).
 */
static void module_load_debug_syms(struct symbolizer *s, struct sym_module *m)
{
	struct debuginfo_query q;
	char *path = NULL;
	Elf *elf, *dbg;
	int fd;

	m->debug_syms_tried = true;
	if (m->has_symtab || m->debug_syms || !m->text_hi)
		return;
	elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	debug_query(s, m, elf, &q);
	fd = debuginfo__open(&q, &path);
	if (fd >= 0) {
		dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (dbg && elf_kind(dbg) == ELF_K_ELF)
			index_debug_symbols(m, dbg, path);
		elf_end(dbg);
		close(fd);
	} else if (is_transient(fd)) {
		m->debug_syms_tried = false;
	}
	free(path);
	elf_end(elf);
}

struct symbolizer *symbolizer__new(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct symbolizer *s;

	pthread_once(&once, elf_init_once);
	if (elf_init_err) {
		log_warn("symbolize: libelf initialization: %s", elf_errmsg(-1));
		errno = -elf_init_err;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->nr_buckets = INITIAL_BUCKETS;
	s->buckets = calloc(s->nr_buckets, sizeof(*s->buckets));
	if (!s->buckets) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_buckets; i++) {
		struct sym_module *m, *next;

		for (m = s->buckets[i]; m; m = next) {
			next = m->next;
			module_free(m);
		}
	}
	free(s->buckets);
	free(s->debug_root);
	free(s->plain_dir);
	free(s);
}

int sym_module__resolve(struct sym_module *m, uint64_t file_offset, struct sym_result *out)
{
	const struct func_sym *f;
	struct sym_module *owner;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!m)
		return -EINVAL;
	/* An offset outside every PT_LOAD names no code: report it as-is, without a name. */
	out->vaddr = file_offset;
	if (!offset_to_vaddr(m, file_offset, &out->vaddr))
		return 0;
	if (!m->has_symtab && !m->debug_syms_tried)
		module_load_debug_syms(m->s, m);
	f = find_any_sym(m, out->vaddr, &owner);
	if (!f)
		return 0;
	out->name = f->name;
	out->sym_start = f->start;
	out->sym_file_offset = vaddr_to_offset(m, f->start);
	return 0;
}

int sym_module__read(struct sym_module *m, uint64_t file_offset, void *buf, size_t len)
{
	size_t done = 0;

	if (!m || (!buf && len))
		return -EINVAL;
	if (file_offset > INT64_MAX || len > INT64_MAX - file_offset)
		return -ERANGE;
	while (done < len) {
		off_t pos = (off_t)(file_offset + done);
		ssize_t n = pread(m->fd, (char *)buf + done, len - done, pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ERANGE; /* the file ends before len bytes */
		done += (size_t)n;
	}
	return 0;
}

void symbolizer__set_demangle(struct symbolizer *s, bool demangle)
{
	if (s)
		s->raw_names = !demangle;
}

void symbolizer__prefetch_discriminators(struct symbolizer *s, bool on)
{
	if (s)
		s->prefetch_discs = on;
}

/* *slot = a copy of path, which must be absolute. 0, -EINVAL, -ENOMEM. */
static int set_dir(char **slot, const char *path)
{
	char *copy;

	if (!path || path[0] != '/')
		return -EINVAL;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

int symbolizer__set_debug_root(struct symbolizer *s, const char *root)
{
	return s ? set_dir(&s->debug_root, root) : -EINVAL;
}

int symbolizer__set_debug_cache(struct symbolizer *s, const char *dir)
{
	return s ? set_dir(&s->plain_dir, dir) : -EINVAL;
}

int sym_module__build_id(struct sym_module *m, const char **hex)
{
	if (!hex)
		return -EINVAL;
	*hex = NULL;
	if (!m)
		return -EINVAL;
	if (!m->build_id_hex)
		return -ENODATA;
	*hex = m->build_id_hex;
	return 0;
}

/*
 * Index the DWARF in the ELF file fd (the module or its debug file); 0, or -errno. With s's
 * prefetch_discs, its discriminators are read in another thread meanwhile.
 */
static int index_dwarf_file(const struct symbolizer *s, struct sym_module *m, int fd,
			    const char *path)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int err = 0;

	if (!elf)
		return -ENOEXEC;
	if (s->prefetch_discs)
		disc_job_start(m, fd);
	m->dwarf = dwarf_index__build(elf, path, m->text_lo, m->text_hi);
	if (!m->dwarf) {
		err = -errno;
		disc_job_finish(m, false);
		goto cleanup;
	}
	m->debug_path = strdup(path);
	if (!m->debug_path) {
		dwarf_index__free(m->dwarf);
		m->dwarf = NULL;
		disc_job_finish(m, false);
		err = -ENOMEM;
		goto cleanup;
	}
	m->dwarf_separate = fd != m->fd;
	if (m->dwarf_separate)
		index_debug_symbols(m, elf, path);
cleanup:
	elf_end(elf);
	return err;
}

/* The decompressed copy of the debug file at fd (path *path) in place of it, where there is one
 * to have; else fd. */
static int use_plain_copy(const struct symbolizer *s, const struct sym_module *m, int fd,
			  char **path)
{
	char *plain_path;
	int plain = debugcache__open(s->plain_dir, fd, m->build_id, m->build_id_len, &plain_path);

	if (plain < 0)
		return fd;
	close(fd);
	free(*path);
	*path = plain_path;
	return plain;
}

/*
 * Build the module's DWARF index from the module itself when it has .debug_info, else from its
 * separate debug file. Tried once per module: a module without DWARF is not searched again
 * (a transient failure is).
 */
static void module_load_dwarf(struct symbolizer *s, struct sym_module *m, const char *self_path)
{
	struct debuginfo_query q;
	char *dbg_path = NULL;
	Elf *elf;
	int fd, err = -ENODATA;

	m->dwarf_tried = true;
	if (!m->text_hi)
		return; /* no executable segment: no code to describe */
	elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	if (debuginfo__has_dwarf(elf))
		err = index_dwarf_file(s, m, m->fd, self_path);
	if (err) {
		debug_query(s, m, elf, &q);
		fd = debuginfo__open(&q, &dbg_path);
		if (!is_transient(fd))
			m->debug_syms_tried = true;
		if (fd >= 0)
			fd = use_plain_copy(s, m, fd, &dbg_path);
		if (fd >= 0) {
			err = index_dwarf_file(s, m, fd, dbg_path);
			close(fd);
		}
	}
	if (err && err != -ENODATA && err != -ENOENT)
		log_warn("symbolize: %s: index DWARF: %s", dbg_path ? dbg_path : self_path,
			 strerror(-err));
	if (is_transient(err))
		m->dwarf_tried = false; /* out of memory or fds says nothing about the module */
	free(dbg_path);
	elf_end(elf);
}

/* Build the module's DWARF index if that was not tried yet. */
static void module_want_dwarf(struct sym_module *m)
{
	if (!m->dwarf_tried)
		module_load_dwarf(m->s, m, m->name);
}

int sym_module__debug_path(struct sym_module *m, const char **path)
{
	if (!path)
		return -EINVAL;
	*path = NULL;
	if (!m)
		return -EINVAL;
	module_want_dwarf(m);
	if (!m->dwarf)
		return -ENODATA;
	*path = m->debug_path;
	return 0;
}

/*
 * The demangled name of a symbol, made on its first lookup and kept (not per lookup): demangling
 * a whole table up front costs a large C++ library tens of milliseconds before its first answer.
 */
static const char *sym_name(struct symbolizer *s, struct sym_module *m, const struct func_sym *f)
{
	size_t i = (size_t)(f - m->syms);

	if (s->raw_names || !demangle__available())
		return f->name;
	if (!m->sym_dem) {
		m->sym_dem = calloc(m->nr_syms, sizeof(*m->sym_dem));
		if (!m->sym_dem)
			return f->name;
	}
	if (!m->sym_dem[i]) {
		char *d = demangle__name(f->name);

		m->sym_dem[i] = d ? d : f->name;
	}
	return m->sym_dem[i];
}

int sym_module__resolve_inline(struct sym_module *m, uint64_t file_offset, struct sym_frame *frames,
			       size_t max, size_t *n)
{
	const struct func_sym *f;
	struct symbolizer *s;
	struct sym_module *sm;
	uint64_t vaddr;
	int err;

	if (!n)
		return -EINVAL;
	*n = 0;
	if (!m || (!frames && max))
		return -EINVAL;
	s = m->s;
	module_want_dwarf(m);
	if (!offset_to_vaddr(m, file_offset, &vaddr))
		return 0;
	if (m->dwarf) {
		err = dwarf_index__frames(m->dwarf, vaddr, !s->raw_names, frames, max, n);
		/* An out-of-line function DWARF leaves unnamed gets its symbol's name. */
		if (!err && *n && !frames[*n - 1].function) {
			f = find_any_sym(m, vaddr, &sm);
			frames[*n - 1].function = f ? sym_name(s, sm, f) : NULL;
		}
		if (*n || err)
			return err;
	}
	/* No function DIE covers it (assembly, or no DWARF): the symbol table names it. */
	f = find_any_sym(m, vaddr, &sm);
	if (!f && !m->dwarf)
		return 0;
	if (!max)
		return -ENOSPC;
	frames[0] = (struct sym_frame){.function = f ? sym_name(s, sm, f) : NULL};
	if (m->dwarf)
		dwarf_index__line(m->dwarf, vaddr, &frames[0].file, &frames[0].line);
	if (!frames[0].function && !frames[0].file)
		return 0;
	*n = 1;
	return 0;
}

int sym_module__vaddr_to_offset(struct sym_module *m, uint64_t vaddr, uint64_t *off)
{
	if (!off)
		return -EINVAL;
	*off = 0;
	if (!m)
		return -EINVAL;
	return seg_offset(m, vaddr, off) ? 0 : -ERANGE;
}

int sym_module__symbol_file(struct sym_module *m, uint64_t file_offset, const char **file)
{
	const struct func_sym *f;
	struct sym_module *owner;
	uint64_t vaddr;

	if (!file)
		return -EINVAL;
	*file = NULL;
	if (!m)
		return -EINVAL;
	if (!offset_to_vaddr(m, file_offset, &vaddr))
		return 0;
	if (!m->has_symtab && !m->debug_syms_tried)
		module_load_debug_syms(m->s, m);
	f = find_any_sym(m, vaddr, &owner);
	if (f && f->src != NO_SRC && f->src < owner->nr_srcs)
		*file = owner->srcs[f->src];
	return 0;
}

static int ld_reserve(void *pv, size_t *cap, size_t need, size_t elem)
{
	return vec_grow(pv, cap, need, elem, 256);
}

/* Row (addr, disc) of the open sequence, whose rows start at first: the last row at an address
 * wins (as in libdw and BFD), and a row with its predecessor's discriminator adds nothing. */
static int ld_row(struct line_discs *ld, size_t first, uint64_t addr, uint32_t disc)
{
	struct disc_row *last = ld->nr_rows > first ? &ld->rows[ld->nr_rows - 1] : NULL;
	int err;

	if (last && last->addr == addr) {
		last->disc = disc;
		if (ld->nr_rows - 1 > first && last[-1].disc == disc)
			ld->nr_rows--;
		return 0;
	}
	if (last && last->disc == disc)
		return 0;
	err = ld_reserve(&ld->rows, &ld->cap_rows, ld->nr_rows + 1, sizeof(*ld->rows));
	if (err)
		return err;
	ld->rows[ld->nr_rows++] = (struct disc_row){.addr = addr, .disc = disc};
	return 0;
}

/* Close the sequence whose rows start at first and that ends at end; kept if it covers code. */
static int ld_end_seq(struct line_discs *ld, const struct text_span *text, size_t first,
		      uint64_t end)
{
	uint64_t lo;
	int err;

	if (ld->nr_rows == first)
		return 0;
	lo = ld->rows[first].addr;
	/* As the DWARF index: rows outside the text come from sections the linker dropped. */
	if (end <= lo || lo < text->lo || lo >= text->hi || ld->nr_rows - first > UINT32_MAX) {
		ld->nr_rows = first;
		return 0;
	}
	err = ld_reserve(&ld->seqs, &ld->cap_seqs, ld->nr_seqs + 1, sizeof(*ld->seqs));
	if (err)
		return err;
	ld->seqs[ld->nr_seqs++] = (struct disc_seq){.lo = lo,
						    .hi = end,
						    .first = (uint32_t)first,
						    .n = (uint32_t)(ld->nr_rows - first)};
	return 0;
}

/* The discriminators of the rows of one line-program unit at r->p; r->p is left at the next
 * unit. Returns 0 or -ENOMEM. */
static int ld_unit(struct line_discs *ld, const struct text_span *text, struct dwcursor *r)
{
	size_t first = ld->nr_rows;
	struct line_program lp;
	enum line_event ev;
	int err = 0;

	if (!line_program__begin(&lp, r))
		return 0;
	while (!err && (ev = line_program__next(&lp)) != LINE_DONE) {
		if (ev == LINE_ROW) {
			err = ld_row(ld, first, lp.at, lp.at_disc);
			continue;
		}
		err = ld_end_seq(ld, text, first, lp.at);
		first = ld->nr_rows;
	}
	/* A program cut short keeps no half sequence. */
	ld->nr_rows = first;
	return err;
}

static int disc_seq_cmp(const void *pa, const void *pb)
{
	const struct disc_seq *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* The .debug_line section of elf, decompressed; NULL when there is none. */
static Elf_Data *debug_line_data(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".debug_line") == 0) {
			if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
				return NULL;
			return elf_getdata(scn, NULL);
		}
		if (strcmp(name, ".zdebug_line") == 0)
			return elf_compress_gnu(scn, 0, 0) < 0 ? NULL : elf_getdata(scn, NULL);
	}
	return NULL;
}

/* The discriminators of every line program in the ELF file fd (a file of its own: this may run
 * in another thread); NULL when out of memory. */
static struct line_discs *line_discs_read(int fd, const struct text_span *text)
{
	struct line_discs *ld = calloc(1, sizeof(*ld));
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Data *data = NULL;
	struct dwcursor r;
	GElf_Ehdr eh;
	int err = 0;

	if (ld && elf && gelf_getehdr(elf, &eh))
		data = debug_line_data(elf);
	if (data && data->d_buf) {
		r = dwc_make(data->d_buf, (const uint8_t *)data->d_buf + data->d_size);
		r.msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
		while (!err && r.p < r.end)
			err = ld_unit(ld, text, &r);
		if (ld->nr_seqs)
			qsort(ld->seqs, ld->nr_seqs, sizeof(*ld->seqs), disc_seq_cmp);
	}
	elf_end(elf);
	if (err) {
		line_discs_free(ld);
		return NULL;
	}
	return ld;
}

/* The discriminators of the file m's DWARF index came from, read now. */
static struct line_discs *line_discs_load(const struct sym_module *m)
{
	struct text_span text = {m->text_lo, m->text_hi};
	struct line_discs *ld;
	int fd = m->fd;

	/* The module's own file stays open; a separate debug file is opened again by path. */
	if (m->dwarf_separate)
		fd = open(m->debug_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	ld = line_discs_read(fd, &text);
	if (fd != m->fd)
		close(fd);
	return ld;
}

static void *disc_job_run(void *arg)
{
	struct disc_job *j = arg;

	j->ld = line_discs_read(j->fd, &j->text);
	close(j->fd);
	return NULL;
}

/* Start reading the discriminators of fd (m's DWARF file) in a thread; without one, they are read
 * on first use as usual. */
static void disc_job_start(struct sym_module *m, int fd)
{
	struct disc_job *j;

	if (m->disc_job || m->discs_tried)
		return;
	j = calloc(1, sizeof(*j));
	if (!j)
		return;
	j->text = (struct text_span){m->text_lo, m->text_hi};
	j->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (j->fd < 0 || pthread_create(&j->thread, NULL, disc_job_run, j)) {
		if (j->fd >= 0)
			close(j->fd);
		free(j);
		return;
	}
	m->disc_job = j;
}

/* The discriminator of the row covering vaddr: the sequence holding it, then its last row at or
 * below it. */
static unsigned int disc_at(const struct line_discs *ld, uint64_t vaddr)
{
	size_t lo = search_last_le(ld->seqs, ld->nr_seqs, lo, vaddr);
	const struct disc_seq *q;

	if (!lo || vaddr >= ld->seqs[lo - 1].hi)
		return 0;
	q = &ld->seqs[lo - 1];
	lo = search_prefix(q->first, (size_t)q->first + q->n, i, ld->rows[i].addr <= vaddr);
	return lo > q->first ? ld->rows[lo - 1].disc : 0;
}

int sym_module__discriminator(struct sym_module *m, uint64_t file_offset, unsigned int *disc)
{
	uint64_t vaddr;

	if (!disc)
		return -EINVAL;
	*disc = 0;
	if (!m)
		return -EINVAL;
	module_want_dwarf(m);
	if (!m->dwarf || !offset_to_vaddr(m, file_offset, &vaddr))
		return 0;
	disc_job_finish(m, true);
	if (!m->discs_tried) {
		m->discs_tried = true;
		m->discs = line_discs_load(m); /* NULL: no discriminators, the rest still works */
	}
	if (m->discs)
		*disc = disc_at(m->discs, vaddr);
	return 0;
}
