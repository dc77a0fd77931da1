// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sampler's parts (struct sampler_part): each in its own file, one row here. The order is
 * the drain's: the early stacks hand on their ticks before the timeline orders the drain's ticks,
 * which they join; the probes whose records name the drain's buckets after them.
 */
#include <assert.h>
#include "lib/log.h"
#include "sampler_impl.h"

extern const struct sampler_part sampler_early_part;	/* sampler_early.c */
extern const struct sampler_part sampler_timeline_part; /* sampler_timeline.c: --timeline */
extern const struct sampler_part sampler_launch_part;	/* sampler_launch.c: --gpu */
extern const struct sampler_part sampler_gpucall_part;	/* sampler_gpucall.c: --gpu -p */
extern const struct sampler_part sampler_offcpu_part;	/* sampler_offcpu.c: --off-cpu */

static const struct sampler_part *const parts[] = {
	&sampler_early_part,   &sampler_timeline_part, &sampler_launch_part,
	&sampler_gpucall_part, &sampler_offcpu_part,
};

#define NPARTS (sizeof(parts) / sizeof(parts[0]))
static_assert(NPARTS <= SAMPLER_PARTS_MAX, "struct sampler's part_state");

static size_t row_of(const struct sampler_part *part)
{
	size_t i = 0;

	while (i < NPARTS && parts[i] != part)
		i++;
	return i;
}

void *sampler_part_state(const struct sampler *sp, const struct sampler_part *part)
{
	size_t i = row_of(part);

	return i < NPARTS ? sp->part_state[i] : NULL;
}

void sampler_part_set_state(struct sampler *sp, const struct sampler_part *part, void *state)
{
	size_t i = row_of(part);

	if (i < NPARTS)
		sp->part_state[i] = state;
}

void sampler_parts_setup(struct sampler *sp)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->setup)
			parts[i]->setup(sp);
}

int sampler_parts_open(struct sampler *sp)
{
	for (size_t i = 0; i < NPARTS; i++) {
		int err = parts[i]->open ? parts[i]->open(sp) : 0;

		if (err) {
			log_debug("sampler: its part %s did not open", parts[i]->name);
			return err;
		}
	}
	return 0;
}

void sampler_parts_drained(struct sampler *sp, const struct sampler_drain *d)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->drained)
			parts[i]->drained(sp, d);
}

void sampler_parts_free(struct sampler *sp)
{
	for (size_t i = 0; i < NPARTS; i++)
		if (parts[i]->free)
			parts[i]->free(sp);
}
