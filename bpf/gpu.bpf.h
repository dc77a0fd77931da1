/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --gpu: the launch probe and, with -p, libcuda's entry points (part of the sampler's program).
 *
 * bpf/sample.bpf.c includes it where it stands (one BPF object, one compilation unit): it uses
 * the maps and helpers defined before it there.
 */

/* The key of a launch is in the counts map with no count: the drain of buf names it. */
static __always_inline bool key_launch(void *countmap, const struct perch_key *key)
{
	__u64 zero = 0;

	return !bpf_map_update_elem(countmap, key, &zero, BPF_NOEXIST) ||
	       bpf_map_lookup_elem(countmap, key);
}

/*
 * --gpu: perch_cuda_launch(correlation_id) in libperch_cuda.so, at the exit of a launch call (see
 * struct perch_launch). The user stack is taken at the probe's first instruction, exactly as a
 * tick in user mode takes it; there is no kernel part.
 */
SEC("uprobe")
int BPF_KPROBE(on_launch, __u32 correlation_id)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, buf, *gen = bpf_map_lookup_elem(&targets, &tgid);
	struct perch_key key = {};
	struct perch_launch *l;
	__u64 now;
	long err;

	if (!gen)
		return 0;
	now = bpf_ktime_get_ns(); /* before `active`, as a tick's */
	buf = active;
	stat_inc(PERCH_STAT_LAUNCHES);
	key.tgid = tgid;
	key.tid = (__u32)id;
	key.gen = *gen;
	key.kstack_id = -EFAULT; /* user mode: no kernel part, nothing lost */
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	/* The probes' scratch slots: a tick's interrupt coming in the middle of this unwind on the
	 * same CPU must not write over its frames (it did: empty and foreign launch stacks). */
	region_stack_in(tgid, &key, SCRATCH_PROBE);
	py_stack_in(tgid, key.tid, buf, &key, SCRATCH_PROBE);
	if (!dwarf_user_stack_in(ctx, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, &key,
				 SCRATCH_PROBE)) {
		err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0,
				      BPF_F_USER_STACK);
		key.ustack_id = err;
		if (err < 0)
			note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
		key.user_ret = user_stack_top(ctx);
	}
	if (!key_launch(buf ? (void *)&counts1 : (void *)&counts0, &key))
		goto lost;
	l = bpf_ringbuf_reserve(&launches, sizeof(*l), 0);
	if (!l)
		goto lost;
	l->time_ns = now;
	l->buf = buf;
	l->correlation_id = correlation_id;
	__builtin_memcpy(&l->key, &key, sizeof(key));
	bpf_ringbuf_submit(l, 0);
	return 0;
lost:
	stat_inc(PERCH_STAT_LAUNCH_LOST);
	return 0;
}

/* ---- --gpu -p PID: libcuda's entry points (attach mode, see struct perch_gpu_call) -------- */

/* 4 MiB: some 26,000 calls between two reads (perch reads it at every look at its events, at
 * least every drain: 260,000 calls a second); past that, calls are counted lost. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} gpu_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} gpu_names SEC(".maps");

/* pid_tgid -> the name lookup it is inside (entry to return). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct perch_gpu_pending);
} gpu_pending SEC(".maps");

/* The caller's user stack and region stack into key, as on_launch takes them: at the probe's
 * first instruction, no kernel part. False when the key could not be kept. */
static __always_inline bool gpu_call_key(struct pt_regs *ctx, __u64 id, __u32 gen, __u32 buf,
					 struct perch_key *key)
{
	__u32 tgid = id >> 32;
	long err;

	key->tgid = tgid;
	key->tid = (__u32)id;
	key->gen = gen;
	key->kstack_id = -EFAULT;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	region_stack_in(tgid, key, SCRATCH_PROBE);
	py_stack_in(tgid, key->tid, buf, key, SCRATCH_PROBE);
	if (!dwarf_user_stack_in(ctx, tgid, buf ? (void *)&dstacks1 : (void *)&dstacks0, key,
				 SCRATCH_PROBE)) {
		err = bpf_get_stackid(ctx, buf ? (void *)&stacks1 : (void *)&stacks0,
				      BPF_F_USER_STACK);
		key->ustack_id = err;
		if (err < 0)
			note_stack_error(err, PERCH_STAT_USTACK_FULL, PERCH_STAT_USTACK_FAULT);
		key->user_ret = user_stack_top(ctx);
	}
	return key_launch(buf ? (void *)&counts1 : (void *)&counts0, key);
}

/* A launch, copy or memset entry point; the cookie says which (format/gpu_entries.h). */
SEC("uprobe")
int on_gpu_call(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tgid = id >> 32, buf, *gen = bpf_map_lookup_elem(&targets, &tgid);
	struct perch_key key = {};
	struct perch_gpu_call *c;

	if (!gen)
		return 0;
	now = bpf_ktime_get_ns(); /* before `active`, as a tick's */
	buf = active;
	stat_inc(PERCH_STAT_GPU_CALLS);
	if (!gpu_call_key(ctx, id, *gen, buf, &key))
		goto lost;
	c = bpf_ringbuf_reserve(&gpu_calls, sizeof(*c), 0);
	if (!c)
		goto lost;
	c->time_ns = now;
	c->buf = buf;
	c->entry = (__u32)bpf_get_attach_cookie(ctx);
	c->args[0] = PT_REGS_PARM1(ctx);
	c->args[1] = PT_REGS_PARM2(ctx);
	c->args[2] = PT_REGS_PARM3(ctx);
	c->args[3] = PT_REGS_PARM4(ctx);
	c->args[4] = PT_REGS_PARM5(ctx);
	c->args[5] = ctx->r9; /* the sixth: libbpf 1.1 has no PT_REGS_PARM6 */
	__builtin_memcpy(&c->key, &key, sizeof(key));
	bpf_ringbuf_submit(c, 0);
	return 0;
lost:
	stat_inc(PERCH_STAT_GPU_CALL_LOST);
	return 0;
}

/* The entry of a name lookup (enum perch_gpu_namer in the cookie): its arguments, for its return. */
SEC("uprobe")
int on_gpu_namer(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct perch_gpu_pending p = {};

	if (!bpf_map_lookup_elem(&targets, &tgid))
		return 0;
	p.out = PT_REGS_PARM1(ctx);
	p.kernel = PT_REGS_PARM2(ctx);
	p.name = PT_REGS_PARM3(ctx);
	p.namer = (__u32)bpf_get_attach_cookie(ctx);
	bpf_map_update_elem(&gpu_pending, &id, &p, BPF_ANY);
	return 0;
}

/* Its return: the handle the callee wrote and the name it was given (read now: paged in). */
SEC("uretprobe")
int on_gpu_named(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct perch_gpu_pending *p = bpf_map_lookup_elem(&gpu_pending, &id);
	struct perch_gpu_name *n;
	long len = 0;

	if (!p)
		return 0;
	n = bpf_ringbuf_reserve(&gpu_names, sizeof(*n), 0);
	if (!n) {
		stat_inc(PERCH_STAT_GPU_NAME_LOST);
		bpf_map_delete_elem(&gpu_pending, &id);
		return 0;
	}
	n->tgid = id >> 32;
	n->namer = p->namer;
	n->result = (__s32)PT_REGS_RC(ctx);
	n->kernel = p->namer == PERCH_GPU_NAMER_KERNEL ? p->kernel : 0;
	if (bpf_probe_read_user(&n->handle, sizeof(n->handle), (void *)p->out))
		n->handle = 0;
	if (p->namer != PERCH_GPU_NAMER_KERNEL)
		len = bpf_probe_read_user_str(n->name, sizeof(n->name), (void *)p->name);
	n->len = len > 0 ? (__u32)len - 1 : 0;
	bpf_ringbuf_submit(n, 0);
	bpf_map_delete_elem(&gpu_pending, &id);
	return 0;
}
