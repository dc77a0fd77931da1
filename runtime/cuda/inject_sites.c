// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The launch-site cache of the injection library (inject_sites.h). Runs inside the user's
 * program, on the thread of every launch: no allocation and no system call on the way of a
 * cached call, one table of SITES_SLOTS sites per thread, SITES_WAYS to a set (two sites that
 * share a set both stay; a site pushed out by others is probed again when it comes back, which
 * costs a probe, never a wrong stack).
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/hash.h"
#include "perch_abi.h"
#include "inject_sites.h"

#define SITES_SLOTS  256
#define SITES_WAYS   4	   /* a set: sites whose keys fall in one set do not push each other out */
#define SCAN_BYTES   16384 /* how far above the callback the program's frames are looked for */
#define MAX_RANGES   512
#define RECHECK_MASK 0xffff /* every 65536 calls of a thread: were modules loaded since? */

struct ranges {
	size_t n;
	uintptr_t lo, hi; /* the span of all ranges: most stack words fall outside at once */
	struct {
		uintptr_t lo, hi;
	} r[MAX_RANGES];	       /* executable segments of the program's modules, sorted */
	unsigned long long adds, subs; /* dl_iterate_phdr's counts when they were read */
};

struct slot {
	uint64_t key;
	uint32_t site; /* correlation id of the site's last probed call */
	uint32_t count;
};

static struct {
	bool on;
	struct ranges *_Atomic ranges; /* replaced whole when modules come or go; old ones kept */
	const struct perch_abi_registry *registry;
	pthread_mutex_t lock;
} sites = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct slot cache[SITES_SLOTS];
static __thread uintptr_t stack_lo, stack_hi; /* hi 0: not known yet; 1: unknown (no caching) */
static __thread uint32_t calls;

/* The CUDA libraries and this one: their frames are the same for every call, not the site. */
static bool is_cuda_module(const char *path)
{
	static const char *const names[] = {"libcuda.so", "libcudart", "libcupti", "libperch_cuda",
					    "libnvidia-"};
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The address of section ".perch_registry" in an ELF file (the region runtime's registry, as
 * perch's loader finds it in stripped programs too), or 0. */
static uint64_t registry_vaddr(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strs;
	char name[sizeof(".perch_registry")];
	uint64_t found = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(sh) ||
	    pread(fd, &strs, sizeof(strs), (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(sh))) !=
		    sizeof(strs))
		goto out;
	for (unsigned int i = 1; i < eh.e_shnum && !found; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + i * sizeof(sh))) !=
			    sizeof(sh) ||
		    pread(fd, name, sizeof(name), (off_t)(strs.sh_offset + sh.sh_name)) !=
			    sizeof(name))
			break;
		if (!memcmp(name, ".perch_registry", sizeof(name)))
			found = sh.sh_addr;
	}
out:
	close(fd);
	return found;
}

static void find_registry(struct dl_phdr_info *info, const char *path)
{
	const struct perch_abi_registry *r;
	uint64_t v;

	if (sites.registry || is_cuda_module(path))
		return;
	v = registry_vaddr(path);
	r = v ? (const void *)(info->dlpi_addr + v) : NULL;
	if (r && r->magic == PERCH_ABI_MAGIC && r->version >= 3)
		sites.registry = r;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct ranges *rs = ctx;
	const char *path =
		info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";

	(void)size;
	rs->adds = info->dlpi_adds;
	rs->subs = info->dlpi_subs;
	if (is_cuda_module(path))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && rs->n < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		rs->r[rs->n].lo = info->dlpi_addr + ph->p_vaddr;
		rs->r[rs->n].hi = rs->r[rs->n].lo + ph->p_memsz;
		rs->n++;
	}
	if (!sites.registry)
		find_registry(info, path);
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const uintptr_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The executable segments of every loaded module but CUDA's, sorted; NULL when out of memory. */
static struct ranges *read_ranges(void)
{
	struct ranges *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	dl_iterate_phdr(add_module, rs);
	if (rs->n)
		qsort(rs->r, rs->n, sizeof(rs->r[0]), by_lo);
	rs->lo = rs->n ? rs->r[0].lo : 0;
	for (size_t i = 0; i < rs->n; i++)
		rs->hi = rs->r[i].hi > rs->hi ? rs->r[i].hi : rs->hi;
	return rs;
}

static int read_counts(struct dl_phdr_info *info, size_t size, void *ctx)
{
	unsigned long long *c = ctx;

	(void)size;
	c[0] = info->dlpi_adds;
	c[1] = info->dlpi_subs;
	return 1;
}

/* Modules loaded or unloaded since the ranges were read: read them again. */
static void recheck_modules(void)
{
	unsigned long long c[2] = {0, 0};
	struct ranges *rs = atomic_load(&sites.ranges), *fresh;

	dl_iterate_phdr(read_counts, c);
	if (rs && c[0] == rs->adds && c[1] == rs->subs)
		return;
	pthread_mutex_lock(&sites.lock);
	fresh = read_ranges();
	if (fresh)
		atomic_store(&sites.ranges, fresh); /* the old one may be in use: kept */
	pthread_mutex_unlock(&sites.lock);
}

void sites_init(int on)
{
	if (!on)
		return;
	/* A program linked with libperch.so holds the live registry (a copy relocation) and
	 * exports it; else the section of the module that has one. */
	sites.registry = dlsym(RTLD_DEFAULT, "perch_registry");
	if (sites.registry && sites.registry->magic != PERCH_ABI_MAGIC)
		sites.registry = NULL;
	atomic_store(&sites.ranges, read_ranges());
	sites.on = atomic_load(&sites.ranges) != NULL;
}

static bool in_code(const struct ranges *rs, uintptr_t w)
{
	size_t lo = 0, hi = rs->n;

	if (w - rs->lo >= rs->hi - rs->lo)
		return false;
	while (lo < hi) { /* the last range starting at or below w */
		size_t mid = lo + (hi - lo) / 2;

		if (rs->r[mid].lo <= w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && w < rs->r[lo - 1].hi;
}

/* The top of this thread's stack (and stack_lo its bottom), read once per thread; 1 when they
 * cannot be known. */
static uintptr_t thread_stack_hi(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (stack_hi)
		return stack_hi;
	stack_hi = 1;
	if (pthread_getattr_np(pthread_self(), &attr))
		return stack_hi;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
	return stack_hi;
}

/* The thread's region stack, hashed (what the sampler keys a launch by); 0: none open. */
static uint64_t region_hash(uint64_t h)
{
	const struct perch_abi_registry *r = sites.registry;
	const struct perch_abi_tls *t;
	uintptr_t tp;
	uint32_t n;

	if (!r || !r->tls_offset)
		return h;
#if defined(__x86_64__)
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
#else
	tp = (uintptr_t)__builtin_thread_pointer();
#endif
	t = (const void *)(tp + (uintptr_t)r->tls_offset);
	n = t->depth < PERCH_MAX_DEPTH ? t->depth : PERCH_MAX_DEPTH;
	h = fnv64_bytes(h, &t->depth, sizeof(t->depth));
	return fnv64_bytes(h, t->ids, n * sizeof(t->ids[0]));
}

/* The site's key: the call, the regions, the depth, the program's innermost return addresses. */
static uint64_t site_key(uint32_t what, uintptr_t sp, uintptr_t hi)
{
	const struct ranges *rs = atomic_load(&sites.ranges);
	uintptr_t end = hi - sp > SCAN_BYTES ? sp + SCAN_BYTES : hi;
	uint64_t h = fnv64_bytes(FNV64_OFFSET, &what, sizeof(what));
	int found = 0;

	h = region_hash(h);
	h = mix64(h ^ (hi - sp));
	for (uintptr_t p = sp; p + sizeof(uintptr_t) <= end && found < SITES_WORDS;
	     p += sizeof(uintptr_t)) {
		uintptr_t w = *(const uintptr_t *)p;

		if (!in_code(rs, w))
			continue;
		h = mix64(h ^ w ^ (uint64_t)(p - sp) << 48); /* where it lies, too */
		found++;
	}
	return h | 1; /* 0 is an empty slot */
}

/* The key's slot in its set, else an empty one, else the set's least used one (count: its calls
 * since it came). */
static struct slot *find_slot(uint64_t key)
{
	struct slot *set = &cache[mix64(key) % (SITES_SLOTS / SITES_WAYS) * SITES_WAYS];
	struct slot *victim = NULL;

	for (int i = 0; i < SITES_WAYS; i++) {
		if (set[i].key == key)
			return &set[i];
		if (!victim || !set[i].key || (victim->key && set[i].count < victim->count))
			victim = &set[i];
	}
	return victim;
}

enum site_verdict sites_lookup(uint32_t what, uint32_t corr, const void *frame, uint32_t *site)
{
	uintptr_t sp = (uintptr_t)frame, hi;
	struct slot *s;
	uint64_t key;

	*site = 0;
	if (!sites.on)
		return SITE_PROBE;
	hi = thread_stack_hi();
	if (hi <= sp || sp < stack_lo)
		return SITE_PROBE; /* unknown bounds, or another stack (a signal's): nothing is read */
	if ((++calls & RECHECK_MASK) == 0)
		recheck_modules();
	key = site_key(what, sp, hi);
	s = find_slot(key);
	if (s->key != key) {
		*s = (struct slot){.key = key, .site = corr};
		return SITE_PROBE;
	}
	*site = s->site;
	if (++s->count % SITES_REPROBE)
		return SITE_INHERIT;
	s->site = corr;
	return SITE_REPROBE;
}
