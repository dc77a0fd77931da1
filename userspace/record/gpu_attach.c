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
#include "lib/elfinit.h"
#include "lib/exitcodes.h"
#include "lib/hash.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "gpu_attach.h"
#include "proc.h"

#define MAX_LOADS 8

/* The name lookups, in enum perch_gpu_namer order. */
static const char *const namers[] = {"cuModuleGetFunction", "cuLibraryGetKernel",
				     "cuKernelGetFunction"};
#define NNAMERS (sizeof(namers) / sizeof(namers[0]))
#define NSYMS	(REC_GPU_NENTRIES + NNAMERS)

struct gpu_attach {
	struct rec_writer *w;
	struct sampler *sp;
	struct u64map names; /* process and handle (handle_key) -> the name's string id */
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

/* The libcuda.so pid maps, as pid sees it (through /proc/PID/root: its mount namespace). */
static int find_libcuda(pid_t pid, char *path, size_t len)
{
	struct proc_maps *maps = proc_maps__read(pid);
	int err = -ENOENT;

	if (!maps)
		return -errno;
	for (size_t i = 0; i < proc_maps__count(maps) && err; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);
		const char *base = m->path ? strrchr(m->path, '/') : NULL;

		if (!base || strncmp(base + 1, "libcuda.so", strlen("libcuda.so")))
			continue;
		if (snprintf(path, len, "/proc/%d/root%s", (int)pid, m->path) < (int)len)
			err = 0;
	}
	proc_maps__free(maps);
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

int gpu_attach__process(struct gpu_attach *ga, pid_t pid)
{
	struct symfile sf = {0};
	char path[PATH_MAX], why[PATH_MAX + 96];
	size_t probes = 0, failed = 0;
	int err = find_libcuda(pid, path, sizeof(path));

	if (err)
		return no_gpu(ga, pid,
			      "it does not map libcuda.so (no CUDA driver loaded yet, or none on "
			      "this machine)");
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
	log_debug("gpu: process %d: %zu uprobes on %s", (int)pid, probes, path);
	return 0;
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

struct gpu_attach *gpu_attach__new(struct rec_writer *w, struct sampler *sp, int *exit_code)
{
	struct gpu_attach *ga = calloc(1, sizeof(*ga));

	*exit_code = 0;
	if (!ga)
		return NULL;
	ga->w = w;
	ga->sp = sp;
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
	u64map__clear(&ga->names);
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
