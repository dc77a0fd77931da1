// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What naming a module without .symtab from its separate debug file costs, for
 * bench/symbolize.sh: `symbolize_symtab FILE < ADDRS` takes the first of the addresses on stdin
 * (ELF virtual addresses of FILE, hex, one per line) that .dynsym alone leaves unnamed (a function
 * internal to the library), then times the first sym_module__resolve() of FILE (open, .dynsym,
 * build-id) with no debug directory to search, then with the default one (the debug file's
 * .symtab too, no DWARF), then the first sym_module__resolve_inline() (the DWARF index), each in
 * a fresh symbolizer, and prints the name each gives that address.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbolizer.h"

#define MAX_FRAMES 64

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static struct symbolizer *new_symbolizer(const char *root)
{
	struct symbolizer *s = symbolizer__new();

	if (!s || (root && symbolizer__set_debug_root(s, root))) {
		fprintf(stderr, "symbolize_symtab: symbolizer setup failed\n");
		exit(1);
	}
	return s;
}

/* The first address on stdin that no .dynsym symbol covers; 0 when there is none. */
static uint64_t internal_addr(const char *empty_root, const struct sym_module_id *id)
{
	struct symbolizer *s = new_symbolizer(empty_root);
	struct sym_module *m = NULL;
	struct sym_result r;
	char line[64];
	uint64_t vaddr, off;

	symbolizer__module(s, id, id->path, &m);
	while (m && fgets(line, sizeof(line), stdin)) {
		vaddr = strtoull(line, NULL, 16);
		if (sym_module__vaddr_to_offset(m, vaddr, &off) == 0 &&
		    sym_module__resolve(m, off, &r) == 0 && !r.name) {
			symbolizer__free(s);
			return vaddr;
		}
	}
	symbolizer__free(s);
	return 0;
}

static void one(const char *what, const char *root, bool dwarf, const struct sym_module_id *id,
		uint64_t vaddr)
{
	struct symbolizer *s = new_symbolizer(root);
	struct sym_frame fr[MAX_FRAMES];
	struct sym_result r = {0};
	struct sym_module *m = NULL;
	const char *name = NULL;
	uint64_t off;
	double t0, t1;
	size_t n = 0;

	t0 = now_ms();
	if (symbolizer__module(s, id, id->path, &m) ||
	    sym_module__vaddr_to_offset(m, vaddr, &off)) {
		fprintf(stderr, "symbolize_symtab: %s: 0x%" PRIx64 " is in no segment\n", id->path,
			vaddr);
		exit(1);
	}
	if (dwarf) {
		sym_module__resolve_inline(m, off, fr, MAX_FRAMES, &n);
		name = n ? fr[n - 1].function : NULL;
	} else {
		sym_module__resolve(m, off, &r);
		name = r.name;
	}
	t1 = now_ms();
	printf("%-44s %7.1f ms  0x%" PRIx64 " -> %s\n", what, t1 - t0, vaddr, name ? name : "??");
	symbolizer__free(s);
}

int main(int argc, char **argv)
{
	struct sym_module_id id;
	char empty[] = "/tmp/perch-symtab-XXXXXX";
	struct stat st;
	uint64_t vaddr;

	if (argc != 2 || stat(argv[1], &st)) {
		fprintf(stderr, "usage: %s FILE < ADDRS\n", argv[0]);
		return 2;
	}
	id = (struct sym_module_id){.dev = st.st_dev, .inode = st.st_ino, .path = argv[1]};
	if (!mkdtemp(empty))
		return 1;
	vaddr = internal_addr(empty, &id);
	if (!vaddr) {
		fprintf(stderr, "symbolize_symtab: every address is named by .dynsym alone\n");
		rmdir(empty);
		return 1;
	}
	one("resolve(), .dynsym only (no debug dir)", empty, false, &id, vaddr);
	one("resolve(), + debug file .symtab (no DWARF)", NULL, false, &id, vaddr);
	one("resolve_inline(), DWARF index", NULL, true, &id, vaddr);
	rmdir(empty);
	return 0;
}
