// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the symbolizer (symbolizer.c) and the kernel symbol table (ksyms.c).
 *
 * The ELF fixtures are this test binary itself (functions below with known names, plus a few
 * hand-written in assembly to pin down symbol sizes), libc as the process maps it, and stripped
 * copies of both made in a temporary directory. Expected answers come from the running process
 * (/proc/self/maps, dladdr, dlsym), not from the code under test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "guards.h"
#include "symbolize/ksyms.h"
#include "symbolize/symbolizer.h"
#include "symcall.h"

#define SELF	  "/proc/self/exe"
#define MAPS_LINE "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64 " %n"

/*
 * perch_asm_sized: one instruction with an exact .size, then padding no symbol claims.
 * perch_asm_unsized: no .size (size 0), then room up to perch_asm_after.
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".globl perch_asm_sized\n"
	".hidden perch_asm_sized\n"
	".type perch_asm_sized, %function\n"
	"perch_asm_sized:\n"
	"\tret\n"
	".size perch_asm_sized, .-perch_asm_sized\n"
	".p2align 4\n"
	".globl perch_asm_unsized\n"
	".hidden perch_asm_unsized\n"
	".type perch_asm_unsized, %function\n"
	"perch_asm_unsized:\n"
	"\tret\n"
	".skip 44\n"
	".p2align 4\n"
	".globl perch_asm_after\n"
	".hidden perch_asm_after\n"
	".type perch_asm_after, %function\n"
	"perch_asm_after:\n"
	"\tret\n"
	".size perch_asm_after, .-perch_asm_after\n"
	".popsection\n");

void perch_asm_sized(void);
void perch_asm_unsized(void);
void perch_asm_after(void);

static volatile unsigned int sink;

/* Bodies differ so identical-code folding cannot merge them; a loop makes them longer than the
 * offsets the tests probe. */
static __attribute__((noinline, used)) unsigned int perch_target_alpha(unsigned int n)
{
	unsigned int i, acc = 0;

	for (i = 0; i < n; i++)
		acc += i * 7 + sink;
	sink = acc;
	return acc;
}

static __attribute__((noinline, used)) unsigned int perch_target_beta(unsigned int n)
{
	unsigned int i, acc = 1;

	for (i = 0; i < n; i++)
		acc ^= (acc << 3) + i + sink;
	sink = acc;
	return acc;
}

static char tmpdir[256];

/* Where addr lives in this process, as /proc/self/maps says. */
struct where {
	struct sym_module_id id;
	uint64_t file_offset;
	char path[PATH_MAX];
};

static void locate(const void *addr, struct where *w)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff, inode;
		unsigned int maj, min;
		int pos = 0;

		if (sscanf(line, MAPS_LINE, &start, &end, &pgoff, &maj, &min, &inode, &pos) < 6 ||
		    a < start || a >= end)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(w->path, sizeof(w->path), "%s", line + pos);
		w->id.dev = makedev(maj, min);
		w->id.inode = inode;
		w->id.path = w->path;
		w->file_offset = a - start + pgoff;
		fclose(f);
		return;
	}
	fclose(f);
	fail_msg("no mapping holds %p", addr);
}

/* The address as an ELF virtual address of its module, computed by the dynamic loader's view:
 * dli_fbase is where the module's first segment (vaddr 0 for PIE and shared objects) was put. */
static uint64_t loader_vaddr(const void *addr)
{
	Dl_info info;

	assert_true(dladdr(addr, &info));
	return (uint64_t)((uintptr_t)addr - (uintptr_t)info.dli_fbase);
}

static void tmp_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", tmpdir, name);

	assert_true(n > 0 && (size_t)n < len);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ssize_t n;

	assert_true(in >= 0);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

/* A stripped copy of from at tmpdir/name; skips the test without objcopy. */
static void strip_copy(const char *from, const char *name, char *to, size_t len)
{
	char cmd[3 * PATH_MAX], real[PATH_MAX];

	/* /proc/self/exe in objcopy's process would be objcopy: name this test binary. */
	assert_non_null(realpath(from, real));
	tmp_path(to, len, name);
	snprintf(cmd, sizeof(cmd), "objcopy --strip-all '%s' '%s' 2>/dev/null", real, to);
	if (system(cmd) != 0) {
		print_message("objcopy --strip-all failed or is missing\n");
		skip();
	}
}

/* The id of a file we made: keyed by its real (dev, inode). */
static struct sym_module_id file_id(const char *path)
{
	struct sym_module_id id = {.path = path};
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	id.dev = st.st_dev;
	id.inode = st.st_ino;
	return id;
}

static void *libc_handle(void)
{
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	assert_non_null(h);
	return h;
}

/* getpid as libc defines it (not a sanitizer interceptor that might shadow it). */
static void *libc_getpid(void)
{
	void *h = libc_handle();
	void *p = dlsym(h, "getpid");

	assert_non_null(p);
	dlclose(h);
	return p;
}

static void symbolize_resolves_own_function_exactly(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_alpha");
	assert_int_equal(r.vaddr, loader_vaddr((void *)perch_target_alpha));
	assert_int_equal(r.sym_start, r.vaddr);
	assert_int_equal(r.sym_file_offset, w.file_offset);

	locate((void *)perch_target_beta, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_beta");
	symbolizer__free(s);
}

static void symbolize_resolves_mid_function_address_to_its_start(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset + 5, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_alpha");
	assert_int_equal(r.vaddr, loader_vaddr((void *)perch_target_alpha) + 5);
	assert_int_equal(r.sym_start, r.vaddr - 5);
	assert_int_equal(r.sym_file_offset, w.file_offset);
	symbolizer__free(s);
}

static void symbolize_address_past_symbol_size_has_no_name(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_asm_sized, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_asm_sized");
	/* 8 bytes on: past its one instruction, in padding before the next aligned symbol. */
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset + 8, &r), 0);
	assert_null(r.name);
	assert_int_equal(r.sym_start, 0);
	assert_int_equal(r.sym_file_offset, 0);
	assert_int_equal(r.vaddr, loader_vaddr((void *)perch_asm_sized) + 8);
	symbolizer__free(s);
}

static void symbolize_zero_size_symbol_extends_to_next_symbol(void **state)
{
	struct symbolizer *s = symbolizer__new();
	uint64_t after;
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_asm_after, &w);
	after = w.file_offset;
	locate((void *)perch_asm_unsized, &w);
	assert_true(after - w.file_offset >= 48);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset + 40, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_asm_unsized");
	assert_int_equal(r.sym_file_offset, w.file_offset);
	assert_int_equal(sym_resolve(s, &w.id, SELF, after - 1, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_asm_unsized");
	assert_int_equal(sym_resolve(s, &w.id, SELF, after, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_asm_after");
	symbolizer__free(s);
}

static void symbolize_resolves_libc_function_to_a_name_at_its_address(void **state)
{
	struct symbolizer *s = symbolizer__new();
	void *fn = libc_getpid(), *h;
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate(fn, &w);
	assert_non_null(strstr(w.path, "libc"));
	assert_int_equal(sym_resolve(s, &w.id, w.path, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_int_equal(r.vaddr, loader_vaddr(fn));
	assert_int_equal(r.sym_start, r.vaddr);
	assert_int_equal(r.sym_file_offset, w.file_offset);
	/* getpid, or an alias of it: the dynamic loader finds the same code under that name. */
	h = libc_handle();
	assert_ptr_equal(dlsym(h, r.name), fn);
	dlclose(h);
	symbolizer__free(s);
}

/* The name the out-of-line frame of libc's fn gets: with libc6-dbg's DWARF, the linkage name is
 * glibc's internal alias (__GI___libc_malloc); perch shows the exported one, as perf does. */
static void assert_public_libc_name(struct symbolizer *s, const char *exported)
{
	void *h = libc_handle();
	void *fn = dlsym(h, exported);
	struct sym_frame frames[8];
	const char *name;
	struct where w;
	size_t n = 0;

	assert_non_null(fn);
	locate(fn, &w);
	assert_int_equal(sym_resolve_inline(s, &w.id, w.path, w.file_offset, frames, 8, &n), 0);
	assert_true(n >= 1);
	name = frames[n - 1].function;
	assert_non_null(name);
	assert_null(strstr(name, "__GI_"));
	assert_null(strchr(name, '@'));
	/* Exported under that name: the dynamic loader finds the same code. */
	assert_ptr_equal(dlsym(h, name), fn);
	dlclose(h);
}

static void symbolize_prefers_public_alias_in_libc(void **state)
{
	struct symbolizer *s = symbolizer__new();

	(void)state;
	assert_non_null(s);
	assert_public_libc_name(s, "malloc");
	assert_public_libc_name(s, "free");
	assert_public_libc_name(s, "calloc");
	assert_public_libc_name(s, "getpid");
	symbolizer__free(s);
}

static void symbolize_stripped_library_resolves_through_dynsym(void **state)
{
	struct symbolizer *s = symbolizer__new();
	void *fn = libc_getpid(), *h;
	char stripped[PATH_MAX];
	struct sym_module_id id;
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate(fn, &w);
	strip_copy(w.path, "libc-stripped.so", stripped, sizeof(stripped));
	id = file_id(stripped);
	assert_int_equal(sym_resolve(s, &id, stripped, w.file_offset + 1, &r), 0);
	assert_non_null(r.name);
	assert_int_equal(r.sym_start, loader_vaddr(fn));
	assert_int_equal(r.sym_file_offset, w.file_offset);
	h = libc_handle();
	assert_ptr_equal(dlsym(h, r.name), fn);
	dlclose(h);
	symbolizer__free(s);
}

static void symbolize_stripped_binary_leaves_internal_function_unnamed(void **state)
{
	struct symbolizer *s = symbolizer__new();
	char stripped[PATH_MAX];
	struct sym_module_id id;
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	strip_copy(SELF, "self-stripped", stripped, sizeof(stripped));
	id = file_id(stripped);
	/* Stripping keeps the loadable layout: the same offset, now with no symbol over it. */
	symbolizer__set_infer_bounds(s, false);
	assert_int_equal(sym_resolve(s, &id, stripped, w.file_offset, &r), 0);
	assert_null(r.name);
	assert_false(r.inferred);
	assert_int_equal(r.vaddr, loader_vaddr((void *)perch_target_alpha));
	symbolizer__free(s);
}

/* With the default, the .eh_frame FDE bounds it: every address of the function gets the name
 * MODULE+0xSTART? with START its first byte, where the unstripped symbol starts. */
static void symbolize_stripped_binary_groups_function_by_its_fde(void **state)
{
	struct symbolizer *s = symbolizer__new();
	char stripped[PATH_MAX], want[64];
	struct sym_module_id id;
	struct sym_frame fr[4];
	struct sym_result r;
	struct where w;
	size_t n = 0;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_beta, &w);
	strip_copy(SELF, "self-stripped-fde", stripped, sizeof(stripped));
	id = file_id(stripped);
	snprintf(want, sizeof(want), "self-stripped-fde+0x%" PRIx64 "?", w.file_offset);
	for (uint64_t k = 0; k < 8; k++) {
		assert_int_equal(sym_resolve(s, &id, stripped, w.file_offset + k, &r), 0);
		assert_non_null(r.name);
		assert_string_equal(r.name, want);
		assert_true(r.inferred);
		assert_int_equal(r.sym_start, loader_vaddr((void *)perch_target_beta));
		assert_int_equal(r.sym_file_offset, w.file_offset);
	}
	assert_int_equal(sym_resolve_inline(s, &id, stripped, w.file_offset + 3, fr, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(fr[0].function, want);
	symbolizer__free(s);
}

/* A stripped copy of this test with .gnu_debugdata holding the file made by shell command make
 * (run with $OUT set to where it must write); skips without xz or objcopy. */
static void debugdata_copy(const char *name, const char *make, char *to, size_t len)
{
	char data[PATH_MAX], cmd[4 * PATH_MAX];

	strip_copy(SELF, name, to, len);
	tmp_path(data, sizeof(data), "debugdata.bin");
	snprintf(cmd, sizeof(cmd),
		 "OUT='%s'; (%s) 2>/dev/null && objcopy --add-section .gnu_debugdata=\"$OUT\" '%s' "
		 "2>/dev/null",
		 data, make, to);
	if (system(cmd) != 0) {
		print_message("xz or objcopy failed or is missing\n");
		skip();
	}
}

/* Corrupt MiniDebugInfo is ignored and counted: the module still answers, with the FDE's name. */
static void symbolize_corrupt_minidebuginfo_is_counted_not_fatal(void **state)
{
	static const char *const makes[] = {
		/* an xz stream cut in half */
		"head -c 200000 /dev/urandom | xz -c > \"$OUT.full\" && "
		"head -c 4000 \"$OUT.full\" > \"$OUT\"",
		/* not xz at all */
		"printf 'not xz data at all' > \"$OUT\"",
		/* complete xz of something that is not an ELF file */
		"printf 'plain text' | xz -c > \"$OUT\"",
	};
	char path[PATH_MAX], name[32];
	struct sym_module_id id;
	struct sym_result r;
	struct where w;

	(void)state;
	locate((void *)perch_target_alpha, &w);
	for (size_t i = 0; i < sizeof(makes) / sizeof(*makes); i++) {
		struct symbolizer *s = symbolizer__new();

		assert_non_null(s);
		snprintf(name, sizeof(name), "self-debugdata-%zu", i);
		debugdata_copy(name, makes[i], path, sizeof(path));
		id = file_id(path);
		assert_int_equal(sym_resolve(s, &id, path, w.file_offset, &r), 0);
		assert_non_null(r.name);
		assert_true(r.inferred);
		assert_int_equal(symbolizer__bad_minidebug(s), 1);
		/* counted once per module, not per address */
		assert_int_equal(sym_resolve(s, &id, path, w.file_offset + 1, &r), 0);
		assert_int_equal(symbolizer__bad_minidebug(s), 1);
		symbolizer__free(s);
	}
}

static void symbolize_rejects_non_elf_with_enoexec(void **state)
{
	static const char script[] = "#!/bin/sh\necho not an ELF file\n";
	static const char truncated[] = "\x7f"
					"ELF\x02\x01";
	struct symbolizer *s = symbolizer__new();
	char path[PATH_MAX];
	struct sym_module_id id;
	struct sym_result r;

	(void)state;
	assert_non_null(s);
	tmp_path(path, sizeof(path), "script.sh");
	write_file(path, script, sizeof(script) - 1);
	id = file_id(path);
	assert_int_equal(sym_resolve(s, &id, path, 0, &r), -ENOEXEC);
	assert_null(r.name);

	tmp_path(path, sizeof(path), "truncated.elf");
	write_file(path, truncated, sizeof(truncated) - 1);
	id = file_id(path);
	assert_int_equal(sym_resolve(s, &id, path, 0, &r), -ENOEXEC);

	id = file_id(tmpdir);
	assert_int_equal(sym_resolve(s, &id, tmpdir, 0, &r), -ENOEXEC);
	symbolizer__free(s);
}

static void symbolize_missing_file_gives_enoent(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module_id id = {.dev = 1, .inode = 0x7fffffff, .path = "/nonexistent/lib.so"};
	struct sym_result r;
	char buf[4];

	(void)state;
	assert_non_null(s);
	assert_int_equal(sym_resolve(s, &id, id.path, 0x1000, &r), -ENOENT);
	assert_null(r.name);
	assert_int_equal(sym_read(s, &id, id.path, 0, buf, sizeof(buf)), -ENOENT);
	symbolizer__free(s);
}

static void symbolize_cache_hit_opens_no_file(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module_id by_path;
	struct sym_result r;
	unsigned char code[16];
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_beta, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset, &r), 0);
	/* Same (dev, inode), a path that cannot be opened: only the cached index can answer. */
	assert_int_equal(sym_resolve(s, &w.id, "/nonexistent/x", w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_beta");
	assert_int_equal(sym_read(s, &w.id, "/nonexistent/x", w.file_offset, code, 16), 0);
	assert_memory_equal(code, (const void *)perch_target_beta, 16);

	/* No inode known: keyed by the mapped path instead. */
	by_path = (struct sym_module_id){.path = "/some/mapped/path"};
	assert_int_equal(sym_resolve(s, &by_path, SELF, w.file_offset, &r), 0);
	assert_int_equal(sym_resolve(s, &by_path, NULL, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_beta");
	symbolizer__free(s);
}

/* One module, one handle: every later lookup of the same id (by any open path) gives it back,
 * and the handle answers every query with no id or path. */
static void symbolize_module_handle_is_stable_per_module(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = NULL, *again = NULL;
	struct sym_result r;
	unsigned char code[16];
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_beta, &w);
	assert_int_equal(symbolizer__module(s, &w.id, SELF, &m), 0);
	assert_non_null(m);
	assert_int_equal(symbolizer__module(s, &w.id, "/nonexistent/x", &again), 0);
	assert_ptr_equal(m, again);
	assert_int_equal(symbolizer__module(s, &w.id, NULL, &again), 0);
	assert_ptr_equal(m, again);
	assert_int_equal(sym_module__resolve(m, w.file_offset, &r), 0);
	assert_string_equal(r.name, "perch_target_beta");
	assert_int_equal(sym_module__read(m, w.file_offset, code, sizeof(code)), 0);
	assert_memory_equal(code, (const void *)perch_target_beta, sizeof(code));
	assert_int_equal(symbolizer__module(NULL, &w.id, SELF, &again), -EINVAL);
	assert_null(again);
	assert_int_equal(sym_module__resolve(NULL, 0, &r), -EINVAL);
	symbolizer__free(s);
}

static void symbolize_caches_failures(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module_id gone = {.path = "/gone/lib.so"};
	struct sym_module_id bad = {.path = "/bad/lib.so"};
	char path[PATH_MAX];
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	tmp_path(path, sizeof(path), "not-elf");
	write_file(path, "hello", 5);
	assert_int_equal(sym_resolve(s, &bad, path, 0, &r), -ENOEXEC);
	assert_int_equal(sym_resolve(s, &gone, "/nonexistent/y", 0, &r), -ENOENT);
	/* A readable ELF file offered later for the same modules is not looked at. */
	assert_int_equal(sym_resolve(s, &bad, SELF, w.file_offset, &r), -ENOEXEC);
	assert_int_equal(sym_resolve(s, &gone, SELF, w.file_offset, &r), -ENOENT);
	symbolizer__free(s);
}

static void symbolize_read_returns_function_bytes(void **state)
{
	struct symbolizer *s = symbolizer__new();
	unsigned char code[32];
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	assert_int_equal(sym_resolve(s, &w.id, SELF, w.file_offset + 3, &r), 0);
	assert_int_equal(sym_read(s, &w.id, SELF, r.sym_file_offset, code, 32), 0);
	assert_memory_equal(code, (const void *)perch_target_alpha, sizeof(code));
	symbolizer__free(s);
}

static void symbolize_read_works_after_file_is_deleted(void **state)
{
	struct symbolizer *s = symbolizer__new();
	char copy[PATH_MAX];
	unsigned char code[16];
	struct sym_module_id id;
	struct sym_result r;
	struct where w;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_beta, &w);
	tmp_path(copy, sizeof(copy), "self-copy");
	copy_file(SELF, copy);
	id = file_id(copy);
	assert_int_equal(sym_resolve(s, &id, copy, w.file_offset, &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_target_beta");
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(sym_read(s, &id, copy, r.sym_file_offset, code, sizeof(code)), 0);
	assert_memory_equal(code, (const void *)perch_target_beta, sizeof(code));
	symbolizer__free(s);
}

static void symbolize_read_past_end_of_file_fails(void **state)
{
	struct symbolizer *s = symbolizer__new();
	unsigned char buf[16];
	struct stat st;
	struct where w;
	uint64_t end;

	(void)state;
	assert_non_null(s);
	locate((void *)perch_target_alpha, &w);
	assert_int_equal(stat(SELF, &st), 0);
	end = (uint64_t)st.st_size;
	assert_int_equal(sym_read(s, &w.id, SELF, end - 8, buf, sizeof(buf)), -ERANGE);
	assert_int_equal(sym_read(s, &w.id, SELF, end - 8, buf, 8), 0);
	symbolizer__free(s);
}

/* Unsorted, with aliases, markers, data and two modules, in kallsyms format. */
static const char kallsyms_fixture[] = "ffffffffc0002000 t mod_fn2\t[mymod]\n"
				       "ffffffff81000100 T second_fn\n"
				       "ffffffff81000000 T _text\n"
				       "ffffffff81000000 T first_fn\n"
				       "ffffffff81000200 t third_fn\n"
				       "ffffffff81000300 T _etext\n"
				       "ffffffff81000400 D some_data\n"
				       "ffffffffc0001000 t mod_fn1\t[mymod]\n"
				       "ffffffffc0008000 t other_fn\t[other]\n"
				       "ffffffff81000180 W weak_fn\n";

static struct ksyms *load_fixture(const char *text)
{
	char path[PATH_MAX];
	struct ksyms *k;

	tmp_path(path, sizeof(path), "kallsyms");
	write_file(path, text, strlen(text));
	k = ksyms__load(path);
	assert_non_null(k);
	return k;
}

static void assert_ksym(const struct ksyms *k, uint64_t addr, const char *name, const char *module)
{
	const struct ksym *sym = ksyms__find(k, addr);

	if (!sym)
		fail_msg("no symbol at 0x%" PRIx64 ", expected %s", addr, name);
	assert_string_equal(sym->name, name);
	if (module) {
		assert_non_null(sym->module);
		assert_string_equal(sym->module, module);
	} else {
		assert_null(sym->module);
	}
}

static void ksyms_finds_covering_symbol_in_unsorted_file(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	assert_ksym(k, 0xffffffff81000100, "second_fn", NULL);
	assert_ksym(k, 0xffffffff8100017f, "second_fn", NULL);
	assert_ksym(k, 0xffffffff81000180, "weak_fn", NULL);
	assert_ksym(k, 0xffffffff810001ff, "weak_fn", NULL);
	assert_ksym(k, 0xffffffff810002ff, "third_fn", NULL);
	assert_int_equal(ksyms__find(k, 0xffffffff81000250)->addr, 0xffffffff81000200);
	ksyms__free(k);
}

static void ksyms_prefers_plain_alias_at_same_address(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	assert_ksym(k, 0xffffffff81000000, "first_fn", NULL);
	assert_ksym(k, 0xffffffff81000010, "first_fn", NULL);
	ksyms__free(k);
}

static void ksyms_names_module_without_brackets(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	assert_ksym(k, 0xffffffffc0001000, "mod_fn1", "mymod");
	assert_ksym(k, 0xffffffffc0001fff, "mod_fn1", "mymod");
	assert_ksym(k, 0xffffffffc0002000, "mod_fn2", "mymod");
	assert_ksym(k, 0xffffffffc0008010, "other_fn", "other");
	ksyms__free(k);
}

/* The boot's cache: read back only under the same boot id and modules, covering the kernel's
 * and the listed modules' text and nothing else (a BPF program: read /proc/kallsyms instead). */
static void ksyms_cache_for_the_boot(void **state)
{
	char ks[PATH_MAX], mods[PATH_MAX], boot[PATH_MAX], cache[PATH_MAX];
	const char *text = "ffffffff81000000 T core_a\n"
			   "ffffffff81000100 T core_b\n"
			   "ffffffff81000200 T _etext\n"
			   "ffffffffc0001000 t mod_fn\t[mymod]\n"
			   "ffffffffc0001800 t mod_fn2\t[mymod]\n"
			   "ffffffffc0100000 t bpf_prog_1234_on_tick\t[bpf]\n";
	const char *listed = "mymod 8192 0 - Live 0xffffffffc0001000\n";
	struct ksyms *full, *cached;
	struct stat st;

	(void)state;
	tmp_path(ks, sizeof(ks), "kallsyms.boot");
	tmp_path(mods, sizeof(mods), "modules");
	tmp_path(boot, sizeof(boot), "boot_id");
	tmp_path(cache, sizeof(cache), "kscache");
	write_file(ks, text, strlen(text));
	write_file(mods, listed, strlen(listed));
	write_file(boot, "boot-1\n", 7);
	unlink(cache);
	full = ksyms__load_cached(ks, cache, mods, boot);
	assert_non_null(full);
	assert_true(ksyms__covers(full, 0xffffffffc0100010)); /* read whole: covers everything */
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Now from the cache, even with the kallsyms file gone. */
	unlink(ks);
	cached = ksyms__load_cached(ks, cache, mods, boot);
	assert_non_null(cached);
	assert_ksym(cached, 0xffffffff81000080, "core_a", NULL);
	assert_ksym(cached, 0xffffffff81000180, "core_b", NULL);
	assert_ksym(cached, 0xffffffffc0001900, "mod_fn2", "mymod");
	assert_true(ksyms__covers(cached, 0xffffffff81000180));
	assert_true(ksyms__covers(cached, 0xffffffffc0001900));
	assert_false(ksyms__covers(cached, 0xffffffffc0100010));
	assert_null(ksyms__find(cached, 0xffffffff81000200)); /* _etext still ends the text */
	ksyms__free(cached);
	ksyms__free(full);
	/* Another boot, or other modules: the cache is not used (and the kallsyms file is gone). */
	write_file(boot, "boot-2\n", 7);
	assert_null(ksyms__load_cached(ks, cache, mods, boot));
	write_file(boot, "boot-1\n", 7);
	write_file(mods, "mymod 8192 0 - Live 0xffffffffc0002000\n", 39);
	assert_null(ksyms__load_cached(ks, cache, mods, boot));
}

/* Inputs of a boot-cache test: a kallsyms file, modules, boot id. */
static void ksyms_cache_inputs(char *ks, char *mods, char *boot, size_t len)
{
	const char *text = "ffffffff81000000 T core_a\nffffffff81000200 T _etext\n";

	tmp_path(ks, len, "kallsyms.guard");
	tmp_path(mods, len, "modules.guard");
	tmp_path(boot, len, "boot_id.guard");
	write_file(ks, text, strlen(text));
	write_file(mods, "", 0);
	write_file(boot, "boot-1\n", 7);
}

/* A FIFO where the boot's cache would be: read past at once, the live table used. */
static void ksyms_cache_fifo_is_skipped_without_blocking(void **state)
{
	char ks[PATH_MAX], mods[PATH_MAX], boot[PATH_MAX], cache[PATH_MAX];
	struct ksyms *k;

	(void)state;
	ksyms_cache_inputs(ks, mods, boot, PATH_MAX);
	tmp_path(cache, sizeof(cache), "kscache.fifo");
	unlink(cache);
	assert_int_equal(mkfifo(cache, 0600), 0);
	deadline_start(5);
	k = ksyms__load_cached(ks, cache, mods, boot);
	deadline_stop();
	assert_non_null(k);
	assert_ksym(k, 0xffffffff81000080, "core_a", NULL);
	ksyms__free(k);
	unlink(cache);
}

/* A cache directory of another user's: nothing written into it. */
static void ksyms_cache_not_written_into_dir_of_another_user(void **state)
{
	char ks[PATH_MAX], mods[PATH_MAX], boot[PATH_MAX], dir[PATH_MAX], cache[PATH_MAX + 16];
	struct ksyms *k;

	(void)state;
	ksyms_cache_inputs(ks, mods, boot, PATH_MAX);
	tmp_path(dir, sizeof(dir), "kscache-other");
	if (make_foreign_dir(dir))
		skip(); /* chown needs root */
	snprintf(cache, sizeof(cache), "%s/kallsyms", dir);
	k = ksyms__load_cached(ks, cache, mods, boot);
	assert_non_null(k);
	ksyms__free(k);
	assert_true(dir_is_empty(dir));
}

/* Patch len bytes at off of path; the file's bytes before into old (not bytes itself). */
static void patch_file(const char *path, off_t off, const void *bytes, size_t len, void *old)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, old, len, off), (ssize_t)len);
	assert_int_equal(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

/* The boot's cache is mapped and used in place: one whose strings do not end in NUL, whose
 * name offset points past them or whose addresses are out of order is refused (with the
 * kallsyms file gone, there is then no table at all), and the same file put right is used. */
static void ksyms_cache_damaged_is_refused(void **state)
{
	char ks[PATH_MAX], mods[PATH_MAX], boot[PATH_MAX], cache[PATH_MAX];
	const char *text = "ffffffff81000000 T core_a\nffffffff81000100 T core_b\n"
			   "ffffffff81000200 T _etext\n";
	uint32_t nsyms, nranges, bad = UINT32_MAX - 1;
	uint64_t strings, a0, a1;
	off_t syms, last;
	char old[8], was[8], x = 'x';
	struct ksyms *k;
	int fd;

	(void)state;
	ksyms_cache_inputs(ks, mods, boot, PATH_MAX);
	write_file(ks, text, strlen(text));
	tmp_path(cache, sizeof(cache), "kscache.damaged");
	unlink(cache);
	k = ksyms__load_cached(ks, cache, mods, boot);
	assert_non_null(k);
	ksyms__free(k);
	unlink(ks);
	/* struct cache_hdr: magic[8], boot_id[40], modules_hash, nsyms, nranges, strings */
	fd = open(cache, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &nsyms, 4, 56), 4);
	assert_int_equal(pread(fd, &nranges, 4, 60), 4);
	assert_int_equal(pread(fd, &strings, 8, 64), 8);
	syms = 72 + 16 * (off_t)nranges;
	assert_int_equal(pread(fd, &a0, 8, syms), 8);
	assert_int_equal(pread(fd, &a1, 8, syms + 16), 8);
	close(fd);
	assert_true(nsyms >= 2 && strings > 0);
	last = syms + 16 * (off_t)nsyms + (off_t)strings - 1;
	patch_file(cache, last, &x, 1, old);
	assert_null(ksyms__load_cached(ks, cache, mods, boot));
	patch_file(cache, last, old, 1, was);
	patch_file(cache, syms + 8, &bad, 4, old);
	assert_null(ksyms__load_cached(ks, cache, mods, boot));
	patch_file(cache, syms + 8, old, 4, was);
	patch_file(cache, syms, &a1, 8, old);
	patch_file(cache, syms + 16, &a0, 8, old);
	assert_null(ksyms__load_cached(ks, cache, mods, boot));
	patch_file(cache, syms, &a0, 8, was);
	patch_file(cache, syms + 16, &a1, 8, was);
	k = ksyms__load_cached(ks, cache, mods, boot);
	assert_non_null(k);
	assert_ksym(k, 0xffffffff81000180, "core_b", NULL);
	ksyms__free(k);
	unlink(cache);
}

static void ksyms_stops_at_text_end_and_data_symbols(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	assert_null(ksyms__find(k, 0xffffffff81000300));
	assert_null(ksyms__find(k, 0xffffffff81000350));
	assert_null(ksyms__find(k, 0xffffffff81000400));
	assert_null(ksyms__find(k, 0xffffffffbfffffff));
	ksyms__free(k);
}

static void ksyms_module_text_ends_before_next_module(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	/* mod_fn2 is mymod's last symbol: its page and the next, not the gap up to [other]. */
	assert_ksym(k, 0xffffffffc0003fff, "mod_fn2", "mymod");
	assert_null(ksyms__find(k, 0xffffffffc0004000));
	assert_null(ksyms__find(k, 0xffffffffc0007fff));
	ksyms__free(k);
}

static void ksyms_returns_null_below_first_and_past_last(void **state)
{
	struct ksyms *k = load_fixture(kallsyms_fixture);

	(void)state;
	assert_null(ksyms__find(k, 0));
	assert_null(ksyms__find(k, 0xffffffff80ffffff));
	assert_ksym(k, 0xffffffffc0009fff, "other_fn", "other");
	assert_null(ksyms__find(k, 0xffffffffc000a000));
	assert_null(ksyms__find(k, UINT64_MAX));
	assert_null(ksyms__find(NULL, 0xffffffff81000000));
	ksyms__free(k);
}

static void ksyms_hidden_addresses_give_eacces(void **state)
{
	static const char hidden[] = "0000000000000000 T _text\n"
				     "0000000000000000 T first_fn\n"
				     "0000000000000000 t mod_fn\t[mymod]\n";
	char path[PATH_MAX];

	(void)state;
	tmp_path(path, sizeof(path), "kallsyms-hidden");
	write_file(path, hidden, sizeof(hidden) - 1);
	errno = 0;
	assert_null(ksyms__load(path));
	assert_int_equal(errno, EACCES);
}

static void ksyms_missing_file_gives_enoent(void **state)
{
	(void)state;
	errno = 0;
	assert_null(ksyms__load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

static void ksyms_last_line_without_newline_is_read(void **state)
{
	struct ksyms *k = load_fixture("ffffffff81000000 T first_fn\n"
				       "ffffffff81000100 T last_fn");

	(void)state;
	assert_ksym(k, 0xffffffff81000104, "last_fn", NULL);
	ksyms__free(k);
}

/* Address of "schedule" as /proc/kallsyms lists it, and every name listed at that address. */
static uint64_t real_schedule(char names[][128], size_t max, size_t *nr)
{
	char line[512], name[128], type;
	uint64_t addr, want = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && !want) {
		if (sscanf(line, "%" SCNx64 " %c %127s", &addr, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0)
			want = addr;
	}
	rewind(f);
	*nr = 0;
	while (want && fgets(line, sizeof(line), f) && *nr < max) {
		if (sscanf(line, "%" SCNx64 " %c %127s", &addr, &type, name) == 3 && addr == want)
			snprintf(names[(*nr)++], 128, "%s", name);
	}
	fclose(f);
	return want;
}

static void ksyms_resolves_schedule_in_real_kallsyms(void **state)
{
	char names[16][128];
	const struct ksym *sym;
	struct ksyms *k;
	size_t i, nr;
	uint64_t addr;
	bool listed = false;

	(void)state;
	k = ksyms__load(NULL);
	if (!k && errno == EACCES) {
		print_message("kernel addresses are hidden (kptr_restrict); not checked\n");
		skip();
	}
	assert_non_null(k);
	addr = real_schedule(names, 16, &nr);
	assert_true(addr != 0);
	sym = ksyms__find(k, addr);
	assert_non_null(sym);
	assert_int_equal(sym->addr, addr);
	assert_null(sym->module);
	for (i = 0; i < nr; i++)
		listed |= strcmp(names[i], sym->name) == 0;
	if (!listed)
		fail_msg("0x%" PRIx64 " resolved to %s, not a name listed there", addr, sym->name);
	assert_ptr_equal(ksyms__find(k, addr + 1), sym);
	ksyms__free(k);
}

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/perch-test-symbolize-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 32];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(symbolize_resolves_own_function_exactly),
		cmocka_unit_test(symbolize_resolves_mid_function_address_to_its_start),
		cmocka_unit_test(symbolize_address_past_symbol_size_has_no_name),
		cmocka_unit_test(symbolize_zero_size_symbol_extends_to_next_symbol),
		cmocka_unit_test(symbolize_resolves_libc_function_to_a_name_at_its_address),
		cmocka_unit_test(symbolize_prefers_public_alias_in_libc),
		cmocka_unit_test(symbolize_stripped_library_resolves_through_dynsym),
		cmocka_unit_test(symbolize_stripped_binary_leaves_internal_function_unnamed),
		cmocka_unit_test(symbolize_stripped_binary_groups_function_by_its_fde),
		cmocka_unit_test(symbolize_corrupt_minidebuginfo_is_counted_not_fatal),
		cmocka_unit_test(symbolize_rejects_non_elf_with_enoexec),
		cmocka_unit_test(symbolize_missing_file_gives_enoent),
		cmocka_unit_test(symbolize_cache_hit_opens_no_file),
		cmocka_unit_test(symbolize_module_handle_is_stable_per_module),
		cmocka_unit_test(symbolize_caches_failures),
		cmocka_unit_test(symbolize_read_returns_function_bytes),
		cmocka_unit_test(symbolize_read_works_after_file_is_deleted),
		cmocka_unit_test(symbolize_read_past_end_of_file_fails),
		cmocka_unit_test(ksyms_finds_covering_symbol_in_unsorted_file),
		cmocka_unit_test(ksyms_prefers_plain_alias_at_same_address),
		cmocka_unit_test(ksyms_names_module_without_brackets),
		cmocka_unit_test(ksyms_stops_at_text_end_and_data_symbols),
		cmocka_unit_test(ksyms_cache_for_the_boot),
		cmocka_unit_test(ksyms_cache_fifo_is_skipped_without_blocking),
		cmocka_unit_test(ksyms_cache_not_written_into_dir_of_another_user),
		cmocka_unit_test(ksyms_cache_damaged_is_refused),
		cmocka_unit_test(ksyms_module_text_ends_before_next_module),
		cmocka_unit_test(ksyms_returns_null_below_first_and_past_last),
		cmocka_unit_test(ksyms_hidden_addresses_give_eacces),
		cmocka_unit_test(ksyms_missing_file_gives_enoent),
		cmocka_unit_test(ksyms_last_line_without_newline_is_read),
		cmocka_unit_test(ksyms_resolves_schedule_in_real_kallsyms),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
