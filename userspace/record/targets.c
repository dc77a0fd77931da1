// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The targets of a recording (see targets.h): the command perch launches, held stopped until
 * the sampler follows it, or the processes it attaches to, held by pidfd; when they are gone,
 * and the status the recording ends with.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/elfinit.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "perch_abi.h"
#include "proc.h"
#include "systemwide.h"
#include "targets.h"

struct targets {
	const struct record_opts *o;
	pid_t child; /* launched, or -1 */
	int child_status;
	bool child_done;
	bool signalled;		   /* the launched command was passed a stop */
	int *pidfds;		   /* attached: one per pid, -1 once it is gone */
	size_t live;		   /* targets not gone yet */
	struct rlimit user_nofile; /* the limit perch was started with, which CMD gets back */
	bool nofile_raised;
	targets_exec_fn *before_exec;
	void *before_exec_ctx;
};

/* The shell's rules: a name with a slash is a path, else search $PATH. Fills buf with the
 * executable file found and returns 0; -EACCES when only files that are not executable have
 * the name, -ENOENT when none does. */
static int resolve_command(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	bool found = false;

	if (strchr(cmd, '/')) {
		struct stat st;

		snprintf(buf, len, "%s", cmd);
		if (access(cmd, F_OK))
			return -ENOENT;
		if (access(cmd, X_OK) || stat(cmd, &st) || !S_ISREG(st.st_mode))
			return -EACCES;
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (access(buf, X_OK) == 0) {
			struct stat st;

			if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
				return 0;
		}
		if (access(buf, F_OK) == 0)
			found = true;
		path += n + (path[n] == ':');
	}
	return found ? -EACCES : -ENOENT;
}

static int check_command(const char *cmd)
{
	char buf[PATH_MAX];
	int err = resolve_command(cmd, buf, sizeof(buf));

	if (err == -ENOENT) {
		log_err("%s: command not found", cmd);
		return PERCH_EXIT_NOTFOUND;
	}
	if (err == -EACCES && strchr(cmd, '/')) {
		log_err("%s: permission denied: not an executable file", cmd);
		return PERCH_EXIT_NOTEXEC;
	}
	if (err == -EACCES) {
		log_err("%s: permission denied: not executable", cmd);
		return PERCH_EXIT_NOTEXEC;
	}
	return 0;
}

/* A DT_NEEDED entry of the CUDA driver or runtime, or the device code nvcc puts in a program
 * (its sections, also where the runtime is linked in statically, nvcc's default). */
static bool cuda_section(Elf *e, size_t shstrndx, Elf_Scn *scn, GElf_Shdr *sh)
{
	const char *name = elf_strptr(e, shstrndx, sh->sh_name);
	Elf_Data *data;
	GElf_Dyn dyn;

	if (name && (!strcmp(name, ".nv_fatbin") || !strcmp(name, ".nvFatBinSegment")))
		return true;
	if (sh->sh_type != SHT_DYNAMIC || !(data = elf_getdata(scn, NULL)) || !sh->sh_entsize)
		return false;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize && gelf_getdyn(data, (int)i, &dyn);
	     i++) {
		const char *lib = dyn.d_tag == DT_NEEDED
					  ? elf_strptr(e, sh->sh_link, (size_t)dyn.d_un.d_val)
					  : NULL;

		if (lib && (!strncmp(lib, "libcuda.so", 10) || !strncmp(lib, "libcudart.so", 12)))
			return true;
	}
	return false;
}

bool targets__links_cuda(const char *cmd)
{
	char path[PATH_MAX];
	bool found = false;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e = NULL;
	int fd;

	if (resolve_command(cmd, path, sizeof(path)) || perch_elf_init())
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		goto cleanup;
	while (!found && (scn = elf_nextscn(e, scn)))
		found = gelf_getshdr(scn, &sh) && cuda_section(e, shstrndx, scn, &sh);
cleanup:
	elf_end(e);
	close(fd);
	return found;
}

static int check_pids(const struct record_opts *o)
{
	for (size_t i = 0; i < o->npids; i++) {
		if (o->pids[i] <= 0 || (kill(o->pids[i], 0) && errno == ESRCH)) {
			log_err("no such process: %d", (int)o->pids[i]);
			return PERCH_EXIT_NOPID;
		}
	}
	return 0;
}

int targets__check(const struct record_opts *o)
{
	if (o->all_cpus && !o->argv)
		return 0;
	return o->argv ? check_command(o->argv[0]) : check_pids(o);
}

/* The symbolizer keeps one open file per module it indexed, and perch opens one perf event
 * per CPU: raise the soft descriptor limit to the hard one. */
static void raise_fd_limit(struct targets *tg)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		tg->user_nofile = rl;
		rl.rlim_cur = rl.rlim_max;
		tg->nofile_raised = !setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct targets *targets__new(const struct record_opts *o)
{
	struct targets *tg = calloc(1, sizeof(*tg));

	if (!tg)
		return NULL;
	tg->o = o;
	tg->child = -1;
	raise_fd_limit(tg);
	return tg;
}

void targets__free(struct targets *tg)
{
	if (!tg)
		return;
	for (size_t i = 0; tg->pidfds && i < tg->o->npids; i++)
		if (tg->pidfds[i] >= 0)
			close(tg->pidfds[i]);
	free(tg->pidfds);
	free(tg);
}

void targets__before_exec(struct targets *tg, targets_exec_fn *fn, void *ctx)
{
	tg->before_exec = fn;
	tg->before_exec_ctx = ctx;
}

/* In the launched child, before exec: the runtime gates its first step already. */
static void set_ctl_env(const struct record_opts *o)
{
	char steps[48];

	if (o->steps) {
		snprintf(steps, sizeof(steps), "%llu:%llu", (unsigned long long)o->steps_first,
			 (unsigned long long)o->steps_last);
		setenv(PERCH_ENV_STEPS, steps, 1);
	}
	if (o->only_region)
		setenv(PERCH_ENV_ONLY, o->only_region, 1);
}

static int launch(struct targets *tg, int *go_fd, int *err_fd)
{
	pid_t perch = getpid();
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
		log_err("pipe: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	tg->child = fork();
	if (tg->child < 0) {
		log_err("fork: %s", strerror(errno));
		return PERCH_EXIT_INTERNAL;
	}
	if (tg->child == 0) {
		char c, pid[16];
		int e;

		/* CMD dies with perch, even of SIGKILL (perch forks from its only thread); set before
		 * the check, so a perch gone already is seen here. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != perch)
			_exit(PERCH_EXIT_INTERNAL);
		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* Wait until the sampler follows this process: nothing of CMD runs unsampled. */
		if (read(go[0], &c, 1) != 1)
			_exit(PERCH_EXIT_INTERNAL);
		/* A program with region markers times them from its first instruction. */
		snprintf(pid, sizeof(pid), "%d", (int)getppid());
		setenv(PERCH_ENV_ACTIVE, pid, 1);
		if (tg->o->timeline) /* and its spans from the first one */
			setenv(PERCH_ENV_TIMELINE, "1", 1);
		set_ctl_env(tg->o); /* and --steps, --only-region before its first step */
		/* CMD runs with the user's limits, not perch's (a program may size tables by it). */
		if (tg->nofile_raised)
			setrlimit(RLIMIT_NOFILE, &tg->user_nofile);
		if (tg->before_exec)
			tg->before_exec(tg->before_exec_ctx);
		execvp(tg->o->argv[0], tg->o->argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(PERCH_EXIT_INTERNAL);
		_exit(e == ENOENT ? PERCH_EXIT_NOTFOUND : PERCH_EXIT_NOTEXEC);
	}
	close(go[0]);
	close(err[1]);
	*go_fd = go[1];
	*err_fd = err[0];
	return 0;
}

static int start_launched(struct targets *tg, struct sampler *sp, struct procs *ps)
{
	int go_fd = -1, err_fd = -1, e = 0, ret;
	char exe[PATH_MAX];

	ret = launch(tg, &go_fd, &err_fd);
	if (ret)
		return ret;
	/* What it will exec, before its first tick (the unwinder builds the table now). */
	if (resolve_command(tg->o->argv[0], exe, sizeof(exe)))
		snprintf(exe, sizeof(exe), "%s", tg->o->argv[0]);
	procs__snapshot(ps, tg->child, exe);
	ret = sampler__add_target(sp, tg->child, true);
	if (write(go_fd, "g", 1) != 1 && !ret)
		ret = PERCH_EXIT_INTERNAL;
	close(go_fd);
	if (read(err_fd, &e, sizeof(e)) == sizeof(e)) {
		log_err("%s: %s", tg->o->argv[0], strerror(e));
		ret = e == ENOENT ? PERCH_EXIT_NOTFOUND : PERCH_EXIT_NOTEXEC;
	}
	close(err_fd);
	if (ret) /* the recording ends with the command */
		waitpid(tg->child, NULL, 0);
	else
		tg->live = 1;
	return ret;
}

static int start_attached(struct targets *tg, struct sampler *sp, struct procs *ps,
			  const struct regions *rg)
{
	const char *delay = getenv("PERCH_TEST_ATTACH_DELAY_MS");
	int ret = 0;

	tg->pidfds = calloc(tg->o->npids, sizeof(*tg->pidfds));
	if (!tg->pidfds)
		return PERCH_EXIT_INTERNAL;
	for (size_t i = 0; i < tg->o->npids; i++) {
		int err;

		tg->pidfds[i] = syscall(SYS_pidfd_open, tg->o->pids[i], 0);
		/* Its tables first, so that its first ticks unwind. */
		err = procs__snapshot(ps, tg->o->pids[i], NULL);
		if (sampler__add_target(sp, tg->o->pids[i], false))
			return PERCH_EXIT_BPF;
		if (err == -EBUSY) {
			log_err("process %d: its region markers are being recorded by another perch "
				"(pid %u); one perch at a time",
				(int)tg->o->pids[i], regions__owner(rg, tg->o->pids[i]));
			return PERCH_EXIT_BUSY;
		}
	}
	/* For tests: widen the window in which a target can exit while perch attaches. */
	if (delay)
		usleep(atoi(delay) * 1000);
	for (size_t i = 0; i < tg->o->npids; i++) {
		if (tg->pidfds[i] < 0 || kill(tg->o->pids[i], 0)) {
			log_err("process %d exited while perch attached to it",
				(int)tg->o->pids[i]);
			ret = PERCH_EXIT_PIDGONE;
			if (tg->pidfds[i] >= 0)
				close(tg->pidfds[i]);
			tg->pidfds[i] = -1;
			continue;
		}
		tg->live++;
	}
	return ret;
}

int targets__start(struct targets *tg, struct sampler *sp, struct procs *ps,
		   const struct regions *rg)
{
	size_t n;
	int ret;

	if (!tg->o->all_cpus)
		return tg->o->argv ? start_launched(tg, sp, ps) : start_attached(tg, sp, ps, rg);
	/* -a: everything but perch (whose fork is the command's), before the command starts,
	 * so that what it sets going is sampled from the start; its exit (if any) ends the run. */
	ret = systemwide_start(sp, ps, getpid(), &n);
	if (!ret && tg->o->argv)
		ret = start_launched(tg, sp, ps);
	else if (!ret)
		tg->live = n;
	return ret;
}

bool targets__done(struct targets *tg)
{
	if (tg->o->argv) {
		int st;

		if (!tg->child_done && waitpid(tg->child, &st, WNOHANG) == tg->child) {
			tg->child_done = true;
			tg->child_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		}
		return tg->child_done;
	}
	if (tg->o->all_cpus)
		return false; /* -a alone: until the duration, or Ctrl-C */
	for (size_t i = 0; i < tg->o->npids; i++) {
		struct pollfd p = {.fd = tg->pidfds[i], .events = POLLIN};

		if (tg->pidfds[i] >= 0 && poll(&p, 1, 0) == 1) {
			close(tg->pidfds[i]);
			tg->pidfds[i] = -1;
			tg->live--;
		}
	}
	return tg->live == 0;
}

bool targets__stop(struct targets *tg, int sig)
{
	if (!tg->o->argv)
		return true;
	/* A launched command gets the signal too (or now); wait for it to exit. */
	if (!tg->signalled)
		kill(tg->child, sig);
	tg->signalled = true;
	return false;
}

size_t targets__live(const struct targets *tg)
{
	return tg->live;
}

int targets__status(const struct targets *tg, int ret)
{
	return tg->o->argv ? tg->child_status : ret;
}

void targets__pids(const struct targets *tg, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (tg->o->argv) {
		snprintf(buf, len, "%d", (int)tg->child);
		return;
	}
	if (tg->o->all_cpus) {
		snprintf(buf, len, "all");
		return;
	}
	for (size_t i = 0; i < tg->o->npids && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%d", i ? "," : "", (int)tg->o->pids[i]);
}

void targets__command(const struct targets *tg, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	if (tg->o->argv) {
		for (size_t i = 0; tg->o->argv[i] && off < len; i++)
			off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", tg->o->argv[i]);
		return;
	}
	if (tg->o->all_cpus) {
		snprintf(buf, len, "(system-wide)");
		return;
	}
	/* Attached: the targets' own command lines are what the user knows them by. */
	for (size_t i = 0; i < tg->o->npids && off < len; i++) {
		char cmd[512] = "";
		bool got = !proc_cmdline(tg->o->pids[i], cmd, sizeof(cmd)) && *cmd;

		off += snprintf(buf + off, len - off, "%s%s", i ? "; " : "", got ? cmd : "?");
	}
}
