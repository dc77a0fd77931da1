// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the /proc readers (proc.c) against this test process: its own mappings (the binary,
 * the vDSO, an anonymous executable mapping, a deleted file whose name has spaces) and thread
 * names. Expected answers come from the process itself (readlink, fstat, prctl), or from a plain
 * re-reading of /proc/self/maps; a process's start time from CLOCK_BOOTTIME around its fork.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/proc.h"

static int data_variable = 42;

static __attribute__((noinline, used)) int perch_proc_target(int x)
{
	return x * 3 + data_variable;
}

static void self_exe(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	assert_true(n > 0);
	buf[n] = '\0';
}

static const struct proc_map *find_checked(const struct proc_maps *m, const void *addr)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	const struct proc_map *map = proc_maps__find(m, a);

	assert_non_null(map);
	assert_true(map->start <= a && a < map->end);
	return map;
}

/* Open a map_files path; map_files needs CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE). */
static int open_map_file(const char *open_path)
{
	int fd = open(open_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 && errno == EPERM) {
		print_message("map_files not openable without privileges; not checked\n");
		skip();
	}
	assert_true(fd >= 0);
	return fd;
}

static void proc_maps_of_self_include_test_binary_with_openable_path(void **state)
{
	struct proc_maps *m = proc_maps__read(getpid());
	const struct proc_map *map = NULL;
	char exe[PATH_MAX];
	struct stat st;
	size_t i;
	int fd;

	(void)state;
	assert_non_null(m);
	self_exe(exe, sizeof(exe));
	for (i = 0; i < proc_maps__count(m) && !map; i++) {
		if (strcmp(proc_maps__get(m, i)->path, exe) == 0)
			map = proc_maps__get(m, i);
	}
	assert_non_null(map);
	assert_null(proc_maps__get(m, proc_maps__count(m)));
	assert_non_null(map->open_path);
	fd = open_map_file(map->open_path);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_ino, map->inode);
	assert_int_equal(major(st.st_dev), map->dev_major);
	assert_int_equal(minor(st.st_dev), map->dev_minor);
	close(fd);
	proc_maps__free(m);
}

static void proc_maps_find_function_address_hits_executable(void **state)
{
	struct proc_maps *m = proc_maps__read(getpid());
	const struct proc_map *map;
	char exe[PATH_MAX], want[64];

	(void)state;
	assert_non_null(m);
	self_exe(exe, sizeof(exe));
	map = find_checked(m, (void *)perch_proc_target);
	assert_string_equal(map->path, exe);
	snprintf(want, sizeof(want), "/proc/%d/map_files/%lx-%lx", (int)getpid(),
		 (unsigned long)map->start, (unsigned long)map->end);
	assert_string_equal(map->open_path, want);
	proc_maps__free(m);
}

/* Lines of /proc/self/maps whose permissions include x. */
static size_t count_exec_lines(void)
{
	char line[PATH_MAX + 128], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %7s", perms) == 1 && perms[2] == 'x')
			n++;
	}
	fclose(f);
	return n;
}

static void proc_maps_keep_only_executable_mappings(void **state)
{
	struct proc_maps *m = proc_maps__read(getpid());
	int on_stack = 1;
	void *heap = malloc(64);

	(void)state;
	assert_non_null(m);
	assert_non_null(heap);
	assert_int_equal(proc_maps__count(m), count_exec_lines());
	assert_null(proc_maps__find(m, (uint64_t)(uintptr_t)&data_variable));
	assert_null(proc_maps__find(m, (uint64_t)(uintptr_t)heap));
	assert_null(proc_maps__find(m, (uint64_t)(uintptr_t)&on_stack));
	assert_null(proc_maps__find(m, 0));
	assert_null(proc_maps__find(m, UINT64_MAX));
	free(heap);
	proc_maps__free(m);
}

/* The vDSO's open path holds the very bytes mapped at [vdso] (so its functions can be named). */
static void expect_vdso_image(const struct proc_map *map)
{
	size_t size = 0;
	const void *img = proc_vdso_image(&size);
	unsigned char *buf;
	int fd;

	assert_non_null(img);
	assert_ptr_equal(img, (const void *)(uintptr_t)map->start);
	assert_non_null(map->open_path);
	fd = open(map->open_path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	buf = malloc(size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, size + 1), (ssize_t)size);
	assert_memory_equal(buf, img, size);
	free(buf);
	close(fd);
}

static void proc_maps_anonymous_has_no_open_path_vdso_opens_its_image(void **state)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	struct proc_maps *m;
	const struct proc_map *map;
	void *anon;

	(void)state;
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		print_message("no anonymous executable mapping allowed: %s\n", strerror(errno));
		skip();
	}
	m = proc_maps__read(getpid());
	assert_non_null(m);
	map = find_checked(m, anon);
	assert_string_equal(map->path, "");
	assert_null(map->open_path);
	assert_int_equal(map->inode, 0);
	if (vdso) {
		map = find_checked(m, (void *)vdso);
		assert_string_equal(map->path, "[vdso]");
		expect_vdso_image(map);
	}
	proc_maps__free(m);
	munmap(anon, 4096);
}

static void proc_maps_keep_paths_with_spaces_and_deleted_suffix(void **state)
{
	static const char name[] = "a file with  spaces.bin";
	char dir[] = "/tmp/perch-test-proc-XXXXXX", path[PATH_MAX], want[PATH_MAX + 16];
	unsigned char page[4096], back[16];
	const struct proc_map *map;
	struct proc_maps *m;
	void *addr;
	int fd;

	(void)state;
	memset(page, 0xc3, sizeof(page));
	page[0] = 0x5a;
	assert_non_null(mkdtemp(dir));
	assert_true(snprintf(path, sizeof(path), "%s/%s", dir, name) > 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	addr = mmap(NULL, sizeof(page), PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	rmdir(dir);
	if (addr == MAP_FAILED) {
		print_message("cannot map a file executable under /tmp: %s\n", strerror(errno));
		skip();
	}
	m = proc_maps__read(getpid());
	assert_non_null(m);
	map = find_checked(m, addr);
	assert_true(snprintf(want, sizeof(want), "%s (deleted)", path) > 0);
	assert_string_equal(map->path, want);
	assert_int_equal(map->pgoff, 0);
	assert_non_null(map->open_path);
	/* The file is gone from the tree, but map_files still opens what was mapped. */
	fd = open_map_file(map->open_path);
	assert_int_equal(read(fd, back, sizeof(back)), (ssize_t)sizeof(back));
	assert_memory_equal(back, page, sizeof(back));
	close(fd);
	proc_maps__free(m);
	munmap(addr, sizeof(page));
}

static void proc_maps_missing_pid_gives_esrch(void **state)
{
	(void)state;
	errno = 0;
	assert_null(proc_maps__read(0x7ffffff0));
	assert_int_equal(errno, ESRCH);
}

static void proc_comm_of_self_matches_prctl(void **state)
{
	char want[17] = {0}, got[64];

	(void)state;
	assert_int_equal(prctl(PR_GET_NAME, want), 0);
	assert_int_equal(proc_comm(getpid(), gettid(), got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_int_equal(proc_comm(getpid(), 0, got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_null(strchr(got, '\n'));
}

struct named_thread {
	pthread_barrier_t started, done;
	pid_t tid;
};

static void *named_thread_main(void *arg)
{
	struct named_thread *t = arg;

	prctl(PR_SET_NAME, "perch-worker");
	t->tid = gettid();
	pthread_barrier_wait(&t->started);
	pthread_barrier_wait(&t->done);
	return NULL;
}

static void proc_comm_of_thread_is_its_own_name(void **state)
{
	struct named_thread t = {0};
	char got[64], own[17] = {0};
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_barrier_init(&t.started, NULL, 2), 0);
	assert_int_equal(pthread_barrier_init(&t.done, NULL, 2), 0);
	assert_int_equal(pthread_create(&th, NULL, named_thread_main, &t), 0);
	pthread_barrier_wait(&t.started);
	assert_int_equal(proc_comm(getpid(), t.tid, got, sizeof(got)), 0);
	assert_string_equal(got, "perch-worker");
	assert_int_equal(prctl(PR_GET_NAME, own), 0);
	assert_int_equal(proc_comm(getpid(), gettid(), got, sizeof(got)), 0);
	assert_string_equal(got, own);
	/* A buffer too small gets a truncated, terminated name. */
	assert_int_equal(proc_comm(getpid(), t.tid, got, 6), 0);
	assert_string_equal(got, "perch");
	pthread_barrier_wait(&t.done);
	pthread_join(th, NULL);
	pthread_barrier_destroy(&t.started);
	pthread_barrier_destroy(&t.done);
}

static void proc_comm_missing_pid_gives_esrch(void **state)
{
	char got[16];

	(void)state;
	assert_int_equal(proc_comm(0x7ffffff0, 0, got, sizeof(got)), -ESRCH);
	assert_int_equal(proc_comm(getpid(), 0x7ffffff0, got, sizeof(got)), -ESRCH);
	assert_int_equal(proc_comm(getpid(), 0, got, 0), -EINVAL);
}

/* In a new pid namespace (made by a child, so this process's later forks stay in its own): the
 * caller's first child there, pid 1 in it, wants the hold pipe closed; its pid here goes up pids. */
/* postgres rewrites its argv in place and pads what is left with spaces or NULs. */
static void proc_cmdline_trims_rewritten_argv_padding(void **state)
{
	char pg[128] = "postgres: checkpointer", args[] = "sh\0-c\0x  y\0\0 \0\0";
	size_t n = strlen(pg);

	(void)state;
	memset(pg + n, ' ', 60);
	memset(pg + n + 60, '\0', 20);
	assert_int_equal(proc_cmdline_text(pg, n + 80), n);
	assert_string_equal(pg, "postgres: checkpointer");
	assert_int_equal(proc_cmdline_text(args, sizeof(args) - 1), 10);
	assert_string_equal(args, "sh -c x  y");
	assert_int_equal(proc_cmdline_text(args, 0), 0);
	assert_string_equal(args, "");
	/* and from /proc: this test's own, whole */
	assert_int_equal(proc_cmdline(getpid(), pg, sizeof(pg)), 0);
	assert_non_null(strstr(pg, "test_proc"));
	assert_int_equal(proc_cmdline(0x7ffffff0, pg, sizeof(pg)), -ESRCH);
}

static void namespaced_child(int hold[2], int pids[2])
{
	pid_t gc;
	char c;

	close(hold[1]);
	close(pids[0]);
	if (unshare(CLONE_NEWPID))
		_exit(2);
	gc = fork();
	if (gc == 0)
		_exit(read(hold[0], &c, 1) < 0);
	if (gc < 0 || write(pids[1], &gc, sizeof(gc)) != sizeof(gc))
		_exit(1);
	waitpid(gc, NULL, 0);
	_exit(0);
}

/* A child in a new pid namespace is pid 1 there: the name its JIT gives its perf map. */
static void proc_ns_ids_give_pid_inside_its_namespace_and_euid(void **state)
{
	uint32_t nspid = 0;
	uid_t uid = 12345;
	int hold[2], pids[2], status;
	pid_t mid, gc = 0;

	(void)state;
	assert_int_equal(proc_ns_ids(getpid(), &nspid, &uid), 0);
	assert_int_equal(nspid, (uint32_t)getpid());
	assert_int_equal(uid, geteuid());
	assert_int_equal(pipe(hold), 0);
	assert_int_equal(pipe(pids), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0)
		namespaced_child(hold, pids);
	close(hold[0]);
	close(pids[1]);
	if (read(pids[0], &gc, sizeof(gc)) != sizeof(gc))
		gc = 0;
	if (gc)
		assert_int_equal(proc_ns_ids(gc, &nspid, &uid), 0);
	close(hold[1]);
	close(pids[0]);
	waitpid(mid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		skip(); /* no pid namespace to make (not root) */
	assert_int_not_equal(gc, 0);
	assert_int_equal(nspid, 1);
	assert_int_equal(uid, geteuid());
}

static void add_map(struct proc_maps *m, uint64_t start, uint64_t end, uint64_t pgoff,
		    const char *path)
{
	struct proc_map map = {.start = start, .end = end, .pgoff = pgoff, .path = (char *)path};

	assert_int_equal(proc_maps__add(m, &map), 0);
}

static void expect_map(const struct proc_maps *m, size_t i, uint64_t start, uint64_t end,
		       uint64_t pgoff, const char *path)
{
	const struct proc_map *map = proc_maps__get(m, i);

	assert_non_null(map);
	assert_int_equal(map->start, start);
	assert_int_equal(map->end, end);
	assert_int_equal(map->pgoff, pgoff);
	assert_string_equal(map->path, path);
}

static void proc_maps_add_keeps_address_order(void **state)
{
	struct proc_maps *m = proc_maps__new();

	(void)state;
	add_map(m, 0x5000, 0x6000, 0, "/b");
	add_map(m, 0x1000, 0x2000, 0x3000, "/a");
	assert_int_equal(proc_maps__count(m), 2);
	expect_map(m, 0, 0x1000, 0x2000, 0x3000, "/a");
	expect_map(m, 1, 0x5000, 0x6000, 0, "/b");
	assert_string_equal(proc_maps__find(m, 0x5fff)->path, "/b");
	assert_null(proc_maps__find(m, 0x6000));
	proc_maps__free(m);
}

/* A new mapping over old ones replaces what it covers, as mmap(MAP_FIXED) does: a covered
 * mapping goes, one sticking out is trimmed (its file offset follows), one around it splits. */
static void proc_maps_add_replaces_overlapped_ranges(void **state)
{
	struct proc_maps *m = proc_maps__new();

	(void)state;
	add_map(m, 0x1000, 0x9000, 0, "/big");
	add_map(m, 0x3000, 0x4000, 0x100000, "/mid");
	assert_int_equal(proc_maps__count(m), 3);
	expect_map(m, 0, 0x1000, 0x3000, 0, "/big");
	expect_map(m, 1, 0x3000, 0x4000, 0x100000, "/mid");
	expect_map(m, 2, 0x4000, 0x9000, 0x3000, "/big");
	add_map(m, 0x2000, 0x5000, 0, "/new");
	assert_int_equal(proc_maps__count(m), 3);
	expect_map(m, 0, 0x1000, 0x2000, 0, "/big");
	expect_map(m, 1, 0x2000, 0x5000, 0, "/new");
	expect_map(m, 2, 0x5000, 0x9000, 0x4000, "/big");
	proc_maps__free(m);
}

static double boottime_ticks(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9) * (double)sysconf(_SC_CLK_TCK);
}

/* The start time is the boot clock at fork, in clock ticks, whatever the name holds. */
static void proc_start_time_is_boot_clock_at_fork_despite_odd_name(void **state)
{
	uint64_t start = 0;
	double before, after;
	int fds[2], status;
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	before = boottime_ticks();
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "x) 1 2 (y");
		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	after = boottime_ticks();
	assert_true(pid > 0);
	/* Renamed by now: the child ran until it blocks on the pipe. */
	for (char got[32] = ""; strcmp(got, "x) 1 2 (y"); usleep(1000))
		assert_int_equal(proc_comm(pid, 0, got, sizeof(got)), 0);
	assert_int_equal(proc_start_time(pid, &start), 0);
	assert_true((double)start >= before - 1 && (double)start <= after + 1);
	close(fds[1]);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(proc_start_time(pid, &start), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(proc_maps_of_self_include_test_binary_with_openable_path),
		cmocka_unit_test(proc_maps_find_function_address_hits_executable),
		cmocka_unit_test(proc_maps_keep_only_executable_mappings),
		cmocka_unit_test(proc_maps_anonymous_has_no_open_path_vdso_opens_its_image),
		cmocka_unit_test(proc_maps_keep_paths_with_spaces_and_deleted_suffix),
		cmocka_unit_test(proc_maps_missing_pid_gives_esrch),
		cmocka_unit_test(proc_comm_of_self_matches_prctl),
		cmocka_unit_test(proc_comm_of_thread_is_its_own_name),
		cmocka_unit_test(proc_comm_missing_pid_gives_esrch),
		cmocka_unit_test(proc_cmdline_trims_rewritten_argv_padding),
		cmocka_unit_test(proc_ns_ids_give_pid_inside_its_namespace_and_euid),
		cmocka_unit_test(proc_start_time_is_boot_clock_at_fork_despite_odd_name),
		cmocka_unit_test(proc_maps_add_keeps_address_order),
		cmocka_unit_test(proc_maps_add_replaces_overlapped_ranges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
