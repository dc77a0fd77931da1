// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers: the target's memory (see regions_impl.h). Reads and writes go through
 * process_vm_readv/writev, a whole buffer or nothing; the registry read back is checked for the
 * ABI this perch speaks before anything trusts it.
 */
#include <errno.h>
#include <string.h>
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

int regions_poke(struct rproc *p, size_t off, const void *buf, size_t len)
{
	return poke(p->pid, p->addr + off, buf, len);
}

/* The registry of each version perch reads is the newest's without the fields after its size. */
static size_t registry_size(uint32_t version)
{
	switch (version) {
	case 3:
		return REG_V3_SIZE;
	case 4:
		return REG_V4_SIZE;
	case PERCH_ABI_VERSION:
		return sizeof(struct perch_abi_registry);
	default:
		return 0;
	}
}

int regions_read_registry(struct rproc *p)
{
	struct perch_abi_registry *r = &p->reg;
	size_t size;

	memset(r, 0, sizeof(*r));
	if (regions_peek(p->pid, p->addr, r, REG_V3_SIZE))
		return -1;
	size = registry_size(r->version);
	if (r->magic != PERCH_ABI_MAGIC || !size || r->size != size) {
		errno = EPROTO;
		return -1;
	}
	if (size == REG_V3_SIZE)
		return 0;
	return regions_peek(p->pid, p->addr + REG_V3_SIZE, (char *)r + REG_V3_SIZE,
			    size - REG_V3_SIZE);
}
