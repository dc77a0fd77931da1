/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A hash set of indices into an array its owner keeps, for keys that are already in the owner's
 * elements or too wide for u64map (a string, a frame's four fields, a function's module and
 * name, a tree node's parent and label): the table holds index + 1 and the key's hash (8 bytes a
 * slot, where u64map would copy key and value), the owner's eq callback compares a key with an
 * element. Open addressing, linear probing, grown at 75 % load. The recording writer interns
 * strings and frames with it, the profile its functions, the tree its children.
 */
#ifndef PERCH_IDXTAB_H
#define PERCH_IDXTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct idxtab_slot {
	uint32_t idx1; /* index + 1; 0 marks an empty slot */
	uint32_t hash;
};

/* A zeroed struct idxtab is an empty table. */
struct idxtab {
	struct idxtab_slot *slots;
	size_t mask;
	size_t count;
};

/* Is element idx of ctx's array equal to key? */
typedef bool (*idxtab_eq_fn)(const void *ctx, uint32_t idx, const void *key);

/* Make room for one more index: call before idxtab__find(). 0 or -ENOMEM. */
int idxtab__reserve(struct idxtab *t);
void idxtab__clear(struct idxtab *t);

/* The slot holding key (slot->idx1 != 0), or the empty slot where it belongs, to be filled with
 * idxtab__set(). Inline, so that eq is too: it runs on every lookup. */
static inline struct idxtab_slot *idxtab__find(const struct idxtab *t, uint32_t hash,
					       idxtab_eq_fn eq, const void *ctx, const void *key)
{
	for (size_t i = hash & t->mask;; i = (i + 1) & t->mask) {
		struct idxtab_slot *s = &t->slots[i];

		if (!s->idx1 || (s->hash == hash && eq(ctx, s->idx1 - 1, key)))
			return s;
	}
}

static inline void idxtab__set(struct idxtab *t, struct idxtab_slot *s, uint32_t idx, uint32_t hash)
{
	s->idx1 = idx + 1;
	s->hash = hash;
	t->count++;
}

#endif /* PERCH_IDXTAB_H */
