// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The collector: raw addresses in, recording samples out (see collect.h). A listener on the
 * process table (procs.h): each process's exec images (mappings, frame caches) and JIT map live
 * in its collector slot; the kernel symbol table is the collector's own. Each address is
 * symbolized once per image; each process's mappings are read while it is alive, and a forked
 * child that never called exec borrows its parent's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <unistd.h>
#include "collect_impl.h"
#include "lib/log.h"
#include "lib/u64map.h"
#include "lib/vec.h"
#include "record/cachedir.h"
#include "record/linecache.h"
#include "record/proc.h"
#include "record/procs.h"
#include "symbolize/kdyn.h"
#include "symbolize/ksyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolizer.h"

static const struct procs_listener listener;

struct collector *collector__new(struct rec_writer *w, unsigned int max_stack, struct procs *ps)
{
	struct collector *c = calloc(1, sizeof(*c));
	struct procs_listener l = listener;
	int err;

	if (!c)
		return NULL;
	c->w = w;
	c->max_stack = max_stack;
	c->ps = ps;
	perfmap_budget__init(&c->jit_budget, PERFMAP_TOTAL_BYTES);
	c->sym = symbolizer__new();
	l.ctx = c;
	c->id = c->sym ? procs__listen(ps, &l) : -ENOMEM;
	if (c->id < 0) {
		err = c->id;
		collector__free(c);
		errno = -err;
		return NULL;
	}
	/* Names are stored as the binary spells them; reports demangle (or not, --no-demangle). */
	symbolizer__set_demangle(c->sym, false);
	c->kernel_str = rec_writer__string(w, "[kernel]");
	c->bpf_str = rec_writer__string(w, "[bpf]");
	c->unknown_str = rec_writer__string(w, "[unknown]");
	return c;
}

static void image_free(struct image *img)
{
	if (!img)
		return;
	proc_maps__free(img->maps);
	u64map__clear(&img->frames);
	u64map__clear(&img->leaf);
	u64map__clear(&img->ret_ok);
	free(img);
}

static void proc_free(void *ctx, void *slot)
{
	struct collector *c = ctx;
	struct proc *p = slot;

	if (!p)
		return;
	for (size_t i = 0; i < p->nimgs; i++)
		image_free(p->imgs[i]);
	free(p->imgs);
	perfmap__release(&c->jit_budget, p->jit);
	free(p->unnamed);
	if (p->root_fd >= 0)
		close(p->root_fd);
	free(p);
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	u64map__clear(&c->kframes);
	u64map__clear(&c->threads);
	u64map__clear(&c->lines_done);
	u64map__clear(&c->jit_waiting);
	linecache__free(c->lc); /* writes what this run resolved */
	symbolizer__free(c->sym);
	ksyms__free(c->ksyms);
	free(c->frames);
	free(c->execd);
	free(c);
}

uint64_t collector__stat(const struct collector *c, enum collect_stat which)
{
	return which < COLLECT_STAT_MAX ? c->stats[which] : 0;
}

/* Our state of a process in the table, NULL if none yet. */
static struct proc *slot_of(const struct collector *c, struct procs_proc *pp)
{
	return pp ? *procs__slot(pp, c->id) : NULL;
}

static struct proc *find_proc(const struct collector *c, uint32_t pid)
{
	return slot_of(c, procs__find(c->ps, pid));
}

/* Made if none; NULL only out of memory. */
static struct proc *proc_of(struct collector *c, struct procs_proc *pp)
{
	struct proc **slot;

	if (!pp)
		return NULL;
	slot = (struct proc **)procs__slot(pp, c->id);
	if (*slot)
		return *slot;
	*slot = calloc(1, sizeof(**slot));
	if (*slot) {
		(*slot)->pp = pp;
		(*slot)->root_fd = -1;
	}
	return *slot;
}

static struct proc *get_proc(struct collector *c, uint32_t pid)
{
	return proc_of(c, procs__get(c->ps, pid));
}

/* The image of generation gen, or NULL. */
static struct image *image_find(const struct proc *p, uint32_t gen)
{
	for (size_t i = p->nimgs; i-- > 0;)
		if (p->imgs[i]->gen == gen)
			return p->imgs[i];
	return NULL;
}

/* A new image of generation gen (none may exist yet), kept in generation order. */
static struct image *image_add(struct proc *p, uint32_t gen)
{
	struct image *img;
	size_t i;

	if (vec_grow(&p->imgs, &p->capimgs, p->nimgs + 1, sizeof(*p->imgs), 4))
		return NULL;
	img = calloc(1, sizeof(*img));
	if (!img)
		return NULL;
	img->p = p;
	img->gen = gen;
	for (i = p->nimgs; i > 0 && p->imgs[i - 1]->gen > gen; i--)
		p->imgs[i] = p->imgs[i - 1];
	p->imgs[i] = img;
	p->nimgs++;
	return img;
}

static void read_maps(struct image *img)
{
	struct proc_maps *m = proc_maps__read(img->p->pp->pid);

	if (!m) {
		img->maps_failed = true;
		return;
	}
	proc_maps__free(img->maps);
	img->maps = m;
	img->maps_failed = false;
}

/* Read /proc/PID/maps again for an address the known mappings lack (a dlopen since the last
 * look), adding only ranges nothing known covers: a process that has exited but whose exit event
 * is not drained yet reads as empty (a zombie), and one that exec'd since reads as its next
 * image; neither may replace what the samples still waiting in the buffers were taken in. */
static void reread_maps(struct image *img)
{
	struct proc_maps *m = proc_maps__read(img->p->pp->pid);
	size_t i;

	if (!m)
		return;
	for (i = 0; i < proc_maps__count(m); i++) {
		const struct proc_map *add = proc_maps__get(m, i);

		if (!proc_maps__find(img->maps, add->start) &&
		    !proc_maps__find(img->maps, add->end - 1) && proc_maps__add(img->maps, add))
			break;
	}
	proc_maps__free(m);
}

/*
 * The image samples of generation gen were taken in. The newest one (or a newer one the events
 * have not told of yet) is what /proc shows; an older one that is gone (freed after its drain,
 * or from before perch watched) is an empty image whose addresses stay unresolved. NULL only
 * when out of memory.
 */
static struct image *image_for(struct proc *p, uint32_t gen)
{
	struct image *img = image_find(p, gen);

	if (img)
		return img;
	img = image_add(p, gen);
	if (img && gen < p->pp->gen)
		img->maps_failed = true;
	return img;
}

/* pp is forgotten (procs__sweep()): out of the list of processes with old images. */
static void proc_forget(void *ctx, struct procs_proc *pp)
{
	struct collector *c = ctx;
	struct proc *p = slot_of(c, pp);
	size_t kept = 0;

	if (!p || !p->execd)
		return;
	for (size_t i = 0; i < c->nexecd; i++)
		if (c->execd[i] != p)
			c->execd[kept++] = c->execd[i];
	c->nexecd = kept;
}

/* What naming JIT code needs, taken while the process lives: its root, held open so the map is
 * found after it exits (a JIT may write it at exit), its pid as the JIT sees it, its uid. */
static void jit_context(struct proc *p)
{
	char path[64];
	int fd;

	if (p->root_fd >= 0 || p->pp->exited)
		return;
	snprintf(path, sizeof(path), "/proc/%u/root", p->pp->pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (proc_ns_ids((pid_t)p->pp->pid, &p->nspid, &p->uid)) {
		close(fd);
		return;
	}
	p->root_fd = fd;
}

/* The process's control group when it names a container (the first line of /proc/PID/cgroup
 * whose path holds a container id), into the recording's CGROUPS, once per process; looked at
 * when it starts and at each exec until found (a runtime moves a process into the container's
 * group before it execs the container's program). The path is what a cgroup's creator named
 * it: bounded here, only its hex id is ever shown. */
static void note_cgroup(struct collector *c, struct proc *p)
{
	char buf[4096], id[65];
	uint32_t s;

	if (p->cgroup_read || p->pp->exited)
		return;
	if (proc_read_cgroup((pid_t)p->pp->pid, buf, sizeof(buf)) <= 0)
		return;
	for (char *line = buf, *next; line && *line; line = next) {
		char *path = strchr(line, ':');

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		path = path ? strchr(path + 1, ':') : NULL;
		if (!path || !rec_container_id(path + 1, id))
			continue;
		s = rec_writer__string(c->w, path + 1);
		if (s)
			rec_writer__cgroup(c->w, p->pp->pid, s);
		p->cgroup_read = true;
		return;
	}
}

static void note_capped(struct collector *c, struct proc *p)
{
	if (!p->jit || !perfmap__unread(p->jit) || p->jit_capped)
		return;
	p->jit_capped = true;
	c->stats[COLLECT_JIT_CAPPED]++;
	if (perfmap__over_budget(p->jit)) {
		if (!c->jit_budget_said)
			log_warn(
				"pid %u: JIT map /tmp/perf-%u.map read in part: the %u MiB all JIT "
				"maps may hold together is spent (later maps likewise, counted)",
				p->pp->pid, p->nspid, PERFMAP_TOTAL_BYTES >> 20);
		c->jit_budget_said = true;
		return;
	}
	log_warn("pid %u: JIT map /tmp/perf-%u.map is over %u MiB: its first %u MiB read, %llu "
		 "bytes left out",
		 p->pp->pid, p->nspid, PERFMAP_MAX_BYTES >> 20, PERFMAP_MAX_BYTES >> 20,
		 (unsigned long long)perfmap__unread(p->jit));
}

/* (Re)read the process's perf map, inside its own root (a JIT in a container writes to its own
 * /tmp), when it changed size since the last read. Never a symlink, never a file another user
 * owns: the map's contents go into the recording. All maps share one budget (held at once, and
 * read per drain); a map is read at most once a drain, unless final (the process exited, or the
 * run ends: the last word). */
static void jit_load(struct collector *c, struct proc *p, bool final)
{
	char path[64];
	struct stat st;

	jit_context(p);
	if (p->root_fd < 0 || (!final && p->jit_drain == c->drains + 1))
		return;
	snprintf(path, sizeof(path), "tmp/perf-%u.map", p->nspid);
	if (fstatat(p->root_fd, path, &st, AT_SYMLINK_NOFOLLOW) || st.st_size == p->jit_size)
		return;
	if (!final && !perfmap_budget__may_read(&c->jit_budget, (uint64_t)st.st_size))
		return; /* read later: the budget refills a drain at a time */
	p->jit_drain = c->drains + 1;
	perfmap__release(&c->jit_budget, p->jit);
	p->jit = perfmap__load_within(p->root_fd, path, p->uid, &c->jit_budget);
	p->jit_size = p->jit ? st.st_size : -1;
	if (!p->jit && errno != ENOENT)
		log_debug("pid %u: JIT map /tmp/perf-%u.map not read: %s", p->pp->pid, p->nspid,
			  strerror(errno));
	note_capped(c, p);
}

/* Code a JIT generated: named by the perf map the process writes (perf's convention). */
const char *collect_jit_name(struct collector *c, struct proc *p, uint64_t addr, uint64_t *start)
{
	const char *name = p->jit ? perfmap__find(p->jit, addr, start) : NULL;

	if (name)
		return name;
	jit_load(c, p, false);
	return p->jit ? perfmap__find(p->jit, addr, start) : NULL;
}

static void note_unnamed_jit(struct collector *c, struct proc *p, uint32_t frame, uint64_t lookup)
{
	uint64_t one;

	if (frame == UINT32_MAX || u64map__get(&c->jit_waiting, frame, &one) ||
	    vec_grow(&p->unnamed, &p->capunnamed, p->nunnamed + 1, sizeof(*p->unnamed), 16) ||
	    u64map__put(&c->jit_waiting, frame, 1))
		return;
	p->unnamed[p->nunnamed++] = (struct jit_unnamed){frame, lookup};
}

/*
 * Name the JIT frames written without a name, from the map as it is now: a JIT may write its
 * map late, or only as it exits (java -XX:+DumpPerfMapAtExit). Frames are immutable once written;
 * a LINES definition of the frame (the function alone, no file) names it in every report, as
 * a stripped binary's frame is named from its debug file.
 */
static void rename_jit_frames(struct collector *c, struct proc *p, bool final)
{
	size_t keep = 0;

	if (!p->nunnamed)
		return;
	jit_load(c, p, final);
	for (size_t i = 0; i < p->nunnamed; i++) {
		const struct jit_unnamed *u = &p->unnamed[i];
		const char *name = p->jit ? perfmap__find(p->jit, u->lookup, NULL) : NULL;
		struct rec_line l = {.function = name ? rec_writer__string(c->w, name) : 0};

		if (!l.function || rec_writer__lines(c->w, u->frame, &l, 1)) {
			p->unnamed[keep++] = *u;
			continue;
		}
		c->stats[COLLECT_UNNAMED]--;
		c->stats[COLLECT_JIT_LATE]++;
	}
	p->nunnamed = keep;
}

void collector__finish(struct collector *c)
{
	for (size_t i = 0; i < procs__count(c->ps); i++) {
		struct proc *p = slot_of(c, procs__at(c->ps, i));

		if (p)
			rename_jit_frames(c, p, true);
	}
}

/* Its mappings now (attached, or a launched command's before its exec: perch's own), so a
 * process that dies before the first drain still resolves. */
static char *pin_path(uint32_t pid, const struct proc_map *m);

/* A started process's mappings, each file opened by its own path where that still names it, as
 * an mmap event's are (pin_path()): one that exits before the drain that names its frames (with
 * -a, a drain can come late) still resolves. NULL + errno. */
static struct proc_maps *pinned_copy(uint32_t pid, const struct proc_maps *maps)
{
	struct proc_maps *copy = proc_maps__new();

	for (size_t i = 0; copy && i < proc_maps__count(maps); i++) {
		struct proc_map m = *proc_maps__get(maps, i);
		char *pinned = m.path[0] == '/' ? pin_path(pid, &m) : NULL;
		int err;

		if (pinned)
			m.open_path = pinned;
		err = proc_maps__add(copy, &m);
		free(pinned);
		if (err) {
			proc_maps__free(copy);
			errno = -err;
			return NULL;
		}
	}
	return copy;
}

static int proc_started(void *ctx, struct procs_proc *pp, const struct proc_maps *maps,
			const char *exe)
{
	struct collector *c = ctx;
	struct proc *p = proc_of(c, pp);
	struct image *img = p ? image_for(p, p->pp->gen) : NULL;
	struct proc_maps *copy = maps ? pinned_copy(pp->pid, maps) : NULL;

	(void)exe;
	if (img && copy) {
		proc_maps__free(img->maps);
		img->maps = copy;
		img->maps_failed = false;
	} else {
		proc_maps__free(copy);
		if (img)
			img->maps_failed = true;
	}
	if (p) {
		jit_context(p);
		note_cgroup(c, p);
	}
	return 0;
}

/* A forked child borrows its parent's image (collect_find_map()). */
static void proc_forked(void *ctx, struct procs_proc *parent, struct procs_proc *child)
{
	(void)parent;
	proc_of(ctx, child);
}

/* The last word: a JIT may write its map as it exits. */
static void proc_exited(void *ctx, struct procs_proc *pp)
{
	struct collector *c = ctx;
	struct proc *p = proc_of(c, pp);

	if (!p || p->root_fd < 0)
		return;
	jit_load(c, p, true);
	rename_jit_frames(c, p, true);
	close(p->root_fd);
	p->root_fd = -1;
}

void collector__set_kernel_syms(struct collector *c, const struct kdyn *k)
{
	c->kdyn = k;
}

void collector__set_lines(struct collector *c, bool on)
{
	c->lines = on;
}

/* Its mappings start over (in order with proc_mapped()), in the new exec generation. */
static void proc_execd(void *ctx, struct procs_proc *pp)
{
	struct collector *c = ctx;
	struct proc *p = proc_of(c, pp);
	struct image *img;

	if (!p)
		return;
	if (!p->execd && !vec_grow(&c->execd, &c->capexecd, c->nexecd + 1, sizeof(*c->execd), 16)) {
		c->execd[c->nexecd++] = p;
		p->execd = true;
	}
	jit_context(p);
	note_cgroup(c, p);
	img = image_find(p, p->pp->gen) ?: image_add(p, p->pp->gen);
	if (img && !img->maps)
		img->maps = proc_maps__new();
}

/* A drain's look at a process that exec'd: the images older than the generation the last look
 * saw are freed (no sample of them is left to resolve), and the one before this exec is kept
 * until the next look. Whether it needs that next look. */
static bool drained_proc(struct proc *p)
{
	bool again = p->keep_from != p->pp->gen;
	size_t n = 0;

	while (n < p->nimgs && p->imgs[n]->gen < p->keep_from)
		image_free(p->imgs[n++]);
	p->keep_from = p->pp->gen;
	if (n) { /* imgs may be NULL: a process known from its events only */
		memmove(p->imgs, p->imgs + n, (p->nimgs - n) * sizeof(*p->imgs));
		p->nimgs -= n;
	}
	return again;
}

void collector__drained(struct collector *c)
{
	size_t kept = 0;

	c->drains++;
	perfmap_budget__refill(&c->jit_budget);
	for (size_t i = 0; i < c->nexecd; i++) {
		struct proc *p = c->execd[i];

		p->execd = drained_proc(p);
		if (p->execd)
			c->execd[kept++] = p;
	}
	c->nexecd = kept;
}

/* What perch can open for a mapping now: the path itself when it still names the mapped file
 * (no race with the process exiting), else /proc/PID/map_files while the process lives (another
 * mount namespace, a deleted or replaced file). */
static char *pin_path(uint32_t pid, const struct proc_map *m)
{
	struct stat st;
	char *path = NULL;

	if (m->path[0] == '/' && stat(m->path, &st) == 0 && st.st_ino == m->inode &&
	    major(st.st_dev) == m->dev_major && minor(st.st_dev) == m->dev_minor)
		return strdup(m->path);
	if (kill(pid, 0) == 0 &&
	    asprintf(&path, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)m->start,
		     (unsigned long long)m->end) < 0)
		return NULL;
	return path;
}

/* The symbolizer's module for a file mapping (the one place its id is built); NULL for anonymous
 * and special mappings and for files that cannot be read. */
struct sym_module *collect_map_module(struct collector *c, const struct proc_map *m)
{
	struct sym_module_id mid = {makedev(m->dev_major, m->dev_minor), m->inode, m->path};
	struct sym_module *mod;

	if (!m->open_path || symbolizer__module(c->sym, &mid, m->open_path, &mod))
		return NULL;
	return mod;
}

/* The process mapped a file executable. Pins the file (opens and indexes it) at once, so it
 * resolves after the process is gone. */
static void proc_mapped(void *ctx, struct procs_proc *pp, const struct proc_map *map,
			struct procs_module *mod)
{
	struct collector *c = ctx;
	uint32_t pid = pp->pid;
	struct proc *p = proc_of(c, pp);
	struct image *img = p ? image_for(p, p->pp->gen) : NULL;
	struct proc_map m = *map;

	(void)mod; /* the symbolizer keeps its own modules: it serves `perch symbolize` too */
	if (!img || (!img->maps && !(img->maps = proc_maps__new())))
		return;
	/* The kernel names anonymous executable memory (JIT code) "//anon". */
	if (!strncmp(m.path, "//anon", 6))
		m.path = "";
	if (m.path[0] == '/')
		m.open_path = pin_path(pid, &m);
	else
		m.open_path = proc_vdso_path(m.path) ? strdup(proc_vdso_path(m.path)) : NULL;
	/* Pin the file: the module keeps it open after the process unmaps it or exits. */
	if (proc_maps__add(img->maps, &m) == 0)
		collect_map_module(c, &m);
	free(m.open_path);
	img->maps_failed = false;
	/* Addresses in the new range may mean something else now. */
	u64map__clear(&img->frames);
	u64map__clear(&img->leaf);
	u64map__clear(&img->ret_ok);
}

/* The mapping that holds addr in the image, reading /proc/PID/maps as needed; a forked child's
 * first image is its parent's until it maps something of its own. */
const struct proc_map *collect_find_map(struct collector *c, struct image *img, uint64_t addr)
{
	const struct proc_map *m;

	for (int depth = 0; img && depth < 64; depth++) {
		struct proc *p = img->p, *parent;
		struct image *next;
		bool newest = img->gen >= p->pp->gen;

		if (!img->maps && !img->maps_failed && newest)
			read_maps(img);
		m = img->maps ? proc_maps__find(img->maps, addr) : NULL;
		/* Mapped since we looked (dlopen)? Once a drain: every address no mapping holds
		 * (a stale frame, JIT code) re-parsing /proc/PID/maps stalled `record -a`'s drains
		 * for seconds, and the full stack maps then lost ticks. */
		if (!m && img->maps && newest && !p->pp->exited &&
		    img->reread_at != c->drains + 1) {
			img->reread_at = c->drains + 1;
			reread_maps(img);
			m = proc_maps__find(img->maps, addr);
		}
		/* A tick inside exec, after the new image is mapped and before the sampler hears
		 * of the exec, has the old generation and the new image's entry point. */
		if (!m && (next = image_find(p, img->gen + 1)) && next->maps)
			m = proc_maps__find(next->maps, addr);
		if (m)
			return m;
		if (img->gen || !p->pp->forked || !(parent = find_proc(c, p->pp->ppid)))
			return NULL;
		img = image_for(parent, p->pp->parent_gen);
	}
	return NULL;
}

static uint32_t module_string(struct collector *c, const struct proc_map *m)
{
	const char *slash;

	if (!m)
		return c->unknown_str;
	/* Keep the full path: two libraries may share a base name. */
	slash = m->path[0] ? m->path : "[anon]";
	return rec_writer__string(c->w, slash);
}

#define MAX_INLINE 32

/* Source lines and the inline chain of a new frame, from the module's DWARF (found in the
 * binary or its separate debug file), written once per frame. Returns the out-of-line function's
 * name when the symbol table had none (a stripped binary with a debug file), else 0. */
static uint32_t frame_lines(struct collector *c, struct sym_module *mod, uint64_t lookup,
			    uint32_t frame)
{
	struct sym_frame chain[MAX_INLINE];
	const struct sym_frame *from, *cached;
	struct rec_line lines[MAX_INLINE];
	const char *build_id = NULL;
	uint64_t done;
	size_t n = 0;
	int err;

	if (frame == UINT32_MAX || u64map__get(&c->lines_done, frame, &done))
		return 0;
	u64map__put(&c->lines_done, frame, 1);
	if (!c->lc_tried) {
		char *debug = cachedir__path("debug");

		if (debug)
			symbolizer__set_debug_cache(c->sym, debug);
		free(debug);
		c->lc = linecache__new(NULL);
		c->lc_tried = true;
	}
	if (!mod)
		return 0;
	if (c->lc && sym_module__build_id(mod, &build_id))
		build_id = NULL;
	if (build_id && linecache__get(c->lc, build_id, lookup, &cached, &n)) {
		from = cached;
	} else {
		err = sym_module__resolve_inline(mod, lookup, chain, MAX_INLINE, &n);
		if (err && err != -ENOSPC)
			return 0;
		if (build_id)
			linecache__put(c->lc, build_id, lookup, chain, n);
		from = chain;
	}
	if (!n || (n == 1 && !from[0].file))
		return 0;
	for (size_t i = 0; i < n && i < MAX_INLINE; i++) {
		lines[i].function =
			from[i].function ? rec_writer__string(c->w, from[i].function) : 0;
		lines[i].file = from[i].file ? rec_writer__string(c->w, from[i].file) : 0;
		lines[i].line = from[i].line;
	}
	if (n > MAX_INLINE)
		n = MAX_INLINE;
	rec_writer__lines(c->w, frame, lines, n);
	return lines[n - 1].function;
}

/* The module's build-id, for pprof's mappings: the writer keeps the first per module path. */
static void note_build_id(struct collector *c, struct sym_module *mod, const struct proc_map *m)
{
	const char *hex;

	if (mod && !sym_module__build_id(mod, &hex))
		rec_writer__module(c->w, module_string(c, m), hex);
}

static uint32_t user_frame(struct collector *c, struct image *img, uint64_t addr, bool is_return)
{
	const struct proc_map *m;
	struct sym_result res = {0};
	uint64_t id, off, lookup;
	uint32_t name = 0;
	bool named = false;

	/* A return address and a leaf at one address are two frames (the call before it, the
	 * instruction at it): user addresses leave bit 63 free to tell them apart here. */
	if (u64map__get(&img->frames, addr | (uint64_t)is_return << 63, &id))
		return id;
	m = collect_find_map(c, img, addr);
	/* Anonymous memory (JIT code) has no file offset: keep the address. */
	off = m && m->path[0] ? addr - m->start + m->pgoff : addr;
	/* A return address points after the call; the call itself is one byte before it. */
	lookup = is_return && off ? off - 1 : off;
	if (m && m->open_path) {
		struct sym_module *mod = collect_map_module(c, m);

		if (mod && sym_module__resolve(mod, lookup, &res) == 0 && res.name)
			name = rec_writer__string(c->w, res.name);
		/* REC_FRAME_CALL: the writer keeps it apart from a leaf at the same offset */
		id = rec_writer__frame(c->w, REC_FRAME_USER | (is_return ? REC_FRAME_CALL : 0),
				       module_string(c, m), name, off);
		note_build_id(c, mod, m);
		/* The debug file may name what the symbol table does not (a stripped binary). */
		if (c->lines && frame_lines(c, mod, lookup, id))
			named = true;
		if (!named && !name)
			c->stats[COLLECT_UNNAMED]++;
		u64map__put(&img->frames, addr | (uint64_t)is_return << 63, id);
		return id;
	} else {
		const char *jit = collect_jit_name(c, img->p, is_return ? addr - 1 : addr, &lookup);

		if (jit)
			name = rec_writer__string(c->w, jit);
	}
	id = rec_writer__frame(c->w, REC_FRAME_USER, module_string(c, m), name, off);
	if (!name) {
		c->stats[COLLECT_UNNAMED]++;
		if (m) /* anonymous executable memory: JIT code, perhaps named later */
			note_unnamed_jit(c, img->p, id, is_return ? addr - 1 : addr);
	}
	u64map__put(&img->frames, addr | (uint64_t)is_return << 63, id);
	return id;
}

/* Kernel symbols are kept here for the rest of the boot (root only; see ksyms_cache.c). */
#define KSYMS_CACHE CACHEDIR_RUN "/kallsyms"

/* A frame in code the kernel reported registered (a BPF program): named from that record, since
 * /proc/kallsyms may have lost it by now, and the records' bounds are exact where kallsyms has
 * none (a program unloaded from the middle of a BPF pack would take its neighbour's name). Not
 * kept in kframes: another program may hold the address in another drain's window. */
static bool dyn_frame(struct collector *c, uint64_t addr, bool is_return, uint32_t *id)
{
	const struct kdyn_sym *s = kdyn__find(c->kdyn, is_return ? addr - 1 : addr);

	if (!s)
		return false;
	*id = rec_writer__frame(c->w, REC_FRAME_KERNEL, s->bpf ? c->bpf_str : c->kernel_str,
				rec_writer__string(c->w, s->name), s->addr);
	return true;
}

static uint32_t kernel_frame(struct collector *c, uint64_t addr, bool is_return)
{
	const struct ksym *k;
	uint32_t name = 0, module = c->kernel_str, dyn;
	uint64_t id;

	if (dyn_frame(c, addr, is_return, &dyn))
		return dyn;
	if (u64map__get(&c->kframes, addr, &id))
		return id;
	if (!c->ksyms && !c->ksyms_failed) {
		c->ksyms = ksyms__load_cached(NULL, KSYMS_CACHE, NULL, NULL);
		c->ksyms_failed = !c->ksyms;
		if (!c->ksyms)
			log_warn("kernel symbols unavailable: %s", strerror(errno));
	}
	if (c->ksyms && !ksyms__covers(c->ksyms, addr)) {
		/* Code the boot's cache leaves out (a BPF program, a trampoline): the live list. */
		struct ksyms *full = ksyms__load(NULL);

		if (full) {
			ksyms__free(c->ksyms);
			c->ksyms = full;
		}
	}
	k = c->ksyms ? ksyms__find(c->ksyms, is_return ? addr - 1 : addr) : NULL;
	/* A named kernel frame is its function (at the function's start), as perf's report shows
	 * it: the kernel has no line tables here, and per-address frames would make every new
	 * interrupted instruction a new stack, growing the recording with the run (recording.h). */
	if (k) {
		char mod[80];

		name = rec_writer__string(c->w, k->name);
		if (k->module) {
			snprintf(mod, sizeof(mod), "[%s]", k->module);
			module = rec_writer__string(c->w, mod);
		}
	}
	id = rec_writer__frame(c->w, REC_FRAME_KERNEL, module, name, k ? k->addr : addr);
	u64map__put(&c->kframes, addr, id);
	return id;
}

static void note_thread(struct collector *c, struct proc *p, uint32_t tid)
{
	uint64_t key = (uint64_t)p->pp->pid << 32 | tid, one;
	char comm[32];
	uint32_t comm_id = p->pp->comm[0] ? rec_writer__string(c->w, p->pp->comm) : 0;

	if (u64map__get(&c->threads, key, &one))
		return;
	if (proc_comm(p->pp->pid, tid, comm, sizeof(comm)) == 0)
		comm_id = rec_writer__string(c->w, comm);
	rec_writer__thread(c->w, p->pp->pid, tid, p->pp->ppid, comm_id);
	u64map__put(&c->threads, key, 1);
}

/* The thread's name when the sample was taken, as the sampler read it: what the process was
 * running then (a shell that exec'd python is python from the exec on), and what each thread
 * calls itself (a JVM's C2 CompilerThre, redis's io_thd_1). */
static uint32_t thread_name(struct collector *c, const struct raw_sample *s)
{
	return s->comm[0] ? rec_writer__string(c->w, s->comm) : 0;
}

/* A user stack walked by frame pointers that fills the kernel's limit was cut; an unwound one
 * says so itself, or that its walk stopped early (flagged truncated too, counted apart). */
static uint32_t truncation(struct collector *c, const struct raw_sample *s, size_t nu)
{
	bool unwound = s->flags & RAW_UNWOUND;
	uint32_t flags = 0;

	if (s->nk >= c->max_stack || (unwound ? s->flags & RAW_TRUNCATED : nu >= c->max_stack)) {
		flags |= REC_SAMPLE_TRUNCATED;
		c->stats[COLLECT_TRUNCATED] += s->count;
	}
	if (unwound && (s->flags & RAW_UNWIND_STOPPED)) {
		flags |= REC_SAMPLE_TRUNCATED;
		c->stats[COLLECT_UNWIND_STOPPED] += s->count;
	}
	return flags;
}

int collector__add(struct collector *c, const struct raw_sample *s, const uint32_t *regions,
		   uint32_t nregions)
{
	struct proc *p = get_proc(c, s->pid);
	struct image *img = p ? image_for(p, s->gen) : NULL;
	const uint64_t *ustack = s->ustack, *kstack = s->kstack;
	size_t nu = ustack ? s->nu : 0, nk = kstack ? s->nk : 0, n = 0;
	uint32_t flags = 0;
	uint64_t hidden;
	struct py_splice py;
	int err;
	struct rec_sample sample = {
		.pid = s->pid,
		.tid = s->tid,
		.count = s->count,
		.nregions = nregions,
		.regions = regions,
	};

	c->last_key = UINT32_MAX;
	if (!img ||
	    vec_grow(&c->frames, &c->cap_frames, nu + nk + 1 + s->npy, sizeof(*c->frames), 256))
		return -ENOMEM;
	sample.frames = c->frames;
	note_thread(c, p, s->tid);
	if (s->flags & RAW_USER_LOST)
		flags |= REC_SAMPLE_USER_LOST;
	if (s->flags & RAW_KERNEL_LOST)
		flags |= REC_SAMPLE_KERN_LOST;
	if (s->flags & RAW_PREEMPTED)
		flags |= REC_SAMPLE_PREEMPTED;
	flags |= s->event << REC_SAMPLE_EVENT_SHIFT;
	flags |= truncation(c, s, nu);
	if (nu && !collect_find_map(c, img, ustack[0])) {
		c->stats[COLLECT_NO_MAPS] += s->count;
	} else if (nu > 1) {
		size_t keep = collect_believable_frames(c, img, ustack, nu);

		if (keep < nu) {
			nu = keep;
			flags |= REC_SAMPLE_TRUNCATED;
			c->stats[COLLECT_DAMAGED] += s->count;
		}
	}
	/* A frame-pointer walk from the leaf skips a frameless leaf's caller (an unwound stack's
	 * too, where its leaf had no table: RAW_LEAF_BY_FP). */
	hidden = (s->flags & RAW_UNWOUND) && !(s->flags & RAW_LEAF_BY_FP)
			 ? 0
			 : collect_hidden_caller(c, img, s->user_ret, ustack, nu);
	if (hidden)
		c->stats[COLLECT_LEAF_FIXED] += s->count;
	/* Root first: user frames outermost to leaf (Python frames where the interpreter's loop ran
	 * them), then the kernel frames. */
	collect_py_begin(c, s, ustack, nu, &py);
	collect_py_root(c, s, &py, &n);
	for (size_t i = nu; i-- > 0;) {
		if (i == 0 && hidden && nu == 1) /* the leaf's caller goes before the leaf */
			c->frames[n++] = user_frame(c, img, hidden, true);
		if (!collect_py_at(c, s, &py, i, &n) &&
		    !collect_py_trampoline(c, img, &py, ustack[i], i > 0))
			c->frames[n++] = user_frame(c, img, ustack[i], i > 0);
		if (i == 1 && hidden)
			c->frames[n++] = user_frame(c, img, hidden, true);
	}
	for (size_t i = nk; i-- > 0;)
		c->frames[n++] = kernel_frame(c, kstack[i], i > 0);
	sample.flags = flags;
	sample.comm = thread_name(c, s);
	sample.nframes = n;
	err = rec_writer__add_sample(c->w, &sample);
	if (!err && c->keys && rec_writer__key(c->w, &sample, &c->last_key))
		c->last_key = UINT32_MAX;
	return err;
}

void collector__set_python(struct collector *c, struct python *py)
{
	c->py = py;
	c->python_str = rec_writer__string(c->w, "[python]");
}

void collector__set_keys(struct collector *c, bool on)
{
	c->keys = on;
}

uint32_t collector__last_key(const struct collector *c)
{
	return c->last_key;
}

static const struct procs_listener listener = {
	.name = "collector",
	.start = proc_started,
	.fork = proc_forked,
	.exec = proc_execd,
	.mmap = proc_mapped,
	.exit = proc_exited,
	.forget = proc_forget,
	.drop = proc_free,
};
