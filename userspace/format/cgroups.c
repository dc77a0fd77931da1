// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CGROUPS block (recording.h): the control group of each process that perch recorded in a
 * container's, written by the recorder through the writer, loaded by the reader; and the
 * container's id the path names. Both sides here: the block is small.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/vec.h"
#include "reader_impl.h"
#include "writer_impl.h"

#define MIN_CGROUP 2 /* pid, path: a byte each at least */
#define ID_LEN	   64

int rec_writer__cgroup(struct rec_writer *w, uint32_t pid, uint32_t path)
{
	uint64_t known;

	if (!w || !path || path >= w->nstrs)
		return -EINVAL;
	if (w->err)
		return w->err;
	if (u64map__get(&w->cgroup_tab, pid, &known))
		return -EEXIST;
	if (vec_grow(&w->cgroups, &w->cap_cgroups, w->ncgroups + 1, sizeof(*w->cgroups), 16) ||
	    u64map__put(&w->cgroup_tab, pid, w->ncgroups))
		return -ENOMEM;
	w->cgroups[w->ncgroups++] = (struct rec_cgroup){pid, path};
	return 0;
}

uint32_t rec_writer__cgroup_of(const struct rec_writer *w, uint32_t pid)
{
	uint64_t i;

	return u64map__get(&w->cgroup_tab, pid, &i) && i < w->ncgroups ? w->cgroups[i].path : 0;
}

static int put_cgroup(struct rec_writer *w, size_t i)
{
	if (buf_reserve(&w->block, 2 * ULEB_MAX))
		return -ENOMEM;
	put_uleb(&w->block, w->cgroups[i].pid);
	put_uleb(&w->block, w->cgroups[i].path);
	return 0;
}

/* After the strings they name (a row of writer_blocks.c's table after the definitions). */
static int flush_cgroups(struct rec_writer *w)
{
	return wr_write_range(w, REC_CGROUPS, &w->cgroups_done, w->ncgroups, put_cgroup);
}

static void restart_cgroups(struct rec_writer *w, bool in_file)
{
	w->cgroups_done = in_file ? w->ncgroups : 0;
}

static void free_cgroups(struct rec_writer *w)
{
	free(w->cgroups);
	u64map__clear(&w->cgroup_tab);
}

const struct wr_block wr_cgroups_block = {REC_CGROUPS, flush_cgroups, NULL, restart_cgroups,
					  free_cgroups};

int parse_cgroups(struct loaded *L, struct cur *c)
{
	struct recording *r = &L->r;
	size_t before = r->ncgroups;
	uint32_t n;

	if (!cur_count(c, MIN_CGROUP, &n))
		return -EBADMSG;
	if (vec_grow(&r->cgroups, &L->cap_cgroups, r->ncgroups + n, sizeof(*r->cgroups), 16))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct rec_cgroup *g = &r->cgroups[r->ncgroups];

		if (!cur_uleb32(c, &g->pid) || !cur_uleb32(c, &g->path) || !g->path ||
		    g->path >= r->nstrings) {
			r->ncgroups = before; /* a damaged block adds nothing */
			return -EBADMSG;
		}
		r->ncgroups++;
	}
	if (c->left)
		r->ncgroups = before;
	return c->left ? -EBADMSG : 0;
}

const char *recording__cgroup(const struct recording *r, uint32_t pid)
{
	for (size_t i = 0; r && i < r->ncgroups; i++) {
		if (r->cgroups[i].pid == pid)
			return recording__string(r, r->cgroups[i].path);
	}
	return NULL;
}

static bool hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

const char *rec_container_id(const char *path, char out[65])
{
	const char *found = NULL;

	/* The last run of exactly 64 lowercase hex digits (docker-ID.scope, cri-containerd-ID.scope,
	 * crio-ID.scope, libpod-ID.scope, /docker/ID, /kubepods/.../ID). */
	for (const char *p = path ? path : ""; *p;) {
		size_t n = 0;

		while (hex(p[n]))
			n++;
		if (n == ID_LEN)
			found = p;
		p += n ? n : 1;
	}
	if (!found)
		return NULL;
	memcpy(out, found, ID_LEN);
	out[ID_LEN] = '\0';
	return out;
}
