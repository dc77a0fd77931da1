// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * JIT symbol maps in perf's format. This part owns the index built from one /tmp/perf-PID.map:
 * the names, copied into one arena, and a sorted list of non-overlapping address ranges, each
 * naming the symbol that owns it. JITs reuse code memory and append the new symbol to the map, so
 * symbols may overlap; the index is the map "painted" in file order (later lines over earlier
 * ones), which a sweep over the sorted endpoints builds in O(n log n) and which any lookup then
 * searches in O(log n), however the symbols overlap.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"
#include "lib/safefile.h"
#include "lib/search.h"
#include "lib/vec.h"

#define READ_MIN (64 * 1024)

/* One symbol line while loading. name_off is into the file buffer, then into the arena. */
struct pm_entry {
	uint64_t start;
	uint64_t end;
	size_t name_off;
	size_t name_len;
	size_t seq; /* line order: the larger wins where symbols overlap */
};

/* [start, end) belongs to the symbol that starts at sym_start. */
struct pm_range {
	uint64_t start;
	uint64_t end;
	uint64_t sym_start;
	const char *name; /* in the arena */
};

struct perfmap {
	struct pm_range *ranges; /* sorted by start, non-overlapping */
	size_t nr;
	char *names;
	size_t count;
	size_t skipped;
	uint64_t unread; /* bytes past PERFMAP_MAX_BYTES (or the budget's share) */
	uint64_t read;	 /* bytes read */
	uint64_t cost;	 /* what it holds: PERFMAP_SYMBOL_COST a symbol and its text */
	bool over_budget;
};

/* PERFMAP_SYMBOL_COST: what a symbol costs to index besides its text: its entry, endpoints and
 * heap slot while loading (64 bytes), its ranges after (up to 64). */
_Static_assert(sizeof(struct pm_entry) + 2 * sizeof(uint64_t) + sizeof(size_t) +
			       2 * sizeof(struct pm_range) <=
		       PERFMAP_SYMBOL_COST + 64,
	       "what a symbol costs");

/* Up to max bytes of fd, NUL-terminated, in *bufp (the caller frees it). Past max, the partial
 * last line is dropped and *more says whether anything was left unread. */
static int read_capped(int fd, size_t size_hint, size_t max, char **bufp, size_t *lenp, bool *more)
{
	size_t len = 0, cap = 0, first = size_hint >= READ_MIN ? size_hint + 1 : READ_MIN;
	char *buf = NULL, c;
	int err;

	if (first > max + 1)
		first = max + 1;
	err = vec_grow(&buf, &cap, 1, 1, first);
	if (err)
		goto cleanup;
	while (len < max) {
		ssize_t n;

		err = vec_grow(&buf, &cap, len + 2, 1, first);
		if (err)
			goto cleanup;
		/* cap doubles past max + 1; never read past max. */
		n = read(fd, buf + len, cap - len - 1 < max - len ? cap - len - 1 : max - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*more = len >= max && read(fd, &c, 1) > 0;
	while (*more && len && buf[len - 1] != '\n')
		len--; /* a line cut at the cap would name a symbol wrongly */
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	buf = NULL;
cleanup:
	free(buf);
	return err;
}

/* Open the map and check who wrote it: an fd, or -errno. */
static int open_map(int root_fd, const char *path, uid_t owner, struct stat *st)
{
	int fd = root_fd == AT_FDCWD ? safefile__open(AT_FDCWD, path, O_RDONLY, 0)
				     : safefile__open_in_root(root_fd, path);

	if (fd < 0)
		return fd;
	if (fstat(fd, st)) {
		close(fd);
		return -errno;
	}
	/* Written by the process itself (or by root): not a file it had no right to read. */
	if (owner != PERFMAP_ANY_OWNER && st->st_uid != owner && st->st_uid != 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
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

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* A hex number at *p, 0x optional, at most 64 bits (leading zeros allowed). */
static bool parse_hex(const char **p, const char *end, uint64_t *val)
{
	const char *s = *p;
	size_t digits = 0, significant = 0;
	uint64_t v = 0;
	int d;

	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && (d = hex_digit(*s)) >= 0; s++, digits++) {
		if (!v && !d)
			continue;
		if (++significant > 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits)
		return false;
	*p = s;
	*val = v;
	return true;
}

/* At least one blank, then past all of them. */
static bool skip_blanks(const char **p, const char *end)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* One line of [line, end) without its newline: "START SIZE NAME", or false to skip it. */
static bool parse_line(const char *line, const char *end, struct pm_entry *e)
{
	const char *p = line;
	uint64_t size;

	if (memchr(line, '\0', (size_t)(end - line)))
		return false;
	while (end > line && is_blank(end[-1]))
		end--;
	while (p < end && is_blank(*p))
		p++;
	if (!parse_hex(&p, end, &e->start) || !skip_blanks(&p, end))
		return false;
	if (!parse_hex(&p, end, &size) || !skip_blanks(&p, end))
		return false;
	if (p == end || size > UINT64_MAX - e->start)
		return false;
	e->end = e->start + size;
	e->name_off = (size_t)(p - line);
	e->name_len = (size_t)(end - p);
	return true;
}

static int push_entry(struct pm_entry **v, size_t *nr, size_t *cap, const struct pm_entry *e)
{
	if (vec_grow(v, cap, *nr + 1, sizeof(**v), 1024))
		return -ENOMEM;
	(*v)[(*nr)++] = *e;
	return 0;
}

/* Every symbol line of buf into *entries (name_off into buf); other lines count as skipped. The
 * lines past max_cost (m->cost: the text so far and PERFMAP_SYMBOL_COST a symbol) are unread. */
static int parse_all(struct perfmap *m, const char *buf, size_t len, size_t max_cost,
		     struct pm_entry **entries, size_t *names_len)
{
	const char *p = buf, *end = buf + len;
	size_t cap = 0;
	int err;

	*names_len = 0;
	while (p < end) {
		if ((size_t)(p - buf) + (m->count + 1) * PERFMAP_SYMBOL_COST > max_cost) {
			m->unread += (uint64_t)(end - p);
			break;
		}
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct pm_entry e;

		if (parse_line(p, eol, &e)) {
			e.name_off += (size_t)(p - buf);
			e.seq = m->count;
			err = push_entry(entries, &m->count, &cap, &e);
			if (err)
				return err;
			*names_len += e.name_len + 1;
		} else {
			m->skipped++;
		}
		p = nl ? nl + 1 : end;
	}
	m->cost = (uint64_t)(p - buf) + m->count * PERFMAP_SYMBOL_COST;
	return 0;
}

/* Copy the names out of the file buffer into one arena; name_off then points into it. */
static int copy_names(struct perfmap *m, const char *buf, struct pm_entry *entries,
		      size_t names_len)
{
	size_t i, off = 0;

	m->names = malloc(names_len ? names_len : 1);
	if (!m->names)
		return -ENOMEM;
	for (i = 0; i < m->count; i++) {
		memcpy(m->names + off, buf + entries[i].name_off, entries[i].name_len);
		m->names[off + entries[i].name_len] = '\0';
		entries[i].name_off = off;
		off += entries[i].name_len + 1;
	}
	return 0;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct pm_entry *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* A max-heap of entry indices by seq: the top is the latest symbol among those pushed. */
static void heap_push(const struct pm_entry *e, size_t *heap, size_t *len, size_t idx)
{
	size_t i = (*len)++;

	while (i && e[heap[(i - 1) / 2]].seq < e[idx].seq) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = idx;
}

static void heap_pop(const struct pm_entry *e, size_t *heap, size_t *len)
{
	size_t i = 0, last = heap[--(*len)];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *len)
			break;
		if (c + 1 < *len && e[heap[c + 1]].seq > e[heap[c]].seq)
			c++;
		if (e[heap[c]].seq <= e[last].seq)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*len)
		heap[i] = last;
}

/* Sorted, unique endpoints of every symbol; returns how many. */
static size_t endpoints(const struct pm_entry *e, size_t n, uint64_t *coords)
{
	size_t i, nc = 0;

	for (i = 0; i < n; i++) {
		coords[2 * i] = e[i].start;
		coords[2 * i + 1] = e[i].end;
	}
	qsort(coords, 2 * n, sizeof(*coords), u64_cmp);
	for (i = 0; i < 2 * n; i++) {
		if (!nc || coords[nc - 1] != coords[i])
			coords[nc++] = coords[i];
	}
	return nc;
}

/* Give [from, to) to symbol e, merging with the range before when that is the same symbol's. */
static void add_range(struct perfmap *m, uint64_t from, uint64_t to, const struct pm_entry *e)
{
	struct pm_range *last = m->nr ? &m->ranges[m->nr - 1] : NULL;
	const char *name = m->names + e->name_off;

	if (last && last->end == from && last->sym_start == e->start && last->name == name) {
		last->end = to;
		return;
	}
	m->ranges[m->nr++] =
		(struct pm_range){.start = from, .end = to, .sym_start = e->start, .name = name};
}

/*
 * The sweep: between two consecutive endpoints the set of covering symbols does not change, and
 * the owner is the latest of them. The heap holds the symbols started so far; those that have
 * ended leave it lazily, when they reach the top.
 */
static int build_ranges(struct perfmap *m, struct pm_entry *e)
{
	size_t n = m->count, nc, k, i = 0, hlen = 0;
	uint64_t *coords = NULL;
	size_t *heap = NULL;
	int err = 0;

	if (!n)
		return 0;
	qsort(e, n, sizeof(*e), entry_cmp);
	coords = calloc(2 * n, sizeof(*coords));
	heap = calloc(n, sizeof(*heap));
	m->ranges = calloc(2 * n, sizeof(*m->ranges));
	if (!coords || !heap || !m->ranges) {
		err = -ENOMEM;
		goto cleanup;
	}
	nc = endpoints(e, n, coords);
	for (k = 0; k + 1 < nc; k++) {
		uint64_t x = coords[k];

		for (; i < n && e[i].start <= x; i++) {
			if (e[i].end > e[i].start)
				heap_push(e, heap, &hlen, i);
		}
		while (hlen && e[heap[0]].end <= x)
			heap_pop(e, heap, &hlen);
		if (hlen)
			add_range(m, x, coords[k + 1], &e[heap[0]]);
	}
cleanup:
	free(coords);
	free(heap);
	return err;
}

/* Read the map from fd into m, up to max bytes and max_cost. */
static int load_fd(struct perfmap *m, int fd, const struct stat *st, size_t max, size_t max_cost)
{
	struct pm_entry *entries = NULL;
	size_t len = 0, names_len = 0;
	char *buf = NULL;
	bool more = false;
	int err;

	err = read_capped(fd, st->st_size > 0 ? (size_t)st->st_size : 0, max, &buf, &len, &more);
	if (more)
		m->unread = (uint64_t)st->st_size > max ? (uint64_t)st->st_size - max : 1;
	m->read = len + m->unread; /* what a cut line cost to read too, roughly */
	if (!err)
		err = parse_all(m, buf, len, max_cost, &entries, &names_len);
	if (!err)
		err = copy_names(m, buf, entries, names_len);
	free(buf);
	if (!err)
		err = build_ranges(m, entries);
	free(entries);
	return err;
}

static struct perfmap *load_capped(int root_fd, const char *path, uid_t owner, size_t max,
				   size_t max_cost)
{
	struct perfmap *m;
	struct stat st;
	int fd, err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	fd = open_map(root_fd, path, owner, &st);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	err = m ? load_fd(m, fd, &st, max, max_cost) : -ENOMEM;
	close(fd);
	if (err) {
		perfmap__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

struct perfmap *perfmap__load_at(int root_fd, const char *path, uid_t owner)
{
	return load_capped(root_fd, path, owner, PERFMAP_MAX_BYTES, SIZE_MAX);
}

struct perfmap *perfmap__load(const char *path)
{
	return perfmap__load_at(AT_FDCWD, path, PERFMAP_ANY_OWNER);
}

void perfmap__free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->ranges);
	free(m->names);
	free(m);
}

const char *perfmap__find(const struct perfmap *m, uint64_t addr, uint64_t *start)
{
	const struct pm_range *r;
	size_t lo;

	if (!m)
		return NULL;
	lo = search_last_le(m->ranges, m->nr, start, addr);
	if (!lo)
		return NULL;
	r = &m->ranges[lo - 1];
	if (addr >= r->end)
		return NULL;
	if (start)
		*start = r->sym_start;
	return r->name;
}

size_t perfmap__count(const struct perfmap *m)
{
	return m ? m->count : 0;
}

size_t perfmap__skipped(const struct perfmap *m)
{
	return m ? m->skipped : 0;
}

uint64_t perfmap__unread(const struct perfmap *m)
{
	return m ? m->unread : 0;
}

uint64_t perfmap__cost(const struct perfmap *m)
{
	return m ? m->cost : 0;
}

bool perfmap__over_budget(const struct perfmap *m)
{
	return m && m->over_budget;
}

void perfmap_budget__init(struct perfmap_budget *b, uint64_t total)
{
	*b = (struct perfmap_budget){.total = total, .tokens = (int64_t)total};
}

void perfmap_budget__refill(struct perfmap_budget *b)
{
	b->tokens += PERFMAP_READ_PER_PERIOD;
	if (b->tokens > (int64_t)b->total)
		b->tokens = (int64_t)b->total;
}

bool perfmap_budget__may_read(const struct perfmap_budget *b, uint64_t size)
{
	uint64_t would = size < PERFMAP_MAX_BYTES ? size : PERFMAP_MAX_BYTES;

	return b->tokens > 0 && (uint64_t)b->tokens >= would;
}

struct perfmap *perfmap__load_within(int root_fd, const char *path, uid_t owner,
				     struct perfmap_budget *b)
{
	uint64_t left = b->total > b->held ? b->total - b->held : 0;
	size_t max = left < PERFMAP_MAX_BYTES ? (size_t)left : PERFMAP_MAX_BYTES;
	struct perfmap *m = load_capped(root_fd, path, owner, max, (size_t)left);

	if (!m)
		return NULL;
	b->held += m->cost;
	b->tokens -= (int64_t)(m->read < PERFMAP_MAX_BYTES ? m->read : PERFMAP_MAX_BYTES);
	if (m->unread && max < PERFMAP_MAX_BYTES) {
		m->over_budget = true;
		b->cut++;
	}
	return m;
}

void perfmap__release(struct perfmap_budget *b, struct perfmap *m)
{
	if (!m)
		return;
	b->held -= m->cost <= b->held ? m->cost : b->held;
	perfmap__free(m);
}
