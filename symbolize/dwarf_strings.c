// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The strings of a DWARF index (see dwarf_impl.h): function names and source files, copied out of
 * libdw into an arena that never moves them and interned once per module through a hash table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_impl.h"
#include "lib/hash.h"

static uint64_t str_hash(const char *s)
{
	uint64_t h = fnv64_str(FNV64_OFFSET, s);

	return h ? h : 1;
}

void dwidx_hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

static void hmap_insert(struct hmap *h, uint64_t key, uint32_t val)
{
	size_t i = mix64(key) & (h->cap - 1);

	while (h->keys[i])
		i = (i + 1) & (h->cap - 1);
	h->keys[i] = key;
	h->vals[i] = val;
	h->nr++;
}

int dwidx_hmap_put(struct hmap *h, uint64_t key, uint32_t val)
{
	if ((h->nr + 1) * 2 > h->cap) {
		struct hmap old = *h;
		size_t i;

		h->cap = old.cap ? old.cap * 2 : 256;
		h->nr = 0;
		h->keys = calloc(h->cap, sizeof(*h->keys));
		h->vals = calloc(h->cap, sizeof(*h->vals));
		if (!h->keys || !h->vals) {
			free(h->keys);
			free(h->vals);
			*h = old;
			return -ENOMEM;
		}
		for (i = 0; i < old.cap; i++) {
			if (old.keys[i])
				hmap_insert(h, old.keys[i], old.vals[i]);
		}
		dwidx_hmap_free(&old);
	}
	hmap_insert(h, key, val);
	return 0;
}

/* The value of key; with strs, the value whose string equals str among those under key. */
uint32_t dwidx_hmap_get(const struct hmap *h, uint64_t key, const char *str,
			const char *const *strs)
{
	size_t i;

	if (!h->cap)
		return NO_IDX;
	for (i = mix64(key) & (h->cap - 1); h->keys[i]; i = (i + 1) & (h->cap - 1)) {
		if (h->keys[i] == key && (!strs || strcmp(strs[h->vals[i]], str) == 0))
			return h->vals[i];
	}
	return NO_IDX;
}

const char *dwidx_arena_dup(struct arena_chunk **head, const char *s)
{
	size_t len = strlen(s) + 1;
	struct arena_chunk *c = *head;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > ARENA_CHUNK ? len : ARENA_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = *head;
		*head = c;
	}
	memcpy(c->data + c->used, s, len);
	c->used += len;
	return c->data + c->used - len;
}

/*
 * Index of s in t, copying it into the arena the first time; *added says it was new. A failure
 * leaves t as it was: the tables outlive a group whose indexing failed.
 */
int dwidx_strtab_intern(struct strings *str, struct strtab *t, const char *s, uint32_t *out,
			bool *added)
{
	uint64_t h = str_hash(s);
	uint32_t idx = dwidx_hmap_get(&t->map, h, s, t->strs);
	const char *copy;
	int err;

	*added = false;
	if (idx != NO_IDX) {
		*out = idx;
		return 0;
	}
	if (t->nr >= NO_IDX - 1)
		return -E2BIG;
	err = vec_reserve(&t->strs, &t->cap, t->nr + 1, sizeof(*t->strs));
	if (err)
		return err;
	copy = dwidx_arena_dup(&str->arena, s);
	if (!copy)
		return -ENOMEM;
	t->strs[t->nr] = copy;
	err = dwidx_hmap_put(&t->map, h, (uint32_t)t->nr);
	if (err)
		return err;
	*out = (uint32_t)t->nr++;
	*added = true;
	return 0;
}

static void strtab_free(struct strtab *t)
{
	free(t->strs);
	dwidx_hmap_free(&t->map);
}

void dwidx_strings_free(struct strings *str)
{
	struct arena_chunk *c, *next;

	strtab_free(&str->names);
	free(str->name_dem);
	strtab_free(&str->files);
	dwidx_hmap_free(&str->name_by_ptr);
	for (c = str->arena; c; c = next) {
		next = c->next;
		free(c);
	}
}
