/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Growing arrays: the one helper every part that builds an index or a table uses. */
#ifndef PERCH_VEC_H
#define PERCH_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make *pv (an array of elem-byte entries with room for *cap) hold at least need entries,
 * doubling from first (or the current capacity). 0 or -ENOMEM; *pv is kept on failure. */
static inline int vec_grow(void *pv, size_t *cap, size_t need, size_t elem, size_t first)
{
	void **v = pv;
	size_t n = *cap ? *cap : first;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2) /* need is past any size: doubling would wrap to 0 */
			return -ENOMEM;
		n *= 2;
	}
	if (n > SIZE_MAX / elem) /* refused here, not by the allocator (ASan aborts there) */
		return -ENOMEM;
	p = reallocarray(*v, n, elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

#endif /* PERCH_VEC_H */
