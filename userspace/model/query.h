/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queries on a profile (fble's viewer; README "Queries"): an ordered list of modifiers (select,
 * exclude, fold) applied to each sample's stack of functions, the callers ("going in") and
 * callees ("going out") table of a focus function, and the call tree's chain merging.
 *
 * A function is named by its printed name, exactly, or by /REGEX/ (POSIX extended, matched
 * anywhere in the name). An argument is a comma list of such patterns, split only at the commas
 * outside brackets, so a C++ name ("f(int, long)", "std::map<int, int>::find", "operator,")
 * is one item; a backslash makes the next comma, bracket, slash or backslash plain. Functions are the
 * caller's dense ids; query__bind() matches every pattern against their names once, so applying
 * the query to a stack costs no string work.
 */
#ifndef PERCH_QUERY_H
#define PERCH_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tree.h"

enum query_kind {
	QUERY_SELECT,  /* keep the stacks holding every pattern (each at least once) */
	QUERY_EXCLUDE, /* drop the stacks holding any pattern */
	QUERY_FOLD,    /* remove the frames of every pattern's functions from each stack */
	QUERY_CALLERS, /* the focus: the table of its callers (not a modifier) */
	QUERY_CALLEES, /* the focus: the table of its callees (not a modifier) */
};

/* Thread filters (--pid, --tid, --comm): a sample is kept when its thread matches every filter
 * given (each a comma list, any of whose items matches); they compose with the modifiers, which
 * see only the stacks the filters keep. */
enum query_thread_key { QUERY_PID, QUERY_TID, QUERY_COMM, QUERY_THREAD_NR };

/* Table rows that are not a function: the focus as the root frame, and the focus's self. */
#define QUERY_ROOT UINT32_MAX
#define QUERY_SELF (UINT32_MAX - 1)

struct query;

/* An empty query (it keeps every stack as it is). NULL + errno. */
struct query *query__new(void);
void query__free(struct query *q);

/* The length of the list item at s: a /REGEX/ runs to a '/' that ends the list or precedes a
 * comma; a name to the first comma outside (), <>, [] and {}, a C++ operator's symbol
 * ("operator<", "operator,") and backslash escapes bracketing nothing. */
size_t query_item_len(const char *s);
/* The name a list item of len bytes at s spells (its escapes resolved), malloc'd; NULL + errno. */
char *query_item_name(const char *s, size_t len);

/* Append a modifier (or, QUERY_CALLERS/QUERY_CALLEES, set the focus) with a comma list of
 * patterns. 0; -EINVAL for an empty pattern, a bad regex or a second focus (query__error()
 * says which); -ENOMEM. */
int query__add(struct query *q, enum query_kind kind, const char *arg);
/* Add a thread filter with a comma list (pids and tids: decimal numbers; comms: names as the
 * thread set them, exactly). 0; -EINVAL for an empty item or a bad number (query__error());
 * -ENOMEM. */
int query__add_thread(struct query *q, enum query_thread_key key, const char *arg);
/* Check that every thread filter item names a thread of the profile: thread(ctx, i, ...) gives
 * the pid, tid and name of the i-th of n samples. 0; -ENOENT when an item names none
 * (query__error() says which). */
int query__bind_threads(struct query *q, size_t n,
			void (*thread)(const void *ctx, size_t i, uint32_t *pid, uint32_t *tid,
				       const char **comm),
			const void *ctx);
/* Whether the thread filters keep a sample of this thread (comm: its name; "" unknown). */
bool query__keeps_thread(const struct query *q, uint32_t pid, uint32_t tid, const char *comm);
/* Why the last query__add() or query__bind() failed: one line, no newline. */
const char *query__error(const struct query *q);
/* Whether any modifier or thread filter is set; whether a focus is. */
bool query__active(const struct query *q);
bool query__has_focus(const struct query *q, enum query_kind *kind);
/* The modifiers as the command line spells them ("--fold=X --select=Y"), for report headers;
 * the focus's patterns as given ("" without a focus). */
const char *query__describe(const struct query *q);
/* The same, one option a string (for a shell line that quotes each): *args valid while q is. */
size_t query__args(const struct query *q, const char *const **args);
const char *query__focus_text(const struct query *q);

/* Match every pattern against functions 0..nfuncs-1 named by name(ctx, f). 0; -ENOENT when a
 * pattern names no function (query__error() names it and the closest names); -ENOMEM. */
int query__bind(struct query *q, uint32_t nfuncs, const char *(*name)(const void *ctx, uint32_t f),
		const void *ctx);

/* Apply the bound query's modifiers in order to stack[0..*n) (root first), in place: *n is the
 * length left after the folds. false when a select or exclude drops the stack. A stack that the
 * folds left empty is kept with *n == 0 (the caller shows it as "[folded]"). */
bool query__apply(const struct query *q, uint32_t *stack, size_t *n);
/* Whether a fold of the bound query removes function f (from every stack it is on). */
bool query__folds(const struct query *q, uint32_t f);

/* The focus's table: feed it every kept, transformed stack. */
struct query_table;
struct query_row {
	uint32_t func; /* a function, QUERY_ROOT or QUERY_SELF */
	uint64_t count;
};
struct query_table *query_table__new(const struct query *q);
void query_table__free(struct query_table *t);
/* Count one stack of weight w: each caller (callee) row once however often its edge repeats. */
int query_table__add(struct query_table *t, const uint32_t *stack, size_t n, uint64_t w);
/* The rows, largest count first (ties by id); *total: the samples holding the focus (each
 * once), *self: those whose leaf it is; *all: every stack added. Valid until the next add. */
size_t query_table__rows(struct query_table *t, const struct query_row **rows, uint64_t *total,
			 uint64_t *self, uint64_t *all);

/* The call tree's chain merging: the child of node that holds >= percent % of node's samples
 * (the largest such), to be shown on node's row as "node > child"; 0 when none does. */
size_t query_chain_next(const struct tree *t, size_t node, double percent);

#endif /* PERCH_QUERY_H */
