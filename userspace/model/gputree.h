/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bounded call tree weighted by GPU time: each launch stack of a recording (rec_gpu.launch_key,
 * perch record --gpu's uprobe) inserted into a bounded path tree (model/tree.h, recursion folded
 * as the CPU tree folds it) with the device time (kernels, copies, memsets) of what was launched
 * from it, labelled by the profile's functions so the text report prints it with the CPU tree's
 * printer. perch's own frames at the launch end are left out; --region keeps the launches made
 * inside the region, as the CPU tree keeps samples.
 */
#ifndef PERCH_MODEL_GPUTREE_H
#define PERCH_MODEL_GPUTREE_H

#include "format/recording.h"
#include "profile.h"
#include "tree.h"

/* NULL + errno (ENOMEM). Empty (no nodes, weight 0) for a recording without launch stacks. */
struct tree *gpu_tree__new(const struct recording *r, const struct profile *p);

#endif /* PERCH_MODEL_GPUTREE_H */
