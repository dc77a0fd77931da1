// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames in a sample's stack (record/python/python.h): the walked frames, innermost
 * first, fall into runs, one per C activation of the interpreter's loop (a run ends at a frame
 * flagged RAW_PY_ENTRY); each run stands in for its activation of _PyEval_EvalFrameDefault in the
 * native stack, matched from the leaf: the innermost run for the innermost activation. So a
 * Python function that calls into C shows that C under it, and C that calls back into Python
 * (a sort key, a callback) shows the Python under the C. Runs left when the native stack has no
 * activation left (it was cut, or lost) go at its root end, counted.
 *
 * A Python frame is a user frame whose module is its file and whose name is its qualified name,
 * at its line (the frame's offset), with that one line as its LINES: every output then shows
 * function, file and line as it does for native code.
 */
#include <string.h>
#include "collect_impl.h"
#include "record/python/python.h"

/* Where each run starts in s->py (innermost first); how many runs. */
static size_t py_runs(const struct raw_sample *s, uint32_t *start)
{
	size_t runs = 0;

	for (size_t i = 0; i < s->npy && runs < PERCH_SPLICE_MAX; i++) {
		if (i == 0 || (s->py[i - 1].flags & RAW_PY_ENTRY))
			start[runs++] = (uint32_t)i;
	}
	return runs;
}

void collect_py_begin(struct collector *c, const struct raw_sample *s, const uint64_t *ustack,
		      size_t nu, struct py_splice *sp)
{
	uint64_t lo, hi;
	size_t run = 0;

	memset(sp, 0, sizeof(*sp));
	if (s->flags & (RAW_PY_LOST | RAW_PY_TRUNCATED))
		python__count(c->py, PYTHON_SAMPLES_LOST, s->count);
	if (!s->npy || !c->py)
		return;
	sp->nruns = py_runs(s, sp->start);
	sp->on = true;
	if (!python__eval_range(c->py, s->pid, &lo, &hi))
		return;
	/* The leaf's pc is exact; the callers' are return addresses, inside the call's function. */
	for (size_t i = 0; i < nu && i < PERCH_SPLICE_MAX && run < sp->nruns; i++) {
		uint64_t pc = i ? ustack[i] - 1 : ustack[i];

		if (pc >= lo && pc < hi)
			sp->run_at[i] = (uint32_t)++run;
	}
	sp->placed = run;
}

/* A Python frame: named once per (code, tag, line) by the writer's dedup; its line once. */
static uint32_t py_frame(struct collector *c, const struct raw_sample *s,
			 const struct raw_pyframe *f)
{
	const char *qualname, *file;
	uint32_t id, fstr, nstr;
	int line = -1;
	uint64_t done;

	if (!python__name(c->py, s->pid, f->code, f->tag, f->instr, &qualname, &file, &line)) {
		python__count(c->py, PYTHON_FRAMES_UNNAMED, 1);
		return rec_writer__frame(c->w, REC_FRAME_USER, c->python_str, 0, f->code);
	}
	fstr = rec_writer__string(c->w, file);
	nstr = rec_writer__string(c->w, qualname);
	id = rec_writer__frame(c->w, REC_FRAME_USER, fstr, nstr, line > 0 ? (uint64_t)line : 0);
	if (id != UINT32_MAX && line > 0 && !u64map__get(&c->lines_done, id, &done)) {
		struct rec_line l = {.function = nstr, .file = fstr, .line = (uint32_t)line};

		u64map__put(&c->lines_done, id, 1);
		rec_writer__lines(c->w, id, &l, 1);
	}
	return id;
}

/* Run r's frames, outermost first, into c->frames from *n. */
static void emit_run(struct collector *c, const struct raw_sample *s, const struct py_splice *sp,
		     size_t r, size_t *n)
{
	size_t first = sp->start[r], end = r + 1 < sp->nruns ? sp->start[r + 1] : s->npy;

	for (size_t i = end; i-- > first;)
		c->frames[(*n)++] = py_frame(c, s, &s->py[i]);
}

void collect_py_root(struct collector *c, const struct raw_sample *s, const struct py_splice *sp,
		     size_t *n)
{
	if (!sp->on || sp->placed >= sp->nruns)
		return;
	for (size_t r = sp->nruns; r-- > sp->placed;) {
		python__count(c->py, PYTHON_FRAMES_UNPLACED,
			      (r + 1 < sp->nruns ? sp->start[r + 1] : s->npy) - sp->start[r]);
		emit_run(c, s, sp, r, n);
	}
}

bool collect_py_trampoline(struct collector *c, struct image *img, const struct py_splice *sp,
			   uint64_t addr, bool is_return)
{
	const struct proc_map *m;
	const char *name;
	uint64_t start;

	if (!sp->on)
		return false;
	m = collect_find_map(c, img, addr);
	if (!m || m->path[0]) /* perf's trampolines live in anonymous memory */
		return false;
	name = collect_jit_name(c, img->p, is_return ? addr - 1 : addr, &start);
	return name && !strncmp(name, "py::", 4);
}

bool collect_py_at(struct collector *c, const struct raw_sample *s, const struct py_splice *sp,
		   size_t i, size_t *n)
{
	if (!sp->on || i >= PERCH_SPLICE_MAX || !sp->run_at[i])
		return false;
	emit_run(c, s, sp, sp->run_at[i] - 1, n);
	return true;
}
