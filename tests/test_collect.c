// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the collector's view of process mappings (collect.c) on a real child process: what is
 * known of a process stays known after it exits, whatever /proc says of it by the time its
 * samples are drained.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/collect/collect.h"
#include "record/procs.h"

static __attribute__((noinline, used)) int collect_target(int x)
{
	return x * 7 + 1;
}

/* A forked child that waits to be killed; its text is ours (same addresses). */
static pid_t start_child(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

/* Kill pid and wait until it is a zombie, without reaping it: /proc/PID/maps reads as empty. */
static void make_zombie(pid_t pid)
{
	siginfo_t si;

	assert_int_equal(kill(pid, SIGKILL), 0);
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
}

static int add_stack(struct collector *c, pid_t pid, const uint64_t *ustack)
{
	struct raw_sample s = {.pid = (uint32_t)pid,
			       .tid = (uint32_t)pid,
			       .flags = RAW_KERNEL_LOST,
			       .count = 1,
			       .ustack = ustack};

	while (ustack[s.nu]) /* zero-terminated */
		s.nu++;
	return collector__add(c, &s, NULL, 0);
}

static int add_leaf(struct collector *c, pid_t pid, uint64_t leaf)
{
	uint64_t ustack[2] = {leaf, 0};

	return add_stack(c, pid, ustack);
}

struct fixture {
	char path[64];
	struct rec_writer *w;
	struct procs *ps;
	struct collector *c;
};

static void fixture_open(struct fixture *f)
{
	int fd;

	strcpy(f->path, "/tmp/perch-test-collect.XXXXXX");
	fd = mkstemp(f->path);
	assert_true(fd >= 0);
	close(fd);
	f->w = rec_writer__open(f->path);
	assert_non_null(f->w);
	f->ps = procs__new();
	assert_non_null(f->ps);
	f->c = collector__new(f->w, 127, f->ps);
	assert_non_null(f->c);
}

static void fixture_close(struct fixture *f)
{
	procs__free(f->ps);
	collector__free(f->c);
	assert_int_equal(rec_writer__close(f->w), 0);
	unlink(f->path);
}

/* Samples drained after their process exited, before its exit event: an address outside the
 * known mappings makes the collector look at /proc again, and the zombie's empty maps must not
 * replace what it knew (python runs lost up to 267 of ~300 samples to this). */
static void collect_keeps_mappings_of_exited_process(void **state)
{
	struct fixture f;
	struct collector *c;
	pid_t pid;

	(void)state;
	fixture_open(&f);
	c = f.c;
	pid = start_child();
	procs__snapshot(f.ps, (uint32_t)pid, NULL);
	make_zombie(pid);

	assert_int_equal(add_leaf(c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 0);
	/* No mapping holds page 1: the collector re-reads /proc, which is empty now. */
	assert_int_equal(add_leaf(c, pid, 0x1000), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 1);
	assert_int_equal(add_leaf(c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 1);

	assert_int_equal(waitpid(pid, NULL, 0), pid);
	fixture_close(&f);
}

/* A walk that went on from garbage (here ASCII text, as seen in real recordings, and a small
 * integer) is cut at the first caller no executable mapping holds and counted; a stack of mapped
 * addresses is kept whole. */
static void collect_cuts_stack_at_impossible_caller(void **state)
{
	uint64_t fn = (uint64_t)(uintptr_t)collect_target + 4,
		 outer = (uint64_t)(uintptr_t)start_child + 4;
	uint64_t good[4] = {fn, outer, outer, 0}, text[4] = {fn, 0x2f656c61636f6c2full, outer, 0};
	uint64_t small[3] = {fn, 0x100000001ull, 0};
	struct fixture f;
	pid_t pid;

	(void)state;
	fixture_open(&f);
	pid = start_child();
	procs__snapshot(f.ps, (uint32_t)pid, NULL);
	assert_int_equal(add_stack(f.c, pid, good), 0);
	assert_int_equal(collector__stat(f.c, COLLECT_DAMAGED), 0);
	assert_int_equal(collector__stat(f.c, COLLECT_TRUNCATED), 0);
	assert_int_equal(add_stack(f.c, pid, text), 0);
	assert_int_equal(add_stack(f.c, pid, small), 0);
	assert_int_equal(collector__stat(f.c, COLLECT_DAMAGED), 2);
	assert_int_equal(collector__stat(f.c, COLLECT_NO_MAPS), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	fixture_close(&f);
}

/* A process the collector knows from its events only (a fork, an exec) has no image yet; a drain
 * must pass over it (the sanitizer build caught a memmove from NULL there). Images of older
 * generations go at the drain after the one that saw the exec, the newest stays. */
static void collect_drains_processes_without_images_and_frees_old_ones(void **state)
{
	struct fixture f;
	pid_t pid;

	(void)state;
	fixture_open(&f);
	procs__fork(f.ps, 1, 0, 4242);
	collector__drained(f.c);
	pid = start_child();
	procs__snapshot(f.ps, (uint32_t)pid, NULL);
	assert_int_equal(add_leaf(f.c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	procs__exec(f.ps, (uint32_t)pid); /* generation 1, mapped by events */
	collector__drained(f.c);
	collector__drained(f.c);
	/* generation 0's image is gone: its addresses no longer resolve */
	assert_int_equal(add_leaf(f.c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	assert_int_equal(collector__stat(f.c, COLLECT_NO_MAPS), 1);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	fixture_close(&f);
}

/* One address, seen first as a sample's leaf and then as a return address in another sample's
 * stack, is two frames: the leaf names the function at the address, the return address the
 * function of the call one byte before it. Here the address is collect_target's first byte, so
 * the call before it belongs to whatever precedes collect_target. One frame for both (a cache
 * keyed by the address alone) named the callers of a JIT leaf after the inlined code that follows
 * the call: jit-nofp's rare "main;thread_cpu_s;clock_s;jit_hot". */
static void collect_keeps_leaf_and_return_frames_of_one_address_apart(void **state)
{
	uint64_t at = (uint64_t)(uintptr_t)collect_target, fn = at + 4;
	uint64_t called_from[3] = {fn, at, 0};
	const struct rec_frame *leaf, *ret;
	struct recording *r = NULL;
	struct fixture f;
	pid_t pid;

	(void)state;
	fixture_open(&f);
	pid = start_child();
	procs__snapshot(f.ps, (uint32_t)pid, NULL);
	assert_int_equal(add_leaf(f.c, pid, at), 0);
	assert_int_equal(add_stack(f.c, pid, called_from), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	procs__free(f.ps);
	collector__free(f.c);
	assert_int_equal(rec_writer__close(f.w), 0);
	assert_int_equal(recording__load(f.path, &r), 0);
	unlink(f.path);
	assert_int_equal(r->nsamples, 2);
	assert_int_equal(r->samples[0].nframes, 1);
	assert_int_equal(r->samples[1].nframes, 2);
	leaf = &r->frames[r->samples[0].frames[0]];
	ret = &r->frames[r->samples[1].frames[0]];
	assert_string_equal(recording__string(r, leaf->name), "collect_target");
	assert_int_not_equal(r->samples[0].frames[0], r->samples[1].frames[0]);
	assert_true(!ret->name || strcmp(recording__string(r, ret->name), "collect_target"));
	recording__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(collect_keeps_mappings_of_exited_process),
		cmocka_unit_test(collect_cuts_stack_at_impossible_caller),
		cmocka_unit_test(collect_drains_processes_without_images_and_frees_old_ones),
		cmocka_unit_test(collect_keeps_leaf_and_return_frames_of_one_address_apart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
