/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CPython frames (see struct perch_py_proc in perch_bpf.h): for a thread of a process with an
 * interpreter, its Python frames go into the key as a stack in this period's pystacks map, as
 * the user stack does into dstacks. Part of the sampler's program: bpf/sample.bpf.c includes it
 * where it stands and it uses the maps and helpers defined before it there.
 *
 * What the walk reads belongs to the profiled process and changes under it on other CPUs (another
 * thread of it may free a frame's code object, or exit): every read may fail or be stale, so
 * every value is only an address handed on, never followed past the bounds here; userspace
 * checks what a code object is before it names it (record/pycode.c).
 */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PERCH_PY_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct perch_py_proc);
} py_procs SEC(".maps");

/* tid -> its thread state's address: checked (its native_thread_id) at every use. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PERCH_PY_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} py_threads SEC(".maps");

#define PYSTACK_MAP                                       \
	{                                                 \
		__uint(type, BPF_MAP_TYPE_HASH);          \
		__uint(max_entries, PERCH_STACK_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);     \
		__type(key, __u64);                       \
		__type(value, struct perch_pystack);      \
	}

struct PYSTACK_MAP pystacks0 SEC(".maps");
struct PYSTACK_MAP pystacks1 SEC(".maps");

/* Where a walk builds its stack and reads a frame's first bytes (too big for the BPF stack). */
struct py_scratch {
	struct perch_pystack st;
	__u8 frame[PERCH_PY_FRAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_SLOTS);
	__type(key, __u32);
	__type(value, struct py_scratch);
} py_scratch SEC(".maps");

/* A u64 at off in the frame's bytes; 0 when off is past them. */
static __always_inline __u64 frame_u64(const struct py_scratch *s, __u16 off)
{
	if (off > PERCH_PY_FRAME_READ - 8)
		return 0;
	return *(const __u64 *)(s->frame + (off & 0x7f));
}

static __always_inline __u8 frame_u8(const struct py_scratch *s, __u16 off)
{
	if (off >= PERCH_PY_FRAME_READ)
		return 0;
	return s->frame[off & 0x7f];
}

/* The thread state in the interpreter's list whose native thread id is tid. */
struct py_find {
	const struct perch_py_proc *pp;
	__u64 ts;
	__u32 tid;
	__u32 found;
};

static long py_find_step(__u64 i, void *arg)
{
	struct py_find *f = arg;
	__u64 ntid = 0, next = 0;

	if (!f->ts ||
	    bpf_probe_read_user(&ntid, sizeof(ntid), (void *)(f->ts + f->pp->ts_native_tid)))
		return 1;
	if ((__u32)ntid == f->tid) {
		f->found = 1;
		return 1;
	}
	if (bpf_probe_read_user(&next, sizeof(next), (void *)(f->ts + f->pp->ts_next)))
		next = 0;
	f->ts = next;
	return 0;
}

/* tid's thread state (0: it has none, or the list could not be read). */
static __always_inline __u64 py_thread_state(const struct perch_py_proc *pp, __u32 tid)
{
	struct py_find f = {.pp = pp, .tid = tid};
	__u64 *cached = bpf_map_lookup_elem(&py_threads, &tid), interp = 0, ntid = 0;

	if (cached && *cached &&
	    !bpf_probe_read_user(&ntid, sizeof(ntid), (void *)(*cached + pp->ts_native_tid)) &&
	    (__u32)ntid == tid)
		return *cached;
	if (bpf_probe_read_user(&interp, sizeof(interp), (void *)(pp->runtime + pp->interp_head)) ||
	    !interp ||
	    bpf_probe_read_user(&f.ts, sizeof(f.ts), (void *)(interp + pp->threads_head)))
		return 0;
	bpf_loop(PERCH_PY_SCAN, py_find_step, &f, 0);
	if (!f.found)
		return 0;
	bpf_map_update_elem(&py_threads, &tid, &f.ts, BPF_ANY);
	return f.ts;
}

struct py_walk {
	const struct perch_py_proc *pp;
	struct py_scratch *s;
	__u64 frame;
	__u64 hash;
	__u64 last_code, last_tag; /* the frame before's: recursion reads its tag once */
	__u32 fault;
	__u32 more; /* frames left when the stack was full */
};

/* One frame: its code, instruction and tag into the stack, then on to the previous one. */
static long py_walk_step(__u64 i, void *arg)
{
	struct py_walk *w = arg;
	struct py_scratch *s = w->s;
	const struct perch_py_proc *pp = w->pp;
	struct perch_py_frame *f;
	__u64 code, instr;
	__u32 n = s->st.n;

	if (!w->frame)
		return 1;
	if (bpf_probe_read_user(s->frame, sizeof(s->frame), (void *)w->frame)) {
		w->fault = 1;
		return 1;
	}
	w->frame = frame_u64(s, pp->fr_previous);
	if (pp->owner_cstack != 0xff && frame_u8(s, pp->fr_owner) == pp->owner_cstack) {
		/* The entry shim of one C call of the loop: the frame before it was that call's
		 * outermost. */
		if (n > 0 && n <= PERCH_PY_DEPTH)
			s->st.f[(n - 1) & (PERCH_PY_DEPTH - 1)].flags |= PERCH_PY_ENTRY;
		return 0;
	}
	if (n >= PERCH_PY_DEPTH) {
		w->more = 1;
		return 1;
	}
	f = &s->st.f[n & (PERCH_PY_DEPTH - 1)];
	code = frame_u64(s, pp->fr_code);
	instr = frame_u64(s, pp->fr_instr);
	f->code = code;
	f->instr = instr > code && instr - code < 0xffffffffull ? (__u32)(instr - code) : 0;
	f->flags = pp->fr_is_entry != PERCH_PY_NONE && frame_u8(s, pp->fr_is_entry) ? PERCH_PY_ENTRY
										    : 0;
	f->tag = 0;
	if (code && code == w->last_code)
		f->tag = w->last_tag;
	else if (code &&
		 bpf_probe_read_user(&f->tag, sizeof(f->tag), (void *)(code + pp->code_tag)))
		w->fault = 1;
	w->last_code = code;
	w->last_tag = f->tag;
	w->hash = (w->hash ^ code) * FNV_PRIME;
	w->hash = (w->hash ^ ((__u64)f->instr << 32 | f->flags)) * FNV_PRIME;
	w->hash = (w->hash ^ f->tag) * FNV_PRIME;
	s->st.n = n + 1;
	return 0;
}

static __always_inline bool same_pystack(const struct perch_pystack *a,
					 const struct perch_pystack *b)
{
	if (a->n != b->n)
		return false;
	for (__u32 i = 0; i < PERCH_PY_DEPTH; i++) {
		if (i >= a->n)
			break;
		if (a->f[i].code != b->f[i].code || a->f[i].instr != b->f[i].instr ||
		    a->f[i].tag != b->f[i].tag || a->f[i].flags != b->f[i].flags)
			return false;
	}
	return true;
}

/* Store the walked stack under its hash in this period's pystacks map; false when it cannot be
 * (full, or another stack with its hash). */
static __always_inline bool store_pystack(void *pmap, __u64 hash, struct perch_pystack *st)
{
	struct perch_pystack *old = bpf_map_lookup_elem(pmap, &hash);
	long err;

	if (old)
		return same_pystack(old, st);
	err = bpf_map_update_elem(pmap, &hash, st, BPF_NOEXIST);
	return !err || err == -EEXIST;
}

/* The thread's Python frames into the key (nothing for a process without an interpreter), built
 * in scratch slot `slot`; counted as ticks' when slot is SCRATCH_TICK. A global function: the
 * verifier walks it once, not once for each of the programs that call it (the tick, the
 * off-CPU switch, the launch and libcuda probes). */
__noinline int py_stack_in(__u32 tgid, __u32 tid, __u32 buf, struct perch_key *key, __u32 slot)
{
	const struct perch_py_proc *pp = bpf_map_lookup_elem(&py_procs, &tgid);
	struct py_walk w = {.pp = pp, .hash = FNV_OFFSET};
	bool tick = slot == SCRATCH_TICK;
	__u64 ts;

	if (!pp || !key)
		return 0;
	w.s = bpf_map_lookup_elem(&py_scratch, &slot);
	if (!w.s)
		return 0;
	ts = py_thread_state(pp, tid);
	if (!ts) {
		if (tick)
			stat_inc(PERCH_STAT_PY_NO_THREAD);
		return 0;
	}
	if (bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(ts + pp->ts_frame)) ||
	    (pp->cframe_frame != PERCH_PY_NONE && w.frame &&
	     bpf_probe_read_user(&w.frame, sizeof(w.frame), (void *)(w.frame + pp->cframe_frame))))
		w.fault = 1;
	w.s->st.n = 0;
	w.s->st.pad = 0;
	if (!w.fault)
		bpf_loop(PERCH_PY_DEPTH + 1, py_walk_step, &w, 0);
	if (w.more) {
		key->flags |= PERCH_KEY_PY_TRUNCATED;
		if (tick)
			stat_inc(PERCH_STAT_PY_TRUNCATED);
	}
	if (w.fault) {
		key->flags |= PERCH_KEY_PY_LOST;
		if (tick)
			stat_inc(PERCH_STAT_PY_FAULT);
	}
	if (!w.s->st.n)
		return 0;
	if (!store_pystack(buf ? (void *)&pystacks1 : (void *)&pystacks0, w.hash, &w.s->st)) {
		key->flags |= PERCH_KEY_PY_LOST;
		if (tick)
			stat_inc(PERCH_STAT_PY_LOST);
		return 0;
	}
	if (tick)
		stat_inc(PERCH_STAT_PY_STACKS);
	key->py_hash = w.hash;
	return 0;
}
