// SPDX-License-Identifier: BSD-2-Clause
/*
 * The region runtime behind include/perch.h; it runs inside the user's program. It owns the
 * process's name table and registry (read by the profiler through the symbol perch_registry),
 * each thread's region stack in initial-exec TLS (read by the sampler at every tick), and, while
 * a profiler has set perch_registry.active, each thread's exact statistics: a bounded path tree
 * of regions (recursion folded as in docs/DESIGN.md) with calls and TSC-tick wall times.
 *
 * Never exits, aborts or writes to stdout; one diagnostic line on stderr for the first
 * mismatched end. Statistics blocks are taken only while profiled, by a thread's first marker,
 * and given back when the thread exits: its tree is merged into the block of exited threads
 * (tid 0) and the block is reused by the next thread, so memory follows the most threads alive
 * at once, not every thread ever created. A block is mapped only when no freed one is left.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "perch.h"

__thread struct perch_abi_tls perch__tls __attribute__((tls_model("initial-exec")));

static char names[PERCH_MAX_NAMES][PERCH_NAME_LEN];

/* In a section of its own, which the profiler finds by name even in a stripped program. */
__attribute__((section(".perch_registry"), used)) struct perch_abi_registry perch_registry = {
	.magic = PERCH_ABI_MAGIC,
	.version = PERCH_ABI_VERSION,
	.size = sizeof(struct perch_abi_registry),
	.names = (uintptr_t)names,
};

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static int warned;

/* Under blocks_lock: the blocks exited threads gave back, and the block holding their merged
 * trees. Every block stays on the registry's list (the profiler reads it), free ones marked. */
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perch_abi_thread *free_blocks;
static struct perch_abi_thread *exited_block;

static uint64_t now_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
#endif
}

_Static_assert(offsetof(struct perch_abi_thread, ring_head) % 64 == 0 &&
		       offsetof(struct perch_abi_thread, ring) % 64 == 0,
	       "a ring entry must not straddle two cache lines");

/* One entry into the thread's timeline ring (see perch_abi.h): never waits, never fails; the
 * profiler counts what it overwrites before being read. */
static inline void ring_put(struct perch_abi_thread *th, uint64_t value, uint32_t kind, uint32_t id,
			    uint32_t aux)
{
	uint64_t h = th->ring_head;
	struct perch_abi_event *e = &th->ring[h & (PERCH_RING_ENTRIES - 1)];

	e->value = value;
	e->word = kind << PERCH_RING_KIND_SHIFT | (id & PERCH_RING_ID_MASK);
	e->aux = aux;
	/* The entry before the head that publishes it. */
	__atomic_store_n(&th->ring_head, h + 1, __ATOMIC_RELEASE);
}

/* The profiler reads a block it did not know from here: what is before is not its epoch's. */
static void ring_restart(struct perch_abi_thread *th)
{
	th->ring_start = th->ring_head;
}

/* The thread that writes the block's entries from now on. */
static void ring_thread(struct perch_abi_thread *th)
{
	if (perch_registry.timeline)
		ring_put(th, th->tid, PERCH_RING_THREAD, 0, 0);
}

static void start_epoch(struct perch_abi_thread *th, uint32_t epoch);
static uint32_t find_child(const struct perch_abi_thread *th, uint32_t parent, uint32_t name);
static uint32_t child_of(struct perch_abi_thread *th, uint32_t parent, uint32_t name);

#include "perch_models.h"

static void add_bucket(struct perch_abi_bucket *to, const struct perch_abi_bucket *from)
{
	if (!from->count)
		return;
	if (from->min_t < to->min_t)
		to->min_t = from->min_t;
	if (from->max_t > to->max_t)
		to->max_t = from->max_t;
	to->count += from->count;
	to->sum_n += from->sum_n;
	to->sum_t += from->sum_t;
	to->sum_t2 += from->sum_t2;
	to->sum_nt += from->sum_nt;
}

/* Two reservoirs into one uniform sample of both streams: each kept point comes from a side
 * with the odds of its calls, drawn without replacement from that side. Under blocks_lock (its
 * only caller, retire), which guards the scratch copies. */
static void merge_points(struct perch_abi_models *m, struct perch_abi_model *to,
			 const struct perch_abi_model *from)
{
	static struct perch_abi_point a[PERCH_MODEL_POINTS], b[PERCH_MODEL_POINTS];
	uint64_t sa = to->seen, sb = from->seen;
	uint32_t na = sa < PERCH_MODEL_POINTS ? (uint32_t)sa : PERCH_MODEL_POINTS;
	uint32_t nb = sb < PERCH_MODEL_POINTS ? (uint32_t)sb : PERCH_MODEL_POINTS;

	to->seen = sa + sb;
	if (na + nb <= PERCH_MODEL_POINTS) {
		memcpy(to->points + na, from->points, nb * sizeof(*a));
		to->next = to->seen; /* still filling: the next call goes in */
		if (to->seen == PERCH_MODEL_POINTS) {
			to->w = 1;
			model_next(m, to, to->seen - 1);
		}
		return;
	}
	/* Algorithm L's W after seen calls is about PERCH_MODEL_POINTS / seen. */
	to->w = (double)PERCH_MODEL_POINTS / (double)to->seen;
	model_next(m, to, to->seen - 1);
	memcpy(a, to->points, na * sizeof(*a));
	memcpy(b, from->points, nb * sizeof(*b));
	for (uint32_t i = 0; i < PERCH_MODEL_POINTS; i++) {
		bool take_a = !nb || (na && model_below(m, sa + sb) < sa);
		struct perch_abi_point *v = take_a ? a : b;
		uint32_t *k = take_a ? &na : &nb;
		uint32_t j = (uint32_t)model_below(m, *k);

		to->points[i] = v[j];
		v[j] = v[--*k];
	}
}

/* from's models into to's, its nodes mapped by map (from's node -> to's node). */
static void merge_models(struct perch_abi_thread *to, const struct perch_abi_thread *from,
			 const uint32_t *map)
{
	to->models.over += from->models.over;
	for (uint32_t s = 0; s < from->models.nslots && s < PERCH_MODEL_SLOTS; s++) {
		const struct perch_abi_model *f = &from->models.slots[s];
		struct perch_abi_model *md = model_slot(to, map[f->node]);

		if (!md) {
			to->models.over += f->seen;
			continue;
		}
		for (uint32_t k = 0; k < PERCH_MODEL_BUCKETS; k++)
			add_bucket(&md->buckets[k], &f->buckets[k]);
		merge_points(&to->models, md, f);
	}
}

static void add_node(struct perch_abi_node *to, const struct perch_abi_node *from)
{
	to->open += from->open;
	to->calls += from->calls;
	to->total_ticks += from->total_ticks;
	to->self_ticks += from->self_ticks;
	to->sum_ticks += from->sum_ticks;
	to->size_sum += from->size_sum;
	to->unmatched += from->unmatched;
	if (from->min_ticks && (!to->min_ticks || from->min_ticks < to->min_ticks))
		to->min_ticks = from->min_ticks;
	if (from->max_ticks > to->max_ticks)
		to->max_ticks = from->max_ticks;
}

/* Whether from's tree merges into to's without overflowing it: the nodes it lacks fit. */
static bool merge_fits(const struct perch_abi_thread *to, const struct perch_abi_thread *from)
{
	uint32_t map[PERCH_MAX_NODES], lacking = 0; /* map: to's node, 0 where to lacks it */

	map[0] = 0;
	for (uint32_t i = 1; i < from->nnodes && i < PERCH_NODE_OTHER; i++) {
		uint32_t parent = from->nodes[i].parent;

		map[i] = parent && !map[parent] ? 0
						: find_child(to, map[parent], from->nodes[i].name);
		lacking += !map[i];
	}
	return to->nnodes + lacking <= PERCH_NODE_OTHER;
}

/* from's tree into to's, by path from the root (the bounded-path rule keeps them alike). */
static void merge_tree(struct perch_abi_thread *to, const struct perch_abi_thread *from)
{
	uint32_t map[PERCH_MAX_NODES];

	map[0] = 0;
	for (uint32_t i = 1; i < from->nnodes && i < PERCH_NODE_OTHER; i++) {
		const struct perch_abi_node *n = &from->nodes[i];

		map[i] = child_of(to, map[n->parent], n->name);
		add_node(&to->nodes[map[i]], n);
	}
	add_node(&to->nodes[PERCH_NODE_OTHER], &from->nodes[PERCH_NODE_OTHER]);
	map[PERCH_NODE_OTHER] = PERCH_NODE_OTHER;
	merge_models(to, from, map);
	to->mismatches += from->mismatches;
	to->too_deep += from->too_deep;
}

/* Under blocks_lock: keep th's figures of the current epoch in the block of exited threads (th
 * itself becomes that block when there is none yet); false when th is free to reuse. A tree
 * that would overflow that block stays in th, as the thread left it (th is kept, not reused). */
static bool retire(struct perch_abi_thread *th)
{
	uint32_t epoch = perch_registry.epoch;

	if (th->epoch != epoch)
		return false;
	if (exited_block && exited_block->epoch != epoch)
		start_epoch(exited_block, epoch);
	if (exited_block && merge_fits(exited_block, th)) {
		merge_tree(exited_block, th);
		return false;
	}
	if (!exited_block) {
		th->tid = 0;
		exited_block = th;
	}
	__atomic_store_n(&th->exited, 0, __ATOMIC_RELEASE);
	return true;
}

/* The thread exits (pthread key destructor): its figures go to the block of exited threads and
 * its block to the free list; the profiler skips it from now on. */
static void thread_exited(void *block)
{
	struct perch_abi_thread *th = block;

	perch__tls.thread = 0; /* a marker later in the thread's exit takes a block again */
	pthread_mutex_lock(&blocks_lock);
	__atomic_store_n(&th->exited, 1, __ATOMIC_RELEASE);
	if (!retire(th)) {
		th->next_free = (uintptr_t)free_blocks;
		free_blocks = th;
	}
	pthread_mutex_unlock(&blocks_lock);
}

/* No thread may hold a lock across fork: the child has only the forking thread. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&names_lock);
	pthread_mutex_lock(&blocks_lock);
	pthread_mutex_lock(&log_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&log_lock);
	pthread_mutex_unlock(&blocks_lock);
	pthread_mutex_unlock(&names_lock);
}

static void start_epoch(struct perch_abi_thread *th, uint32_t epoch);

/* In a forked child only the forking thread lives on, with a copy of the parent's statistics:
 * they are the parent's, so the child's start empty (regions open across the fork untimed). The
 * profiler that followed the fork reads the child as a process of its own. */
static void forked_child(void)
{
	struct perch_abi_thread *th = (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;

	fork_parent();
	/* The parent's other blocks are not on the child's list: none is reused. */
	free_blocks = NULL;
	exited_block = NULL;
	perch_registry.exiting = 0;
	perch_registry.threads = (uintptr_t)th;
	if (!th)
		return;
	th->next = 0;
	th->tid = (uint32_t)syscall(SYS_gettid);
	start_epoch(th, perch_registry.epoch);
	ring_restart(th); /* the parent's entries are the parent's */
	ring_thread(th);
}

/* --steps and --only-region of the perch that launched the command, from the start. */
static void ctl_from_env(void)
{
	const char *steps = getenv(PERCH_ENV_STEPS), *only = getenv(PERCH_ENV_ONLY);
	unsigned long long first, last;

	if (steps && sscanf(steps, "%llu:%llu", &first, &last) == 2) {
		perch_registry.ctl.first = first;
		perch_registry.ctl.last = last;
		perch_registry.ctl.gate = 1;
	}
	if (only && *only)
		strncpy(perch_registry.only_name, only, PERCH_NAME_LEN - 1);
}

/* Where each thread's perch__tls sits relative to its thread pointer: the same for every thread
 * with initial-exec TLS, so the sampler can find any thread's region stack from %fs base. A
 * command perch launched finds the profiler's pid in the environment and times from the start. */
__attribute__((constructor)) static void perch_runtime_init(void)
{
	const char *env = getenv(PERCH_ENV_ACTIVE), *timeline = getenv(PERCH_ENV_TIMELINE);

	pthread_key_create(&exit_key, thread_exited);
	pthread_atfork(fork_prepare, fork_parent, forked_child);
	perch_registry.ring_entries = PERCH_RING_ENTRIES;
	if (env && atoi(env) > 0) {
		ctl_from_env();
		perch_registry.profiler_pid = (uint32_t)atoi(env);
		perch_registry.timeline = timeline && !strcmp(timeline, "1");
		perch_registry.collector = PERCH_COLLECT_AT_EXIT;
		__atomic_store_n(&perch_registry.active, 1, __ATOMIC_RELEASE);
	}
	/* Last: a profiler takes the runtime as constructed once it sees these (tls_offset on
	 * x86-64, tick_unit elsewhere). Written first, a perch reading the registry in between saw
	 * no owner yet and took its own launched command for an attached process (a suspect, not
	 * confirmed, for regions-limits.sh's one run without the main thread's "nest" row). */
#if defined(__x86_64__)
	uintptr_t tp;

	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	perch_registry.tick_unit = PERCH_TICKS_TSC;
	__atomic_store_n(&perch_registry.tls_offset, (int64_t)((uintptr_t)&perch__tls - tp),
			 __ATOMIC_RELEASE);
#else
	__atomic_store_n(&perch_registry.tick_unit, PERCH_TICKS_NS, __ATOMIC_RELEASE);
#endif
}

/* The exit handshake: give a profiler that asked for it the time to read the final statistics
 * (it polls for `exiting`), but never hang the program if the profiler has gone. */
__attribute__((destructor)) static void perch_runtime_fini(void)
{
	struct timespec ms = {0, 1000000};
	pid_t prof = (pid_t)perch_registry.profiler_pid;

	if (perch_registry.collector != PERCH_COLLECT_AT_EXIT)
		return;
	perch_step_end(); /* the open step ends with the program */
	__atomic_store_n(&perch_registry.exiting, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < PERCH_EXIT_WAIT_MS; i++) {
		if (perch_registry.collector != PERCH_COLLECT_AT_EXIT)
			return;
		if (prof > 0 && kill(prof, 0) && errno == ESRCH)
			return;
		nanosleep(&ms, NULL);
	}
}

static uint32_t find_name(const char *name)
{
	uint32_t n = perch_registry.nnames;

	for (uint32_t i = 0; i < n; i++) {
		if (!strncmp(names[i], name, PERCH_NAME_LEN - 1))
			return i + 1;
	}
	return 0;
}

uint32_t perch__register(struct perch_site *site)
{
	const char *name = site->name ? site->name : "(null)";
	uint32_t id;

	pthread_mutex_lock(&names_lock);
	id = find_name(name);
	if (!id && perch_registry.nnames < PERCH_MAX_NAMES) {
		uint32_t i = perch_registry.nnames;

		strncpy(names[i], name, PERCH_NAME_LEN - 1);
		/* Publish the name before the count that makes it visible. */
		__atomic_store_n(&perch_registry.nnames, i + 1, __ATOMIC_RELEASE);
		id = i + 1;
	}
	if (!id)
		id = PERCH_NAME_TOO_MANY; /* table full: counted apart, never as another name */
	else if (perch_registry.only_name[0] && !perch_registry.ctl.only &&
		 !strncmp(name, perch_registry.only_name, PERCH_NAME_LEN - 1))
		perch_registry.ctl.only =
			id; /* --only-region's name, registered after perch came */
	pthread_mutex_unlock(&names_lock);
	__atomic_store_n(&site->id, id, __ATOMIC_RELAXED);
	return id;
}

/* A freed block, else a new one on the registry's list. */
static struct perch_abi_thread *take_block(void)
{
	struct perch_abi_thread *th;
	uint64_t head;

	pthread_mutex_lock(&blocks_lock);
	th = free_blocks;
	if (th)
		free_blocks = (struct perch_abi_thread *)(uintptr_t)th->next_free;
	pthread_mutex_unlock(&blocks_lock);
	if (th)
		return th;
	th = mmap(NULL, sizeof(*th), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (th == MAP_FAILED)
		return NULL;
	th->nnodes = 1;
	head = __atomic_load_n(&perch_registry.threads, __ATOMIC_ACQUIRE);
	do {
		th->next = head;
	} while (!__atomic_compare_exchange_n(&perch_registry.threads, &head, (uintptr_t)th, 1,
					      __ATOMIC_RELEASE, __ATOMIC_ACQUIRE));
	return th;
}

/* The calling thread's block; its first profiled marker takes one. */
static struct perch_abi_thread *thread_block(void)
{
	struct perch_abi_thread *th = (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;

	if (th)
		return th;
	th = take_block();
	if (!th)
		return NULL;
	th->tid = (uint32_t)syscall(SYS_gettid);
	start_epoch(th, perch_registry.epoch);
	ring_thread(th);
	__atomic_store_n(&th->exited, 0, __ATOMIC_RELEASE);
	perch__tls.thread = (uintptr_t)th;
	pthread_setspecific(exit_key, th);
	return th;
}

/* The profiler started a new epoch (a new perch attached): this thread's statistics start over;
 * regions open now become untimed, as at any attach. */
static void start_epoch(struct perch_abi_thread *th, uint32_t epoch)
{
	model_reset(th);
	/* Nodes past nnodes are untouched (zero), but for the overflow node. */
	memset(th->nodes, 0, th->nnodes * sizeof(th->nodes[0]));
	memset(&th->nodes[PERCH_NODE_OTHER], 0, sizeof(th->nodes[0]));
	th->nodes[PERCH_NODE_OTHER].name = PERCH_NAME_OTHER;
	th->nnodes = 1;
	th->valid_depth = 0;
	th->mismatches = 0;
	th->too_deep = 0;
	__atomic_store_n(&th->epoch, epoch, __ATOMIC_RELEASE);
}

/* The calling thread's block, current for the registry's epoch; NULL when it can't have one. */
static struct perch_abi_thread *current_block(void)
{
	struct perch_abi_thread *th = thread_block();
	uint32_t epoch = perch_registry.epoch;

	if (th && __builtin_expect(th->epoch != epoch, 0)) {
		start_epoch(th, epoch);
		ring_restart(th);
		ring_thread(th);
	}
	return th;
}

/* The child of parent named name, by the bounded-path rule, if it exists: an existing child;
 * else the node of an earlier parent->name edge on the path from the root (recursion folds back
 * onto it); else 0. */
static uint32_t find_child(const struct perch_abi_thread *th, uint32_t parent, uint32_t name)
{
	const struct perch_abi_node *nodes = th->nodes;
	uint32_t n;

	for (n = nodes[parent].first_child; n; n = nodes[n].next_sibling) {
		if (nodes[n].name == name)
			return n;
	}
	/* Walking up from parent (label X): a node labelled name whose parent is labelled X. The
	 * root has no label, so the first step into the tree never matches. */
	for (n = parent; parent && n; n = nodes[n].parent) {
		if (nodes[n].name == name && nodes[nodes[n].parent].name == nodes[parent].name)
			return n;
	}
	return 0;
}

/* The child of parent named name: found, else a new node (the shared overflow node when the
 * thread's tree is full). */
static uint32_t child_of(struct perch_abi_thread *th, uint32_t parent, uint32_t name)
{
	struct perch_abi_node *nodes = th->nodes;
	uint32_t n = parent == PERCH_NODE_OTHER ? 0 : find_child(th, parent, name);

	if (n)
		return n;
	if (parent == PERCH_NODE_OTHER || th->nnodes >= PERCH_NODE_OTHER)
		return PERCH_NODE_OTHER;
	n = th->nnodes++;
	nodes[n].name = name;
	nodes[n].parent = parent;
	nodes[n].next_sibling = nodes[parent].first_child;
	nodes[parent].first_child = n;
	return n;
}

/* Make node_at[0 .. depth) describe the open regions, for those opened while nobody profiled:
 * their nodes exist so nesting is right, but they are not timed (start 0). */
static __attribute__((noinline)) void catch_up_slow(struct perch_abi_thread *th, uint32_t depth)
{
	for (uint32_t k = th->valid_depth; k < depth && k < PERCH_MAX_DEPTH; k++) {
		uint32_t node = child_of(th, k ? th->node_at[k - 1] : 0, perch__tls.ids[k]);

		th->node_at[k] = node;
		th->start_at[k] = 0;
		th->child_at[k] = 0;
		th->models.size_at[k] = 0;
		th->nodes[node].open++;
	}
	if (depth > th->valid_depth)
		th->valid_depth = depth < PERCH_MAX_DEPTH ? depth : PERCH_MAX_DEPTH;
}

static inline void catch_up(struct perch_abi_thread *th, uint32_t depth)
{
	if (__builtin_expect(th->valid_depth < depth, 0))
		catch_up_slow(th, depth);
}

/* The depths of this thread's open activations that began while paused (or outside the steps
 * asked for): they have no node, no time and no call; the runtime's own, not the profiler's. */
static __thread uint64_t paused_at __attribute__((tls_model("initial-exec")));

/* Paused by the program, or outside the profiler's step range: nothing is recorded. */
static inline bool ctl_off(void)
{
	const struct perch_abi_ctl *c = &perch_registry.ctl;

	return c->paused || (c->gate && !(c->in_step && c->step >= c->first && c->step <= c->last));
}

/* The begin's timestamp, and its entry in the ring with the same time. */
static inline void begin_event(struct perch_abi_thread *th, uint32_t depth, uint32_t id,
			       uint64_t size)
{
	uint64_t now;

	if (__builtin_expect(size > UINT32_MAX, 0))
		ring_put(th, size, PERCH_RING_SIZE, id, 0);
	now = now_ticks();
	th->start_at[depth] = now;
	ring_put(th, now, PERCH_RING_BEGIN, id, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size);
}

/* Every begin while profiled: a thread's first, a new epoch, pauses, steps, depths to catch up,
 * a node to find. */
static __attribute__((noinline)) void begin_any(uint32_t depth, uint32_t id, uint64_t size)
{
	struct perch_abi_thread *th = current_block();
	uint32_t node, parent;

	if (!th)
		return;
	if (depth >= PERCH_MAX_DEPTH) {
		th->too_deep++;
		return;
	}
	if (__builtin_expect(ctl_off(), 0)) {
		paused_at |= 1ull << depth; /* neither timed nor counted */
		return;
	}
	paused_at &= ~(1ull << depth);
	catch_up(th, depth);
	parent = depth ? th->node_at[depth - 1] : 0;
	/* The node last used at this depth is usually the one again (loops): skip the search. */
	node = th->node_at[depth];
	if (!node || th->nodes[node].name != id || th->nodes[node].parent != parent)
		node = child_of(th, parent, id);
	th->node_at[depth] = node;
	th->child_at[depth] = 0;
	th->nodes[node].open++;
	th->nodes[node].size_sum += size;
	th->models.size_at[depth] = size;
	th->valid_depth = depth + 1;
	if (__builtin_expect(perch_registry.timeline, 0)) {
		begin_event(th, depth, id, size);
		return;
	}
	th->start_at[depth] = now_ticks(); /* last: the region's time starts here */
}

/* The end of an activation begun while paused: nothing to count; a node a region inside it
 * made (begun after the resume) is closed. */
static __attribute__((noinline)) void end_paused(struct perch_abi_thread *th, uint32_t depth)
{
	paused_at &= ~(1ull << depth);
	if (th->valid_depth > depth) {
		struct perch_abi_node *n = &th->nodes[th->node_at[depth]];

		if (n->open)
			n->open--;
		th->valid_depth = depth;
	}
}

/* A timed activation's wall time into its node (and its parent's child time, its cost model). */
static inline __attribute__((always_inline)) void
end_timed(struct perch_abi_thread *th, struct perch_abi_node *n, uint32_t depth, uint64_t dur)
{
	n->sum_ticks += dur;
	n->self_ticks += dur - (th->child_at[depth] < dur ? th->child_at[depth] : dur);
	if (!n->open)
		n->total_ticks +=
			dur; /* an inner activation of a folded recursion: already counted */
	if (!n->min_ticks || dur < n->min_ticks)
		n->min_ticks = dur;
	if (dur > n->max_ticks)
		n->max_ticks = dur;
	if (depth)
		th->child_at[depth - 1] += dur;
	if (th->models.size_at[depth])
		model_add(th, th->node_at[depth], th->models.size_at[depth], dur);
}

/* The end of an activation whose node is node_at[depth] (caught up, not paused). */
static inline __attribute__((always_inline)) void end_node(struct perch_abi_thread *th,
							   uint32_t depth, uint64_t now)
{
	struct perch_abi_node *n = &th->nodes[th->node_at[depth]];
	uint64_t start = th->start_at[depth];

	n->calls++;
	if (n->open)
		n->open--;
	th->valid_depth = depth;
	if (!start) {
		n->unmatched++;
		return; /* not in the timeline either: its begin is not */
	}
	if (__builtin_expect(perch_registry.timeline, 0))
		ring_put(th, now, PERCH_RING_END, perch__tls.ids[depth], 0);
	end_timed(th, n, depth, now - start);
}

/* Every end while profiled (perch__end_slow takes the common ones itself). */
static __attribute__((noinline)) void end_any(uint32_t depth, uint64_t now)
{
	struct perch_abi_thread *th = current_block();

	if (!th || depth >= PERCH_MAX_DEPTH)
		return;
	if (__builtin_expect(paused_at >> depth & 1, 0)) {
		end_paused(th, depth);
		return;
	}
	catch_up(th, depth + 1);
	end_node(th, depth, now);
}

/*
 * The two calls a profiled pair makes. The common case (the thread's block current, nothing
 * paused or gated, the node of the last activation at this depth again) is a few loads and
 * stores around the timestamp, with no call; everything else goes to begin_any/end_any. Two
 * timestamp reads are the floor of a timed pair: what runs beside them is what it costs more
 * (bench/regions.sh).
 */
void perch__begin_slow(uint32_t depth, uint32_t id, uint64_t size)
{
	struct perch_abi_thread *th = (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;
	const struct perch_abi_ctl *c = &perch_registry.ctl;
	struct perch_abi_node *n;
	uint32_t node;

	if (__builtin_expect(!th || depth >= PERCH_MAX_DEPTH || th->valid_depth < depth ||
				     th->epoch != perch_registry.epoch || (c->paused | c->gate) ||
				     paused_at,
			     0))
		goto any;
	node = th->node_at[depth];
	n = &th->nodes[node];
	if (__builtin_expect(
		    !node || n->name != id || n->parent != (depth ? th->node_at[depth - 1] : 0), 0))
		goto any;
	th->child_at[depth] = 0;
	n->open++;
	n->size_sum += size;
	th->models.size_at[depth] = size;
	th->valid_depth = depth + 1;
	if (__builtin_expect(perch_registry.timeline, 0)) {
		begin_event(th, depth, id, size);
		return;
	}
	th->start_at[depth] = now_ticks(); /* last: the region's time starts here */
	return;
any:
	begin_any(depth, id, size);
}

void perch__end_slow(uint32_t depth)
{
	uint64_t now = now_ticks();
	struct perch_abi_thread *th = (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;

	if (__builtin_expect(!th || depth >= PERCH_MAX_DEPTH || th->valid_depth <= depth ||
				     th->epoch != perch_registry.epoch || paused_at,
			     0)) {
		end_any(depth, now);
		return;
	}
	end_node(th, depth, now);
}

void perch__mark_slow(uint32_t id)
{
	struct perch_abi_thread *th = current_block();
	uint32_t depth = perch__tls.depth;

	if (!th || ctl_off())
		return;
	if (depth > PERCH_MAX_DEPTH) {
		th->too_deep++;
		return;
	}
	catch_up(th, depth);
	th->nodes[child_of(th, depth ? th->node_at[depth - 1] : 0, id)].calls++;
	if (perch_registry.timeline)
		ring_put(th, now_ticks(), PERCH_RING_MARK, id, 0);
}

static const char *name_of(uint32_t id)
{
	return id && id <= perch_registry.nnames ? names[id - 1] : "?";
}

/* One line on stderr for the first mismatch of the process; the rest are only counted. */
static void count_mismatch(const char *what, uint32_t a, uint32_t b)
{
	struct perch_abi_thread *th = perch_registry.active ? current_block() : NULL;

	__atomic_fetch_add(&perch_registry.mismatches, 1, __ATOMIC_RELAXED);
	if (th)
		th->mismatches++;
	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	if (b)
		fprintf(stderr,
			"perch: region \"%s\" %s \"%s\" (counted; later mismatches are only "
			"counted)\n",
			name_of(a), what, name_of(b));
	else
		fprintf(stderr,
			"perch: region end \"%s\" %s (counted; later mismatches are only "
			"counted)\n",
			name_of(a), what);
}

/* The end did not match the innermost begin. If its region is open further out, the regions
 * inside it were never ended: close them too (each counted as a mismatch). Otherwise ignore the
 * end. Deeper than the kept stack there is nothing to check: just pop. */
void perch__end_mismatch(uint32_t id)
{
	uint32_t depth = perch__tls.depth;
	uint32_t k;

	if (depth > PERCH_MAX_DEPTH) {
		perch__tls.depth = depth - 1;
		return;
	}
	for (k = depth; k-- > 0;) {
		if (perch__tls.ids[k] == id)
			break;
	}
	if (k == UINT32_MAX) {
		count_mismatch("matches no open region: ignored", id, 0);
		return;
	}
	while (depth-- > k) {
		if (depth > k)
			count_mismatch(
				"was still open when its enclosing region ended; closed with",
				perch__tls.ids[depth], id);
		perch__tls.depth = depth;
		if (perch_registry.active)
			perch__end_slow(depth);
	}
}

void perch_region_begin_str(const char *name)
{
	struct perch_site site = {name, 0};

	perch__begin(&site, 0);
}

void perch_region_end_str(const char *name)
{
	struct perch_site site = {name, 0};

	perch__end(&site);
}

/* One entry in the control log (perch_abi.h), while profiled. */
static void log_put(uint32_t kind, uint64_t value)
{
	struct perch_abi_log *e;
	uint64_t h;

	pthread_mutex_lock(&log_lock);
	h = perch_registry.log_head;
	e = &perch_registry.log[h & (PERCH_LOG_ENTRIES - 1)];
	e->time = now_ticks();
	e->value = value;
	e->kind = kind;
	e->tid = (uint32_t)syscall(SYS_gettid);
	__atomic_store_n(&perch_registry.log_head, h + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&log_lock);
}

void perch_profile_pause(void)
{
	if (!__atomic_fetch_add(&perch_registry.ctl.paused, 1, __ATOMIC_ACQ_REL) &&
	    perch_registry.active)
		log_put(PERCH_LOG_PAUSE, 0);
}

void perch_profile_resume(void)
{
	uint32_t p = __atomic_load_n(&perch_registry.ctl.paused, __ATOMIC_ACQUIRE);

	while (p && !__atomic_compare_exchange_n(&perch_registry.ctl.paused, &p, p - 1, 1,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	if (p == 1 && perch_registry.active)
		log_put(PERCH_LOG_RESUME, 0);
}

void perch_step(uint64_t n)
{
	struct perch_abi_ctl *c = &perch_registry.ctl;

	/* Closed while the number changes: a tick never sees step n with the old step's state. */
	__atomic_store_n(&c->in_step, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->step, n, __ATOMIC_RELEASE);
	__atomic_store_n(&c->in_step, 1, __ATOMIC_RELEASE);
	if (perch_registry.active)
		log_put(PERCH_LOG_STEP, n);
}

void perch_step_end(void)
{
	struct perch_abi_ctl *c = &perch_registry.ctl;

	if (!__atomic_exchange_n(&c->in_step, 0, __ATOMIC_ACQ_REL))
		return;
	if (perch_registry.active)
		log_put(PERCH_LOG_STEP_END, c->step);
}
