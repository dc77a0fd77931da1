// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's BTF cut down to one BPF object's CO-RE relocations (see btfmin.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "btfmin.h"
#include "lib/log.h"

#define MAX_MIN_BTF (1u << 20) /* what is left of the kernel's BTF is a few KiB at most */

/* Root's, and no one else may write it: a program perch (as root) may run. */
static int trusted_tool(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) &&
	       st.st_uid == 0 && !(st.st_mode & 022);
}

const char *btfmin__bpftool(void)
{
	static const char *const paths[] = {"/usr/sbin/bpftool", "/usr/local/sbin/bpftool",
					    "/sbin/bpftool"};
	const char *env = getenv("PERCH_BPFTOOL");

	if (env)
		return trusted_tool(env) ? env : NULL;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (trusted_tool(paths[i]))
			return paths[i];
	return NULL;
}

static int usable(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 022) && st.st_size > 0 && st.st_size <= MAX_MIN_BTF;
}

/* FNV-1a of the object: a new build of perch gets its own cut. */
static uint64_t hash_of(const void *obj, size_t len)
{
	const unsigned char *p = obj;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* bpftool gen min_core_btf FULL OUT OBJ, with nothing inherited but the three standard fds on
 * /dev/null: 0 when it exited 0. */
static int run_bpftool(const char *tool, const char *full, const char *out, const char *obj)
{
	char *argv[] = {(char *)tool, "gen", "min_core_btf", (char *)full, (char *)out,
			(char *)obj,  NULL};
	char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
	posix_spawn_file_actions_t fa;
	int status, err;
	pid_t pid;

	if (posix_spawn_file_actions_init(&fa))
		return -ENOMEM;
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	err = posix_spawn(&pid, tool, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (err)
		return -err;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* A BTF libbpf can read, and small: what bpftool made is what it should be. */
static int valid_btf(const char *path)
{
	struct btf *btf;

	if (!usable(path))
		return 0;
	btf = btf__parse_raw(path);
	if (!btf)
		return 0;
	btf__free(btf);
	return 1;
}

/* Cuts of other objects (older builds of perch) in dir, for this boot. */
static void remove_other_cuts(const char *dir, const char *prefix, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)) && strcmp(e->d_name, keep))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

/* Write obj to a temporary file in dir, run bpftool into another, rename that to path. */
static int make_cut(const char *tool, const char *full, const char *dir, const char *path,
		    const void *obj, size_t obj_len)
{
	char *tobj = NULL, *tout = NULL;
	int fd = -1, err = -ENOMEM;

	if (asprintf(&tobj, "%s/.obj-XXXXXX", dir) < 0 ||
	    asprintf(&tout, "%s/.min-XXXXXX", dir) < 0)
		goto out;
	fd = mkstemp(tobj);
	if (fd < 0) {
		free(tobj);
		tobj = NULL;
		err = -errno;
		goto out;
	}
	err = write_all(fd, obj, obj_len);
	if (close(fd) && !err)
		err = -errno;
	fd = mkstemp(tout); /* mode 0600: bpftool writes into it */
	if (err || fd < 0) {
		err = err ? err : -errno;
		goto out;
	}
	close(fd);
	err = run_bpftool(tool, full, tout, tobj);
	if (!err && !valid_btf(tout))
		err = -EINVAL;
	if (!err && rename(tout, path))
		err = -errno;
out:
	if (tout && (err || fd < 0))
		unlink(tout);
	if (tobj)
		unlink(tobj);
	free(tobj);
	free(tout);
	return err;
}

char *btfmin__path(const char *full_btf, const void *obj, size_t obj_len)
{
	const char *tool, *base, *dot;
	char *dir = NULL, *path = NULL, *prefix = NULL;
	int err;

	base = full_btf ? strrchr(full_btf, '/') : NULL;
	dot = base ? strrchr(base, '.') : NULL;
	if (!obj || !obj_len || !dot || strcmp(dot, ".btf"))
		return NULL;
	if (asprintf(&dir, "%.*s", (int)(base - full_btf), full_btf) < 0 ||
	    asprintf(&prefix, "%.*s.min-", (int)(dot - base - 1), base + 1) < 0 ||
	    asprintf(&path, "%s/%s%016llx.btf", dir, prefix,
		     (unsigned long long)hash_of(obj, obj_len)) < 0) {
		path = NULL;
		goto out;
	}
	if (usable(path))
		goto out;
	tool = btfmin__bpftool();
	err = tool ? make_cut(tool, full_btf, dir, path, obj, obj_len) : -ENOENT;
	if (err) {
		log_debug("btf cut: %s: %s; the kernel's whole BTF is used",
			  tool ? tool : "bpftool", strerror(-err));
		free(path);
		path = NULL;
		goto out;
	}
	remove_other_cuts(dir, prefix, strrchr(path, '/') + 1);
out:
	free(dir);
	free(prefix);
	return path;
}
