// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The bounded call tree weighted by GPU time (gputree.h). */
#include <errno.h>
#include <stdlib.h>
#include "lib/vec.h"
#include "gpupaths.h"
#include "gputree.h"

/* The profile's labels of the program's frames of launch stack s (root first) into *labels. */
static int stack_labels(const struct recording *r, const struct profile *p,
			const struct rec_sample *s, uint32_t **labels, size_t *cap, size_t *n)
{
	uint32_t frames = gpu_paths__program_frames(r, s);
	const uint32_t *fns;

	*n = 0;
	for (uint32_t j = 0; j < frames; j++) {
		uint32_t k = profile__frame_funcs(p, s->frames[j], &fns);

		if (vec_grow(labels, cap, *n + k + 1, sizeof(**labels), 64))
			return -ENOMEM;
		for (uint32_t i = 0; i < k; i++)
			(*labels)[(*n)++] = fns[i];
	}
	return 0;
}

static int insert_launches(struct tree *t, const struct recording *r, const struct profile *p,
			   const uint64_t *ns)
{
	uint32_t *labels = NULL;
	size_t cap = 0, n;
	int err = 0;

	for (size_t i = 0; i < r->nsamples && !err; i++) {
		if (!ns[i] || !profile__sample_kept(p, i))
			continue;
		err = stack_labels(r, p, &r->samples[i], &labels, &cap, &n);
		if (!err)
			err = tree__insert(t, labels, n, ns[i]);
	}
	free(labels);
	return err;
}

struct tree *gpu_tree__new(const struct recording *r, const struct profile *p)
{
	uint64_t *ns = gpu_paths__sample_ns(r);
	struct tree *t = tree__new();
	int err = ns && t ? insert_launches(t, r, p, ns) : -ENOMEM;

	free(ns);
	if (err) {
		tree__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}
