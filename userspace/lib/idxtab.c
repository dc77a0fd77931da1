// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Growth of the index hash set (idxtab.h): slots are rehashed from their stored hashes, so the
 * owner's keys are never looked at again. */
#include <errno.h>
#include <stdlib.h>

#include "idxtab.h"

int idxtab__reserve(struct idxtab *t)
{
	size_t size = t->slots ? (t->mask + 1) * 2 : 64;
	struct idxtab_slot *slots;

	if (t->slots && (t->count + 1) * 4 <= (t->mask + 1) * 3)
		return 0;
	slots = calloc(size, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++) {
		size_t j = t->slots[i].hash & (size - 1);

		if (!t->slots[i].idx1)
			continue;
		while (slots[j].idx1)
			j = (j + 1) & (size - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

void idxtab__clear(struct idxtab *t)
{
	free(t->slots);
	*t = (struct idxtab){0};
}
