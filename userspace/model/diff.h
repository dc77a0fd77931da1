/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Two profiles compared (`perch diff BASE NEW`): every function of either, matched by module and
 * name (kernel functions apart), and every node of either call tree, matched by its path of
 * functions from the root, each with its self and total share of its recording's samples in
 * both and the change. Shares, not counts: two runs of different lengths compare.
 *
 * Significance: a two-proportion z score per share, z = (p_new - p_base) / sqrt(p (1 - p)
 * (1 / n_base + 1 / n_new)) with p the pooled share (x_base + x_new) / (n_base + n_new): how
 * many standard errors the change is if both recordings drew their samples at random moments
 * from the same shares. A row is significant when either |z| (self or total) reaches
 * DIFF_Z_SIGNIFICANT; rows are ranked significant first, then by the larger change (|d self|
 * or |d total|), then by name. The z score assumes independent samples: a periodic workload
 * sampled in lock step is more regular than that, so z overstates nothing there but may
 * understate; a run-to-run variation of the program itself is not in it.
 *
 * The model holds no output: cli/diff.c prints text, csv and folded (flamegraph.pl's
 * two-column differential form); an HTML view reads the same rows and the merged tree
 * (diff__node: parents before children, node 0 the root) to draw a flame graph colored by
 * each node's change.
 */
#ifndef PERCH_DIFF_H
#define PERCH_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "format/recording.h"

#define DIFF_Z_SIGNIFICANT 3.0

struct diff;

struct diff_opts {
	bool lines;	    /* functions by source line, as `perch report --lines` */
	bool no_demangle;   /* C++ names as the binary spells them */
	const char *region; /* only the samples inside this region, in both */
};

enum diff_side { DIFF_BASE = 0, DIFF_NEW = 1 };

/* A function, or a node of the merged call tree. Counts are samples; shares are of the side's
 * kept samples (0 when it has none); d_ is new - base; z_ as above (0 where undefined). */
struct diff_row {
	const char *name;   /* as the text report names the function; "" for the tree's root */
	const char *module; /* base name of its module */
	bool kernel;
	uint32_t parent;	    /* nodes: the parent node (the root's is 0); functions: 0 */
	uint32_t depth;		    /* nodes: 1 for a child of the root */
	uint64_t self[2], total[2]; /* nodes: total is inclusive (the node and all below it) */
	double self_share[2], total_share[2];
	double d_self, d_total, z_self, z_total;
	bool significant;
};

/* Both recordings must live as long as the diff. NULL + errno. */
struct diff *diff__build(const struct recording *base, const struct recording *new,
			 const struct diff_opts *o);
void diff__free(struct diff *d);

/* The kept samples of a side (the share denominators). */
uint64_t diff__samples(const struct diff *d, enum diff_side side);
/* Functions, ranked (significant first, see above). */
size_t diff__nfuncs(const struct diff *d);
const struct diff_row *diff__func(const struct diff *d, size_t rank);
/* The merged call tree in build order (parents before children; 0 the root) ... */
size_t diff__nnodes(const struct diff *d);
const struct diff_row *diff__node(const struct diff *d, size_t node);
/* ... and its nodes ranked as the functions are (the root left out): the rank-th node's index. */
size_t diff__node_ranked(const struct diff *d, size_t rank);

#endif /* PERCH_DIFF_H */
