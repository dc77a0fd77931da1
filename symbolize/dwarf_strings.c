// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The strings of a DWARF index (see dwarf_impl.h): function names and source files, copied out of
 * libdw into an arena that never moves them and interned once per module through lib/idxtab.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_impl.h"
#include "lib/hash.h"

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return strcmp(((const struct strtab *)ctx)->strs[idx], key) == 0;
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
	uint32_t h = hash32(fnv64_str(FNV64_OFFSET, s));
	struct idxtab_slot *slot;
	const char *copy;
	int err;

	*added = false;
	err = idxtab__reserve(&t->map);
	if (err)
		return err;
	slot = idxtab__find(&t->map, h, str_eq, t, s);
	if (slot->idx1) {
		*out = slot->idx1 - 1;
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
	idxtab__set(&t->map, slot, (uint32_t)t->nr, h);
	*out = (uint32_t)t->nr++;
	*added = true;
	return 0;
}

static void strtab_free(struct strtab *t)
{
	free(t->strs);
	idxtab__clear(&t->map);
}

void dwidx_strings_free(struct strings *str)
{
	struct arena_chunk *c, *next;

	strtab_free(&str->names);
	free(str->name_dem);
	strtab_free(&str->files);
	u64map__clear(&str->name_by_ptr);
	for (c = str->arena; c; c = next) {
		next = c->next;
		free(c);
	}
}
