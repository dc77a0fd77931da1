// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Region markers, the profiler's side (see regions.h and include/perch_abi.h). A listener on the
 * process table (procs.h): what a file holds (the registry's place) lives in its module slot,
 * the state of a process's runtime in its process slot.
 *
 * The runtime puts its registry in an ELF section of its own (".perch_registry"), so perch finds
 * it in stripped executables too; a program linked with libperch.so usually holds a copy of it
 * (a copy relocation), found through the program's dynamic symbol table. Everything read from the target is untrusted: counts are
 * bounded, parents checked, walks capped. Times come as TSC ticks (x86) and are converted with
 * a ratio perch measures against CLOCK_MONOTONIC over the whole recording.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/elfinit.h"
#include "lib/log.h"
#include "perch_abi.h"
#include "bpf/perch_bpf.h"
#include "procs.h"
#include "regions.h"
#include "lib/u64map.h"
#include "lib/vec.h"

#define REGISTRY_SECTION ".perch_registry"
#define MAX_THREADS	 65536 /* thread blocks walked per process */
#define MAX_LOADS	 8
#define CALIBRATE_NS	 50000000ull /* the least TSC-vs-clock interval perch converts with */
#define CLAIM_LOCK	 "perch-regions-claim" /* abstract socket name: perches claim one at a time */
#define CLAIM_WAIT_MS	 2000

_Static_assert(PERCH_REGION_DEPTH == PERCH_MAX_DEPTH, "sampler and runtime disagree on depth");
_Static_assert(PERCH_REGISTRY_TLS_OFFSET == offsetof(struct perch_abi_registry, tls_offset),
	       "sampler and runtime disagree on the registry");

/* What a file holds, in its module slot (procs.h): the registry's ELF address and the loadable
 * segments to place it. */
struct module {
	bool has;
	uint64_t vaddr;
	uint32_t nloads;
	struct {
		uint64_t vaddr, offset, filesz;
	} load[MAX_LOADS];
};

/* Region calls the runtime could not keep under their own name and place (its limits). */
struct limits {
	uint64_t names_over; /* under PERCH_NAME_TOO_MANY: the name table was full */
	uint64_t tree_full;  /* under PERCH_NODE_OTHER: the thread's tree was full */
	uint64_t too_deep;   /* deeper than PERCH_MAX_DEPTH: counted only */
};

/* The header part of struct perch_abi_thread (everything before the nodes). */
#define THREAD_HEAD offsetof(struct perch_abi_thread, nodes)

enum proc_state {
	P_PENDING = 0, /* registry found, the runtime's constructor has not run yet */
	P_ON,	       /* switched on, tables read periodically */
	P_DONE,	       /* final figures written */
};

struct rproc {
	uint32_t pid;
	enum proc_state state;
	bool attached;	/* perch switched the runtime on (not the environment of a launch) */
	uint32_t owner; /* another live perch that owns the runtime (the process is left alone) */
	uint64_t addr;	/* the registry in the process */
	struct perch_abi_registry reg;
	char (*names)[PERCH_NAME_LEN]; /* names[0 .. nnames) read so far */
	uint32_t nnames;
	struct rec_region_thread *threads; /* the last read */
	size_t nthreads;
	struct limits lim;   /* of the last read */
	uint32_t *name_strs; /* per name id: string id in the recording, 0 = not made yet */
	size_t capnames, capstrs;
};

struct regions {
	struct rec_writer *w;
	int procs_fd, stacks_fd;
	struct procs *ps; /* borrowed: processes and modules, our slots in them */
	int id;
	struct u64map stack_index;   /* region stack hash -> index in stacks */
	struct perch_rstack *stacks; /* the sampler's region stacks, as read */
	size_t nstacks, capstacks;
	uint64_t tsc0, ns0; /* calibration start */
	uint64_t stats[REGIONS_STAT_MAX];
	uint32_t me; /* this perch's pid and start time: the owner it writes */
	uint64_t me_start;
	struct perch_abi_thread *head; /* scratch: a thread block (only its head is read) */
	bool warned;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

static const struct procs_listener listener;

struct regions *regions__new(struct rec_writer *w, int procs_fd, int stacks_fd, struct procs *ps)
{
	struct regions *rg = calloc(1, sizeof(*rg));
	struct procs_listener l = listener;

	if (!rg)
		return NULL;
	rg->w = w;
	rg->procs_fd = procs_fd;
	rg->stacks_fd = stacks_fd;
	rg->ps = ps;
	rg->head = malloc(sizeof(*rg->head));
	l.ctx = rg;
	rg->id = rg->head ? procs__listen(ps, &l) : -ENOMEM;
	if (rg->id < 0) {
		errno = -rg->id;
		free(rg->head);
		free(rg);
		return NULL;
	}
	rg->me = (uint32_t)getpid();
	proc_start_time((pid_t)rg->me, &rg->me_start);
	rg->tsc0 = tsc();
	rg->ns0 = mono_ns();
	return rg;
}

static void free_threads(struct rec_region_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].nodes);
	free(t);
}

static void proc_clear(struct rproc *p)
{
	free_threads(p->threads, p->nthreads);
	free(p->names);
	free(p->name_strs);
	memset(p, 0, sizeof(*p));
}

static void drop_proc(void *ctx, void *slot)
{
	(void)ctx;
	proc_clear(slot);
	free(slot);
}

static void drop_module(void *ctx, void *slot)
{
	(void)ctx;
	free(slot);
}

void regions__free(struct regions *rg)
{
	if (!rg)
		return;
	free(rg->stacks);
	free(rg->head);
	u64map__clear(&rg->stack_index);
	free(rg);
}

uint64_t regions__stat(const struct regions *rg, enum regions_stat which)
{
	return rg && which < REGIONS_STAT_MAX ? rg->stats[which] : 0;
}

void regions__count_lost(struct regions *rg, uint64_t samples)
{
	if (rg)
		rg->stats[REGIONS_STACKS_LOST] += samples;
}

/* ---- the target's memory ---------------------------------------------------------------------- */

static int peek(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int poke(uint32_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {(void *)buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

#define REG_FIELD(f) offsetof(struct perch_abi_registry, f)

static int poke_u32(struct rproc *p, size_t off, uint32_t v)
{
	return poke(p->pid, p->addr + off, &v, sizeof(v));
}

static void unreadable(struct regions *rg, struct rproc *p)
{
	rg->stats[REGIONS_UNREADABLE]++;
	p->state = P_DONE;
	if (!rg->warned)
		log_warn("regions: cannot read or write the memory of process %u (%s): no region "
			 "figures for it",
			 p->pid, strerror(errno));
	rg->warned = true;
}

/* ---- finding the registry ---------------------------------------------------------------------- */

/* A defined, full-sized perch_registry in the dynamic symbol table: where the live registry is
 * when the executable took a copy of libperch.so's (a copy relocation), and in libperch.so. */
static bool dynsym_registry(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t *vaddr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    sym.st_size < sizeof(struct perch_abi_registry))
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (name && !strcmp(name, "perch_registry")) {
			*vaddr = sym.st_value;
			return true;
		}
	}
	return false;
}

static void scan_module(struct module *mod, const char *path)
{
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx, n;
	uint64_t section = 0, dynsym = 0;
	bool in_section = false, in_dynsym = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (perch_elf_init())
		goto out;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM && !in_dynsym)
			in_dynsym = dynsym_registry(e, scn, &sh, &dynsym);
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_ALLOC) && name && !strcmp(name, REGISTRY_SECTION) &&
		    sh.sh_size >= sizeof(struct perch_abi_registry)) {
			in_section = true;
			section = sh.sh_addr;
		}
	}
	/* The section finds it in stripped programs; an exported symbol takes precedence. */
	mod->has = in_section || in_dynsym;
	mod->vaddr = in_dynsym ? dynsym : section;
	if (mod->has && !elf_getphdrnum(e, &n)) {
		for (size_t i = 0; i < n && mod->nloads < MAX_LOADS; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			mod->load[mod->nloads].vaddr = ph.p_vaddr;
			mod->load[mod->nloads].offset = ph.p_offset;
			mod->load[mod->nloads].filesz = ph.p_filesz;
			mod->nloads++;
		}
	}
out:
	elf_end(e);
	close(fd);
}

static const struct module *get_module(struct regions *rg, uint32_t pid, const struct proc_map *m,
				       struct procs_module *pm)
{
	struct module **slot = (struct module **)procs__module_slot(pm, rg->id), *mod;
	char *path = NULL;

	if (*slot)
		return *slot;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return NULL;
	*slot = mod;
	/* Through map_files: the process's own file, whatever its mount namespace. */
	if (asprintf(&path, "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, pid, m->start, m->end) > 0)
		scan_module(mod, path);
	free(path);
	if (!mod->has && m->path && m->path[0] == '/')
		scan_module(mod, m->path);
	return mod;
}

/* The registry's address in the process, from the executable mapping m of its module. */
static bool place(const struct module *mod, const struct proc_map *m, uint64_t *addr)
{
	for (uint32_t i = 0; i < mod->nloads; i++) {
		const typeof(mod->load[0]) *l = &mod->load[i];

		if (m->pgoff < l->offset || m->pgoff >= l->offset + (l->filesz ? l->filesz : 1))
			continue;
		/* m->start is the module's address vaddr = l->vaddr + (pgoff - offset). */
		*addr = m->start - (l->vaddr + (m->pgoff - l->offset)) + mod->vaddr;
		return true;
	}
	return false;
}

static struct rproc *slot_of(const struct regions *rg, struct procs_proc *pp)
{
	return pp ? *procs__slot(pp, rg->id) : NULL;
}

static struct rproc *find_proc(const struct regions *rg, uint32_t pid)
{
	return slot_of(rg, procs__find(rg->ps, pid));
}

/* The i-th process of the table, when it has a runtime (else NULL). */
static struct rproc *proc_at(const struct regions *rg, size_t i)
{
	return slot_of(rg, procs__at(rg->ps, i));
}

static struct rproc *add_proc(struct regions *rg, struct procs_proc *pp, uint64_t addr)
{
	struct rproc **slot = (struct rproc **)procs__slot(pp, rg->id), *p = *slot;

	if (p) {
		/* Known already; or left to the perch that owns it, until it is gone or exec'd. */
		if (p->state != P_DONE || p->owner)
			return NULL;
		/* A new image (after exec, even of the same program): start over. */
		proc_clear(p);
	} else {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		*slot = p;
	}
	p->pid = pp->pid;
	p->addr = addr;
	p->state = P_PENDING;
	return p;
}

static void switch_on(struct regions *rg, struct rproc *p);

/* A target mapped an executable file: look for the runtime in it. */
static void proc_mapped(void *ctx, struct procs_proc *pp, const struct proc_map *m,
			struct procs_module *pm)
{
	struct regions *rg = ctx;
	uint32_t pid = pp->pid;
	struct perch_region_proc rp;
	const struct module *mod;
	struct rproc *p;
	uint64_t addr;

	if (!m->inode || !pm)
		return;
	mod = get_module(rg, pid, m, pm);
	if (!mod || !mod->has || !place(mod, m, &addr))
		return;
	p = add_proc(rg, pp, addr);
	if (!p)
		return;
	/* The sampler follows the registry from now on, before the runtime is even initialized. */
	rp.registry = addr;
	if (bpf_map_update_elem(rg->procs_fd, &pid, &rp, BPF_ANY))
		log_debug("regions: region_procs: %s", strerror(errno));
	switch_on(rg, p);
}

/* Look through the process's current mappings (attached; a launched command's are perch's until
 * its exec). -EBUSY when another live perch owns its runtime. */
static int proc_started(void *ctx, struct procs_proc *pp, const struct proc_maps *maps,
			const char *exe)
{
	struct regions *rg = ctx;

	if (exe)
		return 0;
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		proc_mapped(rg, pp, m, procs__module_of(rg->ps, m));
	}
	return regions__owner(rg, pp->pid) ? -EBUSY : 0;
}

uint32_t regions__owner(const struct regions *rg, uint32_t pid)
{
	const struct rproc *p = rg ? find_proc(rg, pid) : NULL;

	return p ? p->owner : 0;
}

/* ---- switching on ------------------------------------------------------------------------------ */

static int read_registry(struct rproc *p)
{
	if (peek(p->pid, p->addr, &p->reg, sizeof(p->reg)))
		return -1;
	if (p->reg.magic != PERCH_ABI_MAGIC || p->reg.version != PERCH_ABI_VERSION ||
	    p->reg.size != sizeof(p->reg)) {
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Ready once the runtime's constructor ran (it sets tls_offset on x86 and the tick unit). */
static bool constructed(const struct perch_abi_registry *r)
{
#if defined(__x86_64__)
	return r->tls_offset != 0;
#else
	return r->tick_unit == PERCH_TICKS_NS;
#endif
}

/* Perches take runtimes one at a time: a machine-wide lock (an abstract socket, which the
 * kernel frees when its perch dies however it dies) around reading the owner and writing ours.
 * Returns the socket to close, or -1 (no lock: go on unlocked rather than not at all). */
static int claim_lock(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	socklen_t len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(CLAIM_LOCK);
	struct timespec ms = {0, 1000000};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(a.sun_path + 1, CLAIM_LOCK, strlen(CLAIM_LOCK));
	for (int i = 0; fd >= 0 && i < CLAIM_WAIT_MS; i++) {
		if (!bind(fd, (struct sockaddr *)&a, len))
			return fd;
		if (errno != EADDRINUSE)
			break;
		nanosleep(&ms, NULL);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The registry names a live profiler other than this perch: a pid that is gone, or that now
 * belongs to a process started at another time, owns nothing. */
static bool owned_by_other(const struct regions *rg, const struct perch_abi_registry *r)
{
	uint64_t start;

	if (!r->profiler_pid || r->profiler_pid == rg->me)
		return false;
	if (proc_start_time((pid_t)r->profiler_pid, &start))
		return false;
	return !r->profiler_start || r->profiler_start == start;
}

static int poke_u64(struct rproc *p, size_t off, uint64_t v)
{
	return poke(p->pid, p->addr + off, &v, sizeof(v));
}

/* Make this perch the owner of an attached process's runtime and switch it on, in a new epoch
 * (figures start now); -EBUSY, with p->owner set, when another perch owns it. */
static int claim(struct regions *rg, struct rproc *p)
{
	int lock = claim_lock(), err = 0;

	if (read_registry(p)) {
		err = -errno;
	} else if (owned_by_other(rg, &p->reg)) {
		p->owner = p->reg.profiler_pid;
		err = -EBUSY;
	} else if (poke_u32(p, REG_FIELD(epoch), p->reg.epoch + 1) ||
		   poke_u32(p, REG_FIELD(profiler_pid), rg->me) ||
		   poke_u64(p, REG_FIELD(profiler_start), rg->me_start) ||
		   poke_u32(p, REG_FIELD(collector), PERCH_COLLECT_AT_EXIT) ||
		   poke_u32(p, REG_FIELD(active), 1) || read_registry(p)) {
		err = -errno;
	}
	if (lock >= 0)
		close(lock);
	return err;
}

/* Launched by this perch (PERCH_REGIONS_ACTIVE), or a fork of a process it times. */
static bool launched_here(const struct regions *rg, const struct perch_abi_registry *r)
{
	return r->active && r->collector == PERCH_COLLECT_AT_EXIT && r->profiler_pid == rg->me;
}

static void switch_on(struct regions *rg, struct rproc *p)
{
	int err;

	if (read_registry(p)) {
		if (errno == EPROTO) {
			log_warn("regions: process %u has a region runtime of another perch "
				 "(ABI %u, this perch reads %u): no region figures for it",
				 p->pid, p->reg.version, PERCH_ABI_VERSION);
			p->state = P_DONE;
			return;
		}
		unreadable(rg, p);
		return;
	}
	if (!constructed(&p->reg))
		return; /* mapped, not yet initialized: regions__poll() comes back */
	if (launched_here(rg, &p->reg)) {
		/* The environment named this perch's pid only; the start time makes it certain. */
		poke_u64(p, REG_FIELD(profiler_start), rg->me_start);
	} else {
		p->attached = true;
		err = claim(rg, p);
		if (err == -EBUSY) {
			rg->stats[REGIONS_BUSY]++;
			p->state = P_DONE;
			return;
		}
		if (err) {
			unreadable(rg, p);
			return;
		}
	}
	p->state = P_ON;
	rg->stats[REGIONS_PROCS]++;
	log_debug(
		"regions: process %u: runtime at 0x%" PRIx64 ", tls offset %" PRId64 ", epoch %u%s",
		p->pid, p->addr, p->reg.tls_offset, p->reg.epoch, p->attached ? " (attached)" : "");
}

/* The child has the runtime at the same address; its constructor ran in the parent. */
static void proc_forked(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct regions *rg = ctx;
	struct rproc *pp = slot_of(rg, parent);
	struct rproc *c;

	if (!pp || pp->state == P_DONE)
		return;
	c = add_proc(rg, child, pp->addr);
	if (c)
		switch_on(rg, c);
}

/* ---- reading the trees ------------------------------------------------------------------------- */

static double ns_per_tick(const struct regions *rg, const struct rproc *p)
{
	uint64_t dns, dt;

	if (p->reg.tick_unit == PERCH_TICKS_NS)
		return 1.0;
	/* The TSC against the clock, over at least CALIBRATE_NS (waited for once, if need be). */
	dns = mono_ns() - rg->ns0;
	if (dns < CALIBRATE_NS) {
		struct timespec ts = {0, (long)(CALIBRATE_NS - dns)};

		nanosleep(&ts, NULL);
	}
	dt = tsc() - rg->tsc0;
	dns = mono_ns() - rg->ns0;
	return dt ? (double)dns / (double)dt : 1.0;
}

static int read_names(struct rproc *p)
{
	uint32_t n = p->reg.nnames < PERCH_MAX_NAMES ? p->reg.nnames : PERCH_MAX_NAMES;
	char(*v)[PERCH_NAME_LEN];
	uint32_t *f;

	if (n <= p->nnames)
		return 0;
	if (vec_grow(&p->names, &p->capnames, n, sizeof(*p->names), 16) ||
	    vec_grow(&p->name_strs, &p->capstrs, (size_t)n + 2, sizeof(*p->name_strs), 16))
		return -1;
	v = p->names;
	f = p->name_strs;
	memset(f + (p->nnames ? p->nnames + 2 : 0), 0,
	       ((size_t)n + 2 - (p->nnames ? p->nnames + 2 : 0)) * sizeof(*f));
	if (peek(p->pid, p->reg.names + (uint64_t)p->nnames * PERCH_NAME_LEN, v[p->nnames],
		 (size_t)(n - p->nnames) * PERCH_NAME_LEN))
		return -1;
	for (uint32_t i = p->nnames; i < n; i++)
		v[i][PERCH_NAME_LEN - 1] = '\0';
	p->nnames = n;
	return 0;
}

static const char *name_of(const struct rproc *p, uint32_t id)
{
	if (id == PERCH_NAME_TOO_MANY)
		return "[region names beyond the runtime's table]";
	if (id == PERCH_NAME_OTHER)
		return "[more regions than the runtime keeps]";
	if (!id || id > p->nnames)
		return "[unknown region]";
	return p->names[id - 1][0] ? p->names[id - 1] : REGIONS_EMPTY_NAME;
}

static uint64_t to_ns(uint64_t ticks, double scale)
{
	return (uint64_t)((double)ticks * scale + 0.5);
}

static void convert_node(struct rec_region_node *out, const struct perch_abi_node *in, double scale)
{
	out->calls = in->calls;
	out->total_ns = to_ns(in->total_ticks, scale);
	out->self_ns = to_ns(in->self_ticks, scale);
	out->min_ns = to_ns(in->min_ticks, scale);
	out->max_ns = to_ns(in->max_ticks, scale);
	out->size_sum = in->size_sum;
	out->untimed = in->unmatched;
	out->open = in->open;
	out->sum_ns = to_ns(in->sum_ticks, scale);
}

static void count_limits(struct limits *lim, const struct perch_abi_thread *head,
			 const struct perch_abi_node *nodes, uint32_t n,
			 const struct perch_abi_node *other)
{
	for (uint32_t i = 1; i < n; i++) {
		if (nodes[i].name == PERCH_NAME_TOO_MANY)
			lim->names_over += nodes[i].calls;
	}
	lim->tree_full += other->calls;
	lim->too_deep += head->too_deep;
}

/* The thread block at addr (its head already read) into t, its limits added to lim; false when
 * it is free, of another epoch, unreadable or malformed. */
static bool read_thread(struct regions *rg, struct rproc *p, uint64_t addr,
			const struct perch_abi_thread *head, struct rec_region_thread *t,
			double scale, struct limits *lim)
{
	struct perch_abi_node *nodes = NULL, other;
	uint32_t n = head->nnodes;
	bool ok = false;

	if (head->exited || head->epoch != p->reg.epoch || !n || n > PERCH_NODE_OTHER)
		return false; /* free (its figures are in the tid 0 block), stale, or not a tree */
	nodes = malloc(n * sizeof(*nodes));
	t->nodes = calloc(n + 1, sizeof(*t->nodes));
	if (!nodes || !t->nodes || peek(p->pid, addr + THREAD_HEAD, nodes, n * sizeof(*nodes)) ||
	    peek(p->pid, addr + THREAD_HEAD + PERCH_NODE_OTHER * sizeof(other), &other,
		 sizeof(other)))
		goto out;
	t->pid = p->pid;
	t->tid = head->tid;
	t->mismatches = head->mismatches;
	t->nnodes = n;
	for (uint32_t i = 1; i < n; i++) {
		if (nodes[i].parent >= i || !nodes[i].name)
			goto out; /* not what the runtime writes: leave the thread out */
		t->nodes[i].name = rec_writer__string(rg->w, name_of(p, nodes[i].name));
		t->nodes[i].parent = nodes[i].parent;
		convert_node(&t->nodes[i], &nodes[i], scale);
	}
	if (other.calls || other.open) {
		t->nodes[n].name = rec_writer__string(rg->w, name_of(p, PERCH_NAME_OTHER));
		t->nodes[n].parent = 0;
		convert_node(&t->nodes[n], &other, scale);
		t->nnodes++;
	}
	count_limits(lim, head, nodes, n, &other);
	ok = true;
out:
	free(nodes);
	if (!ok) {
		free(t->nodes);
		t->nodes = NULL;
	}
	return ok;
}

/* Read every thread's tree of p into p->threads; false (the last good read kept) when the
 * process could not be read. */
static bool collect_proc(struct regions *rg, struct rproc *p)
{
	struct perch_abi_thread *head = rg->head;
	struct rec_region_thread *v = NULL;
	double scale = ns_per_tick(rg, p);
	struct limits lim = {0};
	uint64_t addr;
	size_t n = 0, cap = 0;

	if (read_registry(p) || read_names(p))
		return false;
	addr = p->reg.threads;
	for (size_t k = 0; addr && k < MAX_THREADS; k++) {
		struct rec_region_thread t = {0};

		if (peek(p->pid, addr, head, THREAD_HEAD))
			break;
		if (read_thread(rg, p, addr, head, &t, scale, &lim)) {
			if (vec_grow(&v, &cap, n + 1, sizeof(*v), 8)) {
				free(t.nodes);
				break;
			}
			v[n++] = t;
		}
		addr = head->next;
	}
	free_threads(p->threads, p->nthreads);
	p->threads = v;
	p->nthreads = n;
	p->lim = lim;
	return true;
}

/* Write p's last read as a REGIONS block (the last one for each thread wins when loading). */
static void write_proc(struct regions *rg, struct rproc *p)
{
	int err;

	rg->stats[REGIONS_NAMES_OVER] += p->lim.names_over;
	rg->stats[REGIONS_TREE_FULL] += p->lim.tree_full;
	rg->stats[REGIONS_TOO_DEEP] += p->lim.too_deep;
	if (!p->nthreads)
		return;
	err = rec_writer__regions(rg->w, p->threads, p->nthreads);
	if (err)
		log_debug("regions: process %u: %s", p->pid, strerror(-err));
}

/* Switch an attached runtime back off (markers cost a nanosecond again), or release a
 * launched one waiting at exit; either way give up ownership, so another perch may come. */
static void release(struct regions *rg, struct rproc *p)
{
	if (read_registry(p) || p->reg.profiler_pid != rg->me)
		return;
	if (p->attached) {
		poke_u32(p, REG_FIELD(active), 0);
		poke_u32(p, REG_FIELD(collector), 0);
	} else {
		poke_u32(p, REG_FIELD(collector), PERCH_COLLECTED);
	}
	poke_u32(p, REG_FIELD(profiler_pid), 0);
}

void regions__poll(struct regions *rg)
{
	uint32_t exiting;

	for (size_t i = 0; rg && i < procs__count(rg->ps); i++) {
		struct rproc *p = proc_at(rg, i);

		if (!p)
			continue;
		if (p->state == P_PENDING) {
			switch_on(rg, p);
			continue;
		}
		if (p->state != P_ON ||
		    peek(p->pid, p->addr + REG_FIELD(exiting), &exiting, sizeof(exiting)) ||
		    !exiting)
			continue;
		/* The exit handshake: the runtime waits in its destructor for this. */
		if (collect_proc(rg, p))
			write_proc(rg, p);
		p->state = P_DONE;
		poke_u32(p, REG_FIELD(collector), PERCH_COLLECTED);
	}
}

void regions__collect(struct regions *rg)
{
	for (size_t i = 0; rg && i < procs__count(rg->ps); i++) {
		struct rproc *p = proc_at(rg, i);

		if (p && p->state == P_ON)
			collect_proc(rg, p);
	}
}

/* The process exec'd or exited: write what was last read of it and forget it. */
static void proc_gone(void *ctx, struct procs_proc *pp)
{
	struct regions *rg = ctx;
	struct rproc *p = slot_of(rg, pp);
	uint32_t pid = pp->pid;

	if (p)
		p->owner = 0; /* a new image is another perch's no longer */
	if (!p || p->state == P_DONE)
		return;
	if (p->state == P_ON) {
		rg->stats[REGIONS_NO_HANDSHAKE]++;
		write_proc(rg, p);
	}
	p->state = P_DONE;
	bpf_map_delete_elem(rg->procs_fd, &pid);
}

static const struct procs_listener listener = {
	.name = "regions",
	.start = proc_started,
	.fork = proc_forked,
	.exec = proc_gone,
	.mmap = proc_mapped,
	.exit = proc_gone,
	.drop = drop_proc,
	.drop_module = drop_module,
};

void regions__finish(struct regions *rg)
{
	for (size_t i = 0; rg && i < procs__count(rg->ps); i++) {
		struct rproc *p = proc_at(rg, i);

		if (!p || p->state != P_ON)
			continue;
		collect_proc(rg, p);
		write_proc(rg, p);
		release(rg, p);
		p->state = P_DONE;
	}
}

/* ---- region stacks of samples ------------------------------------------------------------------- */

static const struct perch_rstack *get_stack(struct regions *rg, uint64_t hash)
{
	struct perch_rstack st;
	uint64_t idx;

	if (u64map__get(&rg->stack_index, hash, &idx))
		return &rg->stacks[idx];
	if (bpf_map_lookup_elem(rg->stacks_fd, &hash, &st))
		return NULL;
	if (vec_grow(&rg->stacks, &rg->capstacks, rg->nstacks + 1, sizeof(*rg->stacks), 16))
		return NULL;
	if (u64map__put(&rg->stack_index, hash, rg->nstacks))
		return NULL;
	rg->stacks[rg->nstacks] = st;
	return &rg->stacks[rg->nstacks++];
}

/* Where name id's string is cached: by id, and the names beyond the table at 0. */
static uint32_t *string_slot(struct rproc *p, uint32_t id)
{
	if (!p->name_strs || (id > p->nnames && id != PERCH_NAME_TOO_MANY))
		return NULL;
	return &p->name_strs[id == PERCH_NAME_TOO_MANY ? 0 : id];
}

static uint32_t name_string(struct regions *rg, struct rproc *p, uint32_t id)
{
	uint32_t str, *slot;

	if (id > p->nnames && id <= PERCH_MAX_NAMES) {
		read_registry(p);
		read_names(p);
	}
	slot = string_slot(p, id);
	if (slot && *slot)
		return *slot;
	str = rec_writer__string(rg->w, name_of(p, id));
	if (slot)
		*slot = str;
	return str;
}

uint32_t regions__names(struct regions *rg, uint32_t pid, uint64_t hash, uint32_t *out,
			uint32_t max)
{
	const struct perch_rstack *st;
	struct rproc *p;
	uint32_t n, k = 0;

	if (!rg || !hash)
		return 0;
	p = find_proc(rg, pid);
	st = get_stack(rg, hash);
	if (!p || !st)
		return 0;
	n = st->depth < PERCH_REGION_DEPTH ? st->depth : PERCH_REGION_DEPTH;
	for (uint32_t i = 0; i < n && k < max; i++) {
		uint32_t str = name_string(rg, p, st->ids[i]);

		if (str)
			out[k++] = str;
	}
	return k;
}
