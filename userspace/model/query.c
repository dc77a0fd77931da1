// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queries (query.h): the parsed, ordered modifiers and the focus, their patterns matched once
 * against the profile's function names, their application to one stack, the callers/callees
 * table and the call tree's chain merging. The semantics are fble's viewer's (README
 * "Queries"), the same the HTML viewer implements.
 */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "query.h"

struct pattern {
	char *text; /* as given; for /REGEX/, with its slashes */
	bool regex;
	regex_t re;
	bool *match; /* function -> matches (after query__bind) */
};

struct mod {
	enum query_kind kind;
	size_t first, npats; /* its patterns in query.pats */
	bool *any;	     /* function -> some pattern of it matches */
};

/* One thread filter: its items (names, or numbers as text) and, for pids and tids, the numbers. */
struct thread_filter {
	char **items;
	uint32_t *ids;
	size_t n, cap_items, cap_ids;
};

struct query {
	struct thread_filter threads[QUERY_THREAD_NR];
	struct pattern *pats;
	size_t npats, cap_pats;
	struct mod *mods;
	size_t nmods, cap_mods;
	struct mod focus;
	bool has_focus;
	uint32_t nfuncs; /* bound to functions 0..nfuncs-1 */
	char *desc, *focus_text;
	char **args; /* the modifiers and filters one option each, as given: "--fold=X" */
	size_t nargs, cap_args;
	char err[512];
};

static const char *const kind_names[] = {
	[QUERY_SELECT] = "select",   [QUERY_EXCLUDE] = "exclude", [QUERY_FOLD] = "fold",
	[QUERY_CALLERS] = "callers", [QUERY_CALLEES] = "callees",
};

struct query *query__new(void)
{
	return calloc(1, sizeof(struct query));
}

static void free_mod(struct mod *m)
{
	free(m->any);
	m->any = NULL;
}

void query__free(struct query *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->npats; i++) {
		if (q->pats[i].regex)
			regfree(&q->pats[i].re);
		free(q->pats[i].text);
		free(q->pats[i].match);
	}
	for (size_t i = 0; i < q->nmods; i++)
		free_mod(&q->mods[i]);
	free_mod(&q->focus);
	for (int k = 0; k < QUERY_THREAD_NR; k++) {
		for (size_t i = 0; i < q->threads[k].n; i++)
			free(q->threads[k].items[i]);
		free(q->threads[k].items);
		free(q->threads[k].ids);
	}
	free(q->pats);
	free(q->mods);
	for (size_t i = 0; i < q->nargs; i++)
		free(q->args[i]);
	free(q->args);
	free(q->desc);
	free(q->focus_text);
	free(q);
}

const char *query__error(const struct query *q)
{
	return q->err;
}

bool query__active(const struct query *q)
{
	return q && (q->nmods || q->threads[QUERY_PID].n || q->threads[QUERY_TID].n ||
		     q->threads[QUERY_COMM].n);
}

bool query__has_focus(const struct query *q, enum query_kind *kind)
{
	if (q && q->has_focus && kind)
		*kind = q->focus.kind;
	return q && q->has_focus;
}

const char *query__describe(const struct query *q)
{
	return q && q->desc ? q->desc : "";
}

size_t query__args(const struct query *q, const char *const **args)
{
	*args = q ? (const char *const *)q->args : NULL;
	return q ? q->nargs : 0;
}

const char *query__focus_text(const struct query *q)
{
	return q && q->focus_text ? q->focus_text : "";
}

/* A C++ operator's symbol after "operator" (longest first): it brackets nothing and ends no item
 * ("operator<", "operator()", "operator,"). */
static const char *const op_symbols[] = {"->*", "<=>", "<<=", ">>=", "->", "<<", ">>",
					 "<=",	">=",  "()",  "[]",  "<",  ">",	 ","};

static bool ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* At s (within item): the length of "operator" and its symbol when the word starts there, else 0. */
static size_t operator_len(const char *item, const char *s)
{
	if (strncmp(s, "operator", 8) || (s > item && ident_char(s[-1])))
		return 0;
	for (size_t i = 0; i < sizeof(op_symbols) / sizeof(*op_symbols); i++) {
		size_t n = strlen(op_symbols[i]);

		if (!strncmp(s + 8, op_symbols[i], n))
			return 8 + n;
	}
	return 8;
}

/* One bracket step at c: open pushes, a close matching the innermost open pops (deeper than the
 * stack records, any close pops); other closes ("->" in a decltype, "1>2") change nothing. */
static void bracket_step(char c, char *open, size_t cap, size_t *depth)
{
	static const char opens[] = "(<[{", closes[] = ")>]}";
	const char *o = strchr(opens, c), *k = strchr(closes, c);

	if (c && o) {
		if (*depth < cap)
			open[*depth] = c;
		(*depth)++;
	} else if (c && k && *depth && (*depth > cap || open[*depth - 1] == opens[k - closes])) {
		(*depth)--;
	}
}

/* Whether c is one a backslash makes plain in a name: the list's comma, brackets, the backslash
 * and the slash (a leading "\/" is no regex). */
static bool escapable(char c)
{
	return c && strchr(",\\/()<>[]{}", c);
}

size_t query_item_len(const char *s)
{
	char open[64];
	size_t depth = 0, i = 0;

	if (s[0] == '/') {
		for (i = 1; s[i]; i++) {
			if (s[i] == '/' && (s[i + 1] == ',' || !s[i + 1]))
				return i + 1;
		}
		i = 0;
	}
	while (s[i] && (s[i] != ',' || depth)) {
		size_t op = operator_len(s, s + i);

		if (op)
			i += op;
		else if (s[i] == '\\' && escapable(s[i + 1]))
			i += 2;
		else
			bracket_step(s[i++], open, sizeof(open), &depth);
	}
	return i;
}

char *query_item_name(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	for (size_t i = 0; out && i < len; i++) {
		if (s[i] == '\\' && i + 1 < len && escapable(s[i + 1]))
			i++;
		*o++ = s[i];
	}
	if (out)
		*o = '\0';
	return out;
}

static int add_pattern(struct query *q, const char *s, size_t len)
{
	bool regex = len >= 2 && s[0] == '/' && s[len - 1] == '/';
	struct pattern *p;
	int rc;

	if (vec_grow(&q->pats, &q->cap_pats, q->npats + 1, sizeof(*q->pats), 8))
		return -ENOMEM;
	p = &q->pats[q->npats];
	*p = (struct pattern){.text = regex ? strndup(s, len) : query_item_name(s, len),
			      .regex = regex};
	if (!p->text)
		return -ENOMEM;
	if (!len || (p->regex && len == 2)) {
		snprintf(q->err, sizeof(q->err),
			 "empty function pattern (an empty list item or //)");
		free(p->text);
		return -EINVAL;
	}
	if (p->regex) {
		p->text[len - 1] = '\0';
		rc = regcomp(&p->re, p->text + 1, REG_EXTENDED | REG_NOSUB);
		p->text[len - 1] = '/';
		if (rc) {
			char why[200];

			regerror(rc, &p->re, why, sizeof(why));
			snprintf(q->err, sizeof(q->err), "bad regex %s: %s", p->text, why);
			free(p->text);
			return -EINVAL;
		}
	}
	q->npats++;
	return 0;
}

/* "--name=arg" onto the arguments and the description. */
static int append_text(struct query *q, const char *name, const char *arg)
{
	char *d = NULL, *a = NULL;

	if (vec_grow(&q->args, &q->cap_args, q->nargs + 1, sizeof(*q->args), 4) ||
	    asprintf(&a, "--%s=%s", name, arg) < 0)
		return -ENOMEM;
	q->args[q->nargs++] = a;
	if (asprintf(&d, "%s%s%s", q->desc ?: "", q->desc ? " " : "", a) < 0)
		return -ENOMEM;
	free(q->desc);
	q->desc = d;
	return 0;
}

int query__add(struct query *q, enum query_kind kind, const char *arg)
{
	struct mod m = {.kind = kind, .first = q->npats};
	int err = 0;

	if (kind > QUERY_CALLEES)
		return -EINVAL;
	if (kind >= QUERY_CALLERS && q->has_focus) {
		snprintf(q->err, sizeof(q->err), "one --callers or --callees at a time");
		return -EINVAL;
	}
	for (const char *s = arg; !err; s++) {
		size_t len = query_item_len(s);

		err = add_pattern(q, s, len);
		s += len;
		if (!*s)
			break;
	}
	m.npats = q->npats - m.first;
	if (!err && kind >= QUERY_CALLERS) {
		q->focus = m;
		q->has_focus = true;
		q->focus_text = strdup(arg);
		return q->focus_text ? 0 : -ENOMEM;
	} else if (!err) {
		err = vec_grow(&q->mods, &q->cap_mods, q->nmods + 1, sizeof(*q->mods), 4);
		if (!err)
			q->mods[q->nmods++] = m;
	}
	return err ? err : append_text(q, kind_names[kind], arg);
}

static const char *const thread_names[] = {
	[QUERY_PID] = "pid",
	[QUERY_TID] = "tid",
	[QUERY_COMM] = "comm",
};

/* One item of a thread filter: a name, or a pid or tid in decimal. */
static int add_thread_item(struct query *q, struct thread_filter *t, enum query_thread_key key,
			   const char *s, size_t len)
{
	unsigned long v = 0;
	char *end = NULL;

	if (vec_grow(&t->items, &t->cap_items, t->n + 1, sizeof(*t->items), 4) ||
	    vec_grow(&t->ids, &t->cap_ids, t->n + 1, sizeof(*t->ids), 4))
		return -ENOMEM;
	t->items[t->n] = strndup(s, len);
	if (!t->items[t->n])
		return -ENOMEM;
	if (key != QUERY_COMM)
		v = strtoul(t->items[t->n], &end, 10);
	if (!len || (end && (*end || v > UINT32_MAX || !isdigit((unsigned char)*s)))) {
		snprintf(q->err, sizeof(q->err), "%s '%.*s' (a list of %s)",
			 len ? "bad item" : "empty item", (int)len, s,
			 key == QUERY_COMM ? "thread names" : "decimal numbers");
		free(t->items[t->n]);
		return -EINVAL;
	}
	t->ids[t->n++] = (uint32_t)v;
	return 0;
}

int query__add_thread(struct query *q, enum query_thread_key key, const char *arg)
{
	struct thread_filter *t;
	int err = 0;

	if (key >= QUERY_THREAD_NR)
		return -EINVAL;
	t = &q->threads[key];
	for (const char *s = arg; !err; s++) {
		size_t len = strcspn(s, ",");

		err = add_thread_item(q, t, key, s, len);
		s += len;
		if (!*s)
			break;
	}
	if (err)
		return err;
	return append_text(q, thread_names[key], arg);
}

static bool filter_keeps(const struct thread_filter *t, uint32_t id, const char *name)
{
	if (!t->n)
		return true;
	for (size_t i = 0; i < t->n; i++) {
		if (name ? !strcmp(t->items[i], name) : t->ids[i] == id)
			return true;
	}
	return false;
}

/* Whether item i of filter key matches a thread of the n samples. */
static bool item_found(const struct thread_filter *t, enum query_thread_key key, size_t i, size_t n,
		       void (*thread)(const void *ctx, size_t i, uint32_t *pid, uint32_t *tid,
				      const char **comm),
		       const void *ctx)
{
	for (size_t s = 0; s < n; s++) {
		uint32_t pid, tid;
		const char *comm;

		thread(ctx, s, &pid, &tid, &comm);
		if (key == QUERY_COMM ? !strcmp(comm, t->items[i])
				      : (key == QUERY_PID ? pid : tid) == t->ids[i])
			return true;
	}
	return false;
}

int query__bind_threads(struct query *q, size_t n,
			void (*thread)(const void *ctx, size_t i, uint32_t *pid, uint32_t *tid,
				       const char **comm),
			const void *ctx)
{
	for (int k = 0; q && k < QUERY_THREAD_NR; k++) {
		const struct thread_filter *t = &q->threads[k];

		for (size_t i = 0; i < t->n; i++) {
			if (item_found(t, (enum query_thread_key)k, i, n, thread, ctx))
				continue;
			snprintf(q->err, sizeof(q->err),
				 "no thread with --%s=%s in the profile (perch report "
				 "--sort=comm,pid,tid lists them)",
				 thread_names[k], t->items[i]);
			return -ENOENT;
		}
	}
	return 0;
}

bool query__keeps_thread(const struct query *q, uint32_t pid, uint32_t tid, const char *comm)
{
	return !q || (filter_keeps(&q->threads[QUERY_PID], pid, NULL) &&
		      filter_keeps(&q->threads[QUERY_TID], tid, NULL) &&
		      filter_keeps(&q->threads[QUERY_COMM], 0, comm ? comm : ""));
}

static bool matches(const struct pattern *p, const char *name)
{
	return p->regex ? !regexec(&p->re, name, 0, NULL, 0) : !strcmp(p->text, name);
}

/* "no function 'F' in the profile", with up to three names holding F (any case). */
static int no_function(struct query *q, const struct pattern *p, uint32_t nfuncs,
		       const char *(*name)(const void *ctx, uint32_t f), const void *ctx)
{
	size_t len = (size_t)snprintf(q->err, sizeof(q->err), "no function %s%s%s in the profile",
				      p->regex ? "matching " : "'", p->text, p->regex ? "" : "'");
	int shown = 0;

	for (uint32_t f = 0; !p->regex && f < nfuncs && shown < 3 && len < sizeof(q->err); f++) {
		if (!strcasestr(name(ctx, f), p->text))
			continue;
		len += (size_t)snprintf(q->err + len, sizeof(q->err) - len, "%s'%.100s'",
					shown ? ", " : " (closest: ", name(ctx, f));
		shown++;
	}
	if (shown && len < sizeof(q->err))
		snprintf(q->err + len, sizeof(q->err) - len, ")");
	return -ENOENT;
}

static int bind_mod(struct query *q, struct mod *m)
{
	free(m->any);
	m->any = calloc(q->nfuncs + 1, sizeof(*m->any));
	if (!m->any)
		return -ENOMEM;
	for (size_t k = m->first; k < m->first + m->npats; k++) {
		for (uint32_t f = 0; f < q->nfuncs; f++)
			m->any[f] |= q->pats[k].match[f];
	}
	return 0;
}

int query__bind(struct query *q, uint32_t nfuncs, const char *(*name)(const void *ctx, uint32_t f),
		const void *ctx)
{
	int err = 0;

	q->nfuncs = nfuncs;
	for (size_t k = 0; k < q->npats; k++) {
		struct pattern *p = &q->pats[k];
		bool any = false;

		free(p->match);
		p->match = calloc(nfuncs + 1, sizeof(*p->match));
		if (!p->match)
			return -ENOMEM;
		for (uint32_t f = 0; f < nfuncs; f++)
			any |= p->match[f] = matches(p, name(ctx, f));
		if (!any)
			return no_function(q, p, nfuncs, name, ctx);
	}
	for (size_t i = 0; i < q->nmods && !err; i++)
		err = bind_mod(q, &q->mods[i]);
	return !err && q->has_focus ? bind_mod(q, &q->focus) : err;
}

/* Whether stack[0..n) holds a function of match (ids past the bound ones match nothing). */
static bool holds(const struct query *q, const bool *match, const uint32_t *stack, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (stack[i] < q->nfuncs && match[stack[i]])
			return true;
	}
	return false;
}

static bool select_all(const struct query *q, const struct mod *m, const uint32_t *stack, size_t n)
{
	for (size_t k = m->first; k < m->first + m->npats; k++) {
		if (!holds(q, q->pats[k].match, stack, n))
			return false;
	}
	return true;
}

bool query__apply(const struct query *q, uint32_t *stack, size_t *n)
{
	for (size_t i = 0; q && i < q->nmods; i++) {
		const struct mod *m = &q->mods[i];
		size_t k = 0;

		switch (m->kind) {
		case QUERY_SELECT:
			if (!select_all(q, m, stack, *n))
				return false;
			break;
		case QUERY_EXCLUDE:
			if (holds(q, m->any, stack, *n))
				return false;
			break;
		default: /* QUERY_FOLD */
			for (size_t j = 0; j < *n; j++) {
				if (stack[j] >= q->nfuncs || !m->any[stack[j]])
					stack[k++] = stack[j];
			}
			*n = k;
			break;
		}
	}
	return true;
}

bool query__folds(const struct query *q, uint32_t f)
{
	for (size_t i = 0; q && f < q->nfuncs && i < q->nmods; i++) {
		if (q->mods[i].kind == QUERY_FOLD && q->mods[i].any[f])
			return true;
	}
	return false;
}

struct query_table {
	const struct query *q;
	bool callers;
	uint64_t *count, *stamp, mark; /* per function, then QUERY_ROOT's and QUERY_SELF's slots */
	uint64_t total, self, all;
	struct query_row *rows;
	size_t nrows, cap_rows;
};

struct query_table *query_table__new(const struct query *q)
{
	struct query_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->q = q;
	t->callers = q->focus.kind == QUERY_CALLERS;
	t->count = calloc(q->nfuncs + 2, sizeof(*t->count));
	t->stamp = calloc(q->nfuncs + 2, sizeof(*t->stamp));
	if (!q->has_focus || !q->focus.any || !t->count || !t->stamp) {
		query_table__free(t);
		errno = q->has_focus ? ENOMEM : EINVAL;
		return NULL;
	}
	return t;
}

void query_table__free(struct query_table *t)
{
	if (!t)
		return;
	free(t->count);
	free(t->stamp);
	free(t->rows);
	free(t);
}

/* Slot of a row: a function, or the two slots past them. */
static size_t slot_of(const struct query_table *t, uint32_t func)
{
	return func == QUERY_ROOT ? t->q->nfuncs : func == QUERY_SELF ? t->q->nfuncs + 1 : func;
}

/* Count w once per stack for the row func. */
static void count_once(struct query_table *t, uint32_t func, uint64_t w)
{
	size_t s = slot_of(t, func);

	if (t->stamp[s] == t->mark)
		return;
	t->stamp[s] = t->mark;
	t->count[s] += w;
}

int query_table__add(struct query_table *t, const uint32_t *stack, size_t n, uint64_t w)
{
	const bool *focus = t->q->focus.any;
	bool in = false;

	t->mark++;
	t->all += w;
	for (size_t j = 0; j < n; j++) {
		if (stack[j] >= t->q->nfuncs || !focus[stack[j]])
			continue;
		in = true;
		if (t->callers)
			count_once(t, j ? stack[j - 1] : QUERY_ROOT, w);
		else if (j + 1 < n)
			count_once(t, stack[j + 1], w);
	}
	t->total += in ? w : 0;
	if (n && stack[n - 1] < t->q->nfuncs && focus[stack[n - 1]]) {
		t->self += w;
		if (!t->callers)
			count_once(t, QUERY_SELF, w);
	}
	return 0;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct query_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->func > y->func) - (x->func < y->func);
}

size_t query_table__rows(struct query_table *t, const struct query_row **rows, uint64_t *total,
			 uint64_t *self, uint64_t *all)
{
	size_t nslots = (size_t)t->q->nfuncs + 2;

	t->nrows = 0;
	for (size_t s = 0; s < nslots; s++) {
		uint32_t func = s == nslots - 2 ? QUERY_ROOT : s == nslots - 1 ? QUERY_SELF : s;

		if (!t->count[s])
			continue;
		if (vec_grow(&t->rows, &t->cap_rows, t->nrows + 1, sizeof(*t->rows), 64))
			break; /* out of memory: the rows there are */
		t->rows[t->nrows++] = (struct query_row){func, t->count[s]};
	}
	if (t->nrows)
		qsort(t->rows, t->nrows, sizeof(*t->rows), by_count_desc);
	*rows = t->rows;
	*total = t->total;
	*self = t->self;
	*all = t->all;
	return t->nrows;
}

size_t query_chain_next(const struct tree *t, size_t node, double percent)
{
	const size_t *kids;
	size_t n = tree__node_children(t, node, &kids), best = 0;
	uint64_t whole = tree__node_inclusive(t, node), most = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t inc = tree__node_inclusive(t, kids[i]);

		if (inc > most) {
			most = inc;
			best = kids[i];
		}
	}
	if (!node || !most || (double)most * 100.0 < percent * (double)whole)
		return 0;
	return best;
}
