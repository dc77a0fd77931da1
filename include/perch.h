/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * perch region markers: tag scopes of your own program so `perch record` can report exact calls
 * and wall time per region and tag every CPU sample with the region stack of its thread.
 *
 *   #include <perch.h>             cc -Iinclude app.c -Lbuild -lperch
 *
 *   perch_region_begin("solve");   ...   perch_region_end("solve");
 *   { PERCH_SCOPE("step"); ... }   ends when the scope exits (C: cleanup attribute, C++: RAII)
 *   perch_region_begin_n("fft", n) carries a workload size for cost models
 *   perch_mark("checkpoint")       an instant
 *
 * Steps and pauses (what `perch record` records; see also --steps and --only-region):
 *   perch_step(n)                  step (batch) n starts here; the open step, if any, ends
 *   perch_step_end()               the open step ends (else it ends at the next perch_step()
 *                                  or when the program exits)
 *   perch_profile_pause()          stop recording this process: no samples, no region timing,
 *   perch_profile_resume()         no off-CPU blocks until the matching resume. Pauses nest:
 *                                  recording resumes at the resume that matches the outermost
 *                                  pause; a resume with no pause open is ignored.
 * A region that begins while paused (or outside the steps perch was asked for) is neither
 * timed nor counted, nor are marks then; one that began while recording and ends while paused
 * is counted with its whole wall time (the pause included: it is how long the region took).
 * With no profiler attached each is a call of a few instructions: no system call, no lock.
 *
 * Names must be string literals (each call site caches its name id; the same name anywhere
 * aggregates); perch_region_begin_str()/end_str() take any string at the cost of a lookup.
 * With no profiler attached a begin/end pair is a few instructions on thread-local memory: no
 * allocation, no system call, no lock. While profiled, a thread's first marker takes a
 * statistics block (one that an exited thread freed, or a new one), outside its region; under
 * `perch record --timeline` each timed marker also goes into a ring in that block (a few stores,
 * never a wait). Compile with -DPERCH_DISABLE and every marker is gone. Regions are per thread;
 * an end that does not match the innermost begin is counted, reported once on stderr and in the
 * report, and never crashes.
 */
#ifndef PERCH_H
#define PERCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef PERCH_DISABLE

#define perch_region_begin(name)      ((void)0)
#define perch_region_begin_n(name, n) ((void)(n))
#define perch_region_end(name)	      ((void)0)
#define perch_mark(name)	      ((void)0)
#define perch_region_begin_str(name)  ((void)0)
#define perch_region_end_str(name)    ((void)0)
#define PERCH_SCOPE(name)
#define perch_profile_pause()  ((void)0)
#define perch_profile_resume() ((void)0)
#define perch_step(n)	       ((void)(n))
#define perch_step_end()       ((void)0)

#else /* !PERCH_DISABLE */

#include "perch_abi.h"

/* A call site: its name and, once registered, the name's id. */
struct perch_site {
	const char *name;
	uint32_t id;
};

extern __thread struct perch_abi_tls perch__tls __attribute__((tls_model("initial-exec")));
extern struct perch_abi_registry perch_registry;

uint32_t perch__register(struct perch_site *site);
void perch__begin_slow(uint32_t depth, uint32_t id, uint64_t size);
void perch__end_slow(uint32_t depth);
void perch__end_mismatch(uint32_t id);
void perch__mark_slow(uint32_t id);
void perch_region_begin_str(const char *name);
void perch_region_end_str(const char *name);
void perch_profile_pause(void);
void perch_profile_resume(void);
void perch_step(uint64_t n);
void perch_step_end(void);

static inline uint32_t perch__id(struct perch_site *site)
{
	uint32_t id = site->id;

	return __builtin_expect(id != 0, 1) ? id : perch__register(site);
}

static inline void perch__begin(struct perch_site *site, uint64_t size)
{
	uint32_t id = perch__id(site);
	uint32_t d = perch__tls.depth;

	/* First: a thread's first profiled region takes its statistics block there, outside the
	 * region (its samples and its time). */
	if (__builtin_expect(perch_registry.active, 0))
		perch__begin_slow(d, id, size);
	if (__builtin_expect(d < PERCH_MAX_DEPTH, 1))
		perch__tls.ids[d] = id;
	perch__tls.depth = d + 1;
}

static inline void perch__end(struct perch_site *site)
{
	uint32_t id = perch__id(site);
	uint32_t d = perch__tls.depth - 1;

	if (__builtin_expect(d >= PERCH_MAX_DEPTH || perch__tls.ids[d] != id, 0)) {
		perch__end_mismatch(id); /* also handles depth 0 and stacks deeper than kept */
		return;
	}
	perch__tls.depth = d;
	if (__builtin_expect(perch_registry.active, 0))
		perch__end_slow(d);
}

static inline void perch__mark(struct perch_site *site)
{
	uint32_t id = perch__id(site);

	if (__builtin_expect(perch_registry.active, 0))
		perch__mark_slow(id);
}

#define PERCH__SITE(name)                                          \
	__extension__({                                            \
		static struct perch_site perch__site_ = {name, 0}; \
		&perch__site_;                                     \
	})

#define perch_region_begin(name)      perch__begin(PERCH__SITE(name), 0)
#define perch_region_begin_n(name, n) perch__begin(PERCH__SITE(name), (uint64_t)(n))
#define perch_region_end(name)	      perch__end(PERCH__SITE(name))
#define perch_mark(name)	      perch__mark(PERCH__SITE(name))

#define PERCH__CAT2(a, b) a##b
#define PERCH__CAT(a, b)  PERCH__CAT2(a, b)

#ifdef __cplusplus
} /* extern "C" */

namespace perch
{
class scope
{
      public:
	explicit scope(struct perch_site *site) : site_(site)
	{
		perch__begin(site_, 0);
	}
	~scope()
	{
		perch__end(site_);
	}
	scope(const scope &) = delete;
	scope &operator=(const scope &) = delete;

      private:
	struct perch_site *site_;
};
} // namespace perch

#define PERCH_SCOPE(name) perch::scope PERCH__CAT(perch__scope_, __LINE__)(PERCH__SITE(name))

extern "C" {
#else /* C */

static inline void perch__scope_end(struct perch_site **site)
{
	perch__end(*site);
}

#define PERCH_SCOPE(name)                                                               \
	struct perch_site *PERCH__CAT(perch__scope_, __LINE__)                          \
		__attribute__((cleanup(perch__scope_end), unused)) = PERCH__SITE(name); \
	perch__begin(PERCH__CAT(perch__scope_, __LINE__), 0)

#endif /* __cplusplus */

#endif /* PERCH_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* PERCH_H */
