// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space symbolizer. This part owns the module cache (a hash table keyed by (dev, inode), or
 * by path when no inode is known), one function index per module (built once with libelf from
 * .symtab and .dynsym, sorted by address, searched by binary search), the PT_LOAD table that turns
 * file offsets into ELF virtual addresses, and the open file of every module, kept so its bytes
 * stay readable after the process that mapped it is gone. Failures are cached as well, so a
 * module that cannot be read is tried once, not once per address.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolizer.h"

#define INITIAL_BUCKETS 64

struct func_sym {
	uint64_t start;
	uint64_t end; /* exclusive */
	const char *name;
};

struct load_seg {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

struct module {
	struct module *next; /* hash chain */
	uint64_t dev;
	uint64_t inode;
	char *path; /* the key when inode == 0, else NULL */
	int err;    /* cached failure (-ENOENT, -ENOEXEC), or 0 */
	int fd;
	struct func_sym *syms; /* sorted by start, no two with the same start */
	size_t nr_syms;
	struct load_seg *segs;
	size_t nr_segs;
	char *names; /* one arena holding every name in syms */
};

struct symbolizer {
	struct module **buckets;
	size_t nr_buckets; /* a power of two */
	size_t nr_modules;
};

/* A symbol as read from the ELF file, before duplicates are merged. */
struct cand {
	uint64_t addr;
	uint64_t size;
	uint64_t sec_end; /* end of its section: bounds a zero-size symbol */
	const char *name; /* points into libelf's string table until the index is built */
	unsigned char bind;
};

struct cand_vec {
	struct cand *v;
	size_t nr;
	size_t cap;
};

static int elf_init_err;

static void elf_init_once(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		elf_init_err = -ENOTSUP;
}

static void log_elf(const char *path, const char *what)
{
	fprintf(stderr, "symbolize: %s: %s: %s\n", path, what, elf_errmsg(-1));
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_key(uint64_t dev, uint64_t inode, const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (inode)
		return mix64(mix64(dev) ^ inode);
	for (; *path; path++)
		h = (h ^ (unsigned char)*path) * 0x100000001b3ULL;
	return mix64(h);
}

static bool module_matches(const struct module *m, uint64_t dev, uint64_t inode, const char *path)
{
	if (inode)
		return !m->path && m->dev == dev && m->inode == inode;
	return m->path && strcmp(m->path, path) == 0;
}

static void module_free(struct module *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m->syms);
	free(m->segs);
	free(m->names);
	free(m->path);
	free(m);
}

/* After a failed load: a cached failure keeps no half-built index. */
static void module_drop_index(struct module *m)
{
	free(m->syms);
	free(m->segs);
	free(m->names);
	m->syms = NULL;
	m->segs = NULL;
	m->names = NULL;
	m->nr_syms = 0;
	m->nr_segs = 0;
}

static int cand_push(struct cand_vec *cv, const struct cand *c)
{
	if (cv->nr == cv->cap) {
		size_t cap = cv->cap ? cv->cap * 2 : 256;
		struct cand *v = reallocarray(cv->v, cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		cv->v = v;
		cv->cap = cap;
	}
	cv->v[cv->nr++] = *c;
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

/* Function symbols of one symbol table (SHT_SYMTAB or SHT_DYNSYM) into cv. */
static int collect_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct cand_vec *cv)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;
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

/*
 * Merge aliases (one entry per address, the preferred name) and copy the names into one arena so
 * the ELF handle can be closed.
 */
static int build_index(struct module *m, struct cand_vec *cv)
{
	size_t i, n = 0, names_len = 0;
	char *p;

	if (!cv->nr)
		return 0;
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

static int index_segments(struct module *m, Elf *elf, const char *path)
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
		m->segs[m->nr_segs].offset = ph.p_offset;
		m->segs[m->nr_segs].vaddr = ph.p_vaddr;
		m->segs[m->nr_segs].filesz = ph.p_filesz;
		m->nr_segs++;
	}
	return 0;
}

static int index_symbols(struct module *m, Elf *elf, const char *path)
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
	return err;
}

static int module_index(struct module *m, int fd, const char *path)
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
static int module_load(struct module *m, const char *open_path)
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
	struct module **b = calloc(nr, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 0; i < s->nr_buckets; i++) {
		struct module *m, *next;

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

/*
 * The module for id, loaded on first sight. Returns 0 with *out set (its err may hold a cached
 * failure), or -errno for failures that were not cached.
 */
static int get_module(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		      struct module **out)
{
	const char *key_path = id->path ? id->path : open_path;
	struct module *m;
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
	m->dev = id->dev;
	m->inode = id->inode;
	if (!id->inode) {
		m->path = strdup(key_path);
		if (!m->path) {
			err = -ENOMEM;
			goto err_out;
		}
	}
	err = module_load(m, open_path);
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

static bool offset_to_vaddr(const struct module *m, uint64_t off, uint64_t *vaddr)
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

static uint64_t vaddr_to_offset(const struct module *m, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < m->nr_segs; i++) {
		const struct load_seg *g = &m->segs[i];

		if (vaddr >= g->vaddr && vaddr - g->vaddr < g->filesz)
			return vaddr - g->vaddr + g->offset;
	}
	return 0;
}

/* The symbol covering vaddr: the last one starting at or below it, if vaddr is before its end. */
static const struct func_sym *find_sym(const struct module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nr_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= m->syms[lo - 1].end)
		return NULL;
	return &m->syms[lo - 1];
}

struct symbolizer *symbolizer__new(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct symbolizer *s;

	pthread_once(&once, elf_init_once);
	if (elf_init_err) {
		fprintf(stderr, "symbolize: libelf initialization: %s\n", elf_errmsg(-1));
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
		struct module *m, *next;

		for (m = s->buckets[i]; m; m = next) {
			next = m->next;
			module_free(m);
		}
	}
	free(s->buckets);
	free(s);
}

int symbolizer__resolve(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
			uint64_t file_offset, struct sym_result *out)
{
	const struct func_sym *f;
	struct module *m;
	int err;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!s || !id)
		return -EINVAL;
	err = get_module(s, id, open_path, &m);
	if (err)
		return err;
	if (m->err)
		return m->err;
	/* An offset outside every PT_LOAD names no code: report it as-is, without a name. */
	out->vaddr = file_offset;
	if (!offset_to_vaddr(m, file_offset, &out->vaddr))
		return 0;
	f = find_sym(m, out->vaddr);
	if (!f)
		return 0;
	out->name = f->name;
	out->sym_start = f->start;
	out->sym_file_offset = vaddr_to_offset(m, f->start);
	return 0;
}

int symbolizer__read(struct symbolizer *s, const struct sym_module_id *id, const char *open_path,
		     uint64_t file_offset, void *buf, size_t len)
{
	struct module *m;
	size_t done = 0;
	int err;

	if (!s || !id || (!buf && len))
		return -EINVAL;
	if (file_offset > INT64_MAX || len > INT64_MAX - file_offset)
		return -ERANGE;
	err = get_module(s, id, open_path, &m);
	if (err)
		return err;
	if (m->err)
		return m->err;
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
