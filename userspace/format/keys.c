// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The key names of keys.h, as the file spells them. */
#include "keys.h"

#define KEY_NAME2(key, index) [REC_STAT_##key] = #key,
const char *const rec_stat_keys[REC_STAT_NR] = {REC_STATS(KEY_NAME2)};

#define KEY_NAME_META(key) [REC_META_##key] = #key,
const char *const rec_meta_keys[REC_META_NR] = {REC_META(KEY_NAME_META)};

#define KEY_NAME_END(key) [REC_END_##key] = #key,
const char *const rec_end_keys[REC_END_NR] = {REC_END(KEY_NAME_END)};
