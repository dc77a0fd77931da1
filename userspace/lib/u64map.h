/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A small open-addressing hash table from u64 keys to u64 values (caches on the hot path). */
#ifndef PERCH_U64MAP_H
#define PERCH_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two, or 0 */
	size_t len;
};

/* A zeroed struct u64map is an empty map. */
void u64map__clear(struct u64map *m);
bool u64map__get(const struct u64map *m, uint64_t key, uint64_t *val);
/* Insert or replace; 0 or -ENOMEM. */
int u64map__put(struct u64map *m, uint64_t key, uint64_t val);
/* Remove key; false when it was not there. */
bool u64map__del(struct u64map *m, uint64_t key);

#endif /* PERCH_U64MAP_H */
