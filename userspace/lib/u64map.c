// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Open addressing with linear probing; grows at 50% load; deletion shifts the run back (no
 * tombstones: a lookup stops at the first free slot). */
#include <errno.h>
#include <stdlib.h>
#include "u64map.h"

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key & (cap - 1);
}

void u64map__clear(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = (struct u64map){0};
}

bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
	}
}

static void put_nogrow(struct u64map *m, uint64_t key, uint64_t val)
{
	size_t i = slot_of(key, m->cap);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->used[i])
		m->len++;
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
}

static int grow(struct u64map *m)
{
	struct u64map n = {.cap = m->cap ? m->cap * 2 : 64};

	n.keys = malloc(n.cap * sizeof(*n.keys));
	n.vals = malloc(n.cap * sizeof(*n.vals));
	n.used = calloc(n.cap, 1);
	if (!n.keys || !n.vals || !n.used) {
		u64map__clear(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			put_nogrow(&n, m->keys[i], m->vals[i]);
	u64map__clear(m);
	*m = n;
	return 0;
}

int u64map__put(struct u64map *m, uint64_t key, uint64_t val)
{
	if ((m->len + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	put_nogrow(m, key, val);
	return 0;
}

bool u64map__del(struct u64map *m, uint64_t key)
{
	size_t i, j, home;

	if (!m->cap)
		return false;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return false;
		if (m->keys[i] == key)
			break;
	}
	/* Move back each later entry of the run whose home slot is not in (i, j]. */
	for (j = (i + 1) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1)) {
		home = slot_of(m->keys[j], m->cap);
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->used[i] = 0;
	m->len--;
	return true;
}
