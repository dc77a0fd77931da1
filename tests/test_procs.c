// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the process table's contract with its listeners (record/procs.h): every event goes to
 * every listener that has the hook, in registration order; exits wait for procs__flush(); entries
 * outlive exits; one module per (device, inode); slots are each listener's own and dropped by it;
 * procs__sweep() forgets exited processes only after the time given, never a parent a child's
 * entry resolves through, and keeps the others findable and in order.
 */
#include <time.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/procs.h"

/* What the listeners heard, one letter per event and listener: "1f2f" = fork to 1, then 2. */
static char heard[256];

struct spy {
	char tag;
	int id;
	int dropped, dropped_modules;
};

static void note(const struct spy *s, char ev)
{
	size_t n = strlen(heard);

	heard[n] = s->tag;
	heard[n + 1] = ev;
	heard[n + 2] = '\0';
}

static int spy_start(void *ctx, struct procs_proc *p, const struct proc_maps *maps, const char *exe)
{
	(void)p;
	(void)exe;
	note(ctx, maps ? 's' : 'S');
	return ((struct spy *)ctx)->tag == '2' ? -EBUSY : 0;
}

static void spy_fork(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	assert_int_equal(child->ppid, parent->pid);
	assert_true(child->forked);
	note(ctx, 'f');
}

static void spy_exec(void *ctx, struct procs_proc *p)
{
	(void)p;
	note(ctx, 'x');
}

static void spy_mmap(void *ctx, struct procs_proc *p, const struct proc_map *m,
		     struct procs_module *mod)
{
	struct spy *s = ctx;
	void **slot = procs__module_slot(mod, s->id);

	(void)m;
	if (!*slot)
		*slot = calloc(1, 1);
	slot = procs__slot(p, s->id);
	if (!*slot)
		*slot = calloc(1, 1);
	note(ctx, 'm');
}

static void spy_exit(void *ctx, struct procs_proc *p)
{
	assert_false(p->exited); /* set once every listener heard it */
	note(ctx, 'e');
}

static void spy_forget(void *ctx, struct procs_proc *p)
{
	(void)p;
	note(ctx, 'g');
}

static void spy_drop(void *ctx, void *slot)
{
	((struct spy *)ctx)->dropped++;
	free(slot);
}

static void spy_drop_module(void *ctx, void *slot)
{
	((struct spy *)ctx)->dropped_modules++;
	free(slot);
}

static int listen_spy(struct procs *ps, struct spy *s, bool all)
{
	struct procs_listener l = {.name = "spy", .ctx = s, .start = spy_start, .exit = spy_exit};

	if (all) {
		l.fork = spy_fork;
		l.exec = spy_exec;
		l.mmap = spy_mmap;
		l.forget = spy_forget;
		l.drop = spy_drop;
		l.drop_module = spy_drop_module;
	}
	s->id = procs__listen(ps, &l);
	return s->id;
}

static void procs_fans_out_in_registration_order(void **state)
{
	struct spy one = {.tag = '1'}, two = {.tag = '2'};
	struct procs *ps = procs__new();
	struct procs_proc *child;

	(void)state;
	heard[0] = '\0';
	assert_int_equal(listen_spy(ps, &one, true), 0);
	assert_int_equal(listen_spy(ps, &two, false), 1);
	/* The first refusal is returned, after every listener heard of the process. */
	assert_int_equal(procs__snapshot(ps, (uint32_t)getpid(), NULL), -EBUSY);
	procs__fork(ps, (uint32_t)getpid(), 0, 4242);
	procs__exec(ps, 4242);
	child = procs__find(ps, 4242);
	assert_non_null(child);
	assert_int_equal(child->gen, 1);
	assert_string_equal(heard, "1s2s1f1x");
	procs__exit(ps, 4242);
	assert_string_equal(heard, "1s2s1f1x"); /* not before the flush */
	procs__flush(ps);
	assert_string_equal(heard, "1s2s1f1x1e2e");
	assert_true(child->exited);
	assert_ptr_equal(procs__find(ps, 4242), child); /* entries outlive their exits */
	assert_int_equal(procs__count(ps), 2);
	procs__free(ps);
}

static void procs_keeps_one_module_per_file_and_drops_slots(void **state)
{
	struct proc_map a = {
		.start = 0x1000, .end = 0x2000, .dev_major = 8, .inode = 7, .path = "/a"};
	struct proc_map b = a, vdso = {.start = 0x9000, .end = 0xa000, .path = "[vdso]"};
	struct spy one = {.tag = '1'};
	struct procs *ps = procs__new();

	(void)state;
	heard[0] = '\0';
	listen_spy(ps, &one, true);
	b.start = 0x5000;
	b.end = 0x6000;
	assert_ptr_equal(procs__module_of(ps, &a), procs__module_of(ps, &b));
	assert_ptr_equal(procs__module_of(ps, &vdso), procs__module(ps, 0, 0));
	b.dev_minor = 1;
	assert_ptr_not_equal(procs__module_of(ps, &a), procs__module_of(ps, &b));
	vdso.path = "";
	assert_null(procs__module_of(ps, &vdso)); /* anonymous memory */
	procs__mmap(ps, 10, &a);
	procs__mmap(ps, 11, &a);
	procs__mmap(ps, 11, &b);
	assert_string_equal(heard, "1m1m1m");
	procs__free(ps);
	assert_int_equal(one.dropped, 2);
	assert_int_equal(one.dropped_modules, 2);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void procs_sweep_forgets_exited_processes(void **state)
{
	struct proc_map a = {
		.start = 0x1000, .end = 0x2000, .dev_major = 8, .inode = 7, .path = "/a"};
	struct spy one = {.tag = '1'};
	struct procs *ps = procs__new();
	uint64_t before;

	(void)state;
	heard[0] = '\0';
	listen_spy(ps, &one, true);
	for (uint32_t pid = 100; pid < 110; pid++)
		procs__mmap(ps, pid, &a); /* a slot each */
	procs__fork(ps, 104, 0, 200);	  /* 200 resolves through 104 */
	procs__exit(ps, 102);
	procs__exit(ps, 104);
	procs__exit(ps, 107);
	before = mono_ns();
	assert_int_equal(procs__sweep(ps, before), 0); /* none exited yet */
	procs__flush(ps);
	assert_int_equal(procs__sweep(ps, before), 0); /* exited after `before` */
	heard[0] = '\0';
	assert_int_equal(procs__sweep(ps, mono_ns() + 1), 2); /* 102, 107; 104 has a child */
	assert_string_equal(heard, "1g1g");
	assert_int_equal(one.dropped, 2);
	assert_null(procs__find(ps, 102));
	assert_null(procs__find(ps, 107));
	assert_non_null(procs__find(ps, 104));
	assert_int_equal(procs__count(ps), 9);
	/* The others findable, in their order. */
	for (size_t i = 0, want = 100; i < procs__count(ps); i++) {
		struct procs_proc *p = procs__at(ps, i);

		while (want == 102 || want == 107)
			want++;
		if (want == 110)
			want = 200;
		assert_int_equal(p->pid, want);
		assert_ptr_equal(procs__find(ps, (uint32_t)want), p);
		want++;
	}
	/* A pid reused after its exit is alive again: not forgotten. */
	procs__fork(ps, 100, 0, 104);
	assert_false(procs__find(ps, 104)->exited);
	procs__exit(ps, 200);
	procs__flush(ps);
	assert_int_equal(procs__sweep(ps, mono_ns() + 1), 1); /* 200 */
	assert_non_null(procs__find(ps, 104));
	assert_int_equal(one.dropped, 2); /* 200 had no slot */
	procs__free(ps);
	assert_int_equal(one.dropped, 2 + 8); /* the rest when the table goes */
}

static void procs_refuses_listeners_beyond_its_slots(void **state)
{
	struct spy s[PROCS_MAX_LISTENERS + 1];
	struct procs *ps = procs__new();

	(void)state;
	for (int i = 0; i < PROCS_MAX_LISTENERS; i++)
		assert_int_equal(listen_spy(ps, &s[i], false), i);
	assert_int_equal(listen_spy(ps, &s[PROCS_MAX_LISTENERS], false), -ENOSPC);
	procs__free(ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(procs_fans_out_in_registration_order),
		cmocka_unit_test(procs_keeps_one_module_per_file_and_drops_slots),
		cmocka_unit_test(procs_refuses_listeners_beyond_its_slots),
		cmocka_unit_test(procs_sweep_forgets_exited_processes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
