// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython in the profiled processes (see python.h): the listener on the process table. A mapping
 * of a module that holds an interpreter makes its process a Python process (python_find.c reads
 * the version's layout from it), told to the sampler at once so its next tick walks the frames;
 * a forked child (multiprocessing) has the same interpreter at the same addresses; an exec
 * starts over. Code objects are named while the process lives, each once (record/pycode.h):
 * the drain after a process exited names from what earlier drains read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "lib/log.h"
#include "python_impl.h"

struct python {
	int procs_fd;
	struct procs *ps;
	int id;
	uint64_t stats[PYTHON_STAT_MAX];
};

static const struct procs_listener listener;

struct python *python__new(int procs_fd, struct procs *ps)
{
	struct python *py = calloc(1, sizeof(*py));
	struct procs_listener l = listener;

	if (!py)
		return NULL;
	py->procs_fd = procs_fd;
	py->ps = ps;
	l.ctx = py;
	py->id = procs__listen(ps, &l);
	if (py->id < 0) {
		errno = -py->id;
		free(py);
		return NULL;
	}
	return py;
}

void python__free(struct python *py)
{
	free(py);
}

static struct pyproc **slot_of(const struct python *py, struct procs_proc *pp)
{
	return (struct pyproc **)procs__slot(pp, py->id);
}

static void drop_proc(void *ctx, void *slot)
{
	struct pyproc *p = slot;

	(void)ctx;
	pycode_cache__free(p->codes);
	free(p);
}

static void drop_module(void *ctx, void *slot)
{
	(void)ctx;
	free(slot);
}

/* pid runs p's interpreter from now on: told to the sampler. */
static void add_proc(struct python *py, struct procs_proc *pp, struct pyproc *p)
{
	uint32_t pid = pp->pid;

	p->codes = pycode_cache__new((pid_t)pid, &p->layout);
	if (!p->codes) {
		free(p);
		return;
	}
	*slot_of(py, pp) = p;
	py->stats[PYTHON_PROCS]++;
	if (bpf_map_update_elem(py->procs_fd, &pid, &p->bpf, BPF_ANY))
		log_debug("python: py_procs: %s", strerror(errno));
}

static void proc_mapped(void *ctx, struct procs_proc *pp, const struct proc_map *m,
			struct procs_module *pm)
{
	struct python *py = ctx;
	const struct pymodule *mod;
	struct pyproc *p;
	int err;

	if (!m->inode || !pm || *slot_of(py, pp))
		return;
	mod = python_module(py->id, pp->pid, m, pm);
	if (!mod || !mod->has)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	err = python_layout(pp->pid, mod, m, p);
	if (err) {
		if (err == -ENOTSUP)
			py->stats[PYTHON_UNSUPPORTED]++;
		log_debug("python: process %u: %s", pp->pid, strerror(-err));
		free(p);
		return;
	}
	add_proc(py, pp, p);
}

static int proc_started(void *ctx, struct procs_proc *pp, const struct proc_maps *maps,
			const char *exe)
{
	struct python *py = ctx;

	if (exe) /* a launched command: its own mappings come with its exec */
		return 0;
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		proc_mapped(py, pp, m, procs__module_of(py->ps, m));
	}
	return 0;
}

static void proc_forked(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct python *py = ctx;
	struct pyproc *pp = *slot_of(py, parent), *c;

	if (!pp || *slot_of(py, child))
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->bpf = pp->bpf;
	c->layout = pp->layout;
	c->eval_start = pp->eval_start;
	c->eval_end = pp->eval_end;
	add_proc(py, child, c);
}

/* An exec: the image is another; its mappings tell whether it runs an interpreter. */
static void proc_execd(void *ctx, struct procs_proc *pp)
{
	struct python *py = ctx;
	struct pyproc **slot = slot_of(py, pp);
	uint32_t pid = pp->pid;

	if (!*slot)
		return;
	drop_proc(py, *slot);
	*slot = NULL;
	bpf_map_delete_elem(py->procs_fd, &pid);
}

static void proc_exited(void *ctx, struct procs_proc *pp)
{
	struct python *py = ctx;
	uint32_t pid = pp->pid;

	if (*slot_of(py, pp))
		bpf_map_delete_elem(py->procs_fd, &pid);
}

static const struct procs_listener listener = {
	.name = "python",
	.start = proc_started,
	.fork = proc_forked,
	.exec = proc_execd,
	.mmap = proc_mapped,
	.exit = proc_exited,
	.drop = drop_proc,
	.drop_module = drop_module,
};

static struct pyproc *find(const struct python *py, uint32_t pid)
{
	struct procs_proc *pp = py ? procs__find(py->ps, pid) : NULL;

	return pp ? *slot_of(py, pp) : NULL;
}

bool python__eval_range(struct python *py, uint32_t pid, uint64_t *start, uint64_t *end)
{
	struct pyproc *p = find(py, pid);

	if (!p)
		return false;
	*start = p->eval_start;
	*end = p->eval_end;
	return true;
}

bool python__name(struct python *py, uint32_t pid, uint64_t code, uint64_t tag, uint32_t instr,
		  const char **qualname, const char **file, int *line)
{
	struct pyproc *p = find(py, pid);
	const struct py_code *c = p ? pycode_cache__get(p->codes, code, tag) : NULL;

	if (!c)
		return false;
	*qualname = c->qualname;
	*file = c->filename;
	/* The instruction's index in 2-byte code units; before the first one: the def line. */
	*line = instr >= p->layout.code_adaptive
			? pycode_line(c, (instr - p->layout.code_adaptive) / 2)
			: c->firstlineno;
	return true;
}

void python__count(struct python *py, enum python_stat which, uint64_t n)
{
	if (py && which < PYTHON_STAT_MAX)
		py->stats[which] += n;
}

uint64_t python__stat(const struct python *py, enum python_stat which)
{
	return py && which < PYTHON_STAT_MAX ? py->stats[which] : 0;
}
