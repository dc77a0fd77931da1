// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the region runtime (runtime/perch.c) in-process: the region stack the sampler reads,
 * the bounded path tree of regions with exact calls and times while a profiler has set
 * perch_registry.active, recursion folding, mismatched ends, threads, regions opened before a
 * profiler attached, that nothing is allocated while nobody profiles, and (with the profiler's
 * side, userspace/record/regions/regions.c) that what a child process ran is read back into a
 * recording.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/recording.h"
#include "perch.h"
#include "record/procs.h"
#include "record/regions/regions.h"
#include "record/regions/regions_impl.h"

static struct perch_abi_thread *me(void)
{
	return (struct perch_abi_thread *)(uintptr_t)perch__tls.thread;
}

static uint32_t name_id(const char *name)
{
	const char(*names)[PERCH_NAME_LEN] = (const void *)(uintptr_t)perch_registry.names;

	for (uint32_t i = 0; i < perch_registry.nnames; i++) {
		if (!strcmp(names[i], name))
			return i + 1;
	}
	return 0;
}

/* The node of th reached from the root through the names given, or 0. */
static uint32_t node_at_path(const struct perch_abi_thread *th, int n, ...)
{
	uint32_t node = 0;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		uint32_t want = name_id(va_arg(ap, const char *)), c;

		for (c = th->nodes[node].first_child; c && th->nodes[c].name != want;
		     c = th->nodes[c].next_sibling)
			;
		node = c;
		if (!node)
			break;
	}
	va_end(ap);
	return node;
}

static void burn(void)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 20000; i++)
		x += i;
}

static void *in_thread(void *fn)
{
	((void (*)(void))fn)();
	return NULL;
}

/* Each scenario runs on a thread of its own, so it starts with an empty stack and tree. */
static void run_in_thread(void (*fn)(void))
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, in_thread, (void *)fn), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

static struct perch_abi_thread *result;

static void nested(void)
{
	perch_registry.active = 1;
	perch_region_begin("outer");
	burn();
	for (int i = 0; i < 2; i++) {
		PERCH_SCOPE("inner");
		burn();
	}
	perch_region_end("outer");
	assert_int_equal(perch__tls.depth, 0);
	result = me();
}

static void regions_nest_as_a_tree_with_exact_self_and_total(void **state)
{
	const struct perch_abi_node *outer, *inner;

	(void)state;
	run_in_thread(nested);
	outer = &result->nodes[node_at_path(result, 1, "outer")];
	inner = &result->nodes[node_at_path(result, 2, "outer", "inner")];
	assert_int_equal(outer->calls, 1);
	assert_int_equal(inner->calls, 2);
	assert_true(inner->total_ticks > 0 && outer->self_ticks > 0);
	/* The outer region's time is its own plus its children's, to the tick. */
	assert_int_equal(outer->total_ticks, outer->self_ticks + inner->total_ticks);
	assert_int_equal(inner->self_ticks, inner->total_ticks);
	assert_true(inner->min_ticks <= inner->max_ticks && inner->min_ticks > 0);
}

static void recurse(int n)
{
	perch_region_begin("rec");
	burn();
	if (n > 1)
		recurse(n - 1);
	perch_region_end("rec");
}

static uint64_t outer_ticks;

static void recursive(void)
{
	uint64_t t0;

	perch_registry.active = 1;
	t0 = __builtin_ia32_rdtsc();
	recurse(50);
	outer_ticks = __builtin_ia32_rdtsc() - t0;
	result = me();
}

static void recursion_folds_and_total_counts_time_once(void **state)
{
	uint64_t calls = 0, self = 0;
	uint32_t a, b;

	(void)state;
	run_in_thread(recursive);
	/* rec -> rec, and every deeper call folds back onto the second node. */
	a = node_at_path(result, 1, "rec");
	b = node_at_path(result, 2, "rec", "rec");
	assert_true(a && b);
	assert_int_equal(node_at_path(result, 3, "rec", "rec", "rec"), 0);
	assert_int_equal(result->nnodes, 3);
	for (uint32_t i = 1; i < result->nnodes; i++) {
		calls += result->nodes[i].calls;
		self += result->nodes[i].self_ticks;
	}
	assert_int_equal(calls, 50);
	/* The outermost node holds the time of the outermost call only: never more than the wall
	 * time around it, and exactly the sum of every level's own time. */
	assert_true(result->nodes[a].total_ticks <= outer_ticks);
	assert_int_equal(result->nodes[a].total_ticks, self);
}

static void two_places(void)
{
	perch_registry.active = 1;
	perch_region_begin("a");
	perch_region_begin_n("work", 10);
	perch_region_end("work");
	perch_region_end("a");
	perch_region_begin("b");
	perch_region_begin_n("work", 32);
	perch_region_end("work");
	perch_region_end("b");
	result = me();
}

static void same_name_in_two_places_keeps_two_nodes_and_sizes(void **state)
{
	const struct perch_abi_node *wa, *wb;

	(void)state;
	run_in_thread(two_places);
	wa = &result->nodes[node_at_path(result, 2, "a", "work")];
	wb = &result->nodes[node_at_path(result, 2, "b", "work")];
	assert_int_equal(wa->calls, 1);
	assert_int_equal(wb->calls, 1);
	assert_int_equal(wa->size_sum, 10);
	assert_int_equal(wb->size_sum, 32);
	assert_int_equal(wa->name, wb->name);
}

static uint64_t mismatches_before;

static void mismatched(void)
{
	perch_registry.active = 1;
	perch_region_begin("m_outer");
	perch_region_begin("m_inner");
	perch_region_end("m_outer"); /* m_inner was never ended: closed with it */
	assert_int_equal(perch__tls.depth, 0);
	perch_region_end("m_stray"); /* nothing open: ignored */
	assert_int_equal(perch__tls.depth, 0);
	perch_region_begin("m_next"); /* the stack still works */
	perch_region_end("m_next");
	result = me();
}

static void mismatched_end_is_counted_and_never_crashes(void **state)
{
	(void)state;
	mismatches_before = perch_registry.mismatches;
	run_in_thread(mismatched);
	assert_int_equal(result->mismatches, 2);
	assert_int_equal(perch_registry.mismatches - mismatches_before, 2);
	assert_int_equal(result->nodes[node_at_path(result, 1, "m_outer")].calls, 1);
	assert_int_equal(result->nodes[node_at_path(result, 2, "m_outer", "m_inner")].calls, 1);
	assert_int_equal(result->nodes[node_at_path(result, 1, "m_next")].calls, 1);
}

static void attach_midway(void)
{
	perch_registry.active = 0;
	perch_region_begin("early"); /* opened before a profiler attached */
	perch_registry.active = 1;
	perch_region_begin("late");
	burn();
	perch_region_end("late");
	perch_region_end("early");
	result = me();
}

static void regions_open_at_attach_keep_nesting_and_are_marked_untimed(void **state)
{
	const struct perch_abi_node *early, *late;

	(void)state;
	run_in_thread(attach_midway);
	early = &result->nodes[node_at_path(result, 1, "early")];
	late = &result->nodes[node_at_path(result, 2, "early", "late")];
	assert_int_equal(late->calls, 1);
	assert_true(late->total_ticks > 0);
	assert_int_equal(early->calls, 1);
	assert_int_equal(early->unmatched, 1);
	assert_int_equal(early->total_ticks, 0);
}

static uint64_t thread_seen;
static uint32_t depth_seen;

static void unprofiled(void)
{
	perch_registry.active = 0;
	for (int i = 0; i < 1021; i++) {
		perch_region_begin("quiet");
		perch_mark("tick");
		perch_region_end("quiet");
	}
	perch_region_begin("left_open");
	depth_seen = perch__tls.depth;
	thread_seen = perch__tls.thread;
}

static void unprofiled_markers_allocate_nothing_and_keep_the_stack(void **state)
{
	(void)state;
	run_in_thread(unprofiled);
	assert_int_equal(thread_seen, 0);
	assert_int_equal(depth_seen, 1);
	assert_true(name_id("quiet") && name_id("tick") && name_id("left_open"));
}

static void registry_describes_itself_and_finds_tls_from_the_thread_pointer(void **state)
{
	uintptr_t tp;

	(void)state;
	assert_int_equal(perch_registry.magic, PERCH_ABI_MAGIC);
	assert_int_equal(perch_registry.version, PERCH_ABI_VERSION);
	assert_int_equal(perch_registry.size, sizeof(perch_registry));
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	assert_ptr_equal((void *)(tp + perch_registry.tls_offset), &perch__tls);
}

static void each_thread_has_its_own_block(void **state)
{
	uint64_t n = 0;

	(void)state;
	run_in_thread(nested);
	run_in_thread(nested);
	for (uint64_t t = perch_registry.threads; t; t = ((struct perch_abi_thread *)t)->next)
		n++;
	/* Every scenario above and these two ran on their own profiled thread. */
	assert_true(n >= 2);
	assert_int_not_equal(((struct perch_abi_thread *)perch_registry.threads)->tid, 0);
}

/* -DPERCH_DISABLE: markers compile to nothing, so the object references no perch symbol. */
static void disabled_markers_leave_no_trace(void **state)
{
	char cmd[1024];
	int rc;

	(void)state;
	snprintf(
		cmd, sizeof(cmd),
		"cd \"$(mktemp -d)\" && printf '#include <perch.h>\\nint f(int n) { "
		"perch_region_begin(\"x\"); PERCH_SCOPE(\"y\"); perch_mark(\"z\"); "
		"perch_region_begin_n(\"w\", n); perch_region_end(\"w\"); perch_region_end(\"x\"); "
		"perch_step(n); perch_profile_pause(); perch_profile_resume(); perch_step_end(); "
		"return n; }\\n' > d.c && cc -c -O2 -Wall -Werror -DPERCH_DISABLE -I%s d.c && "
		"! nm d.o | grep -q perch",
		PERCH_INCLUDE_DIR);
	rc = system(cmd);
	assert_int_equal(rc, 0);
}

/* A new epoch (another perch attached): the thread's figures start over at its next marker, and
 * what is open then becomes untimed. */
static void new_epoch(void)
{
	perch_registry.active = 1;
	perch_region_begin("kept_open");
	perch_region_begin("old");
	perch_region_end("old");
	perch_registry.epoch++;
	perch_region_begin("new");
	perch_region_end("new");
	perch_region_end("kept_open");
	result = me();
}

static void new_epoch_starts_figures_over(void **state)
{
	uint32_t open, fresh;

	(void)state;
	run_in_thread(new_epoch);
	assert_int_equal(result->epoch, perch_registry.epoch);
	assert_int_equal(node_at_path(result, 2, "kept_open", "old"), 0);
	open = node_at_path(result, 1, "kept_open");
	fresh = node_at_path(result, 2, "kept_open", "new");
	assert_true(open && fresh);
	assert_int_equal(result->nodes[open].calls, 1);
	assert_int_equal(result->nodes[open].unmatched, 1); /* opened in the old epoch */
	assert_int_equal(result->nodes[fresh].calls, 1);
	assert_int_equal(result->nodes[fresh].unmatched, 0);
}

/* A forked child keeps only its own thread, with empty figures: the parent's are the parent's. */
static void forked(void)
{
	pid_t pid;
	int status = -1;

	perch_registry.active = 1;
	perch_region_begin("before_fork");
	perch_region_end("before_fork");
	pid = fork();
	if (pid == 0) {
		struct perch_abi_thread *th = me();

		_exit(!(th && perch_registry.threads == (uintptr_t)th && th->next == 0 &&
			th->nnodes == 1 && th->tid == (uint32_t)getpid()));
	}
	waitpid(pid, &status, 0);
	result =
		(struct perch_abi_thread *)(uintptr_t)(WIFEXITED(status) ? WEXITSTATUS(status) : 2);
}

static void fork_child_starts_empty(void **state)
{
	(void)state;
	run_in_thread(forked);
	assert_ptr_equal(result, NULL);
}

/* Nesting deeper than the kept stack: the begins and marks there are counted, the stack still
 * unwinds, and the kept levels are timed as usual. */
static void too_deep(void)
{
	perch_registry.active = 1;
	for (int i = 0; i < PERCH_MAX_DEPTH + 6; i++)
		perch_region_begin("deep");
	perch_mark("deep_mark");
	for (int i = 0; i < PERCH_MAX_DEPTH + 6; i++)
		perch_region_end("deep");
	assert_int_equal(perch__tls.depth, 0);
	result = me();
}

static void regions_deeper_than_the_stack_are_counted(void **state)
{
	uint32_t a, b;

	(void)state;
	run_in_thread(too_deep);
	assert_int_equal(result->too_deep, 7); /* 6 begins and the mark */
	a = node_at_path(result, 1, "deep");
	b = node_at_path(result, 2, "deep", "deep");
	assert_true(a && b);
	assert_int_equal(result->nodes[a].calls + result->nodes[b].calls, PERCH_MAX_DEPTH);
	assert_int_equal(node_at_path(result, 1, "deep_mark"), 0);
}

/* The block where exited threads' figures are merged (tid 0), or NULL. */
static const struct perch_abi_thread *exited_threads(void)
{
	const struct perch_abi_thread *t = (const void *)(uintptr_t)perch_registry.threads;

	for (; t; t = (const void *)(uintptr_t)t->next) {
		if (!t->tid && !t->exited)
			return t;
	}
	return NULL;
}

static uint64_t exited_calls(const char *name)
{
	const struct perch_abi_thread *t = exited_threads();
	uint32_t n = t ? node_at_path(t, 1, name) : 0;

	return n ? t->nodes[n].calls : 0;
}

static void merged_thrice(void)
{
	perch_registry.active = 1;
	for (int i = 0; i < 3; i++) {
		perch_region_begin("merged");
		perch_region_end("merged");
	}
	result = me();
}

static void merged_twice(void)
{
	perch_registry.active = 1;
	for (int i = 0; i < 2; i++) {
		perch_region_begin("merged");
		perch_region_end("merged");
	}
	result = me();
}

static void exited_thread_block_is_reused_and_its_figures_kept(void **state)
{
	struct perch_abi_thread *first;

	(void)state;
	run_in_thread(nested); /* so the block of exited threads exists */
	assert_non_null(exited_threads());
	run_in_thread(merged_thrice);
	first = result;
	assert_int_equal(first->exited, 1);
	run_in_thread(merged_twice);
	assert_ptr_equal(result, first);
	assert_int_equal(exited_calls("merged"), 5);
}

static void wide_tree(void)
{
	char name[32];

	perch_registry.active = 1;
	for (int i = 0; i < 1021; i++) {
		snprintf(name, sizeof(name), "wide_%04d", i);
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
	result = me();
}

/* A tree the exited threads' block could not take whole stays in its own block, untouched. */
static void exited_tree_too_big_to_merge_stays_whole(void **state)
{
	uint32_t merged_nodes;

	(void)state;
	run_in_thread(
		nested); /* the exited threads' block has 3 nodes or more: 1021 more will not fit */
	assert_non_null(exited_threads());
	merged_nodes = exited_threads()->nnodes;
	run_in_thread(wide_tree);
	assert_int_equal(result->exited, 0);
	assert_int_not_equal(result->tid, 0);
	assert_int_equal(result->nnodes, 1022);
	assert_int_equal(result->nodes[node_at_path(result, 1, "wide_1020")].calls, 1);
	assert_int_equal(exited_threads()->nnodes, merged_nodes);
}

static void short_region(void)
{
	perch_registry.active = 1;
	perch_region_begin("short");
	perch_region_end("short");
}

static void statm_bytes(long *size, long *resident)
{
	FILE *f = fopen("/proc/self/statm", "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld", size, resident), 2);
	fclose(f);
	*size *= sysconf(_SC_PAGESIZE);
	*resident *= sysconf(_SC_PAGESIZE);
}

static void no_region(void)
{
}

/* How much 2000 short threads running fn grow the process (thread stacks are cached and reused;
 * a sanitizer's own per-thread records are not: they grow the unprofiled run as much). */
static void growth(void (*fn)(void), long *size, long *resident)
{
	long size0, res0;

	statm_bytes(&size0, &res0);
	for (int i = 0; i < 2000; i++)
		run_in_thread(fn);
	statm_bytes(size, resident);
	*size -= size0;
	*resident -= res0;
}

/* Memory follows the threads alive at once, not every thread ever profiled; no call is lost. */
static void short_threads_leave_memory_bounded(void **state)
{
	long size, res, base_size, base_res;
	uint64_t calls0;

	(void)state;
	for (int i = 0; i < 20; i++)
		run_in_thread(short_region); /* the thread stack cache, the exited block */
	calls0 = exited_calls("short");
	growth(no_region, &base_size, &base_res);
	growth(short_region, &size, &res);
	printf("2000 short threads: virtual %+ld KiB, resident %+ld KiB; profiled, each in a "
	       "region: virtual %+ld KiB, resident %+ld KiB\n",
	       base_size / 1024, base_res / 1024, size / 1024, res / 1024);
	assert_true(size - base_size < 8l << 20);
	assert_true(res - base_res < 8l << 20);
	assert_int_equal(exited_calls("short") - calls0, 2000);
}

static char last_name[PERCH_NAME_LEN];

/* Fill the name table unprofiled (no tree), then use its last name and ten names beyond it. */
static void beyond_the_table(void)
{
	char name[32];
	int i;

	perch_registry.active = 0;
	for (i = 0; perch_registry.nnames < PERCH_MAX_NAMES; i++) {
		snprintf(name, sizeof(name), "name_%06d", i);
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
	snprintf(last_name, sizeof(last_name), "name_%06d", i - 1);
	perch_registry.active = 1;
	perch_region_begin_str(last_name);
	perch_region_end_str(last_name);
	for (int k = 0; k < 10; k++) {
		snprintf(name, sizeof(name), "beyond_%d", k);
		perch_region_begin_str(name);
		perch_region_end_str(name);
	}
	result = me();
}

/* Runs last: it fills the process's name table. */
static void names_beyond_the_table_are_counted_apart_not_as_the_last_name(void **state)
{
	uint32_t last, n;

	(void)state;
	run_in_thread(beyond_the_table);
	last = node_at_path(result, 1, last_name);
	assert_int_equal(name_id(last_name), PERCH_MAX_NAMES);
	assert_true(last);
	assert_int_equal(result->nodes[last].calls, 1);
	for (n = result->nodes[0].first_child; n; n = result->nodes[n].next_sibling) {
		if (result->nodes[n].name == PERCH_NAME_TOO_MANY)
			break;
	}
	assert_true(n);
	assert_int_equal(result->nodes[n].calls, 10);
}

/* A child that waits for go, runs regions named "" and "named" (one inside the other), tells the
 * parent, and waits for it to have read them. */
static void empty_named_child(int go, int done)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	perch_region_begin("named");
	PERCH_SCOPE("");
	burn();
	perch_region_end("named");
	if (write(done, "d", 1) != 1 || read(go, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

/* Collect the child's regions the way perch record does and load what was written. */
static struct recording *collect_child(pid_t pid, int go, int done, const char *path)
{
	struct rec_writer *w = rec_writer__open(path);
	struct procs *ps = procs__new();
	struct recording *r = NULL;
	struct regions *rg;
	char c;

	assert_non_null(w);
	assert_non_null(ps);
	rg = regions__new(w, -1, -1, ps);
	assert_non_null(rg);
	procs__snapshot(ps, (uint32_t)pid, NULL);
	assert_int_equal(regions__stat(rg, REGIONS_PROCS), 1);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(read(done, &c, 1), 1);
	regions__finish(rg);
	procs__free(ps);
	regions__free(rg);
	assert_int_equal(rec_writer__close(w), 0);
	assert_int_equal(recording__load(path, &r), 0);
	return r;
}

static bool has_region(const struct recording *r, const char *name)
{
	for (size_t i = 0; i < r->nrthreads; i++) {
		for (uint32_t j = 1; j < r->rthreads[i].nnodes; j++) {
			if (!strcmp(recording__string(r, r->rthreads[i].nodes[j].name), name))
				return true;
		}
	}
	return false;
}

/* A region named "" used to make the writer refuse the whole REGIONS block (string id 0 is the
 * root's), so every region of the process was lost. */
static void empty_region_name_is_kept_with_the_others(void **state)
{
	char path[] = "/tmp/perch-test-regions-XXXXXX";
	int go[2], done[2], fd = mkstemp(path), status;
	struct recording *r;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]); /* so that the parent closing it is an end of file here */
		empty_named_child(go[0], done[1]);
	}
	r = collect_child(pid, go[1], done[0], path);
	close(go[1]);
	waitpid(pid, &status, 0);
	unlink(path);
	assert_true(r->nrthreads >= 1);
	assert_true(has_region(r, "named"));
	assert_true(has_region(r, REGIONS_EMPTY_NAME));
	recording__free(r);
}

/* ---- the timeline ring (--timeline) */

static const struct perch_abi_event *ring_entry(const struct perch_abi_thread *th, uint64_t i)
{
	return &th->ring[i % PERCH_RING_ENTRIES];
}

static uint32_t ring_kind(const struct perch_abi_event *e)
{
	return e->word >> PERCH_RING_KIND_SHIFT;
}

static uint64_t ring_head0;

static void timeline_pair(void)
{
	perch_registry.active = 1;
	perch_registry.timeline = 1;
	perch_region_begin_n("tl_pair", 7);
	burn();
	perch_mark("tl_mark");
	perch_region_end("tl_pair");
	perch_region_begin_n("tl_big", 1ull << 40);
	perch_region_end("tl_big");
	perch_registry.timeline = 0;
	result = me();
}

/* Each timed begin, end and mark goes into the thread's ring in order, after the entry naming the
 * thread, with the very timestamps the region tree was timed with; a size too big for an entry
 * comes in one of its own just before its begin. */
static void timeline_ring_holds_the_timed_markers_in_order(void **state)
{
	const struct perch_abi_event *e[7];
	uint64_t h;
	uint32_t pair;

	(void)state;
	run_in_thread(timeline_pair);
	h = result->ring_head;
	assert_true(h >= 7);
	for (int i = 0; i < 7; i++)
		e[i] = ring_entry(result, h - 7 + i);
	assert_int_equal(ring_kind(e[0]), PERCH_RING_THREAD);
	assert_int_equal(e[0]->value, result->tid);
	assert_int_equal(ring_kind(e[1]), PERCH_RING_BEGIN);
	assert_int_equal(e[1]->word & PERCH_RING_ID_MASK, name_id("tl_pair"));
	assert_int_equal(e[1]->aux, 7);
	assert_int_equal(ring_kind(e[2]), PERCH_RING_MARK);
	assert_int_equal(e[2]->word & PERCH_RING_ID_MASK, name_id("tl_mark"));
	assert_int_equal(ring_kind(e[3]), PERCH_RING_END);
	assert_int_equal(e[3]->word & PERCH_RING_ID_MASK, name_id("tl_pair"));
	assert_true(e[1]->value <= e[2]->value && e[2]->value <= e[3]->value);
	pair = node_at_path(result, 1, "tl_pair");
	assert_true(pair);
	assert_int_equal(e[3]->value - e[1]->value, result->nodes[pair].sum_ticks);
	assert_int_equal(ring_kind(e[4]), PERCH_RING_SIZE);
	assert_int_equal(e[4]->value, 1ull << 40);
	assert_int_equal(ring_kind(e[5]), PERCH_RING_BEGIN);
	assert_int_equal(e[5]->aux, UINT32_MAX);
	assert_int_equal(ring_kind(e[6]), PERCH_RING_END);
}

static void timeline_wrap(void)
{
	perch_registry.active = 1;
	perch_region_begin("tl_wrap_first"); /* takes the block (timeline off: no entry) */
	perch_region_end("tl_wrap_first");
	ring_head0 = me()->ring_head;
	perch_registry.timeline = 1;
	for (int i = 0; i < PERCH_RING_ENTRIES + 100; i++)
		perch_mark("tl_wrap");
	perch_registry.timeline = 0;
	perch_region_begin("tl_wrap_off"); /* timeline off: nothing more in the ring */
	perch_region_end("tl_wrap_off");
	result = me();
}

/* The ring never waits: past its size the thread overwrites its oldest entries, and the reader
 * knows exactly which ones it lost. */
static void timeline_ring_wraps_and_counts_what_was_overwritten(void **state)
{
	uint64_t h, last = 0;

	(void)state;
	run_in_thread(timeline_wrap);
	h = result->ring_head;
	assert_int_equal(h - ring_head0, PERCH_RING_ENTRIES + 100);
	for (uint64_t i = h - (PERCH_RING_ENTRIES - 1); i < h; i++) {
		const struct perch_abi_event *e = ring_entry(result, i);

		assert_int_equal(ring_kind(e), PERCH_RING_MARK);
		assert_true(e->value >= last);
		last = e->value;
	}
	/* Read from where the marks began: the first 101 were overwritten (one more is the slot the
	 * writer may be rewriting while the reader copies). */
	assert_int_equal(regions_ring_valid_from(ring_head0, h, h, PERCH_RING_ENTRIES),
			 ring_head0 + 101);
	/* Nothing lost: all read from the cursor, the writer idle. */
	assert_int_equal(regions_ring_valid_from(h - 10, h, h, PERCH_RING_ENTRIES), h - 10);
	/* The writer went on by 5000 while the reader copied: those slots' old entries are gone. */
	assert_int_equal(regions_ring_valid_from(h - 16000, h, h + 5000, PERCH_RING_ENTRIES),
			 h + 5000 + 1 - PERCH_RING_ENTRIES);
	/* A fresh ring: nothing to lose. */
	assert_int_equal(regions_ring_valid_from(0, 3, 5, PERCH_RING_ENTRIES), 0);
}

/* The child's two bursts: a nest and a mark, then more marks than its ring holds. */
static void timeline_child(int go, int done)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	perch_region_begin("tl_outer");
	perch_region_begin_n("tl_inner", 3);
	perch_region_end("tl_inner");
	perch_mark("tl_point");
	perch_region_end("tl_outer");
	if (write(done, "d", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	for (int i = 0; i < PERCH_RING_ENTRIES + 50; i++)
		perch_mark("tl_burst");
	if (write(done, "d", 1) != 1 || read(go, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

/* perch's side of --timeline on a process it attaches to: its spans read at two drains, the
 * second after the thread overwrote part of its ring: what was lost is counted exactly, the rest
 * written in the thread's order. */
static void timeline_spans_are_read_across_drains_and_losses_counted(void **state)
{
	char path[] = "/tmp/perch-test-timeline-XXXXXX", c;
	int go[2], done[2], fd = mkstemp(path), status;
	struct recording *r = NULL;
	struct rec_writer *w;
	struct procs *ps;
	struct regions *rg;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		timeline_child(go[0], done[1]);
	}
	w = rec_writer__open(path);
	ps = procs__new();
	rg = regions__new(w, -1, -1, ps);
	assert_non_null(rg);
	regions__set_timeline(rg, true);
	procs__snapshot(ps, (uint32_t)pid, NULL);
	for (int burst = 0; burst < 2; burst++) {
		assert_int_equal(write(go[1], "g", 1), 1);
		assert_int_equal(read(done[0], &c, 1), 1);
		regions__collect(rg);
	}
	regions__finish(rg);
	/* The second read found the ring lapped: the first 50 marks and the slot being written. */
	assert_int_equal(regions__stat(rg, REGIONS_SPANS_LOST), 51);
	procs__free(ps);
	regions__free(rg);
	assert_int_equal(rec_writer__close(w), 0);
	close(go[1]);
	waitpid(pid, &status, 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	assert_int_equal(r->nspans, 5 + PERCH_RING_ENTRIES - 1);
	assert_int_equal(r->spans[0].kind, REC_SPAN_BEGIN);
	assert_string_equal(recording__string(r, r->spans[1].name), "tl_inner");
	assert_int_equal(r->spans[1].size, 3);
	assert_int_equal(r->spans[2].kind, REC_SPAN_END);
	assert_int_equal(r->spans[3].kind, REC_SPAN_MARK);
	assert_string_equal(recording__string(r, r->spans[4].name), "tl_outer");
	assert_int_equal(r->spans[4].kind, REC_SPAN_END);
	assert_int_equal(r->spans[0].tid, (uint32_t)pid);
	for (size_t i = 1; i < r->nspans; i++)
		assert_true(r->spans[i].time_ns >= r->spans[i - 1].time_ns);
	recording__free(r);
}

/* Memory of a make-believe target: next pointers at base + 64 * i. */
struct fake_mem {
	uint64_t next[8][8];
};

static int fake_peek(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake_mem *m = ctx;

	if (addr < 0x1000 || addr - 0x1000 + len > sizeof(m->next))
		return -1;
	memcpy(buf, (uint8_t *)m->next + (addr - 0x1000), len);
	return 0;
}

/* The thread list is the target's: one that comes back on itself (th->next = th, or further
 * back) is walked once, each block listed once, and said to be a cycle. */
static void thread_list_cycle_is_walked_once(void **state)
{
	struct fake_mem m = {0};
	struct regions_walk wk = {0};

	(void)state;
	m.next[0][0] = 0x1040; /* 0 -> 1 -> 2 -> 1 */
	m.next[1][0] = 0x1080;
	m.next[2][0] = 0x1040;
	assert_int_equal(regions_walk(&wk, 0x1000, fake_peek, &m), REGIONS_WALK_CYCLE);
	assert_int_equal(wk.nblocks, 3);
	m.next[2][0] = 0x1080; /* th->next = th */
	assert_int_equal(regions_walk(&wk, 0x1000, fake_peek, &m), REGIONS_WALK_CYCLE);
	assert_int_equal(wk.nblocks, 3);
	m.next[2][0] = 0; /* a good list again: the next walk sees every block anew */
	assert_int_equal(regions_walk(&wk, 0x1000, fake_peek, &m), 0);
	assert_int_equal(wk.nblocks, 3);
	assert_int_equal(wk.blocks[2], 0x1080);
	m.next[2][0] = 0x9000; /* unreadable: the blocks before it */
	assert_int_equal(regions_walk(&wk, 0x1000, fake_peek, &m), 0);
	assert_int_equal(wk.nblocks, 4);
	regions_walk_free(&wk);
}

/* A child whose runtime goes bad once perch has switched it on: its thread list comes back on
 * itself, its ring holds marks at times outside the run, its control log a pause from before
 * the run. */
static void hostile_child(int go, int done)
{
	struct perch_abi_thread *th;
	uint64_t bad[2] = {1, UINT64_MAX / 2}, h;
	char c;

	if (read(go, &c, 1) != 1)
		_exit(1);
	perch_region_begin("h_outer");
	perch_region_end("h_outer");
	th = (struct perch_abi_thread *)(uintptr_t)perch_registry.threads;
	th->next = (uintptr_t)th;
	for (int i = 0; i < 2; i++) {
		h = th->ring_head;
		th->ring[h % PERCH_RING_ENTRIES] = (struct perch_abi_event){
			bad[i], (uint32_t)PERCH_RING_MARK << PERCH_RING_KIND_SHIFT | 1, 0};
		th->ring_head = h + 1;
	}
	h = perch_registry.log_head;
	perch_registry.log[h % PERCH_LOG_ENTRIES] =
		(struct perch_abi_log){.time = 1, .kind = PERCH_LOG_PAUSE};
	perch_registry.log_head = h + 1;
	perch_mark("h_after");
	if (write(done, "d", 1) != 1 || read(go, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

/* What perch makes of that child: each block read once (one thread, the cycle counted), the
 * garbage dropped and counted, and a recording that loads with every good span. */
static void hostile_runtime_is_read_once_and_its_garbage_counted(void **state)
{
	char path[] = "/tmp/perch-test-hostile-XXXXXX", c;
	int go[2], done[2], fd = mkstemp(path), status;
	struct recording *r = NULL;
	struct rec_writer *w;
	struct procs *ps;
	struct regions *rg;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(go[1]);
		hostile_child(go[0], done[1]);
	}
	w = rec_writer__open(path);
	ps = procs__new();
	rg = regions__new(w, -1, -1, ps);
	assert_non_null(rg);
	regions__set_timeline(rg, true);
	procs__snapshot(ps, (uint32_t)pid, NULL);
	assert_int_equal(write(go[1], "g", 1), 1);
	assert_int_equal(read(done[0], &c, 1), 1);
	regions__collect(rg);
	assert_int_equal(regions_find_proc(rg, (uint32_t)pid)->nthreads, 1);
	assert_true(regions__stat(rg, REGIONS_THREAD_CYCLES) >= 1);
	assert_int_equal(regions__stat(rg, REGIONS_SPANS_REFUSED), 2);
	assert_int_equal(regions__stat(rg, REGIONS_LOG_REFUSED), 1);
	regions__finish(rg);
	procs__free(ps);
	regions__free(rg);
	assert_int_equal(rec_writer__close(w), 0);
	close(go[1]);
	waitpid(pid, &status, 0);
	assert_int_equal(recording__load(path, &r), 0);
	unlink(path);
	assert_int_equal(r->nspans, 3); /* h_outer's begin and end, h_after */
	assert_string_equal(recording__string(r, r->spans[2].name), "h_after");
	recording__free(r);
}

/* A program built with the runtime before the timeline (ABI 3: the registry without its last
 * fields) is still read, its timeline fields zero; an older or unknown one is refused. */
static void registry_of_abi_3_is_read_without_timeline(void **state)
{
	struct perch_abi_registry old = perch_registry;
	struct rproc p = {.pid = (uint32_t)getpid(), .addr = (uintptr_t)&old};

	(void)state;
	old.version = 3;
	old.size = REG_V3_SIZE;
	old.timeline = 1; /* what follows an ABI 3 registry is not its own */
	old.ring_entries = 99;
	assert_int_equal(regions_read_registry(&p), 0);
	assert_int_equal(p.reg.version, 3);
	assert_int_equal(p.reg.timeline, 0);
	assert_int_equal(p.reg.ring_entries, 0);
	assert_int_equal(p.reg.tls_offset, perch_registry.tls_offset);
	old.version = 2;
	assert_int_equal(regions_read_registry(&p), -1);
	assert_int_equal(errno, EPROTO);
	old = perch_registry;
	assert_int_equal(regions_read_registry(&p), 0);
	assert_int_equal(p.reg.ring_entries, PERCH_RING_ENTRIES);
}

/* ABI 4 (before steps and pauses: the registry without ctl, only_name and the log) is read
 * too, those fields zero. */
static void registry_of_abi_4_is_read_without_steps(void **state)
{
	struct perch_abi_registry old = perch_registry;
	struct rproc p = {.pid = (uint32_t)getpid(), .addr = (uintptr_t)&old};

	(void)state;
	old.version = 4;
	old.size = REG_V4_SIZE;
	old.ctl.gate = 1; /* what follows an ABI 4 registry is not its own */
	old.log_head = 7;
	assert_int_equal(regions_read_registry(&p), 0);
	assert_int_equal(p.reg.version, 4);
	assert_int_equal(p.reg.ctl.gate, 0);
	assert_int_equal(p.reg.log_head, 0);
	assert_int_equal(p.reg.ring_entries, PERCH_RING_ENTRIES);
	old.size = REG_V3_SIZE; /* a version's size must be its own */
	assert_int_equal(regions_read_registry(&p), -1);
	assert_int_equal(errno, EPROTO);
}

static uint64_t log_from;

/* The control log entry i after log_from. */
static const struct perch_abi_log *log_entry(uint64_t i)
{
	return &perch_registry.log[(log_from + i) & (PERCH_LOG_ENTRIES - 1)];
}

/* Pauses nest; a resume with none open is ignored; regions begun while paused are neither
 * timed nor counted (nor marks), and one begun before a pause counts whole. */
static void paused_regions(void)
{
	perch_registry.active = 1;
	log_from = perch_registry.log_head;
	perch_region_begin("spans_pause");
	perch_profile_pause();
	perch_profile_pause();
	perch_region_begin("in_pause");
	perch_mark("mark_in_pause");
	perch_region_end("in_pause");
	perch_profile_resume();
	assert_int_equal(perch_registry.ctl.paused, 1);
	perch_region_begin("still_paused");
	perch_region_end("still_paused");
	perch_profile_resume();
	perch_profile_resume(); /* none open: ignored */
	assert_int_equal(perch_registry.ctl.paused, 0);
	perch_region_end("spans_pause");
	perch_region_begin("after");
	perch_region_end("after");
	assert_int_equal(perch__tls.depth, 0);
	result = me();
}

static void pause_nests_and_regions_begun_while_paused_are_not_counted(void **state)
{
	(void)state;
	run_in_thread(paused_regions);
	assert_int_equal(node_at_path(result, 1, "in_pause"), 0);
	assert_int_equal(node_at_path(result, 1, "still_paused"), 0);
	assert_int_equal(node_at_path(result, 2, "spans_pause", "in_pause"), 0);
	assert_int_equal(node_at_path(result, 2, "spans_pause", "mark_in_pause"), 0);
	assert_int_equal(result->nodes[node_at_path(result, 1, "spans_pause")].calls, 1);
	assert_true(result->nodes[node_at_path(result, 1, "spans_pause")].total_ticks > 0);
	assert_int_equal(result->nodes[node_at_path(result, 1, "after")].calls, 1);
	/* One PAUSE and one RESUME logged: the outermost pair only. */
	assert_int_equal(perch_registry.log_head - log_from, 2);
	assert_int_equal(log_entry(0)->kind, PERCH_LOG_PAUSE);
	assert_int_equal(log_entry(1)->kind, PERCH_LOG_RESUME);
	assert_true(log_entry(1)->time >= log_entry(0)->time);
}

/* With the profiler's step gate 2..3, regions count only while step 2 or 3 is open; each step
 * and its end are logged with the step's number. */
static void gated_steps(void)
{
	perch_registry.active = 1;
	log_from = perch_registry.log_head;
	perch_registry.ctl.first = 2;
	perch_registry.ctl.last = 3;
	perch_registry.ctl.gate = 1;
	for (uint64_t n = 1; n <= 4; n++) {
		perch_step(n);
		perch_region_begin("gated");
		perch_region_end("gated");
	}
	perch_step_end();
	perch_step_end(); /* none open: nothing logged */
	perch_region_begin("gated");
	perch_region_end("gated");
	perch_registry.ctl.gate = 0;
	result = me();
}

static void steps_gate_regions_and_are_logged(void **state)
{
	static const uint32_t kinds[] = {PERCH_LOG_STEP, PERCH_LOG_STEP, PERCH_LOG_STEP,
					 PERCH_LOG_STEP, PERCH_LOG_STEP_END};
	static const uint64_t values[] = {1, 2, 3, 4, 4};

	(void)state;
	run_in_thread(gated_steps);
	assert_int_equal(result->nodes[node_at_path(result, 1, "gated")].calls, 2);
	assert_int_equal(perch_registry.log_head - log_from, 5);
	for (uint64_t i = 0; i < 5; i++) {
		assert_int_equal(log_entry(i)->kind, kinds[i]);
		assert_int_equal(log_entry(i)->value, values[i]);
	}
	assert_int_equal(perch_registry.ctl.in_step, 0);
}

#define SIZED_CALLS 100000

static void sized(void)
{
	static const char *const names[] = {
		"s00", "s01", "s02", "s03", "s04", "s05", "s06", "s07", "s08", "s09", "s10",
		"s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21",
		"s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "s32",
	};

	perch_registry.active = 1;
	for (uint64_t i = 1; i <= SIZED_CALLS; i++) {
		perch_region_begin_n("sized", i);
		perch_region_end("sized");
	}
	perch_region_begin("unsized"); /* no size: no slot */
	perch_region_end("unsized");
	/* 33 more sized names: 31 slots are left, the calls of the last two are counted */
	for (int k = 0; k < 33; k++) {
		perch_region_begin_str(names[k]);
		perch_region_end_str(names[k]);
	}
	for (int k = 0; k < 33; k++) {
		struct perch_site site = {names[k], 0};

		perch__begin(&site, 7);
		perch__end(&site);
	}
	result = me();
}

/* Per log2(n) bucket exact counts and sums; the reservoir a uniform sample of the calls (its
 * mean within 4 standard errors of the calls' mean, every tenth of them represented); 32 slots,
 * the calls past them counted. */
static void sized_regions_keep_buckets_and_a_uniform_reservoir(void **state)
{
	const struct perch_abi_model *md;
	double mean = 0;
	int tenth[10] = {0};

	(void)state;
	run_in_thread(sized);
	md = &result->models.slots[0];
	assert_int_equal(result->models.nslots, PERCH_MODEL_SLOTS);
	assert_int_equal(result->models.over, 2);
	assert_int_equal(md->name, name_id("sized"));
	assert_int_equal(md->seen, SIZED_CALLS);
	for (uint32_t b = 1; b <= 17; b++) {
		uint64_t lo = 1ull << (b - 1), hi = (1ull << b) - 1;

		hi = hi < SIZED_CALLS ? hi : SIZED_CALLS;
		assert_int_equal(md->buckets[b].count, hi - lo + 1);
		assert_int_equal(md->buckets[b].sum_n, (lo + hi) * (hi - lo + 1) / 2);
		assert_true(md->buckets[b].min_t <= md->buckets[b].max_t);
	}
	for (int k = 0; k < PERCH_MODEL_POINTS; k++) {
		assert_true(md->points[k].n >= 1 && md->points[k].n <= SIZED_CALLS);
		mean += (double)md->points[k].n / PERCH_MODEL_POINTS;
		tenth[(md->points[k].n - 1) * 10 / SIZED_CALLS]++;
	}
	/* the calls' n: uniform on 1..100000, sd 28868; the mean of 512 has sd 1276 */
	assert_true(fabs(mean - (SIZED_CALLS + 1) / 2.0) < 4 * 1276);
	for (int d = 0; d < 10; d++)
		assert_true(tenth[d] >= 20 && tenth[d] <= 90);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(registry_describes_itself_and_finds_tls_from_the_thread_pointer),
		cmocka_unit_test(registry_of_abi_4_is_read_without_steps),
		cmocka_unit_test(pause_nests_and_regions_begun_while_paused_are_not_counted),
		cmocka_unit_test(steps_gate_regions_and_are_logged),
		cmocka_unit_test(regions_nest_as_a_tree_with_exact_self_and_total),
		cmocka_unit_test(recursion_folds_and_total_counts_time_once),
		cmocka_unit_test(same_name_in_two_places_keeps_two_nodes_and_sizes),
		cmocka_unit_test(mismatched_end_is_counted_and_never_crashes),
		cmocka_unit_test(regions_open_at_attach_keep_nesting_and_are_marked_untimed),
		cmocka_unit_test(unprofiled_markers_allocate_nothing_and_keep_the_stack),
		cmocka_unit_test(each_thread_has_its_own_block),
		cmocka_unit_test(disabled_markers_leave_no_trace),
		cmocka_unit_test(new_epoch_starts_figures_over),
		cmocka_unit_test(fork_child_starts_empty),
		cmocka_unit_test(regions_deeper_than_the_stack_are_counted),
		cmocka_unit_test(exited_thread_block_is_reused_and_its_figures_kept),
		cmocka_unit_test(short_threads_leave_memory_bounded),
		cmocka_unit_test(exited_tree_too_big_to_merge_stays_whole),
		cmocka_unit_test(empty_region_name_is_kept_with_the_others),
		cmocka_unit_test(timeline_ring_holds_the_timed_markers_in_order),
		cmocka_unit_test(timeline_ring_wraps_and_counts_what_was_overwritten),
		cmocka_unit_test(timeline_spans_are_read_across_drains_and_losses_counted),
		cmocka_unit_test(registry_of_abi_3_is_read_without_timeline),
		cmocka_unit_test(thread_list_cycle_is_walked_once),
		cmocka_unit_test(hostile_runtime_is_read_once_and_its_garbage_counted),
		cmocka_unit_test(sized_regions_keep_buckets_and_a_uniform_reservoir),
		/* Last: it fills this process's name table for good (and the tables of children
		 * forked after it), so no later test could name a new region. */
		cmocka_unit_test(names_beyond_the_table_are_counted_apart_not_as_the_last_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
