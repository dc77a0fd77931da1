/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The launch-site cache of the injection library (runtime/cuda/inject.c, inside the user's
 * program): decides at the exit of each launch, copy or memset call whether perch's probe must take
 * its stack, or whether the same call site's stack was taken already and the call can be
 * attributed to it (a PERCH_CUDA_SITE record), which costs the program no uprobe and no unwind.
 *
 * A site is keyed, per thread, by the API call (domain and callback id), the thread's region
 * stack (read from the region runtime's registry, as perch's sampler reads it), the stack depth
 * at the call, and the first SITES_WORDS words above the callback that point into executable code
 * outside the CUDA libraries and this one: the return addresses into the program's innermost
 * frames under the CUDA call. Every SITES_REPROBE-th call of a site takes the probe again, so
 * perch can check that the stacks agree.
 */
#ifndef PERCH_INJECT_SITES_H
#define PERCH_INJECT_SITES_H

#include <stdint.h>

#define SITES_WORDS   8
#define SITES_REPROBE 1024

enum site_verdict {
	SITE_PROBE,   /* a new site (or caching is off): take the probe */
	SITE_REPROBE, /* a known site's periodic probe: take it, and say which site it re-checks */
	SITE_INHERIT, /* a known site: no probe, attributed to the site's last probed call */
};

/* Once, at InitializeInjection: the code ranges of the loaded modules and the region registry.
 * Caching stays off (every call takes the probe) unless it is called with on and succeeds. */
void sites_init(int on);
/* At a call's exit, on the calling thread: what = the call (domain << 31 | callback id), corr its
 * correlation id, frame the CUPTI callback's frame (the stack is scanned from there up: what the
 * library and the probe leave below it changes from call to call). *site: the correlation id of
 * the site's probed call (INHERIT, REPROBE). */
enum site_verdict sites_lookup(uint32_t what, uint32_t corr, const void *frame, uint32_t *site);

#endif /* PERCH_INJECT_SITES_H */
