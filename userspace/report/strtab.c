// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A protobuf string table (strtab.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/escape.h"
#include "lib/hash.h"
#include "lib/vec.h"
#include "strtab.h"

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct strtab *)ctx)->strs[idx], key);
}

int64_t strtab__intern(struct strtab *t, char *s, bool own)
{
	struct idxtab_slot *slot;
	uint32_t h;

	if (!esc_utf8_valid(s)) {
		char *valid = esc_utf8_dup(s);

		if (own)
			free(s);
		if (!valid)
			return -ENOMEM;
		s = valid;
		own = true;
	}
	h = hash32(fnv64_str(FNV64_OFFSET, s));
	if (t->n >= INT32_MAX || idxtab__reserve(&t->tab) ||
	    vec_grow(&t->strs, &t->cap, t->n + 1, sizeof(*t->strs), 256) ||
	    (own && vec_grow(&t->owned, &t->cap_owned, t->nowned + 1, sizeof(*t->owned), 64)))
		goto nomem;
	slot = idxtab__find(&t->tab, h, str_eq, t, s);
	if (slot->idx1) {
		if (own)
			free(s);
		return slot->idx1 - 1;
	}
	if (own)
		t->owned[t->nowned++] = s;
	t->strs[t->n] = s;
	idxtab__set(&t->tab, slot, t->n, h);
	return (int64_t)t->n++;
nomem:
	if (own)
		free(s);
	return -ENOMEM;
}

void strtab__free(struct strtab *t)
{
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->strs);
	idxtab__clear(&t->tab);
	memset(t, 0, sizeof(*t));
}
