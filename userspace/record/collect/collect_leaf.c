// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The collector's leaf repair (see collect_impl.h): the caller a frame-pointer walk skips under a
 * frameless leaf, found from the word at the stack pointer when the leaf's code says it is a
 * return address, and the frames of a walk to believe. Code bytes come from the mapped file, or
 * from the live process for anonymous (JIT) code; each answer is cached per image.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include "collect_impl.h"
#include "lib/u64map.h"
#include "record/procs.h"
#include "symbolize/symbolizer.h"

/* Code bytes at addr: from the mapped file, or from the live process for anonymous (JIT) code. */
static int read_code(struct collector *c, struct image *img, uint64_t addr, void *buf, size_t len)
{
	const struct proc_map *m = collect_find_map(c, img, addr);
	const struct proc *p = img->p;
	struct sym_module *mod;

	if (!m || !m->open_path) {
		struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

		if (p->pp->exited ||
		    process_vm_readv(p->pp->pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
			return -ENOENT;
		return 0;
	}
	mod = collect_map_module(c, m);
	if (!mod)
		return -ENOENT;
	return sym_module__read(mod, addr - m->start + m->pgoff, buf, len);
}

/* Is ret preceded by a call instruction? (x86-64: call rel32, call *r/m with 2..7 bytes.) */
static bool after_call_uncached(struct collector *c, struct image *img, uint64_t ret)
{
	uint8_t b[8];

	if (read_code(c, img, ret - 8, b, 8))
		return false;
	if (b[3] == 0xe8)
		return true;
	for (int len = 2; len <= 7; len++) {
		const uint8_t *ins = b + 8 - len;

		if (ins[0] == 0xff && (ins[1] & 0x38) == 0x10)
			return true;
	}
	return false;
}

static bool after_call(struct collector *c, struct image *img, uint64_t ret)
{
	uint64_t v;

	if (!u64map__get(&img->ret_ok, ret, &v)) {
		v = 1 + after_call_uncached(c, img, ret);
		u64map__put(&img->ret_ok, ret, v);
	}
	return v == 2;
}

/*
 * A frame-pointer walk starts from the leaf's pc and then follows rbp. A leaf that has not set
 * up its own frame (GCC 12 emits such leaves even with -mno-omit-leaf-frame-pointer, and every
 * -fomit-frame-pointer library has them) leaves rbp pointing at its caller's frame, so the walk
 * skips the caller. The word at the stack pointer is then the return address into that caller.
 * Returns that address when this sample needs it, else 0.
 */
/* Where the function holding pc starts, as an address in the process; 0 when unknown. */
static uint64_t function_start(struct collector *c, struct image *img, uint64_t pc)
{
	const struct proc_map *m = collect_find_map(c, img, pc);
	struct sym_module *mod;
	struct sym_result res;
	uint64_t start = 0;

	if (!m || !m->open_path)
		return collect_jit_name(c, img->p, pc, &start) ? start : 0;
	mod = collect_map_module(c, m);
	if (!mod || sym_module__resolve(mod, pc - m->start + m->pgoff, &res) || !res.name)
		return 0;
	return pc - (res.vaddr - res.sym_start);
}

static bool ret_on_top(struct collector *c, struct image *img, uint64_t pc)
{
	uint64_t start = function_start(c, img, pc);
	uint8_t code[8], at_pc = 0;
	size_t skip = 0;

	if (!start || read_code(c, img, start, code, sizeof(code)))
		return false;
	if (code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
		skip = 4; /* endbr64 */
	if (code[skip] == 0x55 && code[skip + 1] == 0x48 && code[skip + 2] == 0x89 &&
	    code[skip + 3] == 0xe5) {
		/* push %rbp; mov %rsp,%rbp: only at its first instruction or at the final ret is
		 * the return address on top of the stack with rbp still the caller's. */
		read_code(c, img, pc, &at_pc, 1);
		if (pc != start + skip && at_pc != 0xc3)
			return false;
	}
	return true;
}

uint64_t collect_hidden_caller(struct collector *c, struct image *img, uint64_t user_ret,
			       const uint64_t *u, size_t nu)
{
	uint64_t v;

	if (!nu || !user_ret || (nu > 1 && u[1] == user_ret))
		return 0;
	if (!u64map__get(&img->leaf, u[0], &v)) {
		v = 1 + ret_on_top(c, img, u[0]);
		u64map__put(&img->leaf, u[0], v);
	}
	if (v != 2)
		return 0;
	return after_call(c, img, user_ret) ? user_ret : 0;
}

/* How many user frames, leaf first, to believe: a walk that reads a stale slot or a damaged frame
 * goes on from garbage (ASCII text, small integers, data pointers), and none of that can be a
 * return address, which always lies in executable memory the process mapped. The first caller
 * outside all of it ends the stack. Only for a process whose leaf is mapped, so one whose mappings
 * are unknown keeps its raw addresses. */
size_t collect_believable_frames(struct collector *c, struct image *img, const uint64_t *ustack,
				 size_t nu)
{
	for (size_t i = 1; i < nu; i++)
		if (!collect_find_map(c, img, ustack[i]))
			return i;
	return nu;
}
