// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the cut-down kernel BTF (userspace/record/btfmin.c): the sampler's object relocated
 * with the cut gives, program by program, the instructions the whole kernel BTF gives; the cut
 * is made once and used again, made again when it cannot be trusted, and there is none (and
 * nothing left behind) without a bpftool perch may run or when bpftool fails.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "record/btfcache.h"
#include "record/btfmin.h"
#include "sample.skel.h"

static char tmp[PATH_MAX - 64], dir[PATH_MAX];
static char *full;

static int run(const char *cmd)
{
	char buf[3 * PATH_MAX];

	snprintf(buf, sizeof(buf), "cd '%s' && %s", tmp, cmd);
	return system(buf);
}

static char *cut_of_the_sampler(void)
{
	size_t len = 0;
	const void *obj = sample_bpf__elf_bytes(&len);

	return btfmin__path(full, obj, len);
}

static struct sample_bpf *loaded_with(const char *btf)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf);
	struct sample_bpf *skel = sample_bpf__open_opts(&opts);

	assert_non_null(skel);
	assert_int_equal(sample_bpf__load(skel), 0);
	return skel;
}

/* A map reference (its fd or index in the immediate) differs between two loads by design. */
static int map_ref(const struct bpf_insn *in)
{
	return in->code == (BPF_LD | BPF_IMM | BPF_DW) &&
	       (in->src_reg == BPF_PSEUDO_MAP_FD || in->src_reg == BPF_PSEUDO_MAP_VALUE ||
		in->src_reg == BPF_PSEUDO_MAP_IDX || in->src_reg == BPF_PSEUDO_MAP_IDX_VALUE);
}

static void same_insns(const struct bpf_program *a, const struct bpf_program *b)
{
	const struct bpf_insn *x = bpf_program__insns(a), *y = bpf_program__insns(b);
	size_t n = bpf_program__insn_cnt(a);

	assert_int_equal(n, bpf_program__insn_cnt(b));
	for (size_t i = 0; i < n; i++) {
		if (map_ref(&x[i])) {
			assert_true(map_ref(&y[i]));
			i++; /* the second half of the 16-byte load: the rest of the reference */
			continue;
		}
		if (memcmp(&x[i], &y[i], sizeof(x[i])))
			fail_msg("%s: instruction %zu differs", bpf_program__name(a), i);
	}
}

static void cut_relocates_as_the_whole(void **state)
{
	char *cut = cut_of_the_sampler();
	struct sample_bpf *a, *b;
	struct bpf_program *p, *q;
	struct stat st;
	int programs = 0;

	(void)state;
	assert_non_null(cut);
	assert_int_equal(stat(cut, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(st.st_size > 0 && st.st_size < 65536); /* the whole is ~5 MiB */
	a = loaded_with(full);
	b = loaded_with(cut);
	q = bpf_object__next_program(b->obj, NULL);
	bpf_object__for_each_program(p, a->obj)
	{
		assert_non_null(q);
		assert_string_equal(bpf_program__name(p), bpf_program__name(q));
		same_insns(p, q);
		q = bpf_object__next_program(b->obj, q);
		programs++;
	}
	assert_true(programs >= 5);
	sample_bpf__destroy(a);
	sample_bpf__destroy(b);
	free(cut);
}

static ino_t inode(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_ino;
}

static void cut_is_made_once_and_again_when_untrusted(void **state)
{
	char *a = cut_of_the_sampler(), *b;
	ino_t first;

	(void)state;
	assert_non_null(a);
	first = inode(a);
	b = cut_of_the_sampler();
	assert_non_null(b);
	assert_string_equal(a, b);
	assert_int_equal(inode(b), first); /* used again, not made again */
	free(b);
	assert_int_equal(chmod(a, 0666), 0);
	b = cut_of_the_sampler();
	assert_non_null(b);
	assert_true(inode(b) != first);
	free(a);
	free(b);
	/* Another object's cut (an older build of perch) goes when a new one is made. */
	assert_int_equal(run("f=$(ls run/*.min-*.btf) && mv $f ${f%.btf}x.btf"), 0);
	a = cut_of_the_sampler();
	assert_non_null(a);
	assert_int_equal(run("test $(ls run/*.min-*.btf | wc -l) -eq 1"), 0);
	free(a);
}

/* No cut, and no temporary file left, when bpftool fails or may not be run. */
static void no_cut_without_a_bpftool_to_trust(void **state)
{
	char tool[PATH_MAX + 16];

	(void)state;
	assert_int_equal(run("rm -f run/*.min-*.btf"), 0);
	assert_int_equal(setenv("PERCH_BPFTOOL", "/bin/false", 1), 0);
	assert_null(cut_of_the_sampler());
	snprintf(tool, sizeof(tool), "%s/bpftool", tmp);
	assert_int_equal(run("cp \"$(command -v bpftool || echo /usr/sbin/bpftool)\" bpftool &&"
			     " chmod 0777 bpftool"),
			 0);
	assert_int_equal(setenv("PERCH_BPFTOOL", tool, 1), 0); /* anyone may write it */
	assert_null(btfmin__bpftool());
	assert_null(cut_of_the_sampler());
	assert_int_equal(unsetenv("PERCH_BPFTOOL"), 0);
	assert_int_equal(run("test $(ls -A run | wc -l) -eq 1"), 0); /* the whole copy alone */
	assert_null(btfmin__path(full, "x", 0));
	assert_null(btfmin__path("/nowhere/vmlinux", "x", 1));
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/perch-btfmin.XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	snprintf(dir, sizeof(dir), "%s/run", tmp);
	full = btfcache__path("/sys/kernel/btf/vmlinux", dir);
	return full ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	free(full);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cut_relocates_as_the_whole),
		cmocka_unit_test(cut_is_made_once_and_again_when_untrusted),
		cmocka_unit_test(no_cut_without_a_bpftool_to_trust),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
