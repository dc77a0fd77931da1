/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profile model built from a recording: functions (module + name, or + file:line with
 * --lines; a frame no symbol covers is its own function, shown as module+0xoffset; a frame inside
 * inlined code stands for the whole inline chain) and the bounded path tree of all samples
 * labelled by function. Regions are not functions: a sample carries its region stack apart
 * (rec_sample.regions), and the region filter looks at it.
 */
#ifndef PERCH_PROFILE_H
#define PERCH_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "format/recording.h"
#include "query.h"
#include "tree.h"

struct profile;

/* Keys a sample's thread puts on top of its stack in the tree (perf's --sort=comm,pid,tid):
 * functions of their own, named "NAME" (the thread's name), "pid N" and "tid N". */
enum profile_key { PROFILE_KEY_COMM, PROFILE_KEY_PID, PROFILE_KEY_TID, PROFILE_KEY_NR };
#define PROFILE_KEYS_MAX 3

struct profile_opts {
	bool lines;	  /* one function per source line: "name (file:line)" */
	bool no_demangle; /* keep C++ names as the binary spells them */
	/* A frame inside inlined code is its out-of-line function alone, which then takes the
	 * frame's self time (perf report --no-inline); false: the whole inline chain, the innermost
	 * inlined function taking it. The recording keeps the chain either way. */
	bool no_inline;
	const char *region; /* only samples whose region stack holds this name; NULL: all */
	/* The query (model/query.h) every sample's stack goes through after the region filter:
	 * bound to this profile's functions by profile__build; NULL: none. */
	struct query *query;
	/* The keys, outermost first, each at most once (the caller checks): the tree's roots;
	 * profile__sample_stack() and the frames' functions stay without them. */
	enum profile_key keys[PROFILE_KEYS_MAX];
	uint32_t nkeys;
};

/* opts may be NULL (by function, demangled). NULL + errno (ENOENT: the query names a function
 * the recording has not; query__error() says which). */
struct profile *profile__build(const struct recording *r, const struct profile_opts *opts);
/* Whether opts' query binds to the recording's functions, without building the tree (cheap):
 * 0, -ENOENT (query__error() says which), -ENOMEM. */
int profile__check_query(const struct recording *r, const struct profile_opts *opts);
void profile__free(struct profile *p);

const struct tree *profile__tree(const struct profile *p);
uint32_t profile__nfuncs(const struct profile *p);
/* Display name: the symbol, or "module+0xoffset" (module's base name). Valid while p lives. */
const char *profile__func_name(const struct profile *p, uint32_t func);
const char *profile__func_module(const struct profile *p, uint32_t func); /* base name */
bool profile__func_kernel(const struct profile *p, uint32_t func);
/* The functions a frame of the recording stands for, outermost first: the out-of-line function
 * and then each function inlined into it down to the one holding the address, less those the
 * query folds. Returns the count (0 for a region frame, or one the query folded away); *funcs
 * stays valid while p lives. */
uint32_t profile__frame_funcs(const struct profile *p, uint32_t frame, const uint32_t **funcs);
/* For each of profile__frame_funcs()'s functions, the index of its line in rec_frame.lines
 * (innermost first; 0 for a frame without lines). */
const uint32_t *profile__frame_lines(const struct profile *p, uint32_t frame);
/* The stack sample (by index) went into the tree with: its frames' functions (the query
 * applied), root first, into *buf (grown as needed, the caller frees it). The count, or -ENOMEM. */
int profile__sample_stack(const struct profile *p, const struct recording *r, size_t sample,
			  uint32_t **buf, size_t *cap);
/* Whether the query's folds removed every frame of the (kept) sample: it counts as the one
 * function "[folded]" (profile__folded_func()). */
bool profile__sample_folded(const struct profile *p, size_t sample);
uint32_t profile__folded_func(const struct profile *p); /* UINT32_MAX when no sample was */

/* The key functions (profile_opts.keys) the sample went into the tree under, outermost first;
 * the count (opts' nkeys; 0 for a sample that was not kept). */
uint32_t profile__sample_keys(const struct profile *p, size_t sample, const uint32_t **keys);
/* The name of the thread that took sample s: its own (version 3 on), else its thread's or its
 * process's from the thread table; "?" when none says. Valid while r lives. */
const char *profile__sample_comm(const struct recording *r, const struct rec_sample *s);

/* Whether the region filter, the thread filters and the query kept the sample (by its index in the recording) in the tree. */
bool profile__sample_kept(const struct profile *p, size_t sample);

#endif /* PERCH_PROFILE_H */
