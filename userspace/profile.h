/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The profile model built from a recording: functions (module + name; a frame no symbol covers
 * is its own function, shown as module+0xoffset) and the bounded path tree of all samples
 * labelled by function.
 */
#ifndef PERCH_PROFILE_H
#define PERCH_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include "recording.h"
#include "tree.h"

struct profile;

struct profile *profile__build(const struct recording *r); /* NULL + errno */
void profile__free(struct profile *p);

const struct tree *profile__tree(const struct profile *p);
uint32_t profile__nfuncs(const struct profile *p);
/* Display name: the symbol, or "module+0xoffset" (module's base name). Valid while p lives. */
const char *profile__func_name(const struct profile *p, uint32_t func);
const char *profile__func_module(const struct profile *p, uint32_t func); /* base name */
bool profile__func_kernel(const struct profile *p, uint32_t func);
/* The function a frame of the recording belongs to. */
uint32_t profile__frame_func(const struct profile *p, uint32_t frame);

#endif /* PERCH_PROFILE_H */
