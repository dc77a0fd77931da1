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

#include "collect.h"

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

static int add_leaf(struct collector *c, pid_t pid, uint64_t leaf)
{
	struct perch_key key = {.tgid = (__u32)pid, .tid = (__u32)pid, .kstack_id = -1};
	uint64_t ustack[2] = {leaf, 0};

	return collector__add(c, &key, 1, NULL, 0, ustack, NULL);
}

/* Samples drained after their process exited, before its exit event: an address outside the
 * known mappings makes the collector look at /proc again, and the zombie's empty maps must not
 * replace what it knew (python runs lost up to 267 of ~300 samples to this). */
static void collect_keeps_mappings_of_exited_process(void **state)
{
	char path[] = "/tmp/perch-test-collect.XXXXXX";
	int fd = mkstemp(path);
	struct rec_writer *w;
	struct collector *c;
	pid_t pid;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = rec_writer__open(path);
	assert_non_null(w);
	c = collector__new(w, 127);
	assert_non_null(c);
	pid = start_child();
	collector__snapshot(c, (uint32_t)pid);
	make_zombie(pid);

	assert_int_equal(add_leaf(c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 0);
	/* No mapping holds page 1: the collector re-reads /proc, which is empty now. */
	assert_int_equal(add_leaf(c, pid, 0x1000), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 1);
	assert_int_equal(add_leaf(c, pid, (uint64_t)(uintptr_t)collect_target + 4), 0);
	assert_int_equal(collector__stat(c, COLLECT_NO_MAPS), 1);

	assert_int_equal(waitpid(pid, NULL, 0), pid);
	collector__free(c);
	assert_int_equal(rec_writer__close(w), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(collect_keeps_mappings_of_exited_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
