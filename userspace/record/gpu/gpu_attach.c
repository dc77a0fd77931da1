// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch record --gpu -p PID` (gpu_attach.h): finds the libcuda.so a process maps, looks its
 * entry points up in the file's dynamic symbol table (one read of the file; two names at one
 * address get one probe, so no call counts twice), attaches the sampler's uprobes to them for
 * that process alone, and writes each call the sampler hands back as a CALL entry of the GPU
 * block, its kernel named from the lookups seen since attach.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/gpu_entries.h"
#include "gpu_attach.h"
#include "lib/elfinit.h"
#include "lib/exitcodes.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "record/proc.h"
#include "record/procs.h"

#define MAX_LOADS 8

/* The name lookups, in enum perch_gpu_namer order. */
static const char *const namers[] = {"cuModuleGetFunction", "cuLibraryGetKernel",
				     "cuKernelGetFunction"};
#define NNAMERS (sizeof(namers) / sizeof(namers[0]))
#define NSYMS	(REC_GPU_NENTRIES + NNAMERS)

/* A libcuda.so probed in a process: a child it forks is probed in it too. */
struct probed {
	uint32_t pid;
	uint64_t file; /* file_key() */
	char *path;    /* as the process's maps name it */
};

struct gpu_attach {
	struct rec_writer *w;
	struct sampler *sp;
	const pid_t *pids; /* the processes attached to (borrowed), after gpu_attach__start() */
	size_t npids;
	struct u64map names;  /* process and handle (handle_key) -> the name's string id */
	struct u64map probed; /* process and file -> 1: never probed twice (an exec keeps them) */
	struct probed *files;
	size_t nfiles, capfiles;
	uint64_t stats[GPU_ATTACH_STAT_NR];
};

/* A symbol's place in the file: where the uprobe goes. */
struct symfile {
	uint64_t off[NSYMS]; /* file offset + 1; 0: not exported */
	struct {
		uint64_t vaddr, offset, filesz;
	} load[MAX_LOADS];
	size_t nloads;
};

static uint64_t handle_key(uint32_t pid, uint64_t handle)
{
	return mix64(pid) ^ handle;
}

static uint64_t file_key(const struct proc_map *m)
{
	return mix64(m->inode ^ m->dev_major << 40 ^ m->dev_minor << 52);
}

static bool is_libcuda(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	return base && !strncmp(base + 1, "libcuda.so", strlen("libcuda.so"));
}

static const char *sym_name(size_t i)
{
	return i < REC_GPU_NENTRIES ? rec_gpu_entries[i].symbol : namers[i - REC_GPU_NENTRIES];
}

static uint64_t file_offset(const struct symfile *sf, uint64_t vaddr)
{
	for (size_t i = 0; i < sf->nloads; i++) {
		if (vaddr >= sf->load[i].vaddr && vaddr < sf->load[i].vaddr + sf->load[i].filesz)
			return vaddr - sf->load[i].vaddr + sf->load[i].offset + 1;
	}
	return 0;
}

/* A defined function of the dynamic symbol table that is one of ours. */
static void match_symbol(struct symfile *sf, Elf *e, const GElf_Shdr *sh, const GElf_Sym *sym)
{
	const char *name;

	if (sym->st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym->st_info) != STT_FUNC)
		return;
	name = elf_strptr(e, sh->sh_link, sym->st_name);
	for (size_t i = 0; name && i < NSYMS; i++) {
		if (!sf->off[i] && !strcmp(name, sym_name(i))) {
			sf->off[i] = file_offset(sf, sym->st_value);
			return;
		}
	}
}

static void read_dynsym(struct symfile *sf, Elf *e)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !data || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, (int)i, &sym))
				match_symbol(sf, e, &sh, &sym);
		}
	}
}

/* The file offsets of our symbols in the ELF file at path. 0 or -errno. */
static int read_symbols(const char *path, struct symfile *sf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOEXEC;
	Elf *e = NULL;
	size_t n;

	if (fd < 0)
		return -errno;
	if (perch_elf_init())
		goto out;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n))
		goto out;
	for (size_t i = 0; i < n && sf->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		sf->load[sf->nloads].vaddr = ph.p_vaddr;
		sf->load[sf->nloads].offset = ph.p_offset;
		sf->load[sf->nloads++].filesz = ph.p_filesz;
	}
	read_dynsym(sf, e);
	err = 0;
out:
	elf_end(e);
	close(fd);
	return err;
}

static int note(struct gpu_attach *ga, const char *text)
{
	struct rec_gpu e = {.kind = REC_GPU_NOTE, .name = rec_writer__string(ga->w, text)};

	return e.name ? rec_writer__gpu(ga->w, &e) : -ENOMEM;
}

/* Another offset among the symbols before i: an alias, probed once already. */
static bool probed_before(const struct symfile *sf, size_t i)
{
	for (size_t j = 0; j < i; j++) {
		if (sf->off[j] == sf->off[i])
			return true;
	}
	return false;
}

/* Every exported symbol of ours: probes attached, or -errno with the symbol that failed. */
static int attach_all(struct gpu_attach *ga, pid_t pid, const char *path, const struct symfile *sf,
		      size_t *probes, size_t *failed)
{
	int err;

	*probes = 0;
	for (size_t i = 0; i < NSYMS; i++) {
		bool namer = i >= REC_GPU_NENTRIES;

		if (!sf->off[i] || probed_before(sf, i))
			continue;
		err = sampler__probe_gpu(ga->sp, pid, path, sf->off[i] - 1, namer,
					 namer ? (uint32_t)(i - REC_GPU_NENTRIES) : (uint32_t)i);
		if (err) {
			*failed = i;
			return err;
		}
		*probes += namer ? 2 : 1;
	}
	return 0;
}

static int no_gpu(struct gpu_attach *ga, pid_t pid, const char *why)
{
	char text[PATH_MAX + 160];

	ga->stats[GPU_ATTACH_NO_LIBCUDA]++;
	snprintf(text, sizeof(text), "no GPU data for process %d: %s", (int)pid, why);
	log_debug("gpu: %s", text);
	return note(ga, text);
}

static int remember(struct gpu_attach *ga, uint32_t pid, uint64_t file, const char *path)
{
	char *copy = strdup(path);

	if (!copy || vec_grow(&ga->files, &ga->capfiles, ga->nfiles + 1, sizeof(*ga->files), 4) ||
	    u64map__put(&ga->probed, mix64(pid) ^ file, 1)) {
		free(copy);
		return -ENOMEM;
	}
	ga->files[ga->nfiles++] = (struct probed){pid, file, copy};
	return 0;
}

/* The libcuda.so at map_path (as pid's maps name it) probed for pid, once: the file as pid sees
 * it (through /proc/PID/root: its mount namespace). A failure is one note. 0 or -ENOMEM. */
static int probe_file(struct gpu_attach *ga, uint32_t pid, uint64_t file, const char *map_path)
{
	struct symfile sf = {0};
	char path[PATH_MAX], why[PATH_MAX + 96];
	size_t probes = 0, failed = 0;
	uint64_t seen;
	int err;

	if (u64map__get(&ga->probed, mix64(pid) ^ file, &seen))
		return 0;
	if (remember(ga, pid, file, map_path))
		return -ENOMEM;
	if (snprintf(path, sizeof(path), "/proc/%u/root%s", pid, map_path) >= (int)sizeof(path))
		return no_gpu(ga, pid, "the path of its libcuda.so is too long");
	err = read_symbols(path, &sf);
	if (!err)
		err = attach_all(ga, pid, path, &sf, &probes, &failed);
	if (err) {
		snprintf(why, sizeof(why), "uprobe on %s in %s: %s", sym_name(failed), path,
			 strerror(-err));
		return no_gpu(ga, pid, why);
	}
	if (!probes)
		return no_gpu(ga, pid,
			      "its libcuda.so exports none of the launch, copy or memset "
			      "entry points perch probes");
	ga->stats[GPU_ATTACH_PROCESSES]++;
	ga->stats[GPU_ATTACH_PROBES] += probes;
	log_debug("gpu: process %u: %zu uprobes on %s", pid, probes, path);
	return 0;
}

/* A process attached to: its libcuda.so now, or (none yet) the one it maps later (on_mmap). */
static int probe_process(struct gpu_attach *ga, pid_t pid)
{
	struct proc_maps *maps = proc_maps__read(pid);
	int err = 0;
	bool found = false;

	for (size_t i = 0; maps && i < proc_maps__count(maps) && !err; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (!is_libcuda(m->path))
			continue;
		found = true;
		err = probe_file(ga, (uint32_t)pid, file_key(m), m->path);
	}
	proc_maps__free(maps);
	if (!found)
		log_debug("gpu: process %d maps no libcuda.so yet: probed when it maps one",
			  (int)pid);
	return err;
}

int gpu_attach__start(struct gpu_attach *ga, const pid_t *pids, size_t npids)
{
	int err = 0;

	ga->pids = pids;
	ga->npids = npids;
	for (size_t i = 0; i < npids && !err; i++)
		err = probe_process(ga, pids[i]);
	return err;
}

/* A target mapped a libcuda.so after perch started probing (dlopen, or an exec). */
static void on_mmap(void *ctx, struct procs_proc *p, const struct proc_map *m,
		    struct procs_module *mod)
{
	struct gpu_attach *ga = ctx;

	(void)mod;
	if (ga->pids && is_libcuda(m->path) && probe_file(ga, p->pid, file_key(m), m->path))
		log_warn("gpu: process %u: %s", p->pid, strerror(ENOMEM));
}

/* A child of a probed process runs its libcuda.so with no mmap event of its own: probe it too
 * (the probes are for one process each). */
static void on_fork(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	struct gpu_attach *ga = ctx;

	for (size_t i = 0, n = ga->nfiles; i < n; i++) {
		if (ga->files[i].pid == parent->pid &&
		    probe_file(ga, child->pid, ga->files[i].file, ga->files[i].path))
			log_warn("gpu: process %u: %s", child->pid, strerror(ENOMEM));
	}
}

void gpu_attach__finish(struct gpu_attach *ga)
{
	for (size_t i = 0; ga && i < ga->npids; i++) {
		bool probed = false;

		for (size_t j = 0; j < ga->nfiles && !probed; j++)
			probed = ga->files[j].pid == (uint32_t)ga->pids[i];
		if (!probed)
			no_gpu(ga, ga->pids[i],
			       "it never mapped libcuda.so while perch watched (no CUDA driver "
			       "loaded, or none on this machine)");
	}
	if (ga)
		ga->npids = 0;
}

/* A call of a launch, copy or memset entry point, with its stack's key id. */
static void on_call(void *ctx, const struct perch_gpu_call *c, uint32_t key)
{
	struct gpu_attach *ga = ctx;
	const struct rec_gpu_entry *en;
	struct rec_gpu e = {.kind = REC_GPU_CALL};
	uint64_t name = 0;

	if (key == SAMPLER_NO_KEY || c->entry >= REC_GPU_NENTRIES)
		return; /* counted lost by the sampler */
	en = &rec_gpu_entries[c->entry];
	e.start_ns = e.end_ns = e.launch_ns = c->time_ns;
	e.detail = key;
	e.correlation = c->entry;
	e.flags = en->class;
	e.stream = en->dir;
	e.pid = c->key.tgid;
	e.tid = c->key.tid;
	e.bytes = c->args[en->arg] * (en->arg2 >= 0 ? c->args[en->arg2] : 1) * en->elem;
	if (en->class == REC_GPU_F_LAUNCH) {
		e.bytes = c->args[en->arg]; /* the CUfunction handle */
		if (u64map__get(&ga->names, handle_key(e.pid, e.bytes), &name))
			e.name = (uint32_t)name;
		else
			ga->stats[GPU_ATTACH_UNNAMED]++;
	}
	if (!rec_writer__gpu(ga->w, &e))
		ga->stats[GPU_ATTACH_CALLS]++;
}

/* A name lookup returned: its handle named (cuKernelGetFunction: as its CUkernel is). */
static void on_name(void *ctx, const struct perch_gpu_name *n)
{
	struct gpu_attach *ga = ctx;
	char name[PERCH_GPU_NAME_MAX];
	uint64_t id = 0;

	if (n->result || !n->handle)
		return; /* the lookup failed: no handle */
	if (n->namer == PERCH_GPU_NAMER_KERNEL) {
		if (!u64map__get(&ga->names, handle_key(n->tgid, n->kernel), &id))
			return;
	} else {
		memcpy(name, n->name, sizeof(name));
		name[n->len < sizeof(name) ? n->len : sizeof(name) - 1] = '\0';
		id = rec_writer__string(ga->w, name);
	}
	if (id && !u64map__put(&ga->names, handle_key(n->tgid, n->handle), id))
		ga->stats[GPU_ATTACH_NAMES]++;
}

struct gpu_attach *gpu_attach__new(struct rec_writer *w, struct sampler *sp, struct procs *ps,
				   int *exit_code)
{
	struct gpu_attach *ga = calloc(1, sizeof(*ga));
	struct procs_listener l = {.name = "gpu-attach", .mmap = on_mmap, .fork = on_fork};

	*exit_code = 0;
	if (!ga)
		return NULL;
	ga->w = w;
	ga->sp = sp;
	l.ctx = ga;
	if (procs__listen(ps, &l) < 0) {
		free(ga);
		errno = ENOSPC;
		return NULL;
	}
	*exit_code = sampler__gpu_calls(sp, on_call, on_name, ga);
	if (*exit_code) {
		free(ga);
		return NULL;
	}
	return ga;
}

void gpu_attach__free(struct gpu_attach *ga)
{
	if (!ga)
		return;
	for (size_t i = 0; i < ga->nfiles; i++)
		free(ga->files[i].path);
	free(ga->files);
	u64map__clear(&ga->names);
	u64map__clear(&ga->probed);
	free(ga);
}

void gpu_attach__poll(struct gpu_attach *ga)
{
	if (ga)
		sampler__poll_gpu_calls(ga->sp);
}

uint64_t gpu_attach__stat(const struct gpu_attach *ga, enum gpu_attach_stat i)
{
	return ga && i < GPU_ATTACH_STAT_NR ? ga->stats[i] : 0;
}
