// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space symbolizer. This part owns the module cache (an array of modules indexed by
 * lib/idxtab.h on (dev, inode), or on the path when no inode is known), the open file of every
 * module,
 * kept so its bytes stay readable after the process that mapped it is gone, and the queries on a
 * module handle. Failures are cached as well, so a module that cannot be read is tried once, not
 * once per address.
 *
 * A module's function index, PT_LOAD table and build-id are built by elfsyms.c, once, with
 * libelf. For sym_module__resolve_inline() a module also owns its DWARF index (dwarf_index.c),
 * built on first use from the module or the separate debug file debuginfo.c finds, and the
 * demangled forms of its symbol names.
 *
 * A module without .symtab (distribution libraries) borrows the .symtab of its separate debug
 * file for sym_module__resolve() too, read without the DWARF. What GNU addr2line prints beyond the
 * inline chain is kept here as well: the source file of a symbol's STT_FILE entry, read with the
 * symbols, and line-table discriminators (linediscs.c), read on first use or in a thread beside
 * the DWARF index build.
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

#include "lib/elfinit.h"
#include "lib/idxtab.h"
#include "lib/vec.h"
#include "debugcache.h"
#include "debuginfo.h"
#include "demangle.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/search.h"
#include "dwarf_index.h"
#include "module.h"
#include "symbolizer.h"

struct symbolizer {
	struct sym_module **mods; /* every module seen, failures too, in the order first seen */
	size_t nr_mods, cap_mods;
	struct idxtab mod_tab; /* mods by struct mod_key */
	bool raw_names;	       /* symbolizer__set_demangle(s, false) */
	char *debug_root;      /* NULL: DEFAULT_DEBUG_ROOT */
	char *plain_dir;       /* symbolizer__set_debug_cache(); NULL: none */
	bool prefetch_discs;   /* symbolizer__prefetch_discriminators(s, true) */
	bool no_infer;	       /* symbolizer__set_infer_bounds(s, false) */
	bool internal_names;   /* symbolizer__set_public_names(s, false) */
	size_t bad_minidebug;  /* modules whose .gnu_debugdata could not be read */
};

/* What a module is cached by: (dev, inode), or its path when no inode is known. */
struct mod_key {
	uint64_t dev;
	uint64_t inode;
	const char *path;
};

/* One mix64 (dev's halves swapped, so that they do not cancel the inode's low bits): the hash
 * is on the path of every lookup. */
static uint32_t mod_hash(const struct mod_key *k)
{
	if (k->inode)
		return hash32(mix64((k->dev << 32 | k->dev >> 32) ^ k->inode));
	return hash32(fnv64_str(FNV64_OFFSET, k->path));
}

static inline bool mod_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sym_module *m = ((const struct symbolizer *)ctx)->mods[idx];
	const struct mod_key *k = key;

	if (k->inode)
		return !m->path && m->dev == k->dev && m->inode == k->inode;
	return m->path && strcmp(m->path, k->path) == 0;
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

static void disc_job_start(struct sym_module *m, int fd);

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
		linediscs_free(j->ld);
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
	linediscs_free(m->discs);
	if (m->fd >= 0)
		close(m->fd);
	free_sym_dem(m);
	module_free(m->debug_syms);
	module_free(m->fde_syms);
	module_free(m->mini_syms);
	dwarf_index__free(m->dwarf);
	free(m->debug_path);
	free(m->build_id);
	free(m->build_id_hex);
	for (i = 0; i < MAX_DIRS; i++)
		free(m->dirs[i]);
	free(m->syms);
	free(m->aliases);
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
	free(m->aliases);
	free(m->segs);
	free(m->names);
	free(m->srcs);
	free(m->src_names);
	m->syms = NULL;
	m->aliases = NULL;
	m->nr_aliases = 0;
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
	err = elfsyms_load(m, fd, open_path);
	if (err)
		goto err_out;
	m->fd = fd;
	return 0;
err_out:
	close(fd);
	return err;
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
 * A new module for k, loaded from open_path. Failures to read it are cached in it (m->err);
 * returns -errno only for those that are not (transient ones).
 */
static int module_new(struct symbolizer *s, const struct mod_key *k, const char *open_path,
		      struct sym_module **out)
{
	struct sym_module *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->s = s;
	m->dev = k->dev;
	m->inode = k->inode;
	m->name = strdup(k->path);
	if (!m->name || (!k->inode && !(m->path = strdup(k->path)))) {
		err = -ENOMEM;
		goto err_out;
	}
	err = module_load(m, open_path);
	if (!err)
		err = remember_dirs(m, k->path, open_path);
	if (is_transient(err))
		goto err_out;
	if (err) {
		/* The header promises -ENOENT for every file we cannot open (gone, EACCES, ...). */
		m->err = err == -ENOEXEC ? -ENOEXEC : -ENOENT;
		module_drop_index(m);
	}
	*out = m;
	return 0;
err_out:
	module_free(m);
	return err == -ENOMEM ? err : -ENOENT;
}

/*
 * The module for id, loaded on first sight. Returns 0 with *out set (its err may hold a cached
 * failure), or -errno for failures that were not cached.
 */
static int get_module(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		      struct sym_module **out)
{
	struct mod_key k = {id->dev, id->inode, id->path ? id->path : open_path};
	struct idxtab_slot *slot;
	uint32_t h;
	int err;

	if (!k.inode && !k.path)
		return -EINVAL;
	h = mod_hash(&k);
	/* symbolizer__new() reserved the table: a hit need not. */
	slot = idxtab__find(&s->mod_tab, h, mod_eq, s, &k);
	if (slot->idx1) {
		*out = s->mods[slot->idx1 - 1];
		return 0;
	}
	if (!open_path)
		return -ENOENT;
	if (s->nr_mods >= UINT32_MAX - 1 || idxtab__reserve(&s->mod_tab) ||
	    vec_grow(&s->mods, &s->cap_mods, s->nr_mods + 1, sizeof(*s->mods), 16))
		return -ENOMEM;
	err = module_new(s, &k, open_path, &s->mods[s->nr_mods]);
	if (err)
		return err;
	/* Again: reserving may have moved the slots. */
	slot = idxtab__find(&s->mod_tab, h, mod_eq, s, &k);
	idxtab__set(&s->mod_tab, slot, (uint32_t)s->nr_mods, h);
	*out = s->mods[s->nr_mods++];
	return 0;
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

/* A table of m's that loader reads from its open file (fdesyms.c, minidebug.c): a module of its
 * own, NULL when it has no symbols or could not be read. */
static struct sym_module *load_table(struct sym_module *m, bool fde)
{
	const char *base = strrchr(m->name, '/');
	struct sym_module *d = NULL;
	Elf *elf;
	int err = -ENOMEM;

	if (m->fd < 0 || !m->text_hi)
		return NULL;
	elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (elf)
		d = calloc(1, sizeof(*d));
	if (d) {
		d->fd = -1;
		err = fde ? fdesyms_load(m, elf, base ? base + 1 : m->name, d)
			  : minidebug_load(elf, m->name, d);
	}
	if (!fde && err == -EBADMSG)
		m->s->bad_minidebug++;
	elf_end(elf);
	if (!err && d->nr_syms)
		return d;
	module_free(d);
	return NULL;
}

/* The symbol over vaddr, from the debug file's .symtab (it has the local functions) or the
 * module's own tables, else its MiniDebugInfo's, else the FDE covering it; *owner is the module
 * whose table it is in. */
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
	if (f || !m->s)
		return f;
	if (!m->mini_tried) {
		m->mini_tried = true;
		m->mini_syms = load_table(m, false);
	}
	if (m->mini_syms) {
		f = find_sym(m->mini_syms, vaddr);
		*owner = m->mini_syms;
	}
	if (f || m->s->no_infer)
		return f;
	if (!m->fde_tried) {
		m->fde_tried = true;
		m->fde_syms = load_table(m, true);
	}
	if (m->fde_syms) {
		f = find_sym(m->fde_syms, vaddr);
		*owner = m->fde_syms;
	}
	if (f)
		fdesyms_name(m, m->fde_syms, f);
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
	if (elfsyms_index_symbols(d, elf, path) || !d->nr_syms) {
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
	struct symbolizer *s;
	int err = perch_elf_init();

	if (err) {
		errno = -err;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s && idxtab__reserve(&s->mod_tab)) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_mods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	idxtab__clear(&s->mod_tab);
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
	out->inferred = owner == m->fde_syms;
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

size_t symbolizer__bad_minidebug(const struct symbolizer *s)
{
	return s ? s->bad_minidebug : 0;
}

void symbolizer__set_public_names(struct symbolizer *s, bool on)
{
	s->internal_names = !on;
}

void symbolizer__set_infer_bounds(struct symbolizer *s, bool on)
{
	s->no_infer = !on;
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

/* Whether name is a hidden alias (module.h) of the function starting at start in sm. */
static bool is_hidden_alias(const struct sym_module *sm, uint64_t start, const char *name)
{
	size_t i = search_last_le(sm->aliases, sm->nr_aliases, start, start);

	for (; i > 0 && sm->aliases[i - 1].start == start; i--) {
		if (!strcmp(sm->aliases[i - 1].name, name))
			return true;
	}
	return false;
}

/* Prefer the public alias, as perf does: a DWARF name that the symbol table holds as a local
 * alias of the global symbol covering vaddr (glibc's __GI___libc_malloc) becomes that symbol's. */
static void public_name(struct symbolizer *s, struct sym_module *m, uint64_t vaddr,
			const char **name)
{
	const struct func_sym *f;
	struct sym_module *sm;

	f = find_any_sym(m, vaddr, &sm);
	if (f && sm->nr_aliases && is_hidden_alias(sm, f->start, *name))
		*name = sym_name(s, sm, f);
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
		/* An out-of-line function DWARF leaves unnamed, or names by a hidden alias, gets
		 * its symbol's name. */
		if (!err && *n && !frames[*n - 1].function) {
			f = find_any_sym(m, vaddr, &sm);
			frames[*n - 1].function = f ? sym_name(s, sm, f) : NULL;
		} else if (!err && *n && !s->internal_names) {
			public_name(s, m, vaddr, &frames[*n - 1].function);
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
	ld = linediscs_read(fd, &text);
	if (fd != m->fd)
		close(fd);
	return ld;
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
	if (j->fd < 0 || pthread_create(&j->thread, NULL, linediscs_job_run, j)) {
		if (j->fd >= 0)
			close(j->fd);
		free(j);
		return;
	}
	m->disc_job = j;
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
		*disc = linediscs_at(m->discs, vaddr);
	return 0;
}
