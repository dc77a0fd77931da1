// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: the target's memory (see regions_impl.h). Reads and writes go through
 * process_vm_readv/writev, a whole buffer or nothing; the registry read back is checked for the
 * ABI this perch speaks before anything trusts it.
 */
#include <errno.h>
#include <sys/uio.h>
#include "regions_impl.h"

int regions_peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int poke(uint32_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

int regions_poke_u32(struct rproc *p, size_t off, uint32_t v)
{
	return poke(p->pid, p->addr + off, &v, sizeof(v));
}

int regions_poke_u64(struct rproc *p, size_t off, uint64_t v)
{
	return poke(p->pid, p->addr + off, &v, sizeof(v));
}

int regions_read_registry(struct rproc *p)
{
	if (regions_peek(p->pid, p->addr, &p->reg, sizeof(p->reg)))
		return -1;
	if (p->reg.magic != PERCH_ABI_MAGIC || p->reg.version != PERCH_ABI_VERSION ||
	    p->reg.size != sizeof(p->reg)) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}
