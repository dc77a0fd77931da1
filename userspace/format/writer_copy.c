// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A live writer's pending counts and META copied into another writer (writer_copy.h). The ids
 * of the two writers differ: strings and frames are mapped as they are first met, per
 * destination, so a frame shared by many keys is defined once in each.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "codec.h"
#include "lib/u64map.h"
#include "writer_copy.h"
#include "writer_impl.h"

struct rec_copy {
	struct u64map strs;   /* from's string id -> to's */
	struct u64map frames; /* from's frame id -> to's */
	char *text;	      /* one string, terminated */
	size_t cap_text;
	uint32_t *stack; /* one key's frames, root first */
	size_t cap_stack;
};

struct rec_copy *rec_copy__new(void)
{
	return calloc(1, sizeof(struct rec_copy));
}

void rec_copy__reset(struct rec_copy *c)
{
	u64map__clear(&c->strs);
	u64map__clear(&c->frames);
}

void rec_copy__free(struct rec_copy *c)
{
	if (!c)
		return;
	rec_copy__reset(c);
	free(c->text);
	free(c->stack);
	free(c);
}

/* from's string id, terminated, in c->text; NULL on ENOMEM. */
static const char *str_text(struct rec_copy *c, const struct rec_writer *from, uint32_t id)
{
	const struct str_ref *s = &from->strs[id];

	if (s->len + 1 > c->cap_text) {
		char *t = realloc(c->text, s->len + 1);

		if (!t)
			return NULL;
		c->text = t;
		c->cap_text = s->len + 1;
	}
	memcpy(c->text, from->names.data + s->off, s->len);
	c->text[s->len] = '\0';
	return c->text;
}

/* from's string id as to's (0 for ""); UINT32_MAX on ENOMEM. */
static uint32_t copy_str(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to,
			 uint32_t id)
{
	const char *text;
	uint64_t got;
	uint32_t out;

	if (!id || id >= from->nstrs)
		return 0;
	if (u64map__get(&c->strs, id, &got))
		return (uint32_t)got;
	text = str_text(c, from, id);
	out = text ? rec_writer__string(to, text) : 0;
	if (!out || u64map__put(&c->strs, id, out))
		return UINT32_MAX;
	return out;
}

/* A module's build-id, once, when its path is first copied. */
static int copy_module(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to,
		       uint32_t path, uint32_t to_path)
{
	uint32_t bid;
	uint64_t i;

	if (!u64map__get(&from->module_tab, path, &i) || i >= from->nmodules)
		return 0;
	bid = from->modules[i].build_id;
	if (!bid || bid >= from->nstrs)
		return 0;
	return str_text(c, from, bid) ? rec_writer__module(to, to_path, c->text) : -ENOMEM;
}

/* from's frame id as to's; UINT32_MAX on ENOMEM. */
static uint32_t copy_frame(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to,
			   uint32_t id)
{
	const struct rec_frame *f = &from->frames[id];
	uint64_t got;
	uint32_t module, name, out;
	bool new_module;

	if (u64map__get(&c->frames, id, &got))
		return (uint32_t)got;
	new_module = f->module && !u64map__get(&c->strs, f->module, &got);
	module = copy_str(c, from, to, f->module);
	name = copy_str(c, from, to, f->name);
	if (module == UINT32_MAX || name == UINT32_MAX)
		return UINT32_MAX;
	if (new_module && copy_module(c, from, to, f->module, module))
		return UINT32_MAX;
	out = rec_writer__frame(to, f->kind, module, name, f->offset);
	if (out == UINT32_MAX || u64map__put(&c->frames, id, out))
		return UINT32_MAX;
	return out;
}

/* pid's control group (CGROUPS), once per destination. */
static int copy_cgroup(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to,
		       uint32_t pid)
{
	uint32_t path = rec_writer__cgroup_of(from, pid), out;

	if (!path || rec_writer__cgroup_of(to, pid))
		return 0;
	out = copy_str(c, from, to, path);
	if (out == UINT32_MAX)
		return -ENOMEM;
	return out ? rec_writer__cgroup(to, pid, out) : 0;
}

static int copy_key(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to,
		    uint32_t key, uint64_t count)
{
	const struct wkey *k = &from->keys[key];
	uint32_t n = 0, node1, comm;

	for (node1 = k->stack1; node1 && node1 <= from->nnodes;
	     node1 = from->nodes[node1 - 1].parent1)
		n++;
	if (n > MAX_STACK)
		return -EINVAL;
	if (n > c->cap_stack) {
		uint32_t *s = realloc(c->stack, (size_t)n * sizeof(*s));

		if (!s)
			return -ENOMEM;
		c->stack = s;
		c->cap_stack = n;
	}
	/* The nodes run leaf to root; a sample's frames root first. */
	node1 = k->stack1;
	for (uint32_t i = n; i-- > 0; node1 = from->nodes[node1 - 1].parent1) {
		uint32_t f = from->nodes[node1 - 1].frame;

		if (f >= from->nframes)
			return -EINVAL;
		c->stack[i] = copy_frame(c, from, to, f);
		if (c->stack[i] == UINT32_MAX)
			return -ENOMEM;
	}
	comm = copy_str(c, from, to, k->comm);
	if (comm == UINT32_MAX)
		return -ENOMEM;
	if (copy_cgroup(c, from, to, k->pid))
		return -ENOMEM;
	return rec_writer__sample_named(to, k->pid, k->tid, comm, count, k->flags, c->stack, n);
}

int rec_copy__pending(struct rec_copy *c, const struct rec_writer *from, struct rec_writer *to)
{
	int err = 0;

	for (size_t i = 0; i < from->ntouched && !err; i++) {
		uint32_t k = from->touched[i];

		if (k < from->nkeys && from->pending[k])
			err = copy_key(c, from, to, k, from->pending[k]);
	}
	return err;
}

int rec_copy__meta(const struct rec_writer *from, struct rec_writer *to, const struct rec_kv *over,
		   size_t n)
{
	struct cur cur = {.p = from->meta.data, .left = from->meta.len};
	struct rec_kv *kv = calloc(from->nmeta + n + 1, sizeof(*kv));
	size_t nkv = 0;
	int err = kv ? 0 : -ENOMEM;

	for (uint32_t i = 0; !err && i < from->nmeta; i++) {
		const uint8_t *k, *v;
		uint32_t klen, vlen;
		bool replaced = false;

		if (!cur_str(&cur, &k, &klen) || !cur_str(&cur, &v, &vlen)) {
			err = -EINVAL;
			break;
		}
		for (size_t j = 0; j < n && !replaced; j++)
			replaced = strlen(over[j].key) == klen && !memcmp(over[j].key, k, klen);
		if (replaced)
			continue;
		kv[nkv].key = strndup((const char *)k, klen);
		kv[nkv].str = strndup((const char *)v, vlen);
		if (!kv[nkv].key || !kv[nkv].str)
			err = -ENOMEM;
		nkv++;
	}
	for (size_t j = 0; !err && j < n; j++) {
		kv[nkv].key = strdup(over[j].key);
		kv[nkv].str = strdup(over[j].str ? over[j].str : "");
		if (!kv[nkv].key || !kv[nkv].str)
			err = -ENOMEM;
		nkv++;
	}
	if (!err)
		err = rec_writer__meta(to, kv, nkv);
	for (size_t i = 0; kv && i < nkv; i++) {
		free(kv[i].key);
		free(kv[i].str);
	}
	free(kv);
	return err;
}
