// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A read-only look into a recording writer (writer_peek.h): the pending counts, keys, frames and
 * strings, read from the writer's tables as they stand. Nothing here changes the writer.
 */
#include <string.h>
#include "codec.h"
#include "writer_impl.h"
#include "writer_peek.h"

void rec_writer__peek_pending(const struct rec_writer *w, rec_peek_fn fn, void *ctx)
{
	for (size_t i = 0; i < w->ntouched; i++) {
		uint32_t k = w->touched[i];

		if (w->pending[k])
			fn(ctx, k, w->pending[k]);
	}
}

uint32_t rec_writer__peek_key(const struct rec_writer *w, uint32_t key, uint32_t *pid,
			      uint32_t *tid, uint32_t *frames, uint32_t max)
{
	uint32_t n = 0, node1;

	if (key >= w->nkeys)
		return 0;
	*pid = w->keys[key].pid;
	*tid = w->keys[key].tid;
	/* A node's parent was defined before it: the walk ends. */
	for (node1 = w->keys[key].stack1; node1 && n < max; node1 = w->nodes[node1 - 1].parent1) {
		uint32_t f = w->nodes[node1 - 1].frame;

		if (f < w->nframes && (w->frames[f].kind & ~REC_FRAME_CALL) != REC_FRAME_REGION)
			frames[n++] = f;
	}
	return n;
}

const struct rec_frame *rec_writer__peek_frame(const struct rec_writer *w, uint32_t id)
{
	return id < w->nframes ? &w->frames[id] : NULL;
}

const char *rec_writer__peek_string(const struct rec_writer *w, uint32_t id, char *buf, size_t len)
{
	size_t n = 0;

	if (id < w->nstrs) {
		n = w->strs[id].len < len - 1 ? w->strs[id].len : len - 1;
		memcpy(buf, w->names.data + w->strs[id].off, n);
	}
	buf[n] = '\0';
	return buf;
}

const char *rec_writer__peek_meta(const struct rec_writer *w, const char *key, char *buf,
				  size_t len)
{
	struct cur c = {.p = w->meta.data, .left = w->meta.len};
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (uint32_t i = 0; i < w->nmeta; i++) {
		const uint8_t *k, *v;
		uint32_t kl, vl;

		if (!cur_str(&c, &k, &kl) || !cur_str(&c, &v, &vl))
			break;
		if (kl == klen && !memcmp(k, key, klen)) {
			size_t n = vl < len - 1 ? vl : len - 1;

			memcpy(buf, v, n);
			buf[n] = '\0';
			break;
		}
	}
	return buf;
}
