// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The line cache (see linecache.h). File layout, per build-id and naming rules: the magic "PERCHLC1", then
 * records, each appended with one write():
 *   u64 offset, u32 n, n x (u8 inlined, u32 line, u16 function length, function bytes,
 *   u16 file length, file bytes)   (length 0xffff: NULL)
 * Records are read until the first one that does not parse; later records for an offset win.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cachedir.h"
#include "linecache.h"
#include "lib/log.h"
#include "lib/safefile.h"
#include "lib/vec.h"
#include "lib/u64map.h"

#define MAGIC "PERCHLC1"
/* DIR/BUILDID.nNAMING: a chain named under other rules is never read */
#define LINECACHE_FILE "%s/%s.n" SYMBOLIZER_NAMING
#define NO_STR	       0xffff
#define MAX_CHAIN      256
#define MAX_FILE       (256u << 20)
#define MAX_ID_LEN     128

struct lc_module {
	char build_id[MAX_ID_LEN + 1];
	struct u64map index; /* offset -> entry */
	struct lc_entry *entries;
	size_t nentries, cap;
	struct sym_frame *frames; /* every entry's chain, back to back */
	size_t nframes, capframes;
	char *strings; /* the file as read (strings point into it), and added ones */
	char **added;  /* strings copied by put */
	size_t nadded, capadded;
	unsigned char *pending; /* records to append */
	size_t npending, cappending;
};

struct lc_entry {
	size_t first, n;
};

struct linecache {
	char *dir;
	struct lc_module **mods;
	size_t nmods, capmods;
};

struct linecache *linecache__new(const char *dir)
{
	struct linecache *lc = calloc(1, sizeof(*lc));

	if (!lc)
		return NULL;
	lc->dir = dir ? strdup(dir) : cachedir__path("lines");
	if (!lc->dir || (dir && cachedir__mkdirs(lc->dir)) || !safefile__owned_dir(lc->dir)) {
		if (lc->dir)
			log_debug("line cache: %s is not this user's directory: no cache", lc->dir);
		free(lc->dir);
		free(lc);
		return NULL;
	}
	return lc;
}

struct cur {
	char *p;
	size_t left;
};

static bool take(struct cur *c, void *out, size_t n)
{
	if (c->left < n)
		return false;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

/* A string in place: the length field is overwritten with nothing; the bytes are copied one
 * place back so each string ends in a NUL where the next field started. */
static bool take_str(struct cur *c, const char **s)
{
	uint16_t len;
	char *start = c->p;

	if (!take(c, &len, sizeof(len)))
		return false;
	if (len == NO_STR) {
		*s = NULL;
		return true;
	}
	if (c->left < len)
		return false;
	memmove(start, c->p, len);
	start[len] = '\0'; /* over the length field's second byte or the string's first */
	*s = start;
	c->p += len;
	c->left -= len;
	return true;
}

static int add_entry(struct lc_module *m, uint64_t offset, size_t first, size_t n)
{
	if (vec_grow(&m->entries, &m->cap, m->nentries + 1, sizeof(*m->entries), 16) ||
	    u64map__put(&m->index, offset, m->nentries))
		return -ENOMEM;
	m->entries[m->nentries++] = (struct lc_entry){first, n};
	return 0;
}

/* Records of the file, until the first that does not parse. Strings stay in m->strings. */
static void parse(struct lc_module *m, size_t len)
{
	struct cur c = {m->strings + 8, len - 8};

	while (c.left) {
		uint64_t off;
		uint32_t n;
		size_t first = m->nframes;

		if (!take(&c, &off, 8) || !take(&c, &n, 4) || n > MAX_CHAIN ||
		    vec_grow(&m->frames, &m->capframes, m->nframes + n + 1, sizeof(*m->frames), 16))
			return;
		for (uint32_t i = 0; i < n; i++) {
			struct sym_frame *f = &m->frames[m->nframes];
			uint8_t inl;
			uint32_t line;

			if (!take(&c, &inl, 1) || !take(&c, &line, 4) ||
			    !take_str(&c, &f->function) || !take_str(&c, &f->file)) {
				m->nframes = first;
				return;
			}
			f->inlined = inl;
			f->line = line;
			m->nframes++;
		}
		if (add_entry(m, off, first, n))
			return;
	}
}

/* take_str() writes a NUL one byte past a string's end (over the next field, already read):
 * the buffer needs one byte of room after the last record. */
static void load(struct lc_module *m, const char *path)
{
	struct stat st;
	int fd = safefile__open(AT_FDCWD, path, O_RDONLY, 0);
	size_t have = 0;

	if (fd < 0)
		return;
	/* Only a file this user wrote and no one else can change. */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < 8 || (uint64_t)st.st_size > MAX_FILE)
		goto out;
	m->strings = malloc((size_t)st.st_size + 1);
	if (!m->strings)
		goto out;
	while (have < (size_t)st.st_size) {
		ssize_t n = read(fd, m->strings + have, (size_t)st.st_size - have);

		if (n <= 0)
			break;
		have += (size_t)n;
	}
	if (have >= 8 && !memcmp(m->strings, MAGIC, 8))
		parse(m, have);
out:
	close(fd);
}

static struct lc_module *get_module(struct linecache *lc, const char *build_id)
{
	struct lc_module *m;
	char *path;

	for (size_t i = 0; i < lc->nmods; i++) {
		if (!strcmp(lc->mods[i]->build_id, build_id))
			return lc->mods[i];
	}
	if (strlen(build_id) > MAX_ID_LEN ||
	    strspn(build_id, "0123456789abcdef") != strlen(build_id))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m || vec_grow(&lc->mods, &lc->capmods, lc->nmods + 1, sizeof(*lc->mods), 8)) {
		free(m);
		return NULL;
	}
	lc->mods[lc->nmods++] = m;
	strcpy(m->build_id, build_id);
	if (asprintf(&path, LINECACHE_FILE, lc->dir, build_id) > 0) {
		load(m, path);
		free(path);
	}
	return m;
}

bool linecache__get(struct linecache *lc, const char *build_id, uint64_t offset,
		    const struct sym_frame **frames, size_t *n)
{
	struct lc_module *m = lc && build_id ? get_module(lc, build_id) : NULL;
	uint64_t idx;

	if (!m || !u64map__get(&m->index, offset, &idx))
		return false;
	*frames = m->frames + m->entries[idx].first;
	*n = m->entries[idx].n;
	return true;
}

static void put_bytes(struct lc_module *m, const void *p, size_t n)
{
	if (vec_grow(&m->pending, &m->cappending, m->npending + n, 1, 256))
		return;
	memcpy(m->pending + m->npending, p, n);
	m->npending += n;
}

static void put_str(struct lc_module *m, const char *s)
{
	size_t len = s ? strlen(s) : 0;
	uint16_t l = s && len < NO_STR ? (uint16_t)len : NO_STR;

	put_bytes(m, &l, sizeof(l));
	if (l != NO_STR)
		put_bytes(m, s, l);
}

static const char *keep(struct lc_module *m, const char *s)
{
	char *c;

	if (!s || vec_grow(&m->added, &m->capadded, m->nadded + 1, sizeof(*m->added), 16))
		return NULL;
	c = strdup(s);
	if (c)
		m->added[m->nadded++] = c;
	return c;
}

void linecache__put(struct linecache *lc, const char *build_id, uint64_t offset,
		    const struct sym_frame *frames, size_t n)
{
	struct lc_module *m = lc && build_id ? get_module(lc, build_id) : NULL;
	uint32_t n32 = (uint32_t)n;
	size_t first;

	if (!m || n > MAX_CHAIN ||
	    vec_grow(&m->frames, &m->capframes, m->nframes + n + 1, sizeof(*m->frames), 16))
		return;
	put_bytes(m, &offset, 8);
	put_bytes(m, &n32, 4);
	first = m->nframes;
	for (size_t i = 0; i < n; i++) {
		uint8_t inl = frames[i].inlined;
		uint32_t line = frames[i].line;

		put_bytes(m, &inl, 1);
		put_bytes(m, &line, 4);
		put_str(m, frames[i].function);
		put_str(m, frames[i].file);
		m->frames[m->nframes++] = (struct sym_frame){keep(m, frames[i].function),
							     keep(m, frames[i].file), line, inl};
	}
	add_entry(m, offset, first, n);
}

/* Append the module's new records with one write (a new file starts with the magic), under an
 * exclusive lock: two perch processes that find the file empty must not both write the magic. */
static void flush(const struct linecache *lc, struct lc_module *m)
{
	char *path;
	struct stat st;
	int fd;

	if (!m->npending || asprintf(&path, LINECACHE_FILE, lc->dir, m->build_id) < 0)
		return;
	fd = safefile__open(AT_FDCWD, path, O_WRONLY | O_APPEND | O_CREAT, 0600);
	free(path);
	if (fd < 0)
		return;
	if (!flock(fd, LOCK_EX) && !fstat(fd, &st) && st.st_uid == geteuid() &&
	    !(st.st_mode & 022)) {
		if (st.st_size == 0 && write(fd, MAGIC, 8) != 8) {
			close(fd);
			return;
		}
		if (write(fd, m->pending, m->npending) < 0) {
			/* Nothing to do: the next run resolves these from DWARF again. */
		}
	}
	close(fd);
}

void linecache__free(struct linecache *lc)
{
	if (!lc)
		return;
	for (size_t i = 0; i < lc->nmods; i++) {
		struct lc_module *m = lc->mods[i];

		flush(lc, m);
		for (size_t k = 0; k < m->nadded; k++)
			free(m->added[k]);
		free(m->added);
		free(m->entries);
		free(m->frames);
		free(m->strings);
		free(m->pending);
		u64map__clear(&m->index);
		free(m);
	}
	free(lc->mods);
	free(lc->dir);
	free(lc);
}
