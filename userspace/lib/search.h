/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Binary search, written once: every sorted table perch keeps (mappings, symbols, line rows, unwind
 * rows, compile units) is searched through these. A table sorted so that pred holds for a prefix
 * of it is split where the prefix ends.
 */
#ifndef PERCH_SEARCH_H
#define PERCH_SEARCH_H

#include <stddef.h>

/* The end of the prefix of [lo, hi) where pred (an expression of the size_t index i) holds: the
 * first index where it does not, hi when it holds everywhere. */
#define search_prefix(lo, hi, i, pred)                    \
	__extension__({                                   \
		size_t lo_ = (lo), hi_ = (hi);            \
		while (lo_ < hi_) {                       \
			size_t i = lo_ + (hi_ - lo_) / 2; \
			if (pred)                         \
				lo_ = i + 1;              \
			else                              \
				hi_ = i;                  \
		}                                         \
		lo_;                                      \
	})

/* "Last element <= key" of arr[0..nr), sorted by the member m: one past its index, 0 when every
 * element is greater (so the element is arr[n - 1] when n is not 0). */
#define search_last_le(arr, nr, m, key) search_prefix(0, (nr), i_, (arr)[i_].m <= (key))

#endif /* PERCH_SEARCH_H */
