// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel symbols. This part owns the table read from /proc/kallsyms (or a file in its format):
 * every symbol sorted by address, with names kept only for text symbols (the others, and end
 * markers such as _etext, are kept nameless: they end the text before them), and the arena that
 * holds the names. The file is read once, in chunks, and parsed in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ksyms.h"
#include "ksyms_impl.h"
#include "lib/search.h"
#include "lib/vec.h"

#define READ_CHUNK  (256 * 1024) /* a kallsyms line is at most a few hundred bytes */
#define ARENA_BLOCK (1024 * 1024)
#define KSYM_PAGE   4096ULL

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t cap;
	char data[];
};

struct ksyms {
	struct ksym *syms; /* sorted by addr, one per address; name == NULL: not text */
	size_t nr;
	size_t cap;
	struct arena_block *arena;
	const char *last_module; /* consecutive lines of one module share its name */
	size_t lines;
	bool any_nonzero;
	/* A cached table (ksyms_cache.c): the file mapped whole, its symbols as stored (syms:
	 * each made on first use, name NULL until then), its names and what it covers. */
	void *map;
	size_t map_len;
	const struct ksym_stored *stored;
	const char *strings;
	const struct ksym_range *ranges; /* NULL: everything */
	size_t nranges;
};

static char *arena_alloc(struct ksyms *k, size_t len)
{
	struct arena_block *b = k->arena;
	char *p;

	if (!b || b->cap - b->used < len) {
		size_t cap = len > ARENA_BLOCK ? len : ARENA_BLOCK;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = k->arena;
		k->arena = b;
	}
	p = b->data + b->used;
	b->used += len;
	return p;
}

static const char *arena_strndup(struct ksyms *k, const char *s, size_t len)
{
	char *p = arena_alloc(k, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static bool is_text_type(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Markers typed 'T' that end a text section rather than start a function. */
static bool is_text_end(const char *name, size_t len)
{
	return (len == 6 && memcmp(name, "_etext", 6) == 0) ||
	       (len == 10 && memcmp(name, "_einittext", 10) == 0);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int push_sym(struct ksyms *k, const struct ksym *sym)
{
	if (vec_grow(&k->syms, &k->cap, k->nr + 1, sizeof(*k->syms), 4096))
		return -ENOMEM;
	k->syms[k->nr++] = *sym;
	return 0;
}

static const char *module_name(struct ksyms *k, const char *mod, size_t len)
{
	const char *last = k->last_module;

	if (last && strncmp(last, mod, len) == 0 && last[len] == '\0')
		return last;
	k->last_module = arena_strndup(k, mod, len);
	return k->last_module;
}

/* One NUL-terminated line: "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]". Lines that do not
 * look like that are skipped. */
static int parse_line(struct ksyms *k, const char *line)
{
	struct ksym sym = {0};
	const char *p = line, *name;
	size_t digits = 0, name_len;
	char type;
	int d;

	for (; (d = hex_digit(*p)) >= 0; p++, digits++)
		sym.addr = sym.addr << 4 | (uint64_t)d;
	if (!digits || digits > 16 || p[0] != ' ' || !p[1] || p[2] != ' ')
		return 0;
	type = p[1];
	name = p + 3;
	name_len = strcspn(name, "\t");
	if (!name_len)
		return 0;
	k->lines++;
	if (sym.addr)
		k->any_nonzero = true;
	if (is_text_type(type) && !is_text_end(name, name_len)) {
		const char *mod = name + name_len;

		sym.name = arena_strndup(k, name, name_len);
		if (!sym.name)
			return -ENOMEM;
		if (mod[0] == '\t' && mod[1] == '[') {
			mod += 2;
			sym.module = module_name(k, mod, strcspn(mod, "]"));
			if (!sym.module)
				return -ENOMEM;
		}
	}
	return push_sym(k, &sym);
}

/* Parse the complete lines of buf[0, *have), keep the unfinished tail at the front. */
static int parse_chunk(struct ksyms *k, char *buf, size_t *have)
{
	char *start = buf, *end = buf + *have, *nl;
	int err;

	while ((nl = memchr(start, '\n', (size_t)(end - start)))) {
		*nl = '\0';
		err = parse_line(k, start);
		if (err)
			return err;
		start = nl + 1;
	}
	*have = (size_t)(end - start);
	memmove(buf, start, *have);
	return 0;
}

static int read_file(struct ksyms *k, const char *path)
{
	size_t have = 0;
	char *buf;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(READ_CHUNK + 1);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t n = read(fd, buf + have, READ_CHUNK - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		err = parse_chunk(k, buf, &have);
		if (err)
			goto cleanup;
		if (have == READ_CHUNK) {
			err = -EINVAL; /* a "line" longer than any symbol can be */
			goto cleanup;
		}
	}
	if (have) { /* the last line had no newline */
		buf[have] = '\0';
		err = parse_line(k, buf);
	}
cleanup:
	free(buf);
	close(fd);
	return err;
}

static unsigned int leading_underscores(const char *s)
{
	unsigned int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int addr_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return 0;
}

/* Of two symbols at one address, whether a is the one to show: text first, then the name with
 * fewer leading underscores, then by name, so the choice does not depend on the order read. */
static bool preferred(const struct ksym *a, const struct ksym *b)
{
	unsigned int ua, ub;

	if (!a->name || !b->name)
		return a->name && !b->name;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub;
	return strcmp(a->name, b->name) < 0;
}

static bool same_module(const char *a, const char *b)
{
	if (a == b)
		return true;
	return a && b && strcmp(a, b) == 0;
}

/*
 * Where the text symbol at i stops being vouched for, or 0 when the next symbol ends it. kallsyms
 * has no sizes: a symbol runs to the next one, except that the last symbol of the table or of a
 * module (the next one being far away, in another module) gets the rest of its page and the next
 * one (perf allows about as much).
 */
static uint64_t text_limit(const struct ksyms *k, size_t i)
{
	const struct ksym *s = &k->syms[i], *next = i + 1 < k->nr ? &k->syms[i + 1] : NULL;
	uint64_t limit;

	if (!s->name)
		return 0;
	if (next && (!next->name || same_module(s->module, next->module)))
		return 0;
	if (s->addr > UINT64_MAX - 2 * KSYM_PAGE)
		return 0;
	limit = (s->addr & ~(KSYM_PAGE - 1)) + 2 * KSYM_PAGE;
	return next && next->addr <= limit ? 0 : limit;
}

/* Sort, keep one symbol per address, and add nameless end entries after the text that
 * text_limit() bounds. */
static int build_table(struct ksyms *k)
{
	struct ksym *out;
	size_t i, n = 0, extra = 0;
	bool sorted = true;

	/* /proc/kallsyms comes sorted; other files need not. */
	for (i = 1; i < k->nr && sorted; i++)
		sorted = k->syms[i - 1].addr <= k->syms[i].addr;
	if (!sorted)
		qsort(k->syms, k->nr, sizeof(*k->syms), addr_cmp);
	for (i = 0; i < k->nr; i++) {
		if (n && k->syms[n - 1].addr == k->syms[i].addr) {
			if (preferred(&k->syms[i], &k->syms[n - 1]))
				k->syms[n - 1] = k->syms[i];
			continue;
		}
		k->syms[n++] = k->syms[i];
	}
	k->nr = n;
	for (i = 0; i < k->nr; i++)
		extra += text_limit(k, i) != 0;
	if (!extra)
		return 0;
	out = calloc(k->nr + extra, sizeof(*out));
	if (!out)
		return -ENOMEM;
	for (i = 0, n = 0; i < k->nr; i++) {
		uint64_t limit = text_limit(k, i);

		out[n++] = k->syms[i];
		if (limit)
			out[n++] = (struct ksym){.addr = limit};
	}
	free(k->syms);
	k->syms = out;
	k->nr = n;
	k->cap = n;
	return 0;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *k;
	int err;

	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	err = read_file(k, path ? path : "/proc/kallsyms");
	if (err)
		goto err_out;
	if (!k->lines) {
		err = -ENODATA;
		goto err_out;
	}
	/* kptr_restrict shows every address as zero to readers without CAP_SYSLOG. */
	if (!k->any_nonzero) {
		err = -EACCES;
		goto err_out;
	}
	err = build_table(k);
	if (err)
		goto err_out;
	return k;
err_out:
	ksyms__free(k);
	errno = -err;
	return NULL;
}

void ksyms__free(struct ksyms *k)
{
	struct arena_block *b, *next;

	if (!k)
		return;
	for (b = k->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	free(k->syms);
	if (k->map)
		munmap(k->map, k->map_len);
	free(k);
}

/* Stored symbol i of a cached table as a struct ksym, made the first time (a memo: the table
 * stays const to its readers). */
static const struct ksym *stored_at(const struct ksyms *k, size_t i)
{
	struct ksym *s = &k->syms[i];
	const struct ksym_stored *st = &k->stored[i];

	if (!s->addr) {
		s->name = st->name == KSYM_NO_STR ? NULL : k->strings + st->name;
		s->module = st->module == KSYM_NO_STR ? NULL : k->strings + st->module;
		s->addr = st->addr;
	}
	return s;
}

size_t ksyms__count(const struct ksyms *k)
{
	return k->nr;
}

const struct ksym *ksyms__at(const struct ksyms *k, size_t i)
{
	return k->stored ? stored_at(k, i) : &k->syms[i];
}

struct ksym_range ksyms__core_range(const struct ksyms *k)
{
	struct ksym_range r = {0, 0};

	for (size_t i = 0; i < k->nr; i++) {
		const struct ksym *s = &k->syms[i];

		if (!s->name || s->module)
			continue;
		if (!r.hi)
			r.lo = s->addr;
		if (s->addr <= UINT64_MAX - 2 * KSYM_PAGE)
			r.hi = (s->addr & ~(KSYM_PAGE - 1)) + 2 * KSYM_PAGE;
	}
	return r;
}

struct ksyms *ksyms__from_mapping(void *map, size_t len, const struct ksym_stored *syms,
				  size_t nsyms, const char *strings,
				  const struct ksym_range *ranges, size_t nranges)
{
	struct ksyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	/* Zero pages until used: a run touches the few symbols its samples hit. */
	k->syms = calloc(nsyms ? nsyms : 1, sizeof(*k->syms));
	if (!k->syms) {
		free(k);
		return NULL;
	}
	k->map = map;
	k->map_len = len;
	k->stored = syms;
	k->nr = nsyms;
	k->cap = nsyms ? nsyms : 1;
	k->strings = strings;
	k->ranges = ranges;
	k->nranges = nranges;
	return k;
}

bool ksyms__covers(const struct ksyms *k, uint64_t addr)
{
	if (!k || !k->ranges)
		return true;
	for (size_t i = 0; i < k->nranges; i++) {
		if (addr >= k->ranges[i].lo && addr < k->ranges[i].hi)
			return true;
	}
	return false;
}

const struct ksym *ksyms__find(const struct ksyms *k, uint64_t addr)
{
	size_t lo;

	if (!k)
		return NULL;
	if (k->stored) {
		lo = search_last_le(k->stored, k->nr, addr, addr);
		if (!lo || k->stored[lo - 1].name == KSYM_NO_STR)
			return NULL;
		return stored_at(k, lo - 1);
	}
	lo = search_last_le(k->syms, k->nr, addr, addr);
	if (!lo || !k->syms[lo - 1].name)
		return NULL;
	return &k->syms[lo - 1];
}
