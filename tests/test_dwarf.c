// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the symbolizer's DWARF side: inline chains, source lines, C++ names, separate debug
 * files (build-id and .gnu_debuglink) and build-ids.
 *
 * The fixtures are tests/fixtures/inl.c and tests/fixtures/tmpl.cpp, built at the start with the
 * system compiler (-O2 -g) into a temporary directory, then copied, stripped and split with
 * objcopy/strip as each test needs. Expected lines come from LINE: markers in the fixture
 * sources; expected addresses from the fixtures' own symbol tables read with libelf; and whole
 * functions are compared address by address with eu-addr2line (elfutils), the reference, and
 * for clang-built copies with llvm-symbolizer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/debugcache.h"
#include "guards.h"
#include "symbolize/dwarf_index.h"
#include "symbolize/symbolizer.h"
#include "symcall.h"

#define MAX_FRAMES 16
#define CMD_MAX	   (4 * PATH_MAX)

/* The C++ fixture's functions, as the linker names them and demangled. */
#define CXX_SUM_RAW "_ZN8perch_ns3sumIiEET_PKS1_i"
#define CXX_SUM	    "int perch_ns::sum<int>(int const*, int)"
#define CXX_ADD_RAW "_ZN8perch_ns3accIiE3addEi"
#define CXX_ADD	    "perch_ns::acc<int>::add(int)"

static char tmpdir[PATH_MAX - 64];
static char inl_src[PATH_MAX], tmpl_src[PATH_MAX]; /* fixture sources, absolute */
static char inl_bin[PATH_MAX], tmpl_bin[PATH_MAX]; /* built with -O2 -g */
static char other_bin[PATH_MAX];		   /* inl.c at -O1: another build */
static bool have_cxx;				   /* tmpl_bin could be built */
static char empty_root[PATH_MAX];		   /* a debug root with nothing in it */

/* Lines of the LINE: markers. */
static unsigned int line_leaf, line_middle_calls_leaf, line_outer_calls_middle, line_plain;
static unsigned int line_cxx_add, line_cxx_calls_add;

struct func {
	uint64_t start; /* ELF virtual address */
	uint64_t size;
};

/* One frame as text, the way eu-addr2line prints it: "??" for what is not known. */
struct text_frame {
	char function[256];
	char file[256];
	unsigned int line;
};

static void tmp_path(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", tmpdir, name);

	assert_true(n > 0 && (size_t)n < len);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fmt_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf that fails the test instead of truncating. */
static void fmt_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		fail_msg("path too long: %s", buf);
}

/* Run a shell command; its exit status. */
static int run(const char *fmt, ...)
{
	char cmd[CMD_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	n = system(cmd);
	if (n)
		print_message("command failed (%d): %s\n", n, cmd);
	return n;
}

static bool have_tool(const char *name)
{
	char cmd[256];

	fmt_path(cmd, sizeof(cmd), "command -v '%s' >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

static void require_tool(const char *name)
{
	if (!have_tool(name)) {
		print_message("%s is not installed; not checked\n", name);
		skip();
	}
}

/* The C++ fixture, or a skip saying why there is none. */
static void require_cxx(void)
{
	if (!have_cxx) {
		print_message("no C++ compiler built tests/fixtures/tmpl.cpp (install g++); not "
			      "checked\n");
		skip();
	}
}

static struct sym_module_id file_id(const char *path)
{
	struct sym_module_id id = {.path = path};
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	id.dev = st.st_dev;
	id.inode = st.st_ino;
	return id;
}

/* The line of "LINE:name" in a fixture source. */
static unsigned int marker_line(const char *src, const char *name)
{
	char want[128], line[512];
	unsigned int n = 0;
	FILE *f = fopen(src, "r");

	if (!f)
		return 0;
	snprintf(want, sizeof(want), "/* LINE:%s */", name);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *elf;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(*fd >= 0);
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	return elf;
}

/* A function symbol of path's .symtab. */
static struct func elf_func(const char *path, const char *name)
{
	struct func fn = {0};
	Elf_Scn *scn = NULL;
	int fd;
	Elf *elf = open_elf(path, &fd);

	while ((scn = elf_nextscn(elf, scn)) && !fn.start) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				fn.start = sym.st_value;
				fn.size = sym.st_size;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	if (!fn.start || !fn.size)
		fail_msg("%s: no function symbol %s", path, name);
	return fn;
}

/* ELF virtual address -> file offset, through the PT_LOAD segments. */
static uint64_t file_offset(const char *path, uint64_t vaddr)
{
	uint64_t off = UINT64_MAX;
	size_t i, n;
	int fd;
	Elf *elf = open_elf(path, &fd);

	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(elf, (int)i, &ph));
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
			off = vaddr - ph.p_vaddr + ph.p_offset;
	}
	elf_end(elf);
	close(fd);
	if (off == UINT64_MAX)
		fail_msg("%s: 0x%" PRIx64 " is in no PT_LOAD segment", path, vaddr);
	return off;
}

/* The inline chain at vaddr of the module at path, as the symbolizer resolves it. */
static int resolve_at(struct symbolizer *s, const char *path, uint64_t vaddr,
		      struct sym_frame *frames, size_t max, size_t *n)
{
	struct sym_module_id id = file_id(path);

	return sym_resolve_inline(s, &id, path, file_offset(path, vaddr), frames, max, n);
}

static struct symbolizer *new_symbolizer(const char *root)
{
	struct symbolizer *s = symbolizer__new();

	assert_non_null(s);
	assert_int_equal(symbolizer__set_debug_root(s, root ? root : empty_root), 0);
	return s;
}

static void assert_frame(const struct sym_frame *f, const char *function, const char *file,
			 unsigned int line, bool inlined)
{
	assert_non_null(f->function);
	assert_string_equal(f->function, function);
	if (file) {
		assert_non_null(f->file);
		assert_string_equal(f->file, file);
	} else {
		assert_null(f->file);
	}
	assert_int_equal(f->line, line);
	assert_int_equal(f->inlined, inlined);
}

/* Does some address of fn resolve to exactly the chain want[0..nr)? */
static bool function_has_chain(struct symbolizer *s, const char *bin, struct func fn,
			       const struct sym_frame *want, size_t nr)
{
	struct sym_frame fr[MAX_FRAMES];
	uint64_t a;
	size_t n, i;

	for (a = fn.start; a < fn.start + fn.size; a++) {
		assert_int_equal(resolve_at(s, bin, a, fr, MAX_FRAMES, &n), 0);
		if (n != nr)
			continue;
		for (i = 0; i < n; i++) {
			if (!fr[i].function || strcmp(fr[i].function, want[i].function) ||
			    !fr[i].file || strcmp(fr[i].file, want[i].file) ||
			    fr[i].line != want[i].line || fr[i].inlined != want[i].inlined)
				break;
		}
		if (i == n)
			return true;
	}
	return false;
}

/* Copy of a fixture binary in tmpdir/sub/name, sub created. */
static void copy_fixture(const char *from, const char *sub, const char *name, char *to, size_t len)
{
	char dir[PATH_MAX];

	tmp_path(dir, sizeof(dir), sub);
	assert_int_equal(run("mkdir -p '%s' && cp '%s' '%s/%s'", dir, from, dir, name), 0);
	fmt_path(to, len, "%s/%s", dir, name);
}

/*
 * Split bin into bin (no DWARF, symbols kept) and debug (DWARF only), the way distributions
 * package debug info; with link, record debug's name and CRC in bin's .gnu_debuglink.
 */
static void split_debug(const char *bin, const char *debug, bool link)
{
	require_tool("objcopy");
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s'", bin, debug), 0);
	assert_int_equal(run("objcopy --strip-debug '%s'", bin), 0);
	if (link)
		assert_int_equal(run("objcopy --add-gnu-debuglink='%s' '%s'", debug, bin), 0);
}

/* The build-id of path as readelf prints it, into hex. */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[CMD_MAX], line[512];
	FILE *p;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		const char *at = strstr(line, "Build ID: ");

		if (at) {
			snprintf(hex, len, "%s", at + strlen("Build ID: "));
			hex[strcspn(hex, "\n")] = '\0';
		}
	}
	pclose(p);
}

/* The 3-frame chain of inl.c where leaf() is inlined into middle() into outer(). */
static void inl_chain(struct sym_frame want[3])
{
	want[0] = (struct sym_frame){"leaf", inl_src, line_leaf, true};
	want[1] = (struct sym_frame){"middle", inl_src, line_middle_calls_leaf, true};
	want[2] = (struct sym_frame){"outer", inl_src, line_outer_calls_middle, false};
}

static void dwarf_resolves_inline_chain_with_call_sites(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_frame want[3];

	(void)state;
	inl_chain(want);
	if (!function_has_chain(s, inl_bin, elf_func(inl_bin, "outer"), want, 3))
		fail_msg("no address of outer() resolves to leaf:%u <- middle:%u <- outer:%u",
			 line_leaf, line_middle_calls_leaf, line_outer_calls_middle);
	symbolizer__free(s);
}

static void dwarf_every_address_ends_in_the_out_of_line_function(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_frame fr[MAX_FRAMES];
	uint64_t a;
	size_t n, i;

	(void)state;
	for (a = fn.start; a < fn.start + fn.size; a++) {
		assert_int_equal(resolve_at(s, inl_bin, a, fr, MAX_FRAMES, &n), 0);
		assert_true(n >= 1 && n <= 3);
		assert_string_equal(fr[n - 1].function, "outer");
		assert_false(fr[n - 1].inlined);
		for (i = 0; i + 1 < n; i++)
			assert_true(fr[i].inlined);
	}
	symbolizer__free(s);
}

static void dwarf_plain_function_has_one_frame_with_its_line(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_frame want = {"plain", inl_src, line_plain, false};

	(void)state;
	if (!function_has_chain(s, inl_bin, elf_func(inl_bin, "plain"), &want, 1))
		fail_msg("no address of plain() resolves to plain at line %u", line_plain);
	symbolizer__free(s);
}

static void dwarf_chain_longer_than_max_gives_enospc_and_innermost_frames(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_frame fr[MAX_FRAMES], want[3];
	uint64_t a;
	size_t n;

	(void)state;
	inl_chain(want);
	for (a = fn.start; a < fn.start + fn.size; a++) {
		assert_int_equal(resolve_at(s, inl_bin, a, fr, MAX_FRAMES, &n), 0);
		if (n == 3)
			break;
	}
	assert_int_equal(n, 3);
	assert_int_equal(resolve_at(s, inl_bin, a, fr, 2, &n), -ENOSPC);
	assert_int_equal(n, 2);
	assert_string_equal(fr[0].function, "leaf");
	assert_string_equal(fr[1].function, "middle");
	assert_int_equal(resolve_at(s, inl_bin, a, fr, 0, &n), -ENOSPC);
	assert_int_equal(n, 0);
	symbolizer__free(s);
}

static void dwarf_offset_outside_segments_gives_no_frames(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_module_id id = file_id(inl_bin);
	struct sym_frame fr[MAX_FRAMES];
	size_t n = 99;

	(void)state;
	assert_int_equal(sym_resolve_inline(s, &id, inl_bin, 1ULL << 40, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(sym_resolve_inline(s, &id, inl_bin, 0, fr, MAX_FRAMES, NULL), -EINVAL);
	symbolizer__free(s);
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/*
 * One frame of eu-addr2line -f -i output, or of llvm-symbolizer's in GNU style: fn_line holds
 * its first line ("NAME" or "NAME inlined at ..."), the next is "FILE:LINE[:COLUMN]"; fn_line
 * is then refilled with the line after. False, reading nothing, when fn_line starts the next
 * address's record ("0x...") or is empty.
 */
/* src into dst[size], cut to fit (a name or path longer than the reference's field). */
static void copy_cut(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static bool parse_eu_frame(FILE *p, char *fn_line, size_t len, struct text_frame *t)
{
	char loc[PATH_MAX + 64], *at, *c;

	if (fn_line[0] == '\0' || strncmp(fn_line, "0x", 2) == 0)
		return false;
	at = strstr(fn_line, " inlined at ");
	if (at)
		*at = '\0';
	copy_cut(t->function, sizeof(t->function), fn_line);
	if (!fgets(loc, sizeof(loc), p))
		loc[0] = '\0';
	loc[strcspn(loc, "\n")] = '\0';
	at = strstr(loc, " (discriminator "); /* GNU style adds it */
	if (at)
		*at = '\0';
	t->line = 0;
	c = strrchr(loc, ':');
	if (c && all_digits(c + 1)) {
		*c = '\0';
		t->line = (unsigned int)strtoul(c + 1, NULL, 10);
		c = strrchr(loc, ':');
		if (c && all_digits(c + 1)) {
			*c = '\0'; /* that was the column */
			t->line = (unsigned int)strtoul(c + 1, NULL, 10);
		}
	}
	copy_cut(t->file, sizeof(t->file), loc);
	if (!fgets(fn_line, (int)len, p))
		fn_line[0] = '\0';
	fn_line[strcspn(fn_line, "\n")] = '\0';
	return true;
}

enum reference { EU_ADDR2LINE, LLVM_SYMBOLIZER };

/* The reference tool's frames for each address: out[i][0..nr[i]). */
static void reference_frames(enum reference tool, const char *bin, const uint64_t *addrs, size_t n,
			     bool demangle, struct text_frame (*out)[MAX_FRAMES], size_t *nr)
{
	char list[PATH_MAX], cmd[CMD_MAX], line[PATH_MAX + 64];
	size_t i = 0;
	FILE *f, *p;

	tmp_path(list, sizeof(list), "ref-addrs");
	f = fopen(list, "w");
	assert_non_null(f);
	for (i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	if (tool == EU_ADDR2LINE)
		fmt_path(cmd, sizeof(cmd), "eu-addr2line -a -f -i %s -e '%s' < '%s'",
			 demangle ? "-C" : "", bin, list);
	else
		fmt_path(cmd, sizeof(cmd),
			 "llvm-symbolizer --obj='%s' --inlining --output-style=GNU -a %s < '%s'",
			 bin, demangle ? "--demangle" : "--no-demangle", list);
	p = popen(cmd, "r");
	assert_non_null(p);
	line[0] = '\0';
	if (fgets(line, sizeof(line), p))
		line[strcspn(line, "\n")] = '\0';
	for (i = 0; i < n; i++) {
		if (strtoull(line, NULL, 16) != addrs[i])
			fail_msg("%s: expected 0x%" PRIx64 ", read '%s'", cmd, addrs[i], line);
		if (!fgets(line, sizeof(line), p))
			line[0] = '\0';
		line[strcspn(line, "\n")] = '\0';
		/* Frames past MAX_FRAMES are counted (so the counts differ) but not kept. */
		nr[i] = 0;
		while (parse_eu_frame(p, line, sizeof(line),
				      &out[i][nr[i] < MAX_FRAMES ? nr[i] : 0]))
			nr[i]++;
	}
	assert_int_equal(pclose(p), 0);
}

static void to_text(const struct sym_frame *f, struct text_frame *t)
{
	snprintf(t->function, sizeof(t->function), "%s", f->function ? f->function : "??");
	snprintf(t->file, sizeof(t->file), "%s", f->file ? f->file : "??");
	t->line = f->file ? f->line : 0;
}

static bool same_text(const struct text_frame *a, const struct text_frame *b)
{
	return strcmp(a->function, b->function) == 0 && strcmp(a->file, b->file) == 0 &&
	       a->line == b->line;
}

/* Function symbols by name, to tell aliases (two names of one address) apart. */
struct named_sym {
	const char *name;
	uint64_t addr;
};

struct sym_names {
	struct named_sym *v;
	size_t n;
	Elf *elf; /* owns the names */
	int fd;
};

static int named_sym_cmp(const void *a, const void *b)
{
	return strcmp(((const struct named_sym *)a)->name, ((const struct named_sym *)b)->name);
}

static uint64_t sym_addr(const struct sym_names *t, const char *name)
{
	struct named_sym key = {.name = name}, *hit;

	if (!t)
		return 0;
	hit = bsearch(&key, t->v, t->n, sizeof(key), named_sym_cmp);
	return hit ? hit->addr : 0;
}

/* Same file and line, and the same function or two names of one address. */
static bool same_or_alias(const struct text_frame *a, const struct text_frame *b,
			  const struct sym_names *aliases)
{
	uint64_t addr;

	if (same_text(a, b))
		return true;
	if (strcmp(a->file, b->file) != 0 || a->line != b->line)
		return false;
	addr = sym_addr(aliases, a->function);
	return addr && addr == sym_addr(aliases, b->function);
}

/*
 * Number of addrs where the symbolizer and the reference tool disagree; each is printed. With
 * aliases, a function named by another symbol at the same address is no disagreement.
 */
static size_t compare_with(enum reference tool, struct symbolizer *s, const char *bin,
			   const uint64_t *addrs, size_t n, bool demangle,
			   const struct sym_names *aliases)
{
	struct text_frame(*ref)[MAX_FRAMES] = calloc(n, sizeof(*ref));
	size_t *nr = calloc(n, sizeof(*nr)), i, k, bad = 0;
	struct sym_frame fr[MAX_FRAMES];
	struct text_frame t;

	assert_non_null(ref);
	assert_non_null(nr);
	reference_frames(tool, bin, addrs, n, demangle, ref, nr);
	for (i = 0; i < n; i++) {
		size_t got;

		assert_int_equal(resolve_at(s, bin, addrs[i], fr, MAX_FRAMES, &got), 0);
		for (k = 0; k < got && k < nr[i]; k++) {
			to_text(&fr[k], &t);
			if (!same_or_alias(&t, &ref[i][k], aliases))
				break;
		}
		if (k == got && got == nr[i])
			continue;
		bad++;
		print_message("0x%" PRIx64 ": %zu frames, %s %zu; first difference at %zu:"
			      " %s %s:%u vs %s %s:%u\n",
			      addrs[i], got,
			      tool == EU_ADDR2LINE ? "eu-addr2line" : "llvm-symbolizer", nr[i], k,
			      k < got ? fr[k].function : "-",
			      k < got && fr[k].file ? fr[k].file : "-", k < got ? fr[k].line : 0,
			      k < nr[i] ? ref[i][k].function : "-",
			      k < nr[i] ? ref[i][k].file : "-", k < nr[i] ? ref[i][k].line : 0);
	}
	free(ref);
	free(nr);
	return bad;
}

/* Every address of the named functions. */
static uint64_t *function_addresses(const char *bin, const char *const *names, size_t *n)
{
	uint64_t *addrs = NULL, a;
	size_t i, cap = 0;

	*n = 0;
	for (i = 0; names[i]; i++) {
		struct func fn = elf_func(bin, names[i]);

		for (a = fn.start; a < fn.start + fn.size; a++) {
			if (*n == cap) {
				cap = cap ? cap * 2 : 256;
				addrs = realloc(addrs, cap * sizeof(*addrs));
				assert_non_null(addrs);
			}
			addrs[(*n)++] = a;
		}
	}
	return addrs;
}

static void dwarf_matches_eu_addr2line_at_every_address_of_c_fixture(void **state)
{
	static const char *const names[] = {"outer", "plain", "main", "perch_asm_fn", NULL};
	struct symbolizer *s = new_symbolizer(NULL);
	uint64_t *addrs;
	size_t n;

	(void)state;
	require_tool("eu-addr2line");
	addrs = function_addresses(inl_bin, names, &n);
	assert_int_equal(compare_with(EU_ADDR2LINE, s, inl_bin, addrs, n, true, NULL), 0);
	free(addrs);
	symbolizer__free(s);
}

static void dwarf_matches_eu_addr2line_at_every_address_of_cxx_fixture(void **state)
{
	static const char *const names[] = {CXX_SUM_RAW, "main", NULL};
	struct symbolizer *s = new_symbolizer(NULL);
	uint64_t *addrs;
	size_t n;

	(void)state;
	require_cxx();
	require_tool("eu-addr2line");
	addrs = function_addresses(tmpl_bin, names, &n);
	assert_int_equal(compare_with(EU_ADDR2LINE, s, tmpl_bin, addrs, n, true, NULL), 0);
	symbolizer__set_demangle(s, false);
	assert_int_equal(compare_with(EU_ADDR2LINE, s, tmpl_bin, addrs, n, false, NULL), 0);
	free(addrs);
	symbolizer__free(s);
}

static void dwarf_matches_llvm_symbolizer_on_clang_built_fixtures(void **state)
{
	static const char *const c_names[] = {"outer", "plain", "main", "perch_asm_fn", NULL};
	static const char *const cxx_names[] = {CXX_SUM_RAW, "main", NULL};
	struct symbolizer *s = new_symbolizer(NULL);
	char dir[PATH_MAX], c_bin[PATH_MAX], cxx_bin[PATH_MAX];
	uint64_t *addrs;
	size_t n;

	(void)state;
	require_tool("clang");
	require_tool("clang++");
	require_tool("llvm-symbolizer");
	/* clang's DWARF 5 uses forms gcc's does not (addrx, rnglistx, strx). */
	tmp_path(dir, sizeof(dir), "clang");
	fmt_path(c_bin, sizeof(c_bin), "%s/inl", dir);
	fmt_path(cxx_bin, sizeof(cxx_bin), "%s/tmpl", dir);
	assert_int_equal(run("mkdir -p '%s' && clang -O2 -g -o '%s' '%s' && clang++ -O2 -g -o '%s' "
			     "'%s'",
			     dir, c_bin, inl_src, cxx_bin, tmpl_src),
			 0);
	addrs = function_addresses(c_bin, c_names, &n);
	assert_int_equal(compare_with(LLVM_SYMBOLIZER, s, c_bin, addrs, n, true, NULL), 0);
	free(addrs);
	addrs = function_addresses(cxx_bin, cxx_names, &n);
	assert_int_equal(compare_with(LLVM_SYMBOLIZER, s, cxx_bin, addrs, n, true, NULL), 0);
	free(addrs);
	symbolizer__free(s);
}

static void dwarf_cxx_names_are_demangled(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_frame want[2] = {
		{CXX_ADD, tmpl_src, line_cxx_add, true},
		{CXX_SUM, tmpl_src, line_cxx_calls_add, false},
	};

	(void)state;
	require_cxx();
	if (!function_has_chain(s, tmpl_bin, elf_func(tmpl_bin, CXX_SUM_RAW), want, 2))
		fail_msg("no address of sum<int> resolves to " CXX_ADD ":%u <- " CXX_SUM ":%u",
			 line_cxx_add, line_cxx_calls_add);
	symbolizer__free(s);
}

static void dwarf_cxx_names_stay_mangled_when_demangling_is_off(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_frame want[2] = {
		{CXX_ADD_RAW, tmpl_src, line_cxx_add, true},
		{CXX_SUM_RAW, tmpl_src, line_cxx_calls_add, false},
	};

	(void)state;
	require_cxx();
	symbolizer__set_demangle(s, false);
	if (!function_has_chain(s, tmpl_bin, elf_func(tmpl_bin, CXX_SUM_RAW), want, 2))
		fail_msg("no address of sum<int> resolves to the raw names");
	symbolizer__set_demangle(s, true);
	want[0].function = CXX_ADD;
	want[1].function = CXX_SUM;
	if (!function_has_chain(s, tmpl_bin, elf_func(tmpl_bin, CXX_SUM_RAW), want, 2))
		fail_msg("demangling did not come back on");
	symbolizer__free(s);
}

static void dwarf_symbol_table_names_are_demangled_without_debug_info(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_frame fr[MAX_FRAMES];
	char bin[PATH_MAX], debug[PATH_MAX];
	struct func fn;
	size_t n;

	(void)state;
	require_cxx();
	fn = elf_func(tmpl_bin, CXX_SUM_RAW);
	copy_fixture(tmpl_bin, "cxx-nodebug", "tmpl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "cxx-nodebug/tmpl.debug");
	split_debug(bin, debug, false);
	assert_int_equal(resolve_at(s, bin, fn.start + 1, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], CXX_SUM, NULL, 0, false);
	symbolizer__set_demangle(s, false);
	assert_int_equal(resolve_at(s, bin, fn.start + 1, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], CXX_SUM_RAW, NULL, 0, false);
	symbolizer__free(s);
}

/* The inline chain resolves in bin, and its DWARF came from debug_path. */
static void assert_dwarf_from(struct symbolizer *s, const char *bin, const char *debug_path)
{
	struct sym_module_id id = file_id(bin);
	struct sym_frame want[3];
	const char *from;

	inl_chain(want);
	if (!function_has_chain(s, bin, elf_func(bin, "outer"), want, 3))
		fail_msg("%s: no address of outer() resolves to the inline chain", bin);
	assert_int_equal(sym_debug_path(s, &id, bin, &from), 0);
	assert_non_null(from);
	assert_string_equal(from, debug_path);
}

static void dwarf_uses_debug_info_in_the_binary_itself(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);

	(void)state;
	assert_dwarf_from(s, inl_bin, inl_bin);
	symbolizer__free(s);
}

static void dwarf_finds_separate_debug_file_by_build_id(void **state)
{
	char bin[PATH_MAX], debug[PATH_MAX], root[PATH_MAX], hex[128], dir[PATH_MAX];
	struct symbolizer *s;

	(void)state;
	copy_fixture(inl_bin, "by-build-id", "inl", bin, sizeof(bin));
	readelf_build_id(bin, hex, sizeof(hex));
	assert_true(strlen(hex) > 2);
	tmp_path(root, sizeof(root), "by-build-id-root");
	fmt_path(dir, sizeof(dir), "%s/.build-id/%.2s", root, hex);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	fmt_path(debug, sizeof(debug), "%s/%s.debug", dir, hex + 2);
	split_debug(bin, debug, false);
	s = new_symbolizer(root);
	assert_dwarf_from(s, bin, debug);
	symbolizer__free(s);
}

/* bin (a copy in tmpdir/sub) split into ROOT/.build-id/xx/rest.debug (root: tmpdir/sub-root)
 * with its DWARF sections compressed (zlib, as Debian ships them); the debug file's path into
 * debug. */
static void split_compressed_copy(const char *sub, const char *bin, char *root, char *debug,
				  size_t len)
{
	char hex[128], dir[PATH_MAX], name[PATH_MAX];

	readelf_build_id(bin, hex, sizeof(hex));
	assert_true(strlen(hex) > 2);
	fmt_path(name, sizeof(name), "%s-root", sub);
	tmp_path(root, len, name);
	fmt_path(dir, sizeof(dir), "%s/.build-id/%.2s", root, hex);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	fmt_path(debug, len, "%s/%s.debug", dir, hex + 2);
	split_debug(bin, debug, false);
	assert_int_equal(run("objcopy --compress-debug-sections=zlib '%s'", debug), 0);
}

/* The same for a fresh copy of inl (path into bin). */
static void split_compressed(const char *sub, char *bin, char *root, char *debug, size_t len)
{
	copy_fixture(inl_bin, sub, "inl", bin, len);
	split_compressed_copy(sub, bin, root, debug, len);
}

/* How many .debug_* sections of path that the DWARF index reads are compressed (SHF_COMPRESSED);
 * with all, every compressed one. */
static int compressed_sections(const char *path, bool all)
{
	int fd, n = 0;
	Elf *elf = open_elf(path, &fd);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && strncmp(name, ".debug_", 7) == 0 && (sh.sh_flags & SHF_COMPRESSED) &&
		    (all || !dwarf_index__unused_section(name)))
			n++;
	}
	elf_end(elf);
	close(fd);
	return n;
}

/* bin's DWARF, found under root, is read through its copy in a new cache directory
 * tmpdir/cache_sub (copy: the copy's path). */
static void assert_dwarf_from_copy(const char *bin, const char *root, const char *cache_sub,
				   char *copy, size_t len)
{
	char cache[PATH_MAX], hex[128];
	struct symbolizer *s;

	tmp_path(cache, sizeof(cache), cache_sub);
	assert_int_equal(mkdir(cache, 0700), 0);
	readelf_build_id(bin, hex, sizeof(hex));
	fmt_path(copy, len, "%s/%s.debug", cache, hex);
	s = new_symbolizer(root);
	assert_int_equal(symbolizer__set_debug_cache(s, cache), 0);
	assert_dwarf_from(s, bin, copy);
	symbolizer__free(s);
}

static void dwarf_compressed_debug_file_is_read_through_a_plain_copy(void **state)
{
	char bin[PATH_MAX], root[PATH_MAX], debug[PATH_MAX], copy[PATH_MAX];
	struct symbolizer *s;
	struct stat st;

	(void)state;
	split_compressed("plain-copy", bin, root, debug, sizeof(bin));
	assert_true(compressed_sections(debug, false) >= 3); /* info, abbrev, line at least */
	/* The same chains as from the compressed file itself, read from the copy. */
	assert_dwarf_from_copy(bin, root, "plain-copy-cache", copy, sizeof(copy));
	assert_int_equal(compressed_sections(copy, false), 0);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* Without a cache directory: the compressed file, as before. */
	s = new_symbolizer(root);
	assert_dwarf_from(s, bin, debug);
	symbolizer__free(s);
}

/* debugcache__open() in cache on the debug file at debug, said to carry build-id hex. */
static int open_plain_copy(const char *cache, const char *debug, const char *hex, char **path)
{
	uint8_t id[64];
	size_t len = 0;
	int fd, out;

	for (; hex[2 * len] && hex[2 * len + 1] && len < sizeof(id); len++)
		assert_int_equal(sscanf(hex + 2 * len, "%2hhx", &id[len]), 1);
	fd = open(debug, O_RDONLY);
	assert_true(fd >= 0);
	out = debugcache__open(cache, fd, id, len, path);
	close(fd);
	return out;
}

/* The copy of debug (bin's) in cache: its inode; its path checked to be want. */
static ino_t plain_copy(const char *cache, const char *debug, const char *bin, const char *want)
{
	char hex[128], *path = NULL;
	struct stat st;
	int out;

	readelf_build_id(bin, hex, sizeof(hex));
	out = open_plain_copy(cache, debug, hex, &path);
	assert_true(out >= 0);
	assert_non_null(path);
	assert_string_equal(path, want);
	assert_int_equal(fstat(out, &st), 0);
	close(out);
	free(path);
	return st.st_ino;
}

static void dwarf_plain_copy_is_made_once_and_replaced_when_not_to_be_trusted(void **state)
{
	char bin[PATH_MAX], root[PATH_MAX], debug[PATH_MAX], cache[PATH_MAX], copy[PATH_MAX];
	char plain[PATH_MAX], hex[128], *path = NULL;
	uint8_t id[20] = {0};
	struct stat st;
	ino_t first;
	int fd;

	(void)state;
	split_compressed("plain-once", bin, root, debug, sizeof(bin));
	tmp_path(cache, sizeof(cache), "plain-once-cache");
	assert_int_equal(mkdir(cache, 0700), 0);
	readelf_build_id(bin, hex, sizeof(hex));
	fmt_path(copy, sizeof(copy), "%s/%s.debug", cache, hex);

	first = plain_copy(cache, debug, bin, copy);
	assert_int_equal(plain_copy(cache, debug, bin, copy), first); /* kept, not made again */

	/* Writable by others: replaced by a fresh copy. */
	assert_int_equal(chmod(copy, 0666), 0);
	first = plain_copy(cache, debug, bin, copy);
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Another build's debug file under the name: replaced. */
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s'", other_bin, copy), 0);
	assert_true(plain_copy(cache, debug, bin, copy) != 0);
	assert_int_equal(compressed_sections(copy, false), 0);
	assert_int_equal(run("readelf -n '%s' 2>/dev/null | grep -q 'Build ID: %s'", copy, hex), 0);

	/* Nothing compressed: nothing to gain, nothing written. */
	fmt_path(plain, sizeof(plain), "%s/plain.debug", root);
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s'", inl_bin, plain), 0);
	fd = open(plain, O_RDONLY);
	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(id); i++)
		assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &id[i]), 1);
	assert_int_equal(debugcache__open(cache, fd, id, sizeof(id), &path), -ENOENT);
	close(fd);
	/* A build-id the file does not carry: no copy (it could never be found again). */
	fd = open(debug, O_RDONLY);
	assert_true(fd >= 0);
	id[0] ^= 0xff;
	assert_int_equal(debugcache__open(cache, fd, id, sizeof(id), &path), -ENOENT);
	assert_null(path);
	close(fd);
	assert_int_equal(run("test $(ls -A '%s' | wc -l) -eq 1", cache), 0);
}

/* A cache directory of another user's: no copy of root's goes into it (the file is read as it
 * is); a FIFO under a copy's name in one's own: passed over at once and replaced by a copy. */
static void dwarf_plain_copy_not_in_dir_of_another_user_nor_from_fifo(void **state)
{
	char bin[PATH_MAX], root[PATH_MAX], debug[PATH_MAX], cache[PATH_MAX], copy[PATH_MAX];
	char hex[128], *path = NULL;
	struct stat st;

	(void)state;
	split_compressed("plain-guard", bin, root, debug, sizeof(bin));
	tmp_path(cache, sizeof(cache), "plain-guard-cache");
	if (make_foreign_dir(cache))
		skip(); /* chown needs root */
	readelf_build_id(bin, hex, sizeof(hex));
	assert_int_equal(open_plain_copy(cache, debug, hex, &path), -EPERM);
	assert_null(path);
	assert_true(dir_is_empty(cache));

	assert_int_equal(chown(cache, geteuid(), getegid()), 0);
	fmt_path(copy, sizeof(copy), "%s/%s.debug", cache, hex);
	assert_int_equal(mkfifo(copy, 0600), 0);
	deadline_start(10);
	plain_copy(cache, debug, bin, copy);
	deadline_stop();
	assert_int_equal(lstat(copy, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void dwarf_rejects_build_id_path_holding_another_build(void **state)
{
	char bin[PATH_MAX], debug[PATH_MAX], root[PATH_MAX], hex[128], dir[PATH_MAX];
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_frame fr[MAX_FRAMES];
	struct sym_module_id id;
	struct symbolizer *s;
	const char *from;
	size_t n;

	(void)state;
	copy_fixture(inl_bin, "wrong-build-id", "inl", bin, sizeof(bin));
	readelf_build_id(bin, hex, sizeof(hex));
	tmp_path(root, sizeof(root), "wrong-build-id-root");
	fmt_path(dir, sizeof(dir), "%s/.build-id/%.2s", root, hex);
	fmt_path(debug, sizeof(debug), "%s/%s.debug", dir, hex + 2);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	split_debug(bin, debug, false);
	/* The right name, the debug file of another program (another build-id) in it. */
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s'", other_bin, debug), 0);
	s = new_symbolizer(root);
	assert_int_equal(resolve_at(s, bin, fn.start, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], "outer", NULL, 0, false);
	id = file_id(bin);
	assert_int_equal(sym_debug_path(s, &id, bin, &from), -ENODATA);
	symbolizer__free(s);
}

static void dwarf_finds_debuglink_file_next_to_the_binary(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX], debug[PATH_MAX];

	(void)state;
	copy_fixture(inl_bin, "link-next", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "link-next/inl.debug");
	split_debug(bin, debug, true);
	assert_dwarf_from(s, bin, debug);
	symbolizer__free(s);
}

static void dwarf_finds_debuglink_file_in_dot_debug_directory(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX], debug[PATH_MAX], moved[PATH_MAX];

	(void)state;
	copy_fixture(inl_bin, "link-dot-debug", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "link-dot-debug/inl.debug");
	split_debug(bin, debug, true);
	tmp_path(moved, sizeof(moved), "link-dot-debug/.debug/inl.debug");
	assert_int_equal(
		run("mkdir -p '%s/link-dot-debug/.debug' && mv '%s' '%s'", tmpdir, debug, moved),
		0);
	assert_dwarf_from(s, bin, moved);
	symbolizer__free(s);
}

static void dwarf_finds_debuglink_file_under_debug_root(void **state)
{
	char bin[PATH_MAX], debug[PATH_MAX], root[PATH_MAX], moved[CMD_MAX];
	struct symbolizer *s;

	(void)state;
	copy_fixture(inl_bin, "link-root", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "link-root/inl.debug");
	split_debug(bin, debug, true);
	/* ROOT + the binary's directory, as /usr/lib/debug/usr/bin/x.debug for /usr/bin/x. */
	tmp_path(root, sizeof(root), "link-root-root");
	fmt_path(moved, sizeof(moved), "%s%s/link-root/inl.debug", root, tmpdir);
	assert_int_equal(
		run("mkdir -p '%s%s/link-root' && mv '%s' '%s'", root, tmpdir, debug, moved), 0);
	s = new_symbolizer(root);
	assert_dwarf_from(s, bin, moved);
	symbolizer__free(s);
}

static void dwarf_rejects_debuglink_file_with_wrong_crc(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX], debug[PATH_MAX], other[PATH_MAX];
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_frame fr[MAX_FRAMES];
	struct sym_module_id id;
	const char *from;
	size_t n;

	(void)state;
	copy_fixture(inl_bin, "link-bad-crc", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "link-bad-crc/inl.debug");
	split_debug(bin, debug, true);
	/* Same name, other contents: the debug file of another build. */
	tmp_path(other, sizeof(other), "link-bad-crc/other.debug");
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s' && mv '%s' '%s'", other_bin,
			     other, other, debug),
			 0);
	assert_int_equal(resolve_at(s, bin, fn.start, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], "outer", NULL, 0, false);
	id = file_id(bin);
	assert_int_equal(sym_debug_path(s, &id, bin, &from), -ENODATA);
	assert_null(from);
	symbolizer__free(s);
}

/*
 * Two copies of inl (and of tmpl, with cxx and a C++ compiler) in tmpdir/sub, dwz'd together, as
 * Debian runs dwz on -dbgsym packages: what the files share moves to sub/common.debug, which
 * .gnu_debugaltlink names as alt_name (NULL: its absolute path). The first copies' paths go to
 * c1 and x1 (PATH_MAX bytes each; x1 empty without the C++ pair).
 */
static void dwz_fixtures(const char *sub, const char *alt_name, bool cxx, char *c1, char *x1)
{
	char dir[PATH_MAX], alt[PATH_MAX], c2[PATH_MAX], x2[PATH_MAX];

	require_tool("dwz");
	copy_fixture(inl_bin, sub, "inl1", c1, PATH_MAX);
	copy_fixture(inl_bin, sub, "inl2", c2, sizeof(c2));
	x1[0] = '\0';
	if (cxx && have_cxx) {
		copy_fixture(tmpl_bin, sub, "tmpl1", x1, PATH_MAX);
		copy_fixture(tmpl_bin, sub, "tmpl2", x2, sizeof(x2));
	}
	tmp_path(dir, sizeof(dir), sub);
	fmt_path(alt, sizeof(alt), "%s/common.debug", dir);
	assert_int_equal(run("cd '%s' && dwz -m common.debug -M '%s' inl1 inl2 %s", dir,
			     alt_name ? alt_name : alt, x1[0] ? "tmpl1 tmpl2" : ""),
			 0);
	assert_int_equal(run("readelf -S '%s' 2>/dev/null | grep -q gnu_debugaltlink", c1), 0);
}

static void dwarf_follows_dwz_alt_file_for_shared_entries(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char c1[PATH_MAX], x1[PATH_MAX];
	struct sym_frame want[3];

	(void)state;
	/* Shared entries are referenced with DW_FORM_GNU_ref_alt/strp_alt. */
	dwz_fixtures("dwz", NULL, true, c1, x1);
	inl_chain(want);
	if (!function_has_chain(s, c1, elf_func(c1, "outer"), want, 3))
		fail_msg("dwz'd inl: no address of outer() resolves to the inline chain");
	if (!have_cxx) {
		symbolizer__free(s);
		require_cxx();
	}
	want[0] = (struct sym_frame){CXX_ADD, tmpl_src, line_cxx_add, true};
	want[1] = (struct sym_frame){CXX_SUM, tmpl_src, line_cxx_calls_add, false};
	if (!function_has_chain(s, x1, elf_func(x1, CXX_SUM_RAW), want, 2))
		fail_msg("dwz'd tmpl: no address of sum<int> resolves to the inline chain");
	symbolizer__free(s);
}

/* bin dwz'd together with a second copy of itself, then split into ROOT/.build-id/xx/rest.debug
 * with compressed DWARF. The alt file is named alt_name in .gnu_debugaltlink: an absolute path,
 * where it is moved, or a name relative to the debug file, next to which it is moved. */
static void dwz_split_compressed(const char *sub, const char *alt_name, char *bin, char *root,
				 char *debug, size_t len)
{
	char dir[PATH_MAX], x1[PATH_MAX];

	dwz_fixtures(sub, alt_name, false, bin, x1); /* bin: PATH_MAX bytes, as every caller's */
	tmp_path(dir, sizeof(dir), sub);
	split_compressed_copy(sub, bin, root, debug, len);
	if (alt_name[0] == '/')
		assert_int_equal(run("mv '%s/common.debug' '%s'", dir, alt_name), 0);
	else
		assert_int_equal(
			run("mv '%s/common.debug' \"$(dirname '%s')/%s\"", dir, debug, alt_name),
			0);
}

static void dwarf_plain_copy_keeps_the_dwz_alt_file_in_reach(void **state)
{
	char bin[PATH_MAX], root[PATH_MAX], debug[PATH_MAX], cache[PATH_MAX], copy[PATH_MAX];
	char alt[PATH_MAX];
	struct symbolizer *s;

	(void)state;
	/* Named by an absolute path (as Debian's /usr/lib/debug/.dwz/...): read from the copy. */
	tmp_path(alt, sizeof(alt), "dwz-abs-common.debug");
	dwz_split_compressed("dwz-abs", alt, bin, root, debug, sizeof(bin));
	assert_int_equal(run("readelf -S '%s' 2>/dev/null | grep -q gnu_debugaltlink", debug), 0);
	assert_dwarf_from_copy(bin, root, "dwz-abs-cache", copy, sizeof(copy));

	/* Named relative to the debug file: a copy elsewhere would not find it; the file itself
	 * is read, and nothing is written. */
	dwz_split_compressed("dwz-rel", "common.debug", bin, root, debug, sizeof(bin));
	tmp_path(cache, sizeof(cache), "dwz-rel-cache");
	assert_int_equal(mkdir(cache, 0700), 0);
	s = new_symbolizer(root);
	assert_int_equal(symbolizer__set_debug_cache(s, cache), 0);
	assert_dwarf_from(s, bin, debug);
	symbolizer__free(s);
	assert_int_equal(run("test -z \"$(ls -A '%s')\"", cache), 0);
}

static void dwarf_without_debug_info_falls_back_to_symbol_table(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX], debug[PATH_MAX];
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_frame fr[MAX_FRAMES];
	size_t n;

	(void)state;
	copy_fixture(inl_bin, "nodebug", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "nodebug/inl.debug");
	split_debug(bin, debug, false);
	assert_int_equal(resolve_at(s, bin, fn.start + fn.size - 1, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], "outer", NULL, 0, false);
	symbolizer__free(s);
}

static void dwarf_stripped_binary_takes_local_names_from_debug_file_symtab(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct func fn = elf_func(inl_bin, "perch_asm_fn");
	char bin[PATH_MAX], debug[PATH_MAX];
	struct sym_frame fr[MAX_FRAMES], want[3];
	size_t n;

	(void)state;
	/* As Debian ships libraries: no .symtab in the binary, all of it in the debug file. */
	copy_fixture(inl_bin, "stripped-linked", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "stripped-linked/inl.debug");
	require_tool("objcopy");
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-all '%s' && "
			     "objcopy --add-gnu-debuglink='%s' '%s'",
			     bin, debug, bin, debug, bin),
			 0);
	assert_int_equal(resolve_at(s, bin, fn.start, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_non_null(fr[0].function);
	assert_string_equal(fr[0].function, "perch_asm_fn");
	inl_chain(want);
	if (!function_has_chain(s, bin, elf_func(inl_bin, "outer"), want, 3))
		fail_msg("stripped inl: no address of outer() resolves to the inline chain");
	symbolizer__free(s);
}

static void dwarf_fully_stripped_binary_resolves_no_frame(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX];
	struct func fn = elf_func(inl_bin, "outer");
	struct sym_module_id id;
	struct sym_frame fr[MAX_FRAMES];
	const char *hex;
	size_t n = 99;

	(void)state;
	copy_fixture(inl_bin, "stripped", "inl", bin, sizeof(bin));
	require_tool("strip");
	assert_int_equal(run("strip --strip-all '%s'", bin), 0);
	id = file_id(bin);
	/* Nothing names it but the .eh_frame FDE, which this test does not ask for. */
	symbolizer__set_infer_bounds(s, false);
	assert_int_equal(
		sym_resolve_inline(s, &id, bin, file_offset(bin, fn.start), fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 0);
	/* Stripping keeps the build-id note. */
	assert_int_equal(sym_build_id(s, &id, bin, &hex), 0);
	symbolizer__free(s);
}

static void dwarf_index_outlives_the_debug_file(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	char bin[PATH_MAX], debug[PATH_MAX];
	struct func fn = elf_func(inl_bin, "plain");
	struct sym_frame fr[MAX_FRAMES], want[3];
	struct sym_module_id id;
	size_t n;

	(void)state;
	copy_fixture(inl_bin, "gone", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "gone/inl.debug");
	split_debug(bin, debug, true);
	id = file_id(bin);
	assert_int_equal(
		sym_resolve_inline(s, &id, bin, file_offset(bin, fn.start), fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(unlink(debug), 0);
	/* Every later lookup is answered from the index built by the first. */
	inl_chain(want);
	if (!function_has_chain(s, bin, elf_func(bin, "outer"), want, 3))
		fail_msg("lookups after the debug file was deleted lost the inline chain");
	symbolizer__free(s);
}

static void dwarf_build_id_is_the_gnu_build_id_note_in_hex(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_module_id id = file_id(inl_bin);
	char want[128], bin[PATH_MAX];
	const char *hex;

	(void)state;
	readelf_build_id(inl_bin, want, sizeof(want));
	assert_true(strlen(want) >= 16);
	assert_int_equal(sym_build_id(s, &id, inl_bin, &hex), 0);
	assert_non_null(hex);
	assert_string_equal(hex, want);

	copy_fixture(inl_bin, "no-build-id", "inl", bin, sizeof(bin));
	require_tool("objcopy");
	assert_int_equal(run("objcopy --remove-section=.note.gnu.build-id '%s'", bin), 0);
	id = file_id(bin);
	assert_int_equal(sym_build_id(s, &id, bin, &hex), -ENODATA);
	assert_null(hex);
	symbolizer__free(s);
}

static void dwarf_setters_reject_bad_arguments(void **state)
{
	struct symbolizer *s = new_symbolizer(NULL);

	(void)state;
	assert_int_equal(symbolizer__set_debug_root(s, "relative/dir"), -EINVAL);
	assert_int_equal(symbolizer__set_debug_root(s, NULL), -EINVAL);
	assert_int_equal(symbolizer__set_debug_root(NULL, "/usr/lib/debug"), -EINVAL);
	symbolizer__set_demangle(NULL, false);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

/* libc's separate debug file where Debian's libc6-dbg puts it, when installed. */
static bool libc_debug_file(const char *libc, char *debug, size_t len)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module_id id = file_id(libc);
	const char *hex;
	bool ok;

	assert_non_null(s);
	ok = sym_build_id(s, &id, libc, &hex) == 0;
	if (ok)
		snprintf(debug, len, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	symbolizer__free(s);
	return ok && access(debug, R_OK) == 0;
}

/* Function symbols (start, size) of path's .symtab. */
static struct func *symtab_funcs(const char *path, size_t *n)
{
	struct func *v = NULL;
	Elf_Scn *scn = NULL;
	size_t cap = 0;
	int fd;
	Elf *elf = open_elf(path, &fd);

	*n = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || !sym.st_value)
				continue;
			if (*n == cap) {
				cap = cap ? cap * 2 : 1024;
				v = realloc(v, cap * sizeof(*v));
				assert_non_null(v);
			}
			v[(*n)++] = (struct func){sym.st_value, sym.st_size};
		}
	}
	elf_end(elf);
	close(fd);
	return v;
}

/* Every named function symbol of path's .symtab, sorted by name. */
static void load_sym_names(const char *path, struct sym_names *t)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	t->elf = open_elf(path, &t->fd);
	while ((scn = elf_nextscn(t->elf, scn))) {
		Elf_Data *data = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !data)
			continue;
		for (i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
			     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC))
				continue;
			name = elf_strptr(t->elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (t->n == cap) {
				cap = cap ? cap * 2 : 1024;
				t->v = realloc(t->v, cap * sizeof(*t->v));
				assert_non_null(t->v);
			}
			/* as perch names them: without the symbol version (dn_skipname@@GLIBC_2.34) */
			name = strndup(name, name[0] == '@' ? strlen(name) : strcspn(name, "@"));
			assert_non_null(name);
			t->v[t->n++] = (struct named_sym){name, sym.st_value};
		}
	}
	qsort(t->v, t->n, sizeof(*t->v), named_sym_cmp);
}

static void free_sym_names(struct sym_names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free((char *)t->v[i].name);
	free(t->v);
	elf_end(t->elf);
	close(t->fd);
}

static void dwarf_libc_agrees_with_eu_addr2line_through_build_id_debug_file(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct symbolizer *s;
	struct sym_module_id id;
	char debug[PATH_MAX];
	const char *from;
	struct sym_names aliases;
	struct func *fns;
	uint64_t addrs[1000], seed = 42;
	size_t i, n, bad;

	(void)state;
	if (access(libc, R_OK) || !libc_debug_file(libc, debug, sizeof(debug))) {
		print_message("no libc debug file under /usr/lib/debug/.build-id (libc6-dbg); not "
			      "checked\n");
		skip();
	}
	require_tool("eu-addr2line");
	s = symbolizer__new();
	assert_non_null(s);
	id = file_id(libc);
	assert_int_equal(sym_debug_path(s, &id, libc, &from), 0);
	assert_string_equal(from, debug);
	fns = symtab_funcs(debug, &n);
	assert_true(n > 1000);
	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		const struct func *f;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		f = &fns[(seed >> 33) % n];
		addrs[i] = f->start + (seed >> 11) % f->size;
	}
	/*
	 * eu-addr2line names some functions by another symbol at the same address
	 * (__memmove_avx for __memcpy_avx, __dup for the DWARF's __GI_dup): aliases are no
	 * difference. It also misses a few inline chains (ifunc resolvers) that GNU addr2line and
	 * llvm-symbolizer report as we do: allow 1% of those, and print them.
	 */
	load_sym_names(debug, &aliases);
	bad = compare_with(EU_ADDR2LINE, s, libc, addrs, sizeof(addrs) / sizeof(addrs[0]), true,
			   &aliases);
	assert_true(bad * 100 <= sizeof(addrs) / sizeof(addrs[0]));
	free_sym_names(&aliases);
	free(fns);
	symbolizer__free(s);
}

/* Is name a function symbol at addr in t? */
static bool names_at(const struct sym_names *t, const char *name, uint64_t addr)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].addr == addr && strcmp(t->v[i].name, name) == 0)
			return true;
	}
	return false;
}

static void dwarf_resolve_names_libc_internal_function_from_debug_file_symtab(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct symbolizer *plain, *dbg;
	struct sym_module_id id;
	struct sym_names names;
	struct sym_result r;
	char debug[PATH_MAX];
	struct func *fns;
	size_t i, n, checked = 0;

	(void)state;
	if (access(libc, R_OK) || !libc_debug_file(libc, debug, sizeof(debug))) {
		print_message("no libc debug file under /usr/lib/debug/.build-id (libc6-dbg); not "
			      "checked\n");
		skip();
	}
	/* Debian's libc has no .symtab: with no debug file found, .dynsym is all there is. */
	plain = new_symbolizer(NULL);
	dbg = symbolizer__new();
	assert_non_null(dbg);
	id = file_id(libc);
	fns = symtab_funcs(debug, &n);
	load_sym_names(debug, &names);
	for (i = 0; i < n && checked < 20; i++) {
		uint64_t off = file_offset(libc, fns[i].start);

		assert_int_equal(sym_resolve(plain, &id, libc, off, &r), 0);
		if (r.name && !r.inferred)
			continue; /* exported: .dynsym names it already */
		assert_int_equal(sym_resolve(dbg, &id, libc, off + fns[i].size / 2, &r), 0);
		assert_non_null(r.name);
		if (!names_at(&names, r.name, fns[i].start))
			fail_msg("0x%" PRIx64 ": resolve() named it %s, not a symbol of the debug "
				 "file at that address",
				 fns[i].start, r.name);
		assert_int_equal(r.sym_start, fns[i].start);
		assert_int_equal(r.sym_file_offset, off);
		checked++;
	}
	assert_int_equal(checked, 20);
	free_sym_names(&names);
	free(fns);
	symbolizer__free(plain);
	symbolizer__free(dbg);
}

static void dwarf_resolve_names_stripped_binary_from_debuglink_file_symtab(void **state)
{
	struct func outer = elf_func(inl_bin, "outer"), asm_fn = elf_func(inl_bin, "perch_asm_fn");
	char bin[PATH_MAX], debug[PATH_MAX];
	struct sym_module_id id;
	struct symbolizer *s;
	struct sym_result r;

	(void)state;
	copy_fixture(inl_bin, "resolve-linked", "inl", bin, sizeof(bin));
	tmp_path(debug, sizeof(debug), "resolve-linked/inl.debug");
	require_tool("objcopy");
	assert_int_equal(run("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-all '%s' && "
			     "objcopy --add-gnu-debuglink='%s' '%s'",
			     bin, debug, bin, debug, bin),
			 0);
	s = new_symbolizer(NULL);
	id = file_id(bin);
	assert_int_equal(sym_resolve(s, &id, bin, file_offset(bin, outer.start + 1), &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "outer");
	assert_int_equal(r.sym_start, outer.start);
	assert_int_equal(sym_resolve(s, &id, bin, file_offset(bin, asm_fn.start), &r), 0);
	assert_non_null(r.name);
	assert_string_equal(r.name, "perch_asm_fn");
	symbolizer__free(s);
	/* Without its debug file the stripped binary names nothing but the FDE's bounds, which
	 * start where the symbol did. */
	assert_int_equal(unlink(debug), 0);
	s = new_symbolizer(NULL);
	assert_int_equal(sym_resolve(s, &id, bin, file_offset(bin, outer.start + 1), &r), 0);
	assert_non_null(r.name);
	assert_true(r.inferred);
	assert_int_equal(r.sym_start, outer.start);
	symbolizer__set_infer_bounds(s, false);
	assert_int_equal(sym_resolve(s, &id, bin, file_offset(bin, outer.start + 1), &r), 0);
	assert_null(r.name);
	symbolizer__free(s);
}

/*
 * The DWARF index is built lazily, a group of compile units at a time, and must answer exactly as
 * the eager index (every unit at once) does. These tests drive dwarf_index.h directly.
 */

/* The span of path's executable PT_LOAD segments, as the symbolizer computes it. */
static void text_span(const char *path, uint64_t *lo, uint64_t *hi)
{
	size_t i, n;
	int fd;
	Elf *elf = open_elf(path, &fd);

	*lo = 0;
	*hi = 0;
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		assert_non_null(gelf_getphdr(elf, (int)i, &ph));
		if (ph.p_type != PT_LOAD || !ph.p_filesz || !(ph.p_flags & PF_X))
			continue;
		if (!*hi || ph.p_vaddr < *lo)
			*lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > *hi)
			*hi = ph.p_vaddr + ph.p_memsz;
	}
	elf_end(elf);
	close(fd);
	assert_true(*hi > *lo);
}

/* The index of file's DWARF, told it was read from path: lazy, or every unit at once. */
static struct dwarf_index *index_file(const char *file, const char *path, bool eager, uint64_t lo,
				      uint64_t hi)
{
	struct dwarf_index *di;
	int fd;
	Elf *elf = open_elf(file, &fd);

	di = eager ? dwarf_index__build_eager(elf, path, lo, hi)
		   : dwarf_index__build(elf, path, lo, hi);
	elf_end(elf);
	close(fd);
	if (!di)
		fail_msg("%s: no DWARF index: %s", file, strerror(errno));
	return di;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_frames(const struct sym_frame *a, const struct sym_frame *b, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		if (!same_str(a[k].function, b[k].function) || !same_str(a[k].file, b[k].file) ||
		    a[k].line != b[k].line || a[k].inlined != b[k].inlined)
			return false;
	}
	return true;
}

/* Addresses of [lo - 16, hi + 16) where a and b answer differently; with verbose, the first few
 * are printed. */
static size_t count_differences(const struct dwarf_index *a, const struct dwarf_index *b,
				uint64_t lo, uint64_t hi, bool verbose)
{
	struct sym_frame fa[MAX_FRAMES], fb[MAX_FRAMES];
	const char *file_a, *file_b;
	unsigned int line_a, line_b;
	size_t na, nb, bad = 0;
	uint64_t v;

	for (v = lo - 16; v < hi + 16; v++) {
		bool same = true;
		int d, ra, rb;

		for (d = 0; d < 2 && same; d++) {
			ra = dwarf_index__frames(a, v, d, fa, MAX_FRAMES, &na);
			rb = dwarf_index__frames(b, v, d, fb, MAX_FRAMES, &nb);
			same = ra == rb && na == nb && same_frames(fa, fb, na);
		}
		dwarf_index__line(a, v, &file_a, &line_a);
		dwarf_index__line(b, v, &file_b, &line_b);
		if (same && same_str(file_a, file_b) && line_a == line_b)
			continue;
		if (verbose && bad < 10)
			print_message("0x%" PRIx64 ": %zu frames (%s) vs %zu (%s);"
				      " line %s:%u vs %s:%u\n",
				      v, na, na && fa[0].function ? fa[0].function : "-", nb,
				      nb && fb[0].function ? fb[0].function : "-",
				      file_a ? file_a : "-", line_a, file_b ? file_b : "-", line_b);
		bad++;
	}
	return bad;
}

static void assert_lazy_answers_as_eager(const char *bin, const char *debug)
{
	struct dwarf_index *lazy, *eager;
	uint64_t lo, hi;

	text_span(bin, &lo, &hi);
	lazy = index_file(debug, debug, false, lo, hi);
	eager = index_file(debug, debug, true, lo, hi);
	if (count_differences(lazy, eager, lo, hi, true))
		fail_msg("%s: the lazy index answers otherwise than the eager one", debug);
	dwarf_index__free(lazy);
	dwarf_index__free(eager);
}

/* A copy of this test program: a binary of many compile units, with DWARF. */
static void copy_self(const char *sub, char *to, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	copy_fixture(self, sub, "self", to, len);
}

static void dwarf_lazy_index_answers_as_eager_index_at_every_address(void **state)
{
	char self[PATH_MAX], lto[PATH_MAX];
	const char *cc = getenv("CC") ? getenv("CC") : "cc";

	(void)state;
	assert_lazy_answers_as_eager(inl_bin, inl_bin);
	assert_lazy_answers_as_eager(other_bin, other_bin);
	if (have_cxx)
		assert_lazy_answers_as_eager(tmpl_bin, tmpl_bin);
	copy_self("lazy-self", self, sizeof(self));
	assert_lazy_answers_as_eager(self, self);
	/* With LTO, inlined calls name their functions by DW_AT_abstract_origin in another unit
	 * (the early debug info), which holds no code and is never indexed itself. */
	tmp_path(lto, sizeof(lto), "inl-lto");
	if (run("%s -O2 -g -flto -o '%s' '%s' 2>/dev/null", cc, lto, inl_src) == 0)
		assert_lazy_answers_as_eager(lto, lto);
	else
		print_message("%s -flto failed; LTO not checked\n", cc);
}

static void dwarf_lazy_index_answers_as_eager_index_with_dwz_partial_units(void **state)
{
	char c1[PATH_MAX], x1[PATH_MAX];

	(void)state;
	dwz_fixtures("lazy-dwz", NULL, true, c1, x1);
	assert_lazy_answers_as_eager(c1, c1);
	if (have_cxx)
		assert_lazy_answers_as_eager(x1, x1);
}

static void dwarf_lazy_index_answers_as_eager_index_on_libc_debug_file(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	char debug[PATH_MAX];

	(void)state;
	if (access(libc, R_OK) || !libc_debug_file(libc, debug, sizeof(debug))) {
		print_message("no libc debug file under /usr/lib/debug/.build-id (libc6-dbg); not "
			      "checked\n");
		skip();
	}
	/* Some two thousand units, a few of them touching or overlapping, some without code. */
	assert_lazy_answers_as_eager(libc, debug);
}

static void dwarf_plain_copy_of_libc_debug_file_answers_as_the_compressed_file(void **state)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct symbolizer *s = symbolizer__new();
	struct sym_module_id id = file_id(libc);
	struct dwarf_index *plain, *eager;
	char debug[PATH_MAX], cache[PATH_MAX], *path = NULL;
	const char *hex;
	uint64_t lo, hi;
	int out;

	(void)state;
	if (access(libc, R_OK) || !libc_debug_file(libc, debug, sizeof(debug))) {
		print_message("no libc debug file under /usr/lib/debug/.build-id (libc6-dbg); not "
			      "checked\n");
		skip();
	}
	if (!compressed_sections(debug, false)) {
		print_message("%s has no compressed DWARF; not checked\n", debug);
		skip();
	}
	assert_non_null(s);
	assert_int_equal(sym_build_id(s, &id, libc, &hex), 0);
	tmp_path(cache, sizeof(cache), "libc-plain-cache");
	assert_int_equal(mkdir(cache, 0700), 0);
	out = open_plain_copy(cache, debug, hex, &path);
	symbolizer__free(s); /* hex is the symbolizer's */
	assert_true(out >= 0);
	close(out);
	assert_int_equal(compressed_sections(path, false), 0);
	/* What the index never reads (libc's location lists) is left compressed. */
	assert_int_equal(compressed_sections(path, true),
			 compressed_sections(debug, true) - compressed_sections(debug, false));
	/* The copy, read lazily, against the compressed original read eagerly. */
	text_span(libc, &lo, &hi);
	plain = index_file(path, path, false, lo, hi);
	eager = index_file(debug, debug, true, lo, hi);
	if (count_differences(plain, eager, lo, hi, true))
		fail_msg("%s answers otherwise than %s", path, debug);
	dwarf_index__free(plain);
	dwarf_index__free(eager);
	free(path);
}

static void dwarf_lazy_index_reads_units_after_the_file_is_deleted(void **state)
{
	struct dwarf_index *lazy, *eager;
	char bin[PATH_MAX];
	uint64_t lo, hi;

	(void)state;
	copy_self("lazy-gone", bin, sizeof(bin));
	text_span(bin, &lo, &hi);
	eager = index_file(bin, bin, true, lo, hi);
	lazy = index_file(bin, bin, false, lo, hi);
	/* The caller's Elf and descriptor are gone (index_file closed them), and now the file. */
	assert_int_equal(unlink(bin), 0);
	assert_int_equal(count_differences(lazy, eager, lo, hi, true), 0);
	dwarf_index__free(lazy);
	dwarf_index__free(eager);
}

static void dwarf_lazy_index_does_not_read_another_file_at_the_path(void **state)
{
	struct dwarf_index *lazy, *eager, *other;
	uint64_t lo, hi;

	(void)state;
	/* The path in the target's mount namespace, or replaced since: inl_bin's Elf, said to be
	 * read from other_bin (another build of the same source). */
	text_span(inl_bin, &lo, &hi);
	lazy = index_file(inl_bin, other_bin, false, lo, hi);
	eager = index_file(inl_bin, inl_bin, true, lo, hi);
	other = index_file(other_bin, other_bin, true, lo, hi);
	assert_true(count_differences(other, eager, lo, hi, false) > 0);
	assert_int_equal(count_differences(lazy, eager, lo, hi, true), 0);
	dwarf_index__free(lazy);
	dwarf_index__free(eager);
	dwarf_index__free(other);
}

/*
 * A compile unit whose function, and a call inlined into it, are DIEs of a partial unit it imports
 * (DW_TAG_imported_unit), the call site in the partial unit's own file table. dwz never moves code
 * there; the DWARF standard allows it.
 */
static const char pu_asm[] =
	"\t.text\n"
	"\t.globl main\n"
	"\t.type main, @function\n"
	"main:\n"
	".LFB0:\n"
	"\t.file 1 \"pu.c\"\n"
	"\t.loc 1 10 0\n"
	"\tnop\n"
	".LINL0:\n"
	"\t.loc 1 3 0\n"
	"\tnop\n"
	"\tnop\n"
	".LINL1:\n"
	"\t.loc 1 12 0\n"
	"\txorl %eax, %eax\n"
	"\tret\n"
	".LFE0:\n"
	"\t.size main, .-main\n"
	"\t.section .debug_abbrev,\"\",@progbits\n"
	".Labbrev:\n"
	/* 1: compile unit: name, comp_dir, language, stmt_list, low_pc, high_pc */
	"\t.uleb128 1, 0x11\n\t.byte 1\n"
	"\t.uleb128 0x03, 0x08, 0x1b, 0x08, 0x13, 0x0b, 0x10, 0x17, 0x11, 0x01, 0x12, 0x07\n"
	"\t.byte 0, 0\n"
	/* 2: imported unit: import (ref_addr) */
	"\t.uleb128 2, 0x3d\n\t.byte 0\n\t.uleb128 0x18, 0x10\n\t.byte 0, 0\n"
	/* 3: partial unit: stmt_list, comp_dir */
	"\t.uleb128 3, 0x3c\n\t.byte 1\n\t.uleb128 0x10, 0x17, 0x1b, 0x08\n\t.byte 0, 0\n"
	/* 4: subprogram with code: name, low_pc, high_pc */
	"\t.uleb128 4, 0x2e\n\t.byte 1\n\t.uleb128 0x03, 0x08, 0x11, 0x01, 0x12, 0x07\n"
	"\t.byte 0, 0\n"
	/* 5: inlined subroutine: abstract_origin, low_pc, high_pc, call_file, call_line */
	"\t.uleb128 5, 0x1d\n\t.byte 0\n"
	"\t.uleb128 0x31, 0x13, 0x11, 0x01, 0x12, 0x07, 0x58, 0x0b, 0x59, 0x0b\n"
	"\t.byte 0, 0\n"
	/* 6: abstract instance: name, inline */
	"\t.uleb128 6, 0x2e\n\t.byte 0\n\t.uleb128 0x03, 0x08, 0x20, 0x0b\n\t.byte 0, 0\n"
	"\t.byte 0\n"
	"\t.section .debug_info,\"\",@progbits\n"
	".Lcu:\n"
	"\t.long .Lcu_end - .Lcu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"
	"\t.uleb128 1\n\t.string \"pu.c\"\n\t.string \"/src\"\n\t.byte 0x0c\n"
	"\t.long .Ldebug_line0\n\t.quad .LFB0\n\t.quad .LFE0 - .LFB0\n"
	"\t.uleb128 2\n\t.long .Lpu_die\n"
	"\t.byte 0\n"
	".Lcu_end:\n"
	".Lpu:\n"
	"\t.long .Lpu_end - .Lpu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"
	".Lpu_die:\n"
	"\t.uleb128 3\n\t.long .Ldebug_line0\n\t.string \"/src\"\n"
	".Labs:\n"
	"\t.uleb128 6\n\t.string \"pu_inl\"\n\t.byte 3\n"
	"\t.uleb128 4\n\t.string \"pu_main\"\n\t.quad .LFB0\n\t.quad .LFE0 - .LFB0\n"
	"\t.uleb128 5\n\t.long .Labs - .Lpu\n\t.quad .LINL0\n\t.quad .LINL1 - .LINL0\n"
	"\t.byte 1, 11\n"
	"\t.byte 0\n"
	"\t.byte 0\n"
	".Lpu_end:\n"
	"\t.section .debug_line,\"\",@progbits\n"
	".Ldebug_line0:\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static void dwarf_walks_partial_units_a_unit_imports(void **state)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	struct symbolizer *s = new_symbolizer(NULL);
	char dir[PATH_MAX], src[PATH_MAX], bin[PATH_MAX];
	struct sym_frame fr[MAX_FRAMES];
	struct func fn;
	size_t n;
	FILE *f;

	(void)state;
#ifndef __x86_64__
	print_message("the partial-unit fixture is x86-64 assembly; not checked\n");
	skip();
#endif
	tmp_path(dir, sizeof(dir), "pu");
	fmt_path(src, sizeof(src), "%s/pu.s", dir);
	fmt_path(bin, sizeof(bin), "%s/pu", dir);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	f = fopen(src, "w");
	assert_non_null(f);
	assert_true(fputs(pu_asm, f) >= 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(run("%s -g0 -o '%s' '%s'", cc, bin, src), 0);
	fn = elf_func(bin, "main");
	/* main + 1 is the inlined call; the partial unit's file 1 is pu.c, joined with its
	 * DW_AT_comp_dir. */
	assert_int_equal(resolve_at(s, bin, fn.start + 1, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 2);
	assert_frame(&fr[0], "pu_inl", "/src/pu.c", 3, true);
	assert_frame(&fr[1], "pu_main", "/src/pu.c", 11, false);
	assert_int_equal(resolve_at(s, bin, fn.start, fr, MAX_FRAMES, &n), 0);
	assert_int_equal(n, 1);
	assert_frame(&fr[0], "pu_main", "/src/pu.c", 10, false);
	assert_lazy_answers_as_eager(bin, bin);
	symbolizer__free(s);
}

/* The symbol of path's .symtab named name, or (0, 0) when there is none. */
static struct func elf_func_opt(const char *path, const char *name)
{
	struct sym_names t;
	struct func fn = {0};
	size_t i;

	load_sym_names(path, &t);
	for (i = 0; i < t.n; i++) {
		if (strcmp(t.v[i].name, name) == 0) {
			fn.start = t.v[i].addr;
			break;
		}
	}
	free_sym_names(&t);
	return fn;
}

static void dwarf_addr2line_helpers_give_offsets_files_and_discriminators(void **state)
{
	struct func outer = elf_func(inl_bin, "outer"), plain = elf_func(inl_bin, "plain");
	struct func crt = elf_func_opt(inl_bin, "deregister_tm_clones");
	struct symbolizer *s = new_symbolizer(NULL);
	struct sym_module_id id = file_id(inl_bin);
	const char *file = "unset";
	unsigned int disc = 99, with_disc = 0;
	uint64_t off, a;

	(void)state;
	assert_int_equal(sym_vaddr_to_offset(s, &id, inl_bin, outer.start, &off), 0);
	assert_int_equal(off, file_offset(inl_bin, outer.start));
	assert_int_equal(sym_vaddr_to_offset(s, &id, inl_bin, 1ULL << 40, &off), -ERANGE);
	/* A global symbol after several STT_FILE entries belongs to no one file (as in BFD). */
	assert_int_equal(sym_symbol_file(s, &id, inl_bin, file_offset(inl_bin, outer.start), &file),
			 0);
	assert_null(file);
	if (crt.start) {
		/* The C runtime's local functions follow their STT_FILE entry. */
		assert_int_equal(
			sym_symbol_file(s, &id, inl_bin, file_offset(inl_bin, crt.start), &file),
			0);
		assert_non_null(file);
		assert_string_equal(file, "crtstuff.c");
	}
	for (a = plain.start; a < plain.start + plain.size; a++) {
		assert_int_equal(sym_discriminator(s, &id, inl_bin, file_offset(inl_bin, a), &disc),
				 0);
		assert_int_equal(disc, 0);
	}
	symbolizer__free(s);
	if (!have_cxx)
		require_cxx();
	/* The loop in sum<int> calls add() inlined: gcc gives its rows discriminators. */
	s = new_symbolizer(NULL);
	symbolizer__prefetch_discriminators(s, true);
	id = file_id(tmpl_bin);
	outer = elf_func(tmpl_bin, CXX_SUM_RAW);
	for (a = outer.start; a < outer.start + outer.size; a++) {
		assert_int_equal(
			sym_discriminator(s, &id, tmpl_bin, file_offset(tmpl_bin, a), &disc), 0);
		with_disc += disc != 0;
	}
	assert_true(with_disc > 0);
	symbolizer__free(s);
}

/*
 * Two units, hand-made so that line rows reach past their unit's ranges: b.c's first sequence ends
 * with a row at its own end address (as gcc sometimes leaves one), which the merged table keeps
 * in force over the gap after it and over the start of a.c, whose first row comes two bytes in;
 * b.c's second sequence starts with that same line. a.c has rows for a_late, which its ranges
 * leave out (as gcc's ASan module destructors are). In GNU ld's default layout b_cold
 * (.text.unlikely) comes first, then a_fn (.text.hot), main and a_late (.text.*).
 */
static const char trailing_b_asm[] =
	"\t.section .text.unlikely.b1,\"ax\",@progbits\n"
	"\t.p2align 4\n"
	"\t.type b_cold, @function\n"
	"b_cold:\n"
	"\tnop\n\tnop\n\tnop\n\tnop\n"
	".Lb1_end:\n"
	"\t.size b_cold, .-b_cold\n"
	"\t.section .text.b2,\"ax\",@progbits\n"
	"\t.p2align 4\n"
	"\t.globl main\n"
	"\t.type main, @function\n"
	"main:\n"
	"\tnop\n\txorl %eax, %eax\n\tret\n"
	".Lb2_end:\n"
	"\t.size main, .-main\n"
	"\t.section .debug_abbrev,\"\",@progbits\n"
	".Labbrev:\n"
	/* compile unit: name, comp_dir, stmt_list, low_pc, ranges */
	"\t.uleb128 1, 0x11\n\t.byte 0\n"
	"\t.uleb128 0x03, 0x08, 0x1b, 0x08, 0x10, 0x17, 0x11, 0x01, 0x55, 0x17\n"
	"\t.byte 0, 0, 0\n"
	"\t.section .debug_info,\"\",@progbits\n"
	".Lcu:\n"
	"\t.long .Lcu_end - .Lcu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"
	"\t.uleb128 1\n\t.string \"b.c\"\n\t.string \"/src\"\n\t.long .Lline\n"
	"\t.quad 0\n\t.long .Lranges\n"
	".Lcu_end:\n"
	"\t.section .debug_ranges,\"\",@progbits\n"
	".Lranges:\n"
	"\t.quad b_cold, .Lb1_end, main, .Lb2_end, 0, 0\n"
	"\t.section .debug_line,\"\",@progbits\n"
	".Lline:\n"
	"\t.long .Lline_end - .Lline - 4\n\t.value 4\n\t.long .Lprog - .Lline - 10\n"
	"\t.byte 1, 1, 1, -5, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1\n"
	"\t.byte 0\n\t.string \"b.c\"\n\t.uleb128 0, 0, 0\n\t.byte 0\n"
	".Lprog:\n"
	/* b_cold: line 5; at b_cold + 4 line 9, and the end of the sequence */
	"\t.byte 0, 9, 2\n\t.quad b_cold\n\t.byte 3\n\t.sleb128 4\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 4\n\t.byte 3\n\t.sleb128 4\n\t.byte 1\n"
	"\t.byte 0, 1, 1\n"
	/* main: line 9, at main + 1 line 20, ending at main + 4 */
	"\t.byte 0, 9, 2\n\t.quad main\n\t.byte 3\n\t.sleb128 8\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 1\n\t.byte 3\n\t.sleb128 11\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 3\n\t.byte 0, 1, 1\n"
	".Lline_end:\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static const char trailing_a_asm[] =
	"\t.section .text.hot.a,\"ax\",@progbits\n"
	"\t.p2align 4\n"
	"\t.globl a_fn\n"
	"\t.type a_fn, @function\n"
	"a_fn:\n"
	"\tnop\n\tnop\n\tnop\n\tret\n"
	".La_end:\n"
	"\t.size a_fn, .-a_fn\n"
	"\t.section .text.a2,\"ax\",@progbits\n"
	"\t.p2align 4\n"
	"\t.type a_late, @function\n"
	"a_late:\n"
	"\tnop\n\tnop\n\tret\n"
	"\t.size a_late, .-a_late\n"
	"\t.section .debug_abbrev,\"\",@progbits\n"
	".Labbrev:\n"
	/* compile unit: name, comp_dir, stmt_list, low_pc, high_pc */
	"\t.uleb128 1, 0x11\n\t.byte 0\n"
	"\t.uleb128 0x03, 0x08, 0x1b, 0x08, 0x10, 0x17, 0x11, 0x01, 0x12, 0x07\n"
	"\t.byte 0, 0, 0\n"
	"\t.section .debug_info,\"\",@progbits\n"
	".Lcu:\n"
	"\t.long .Lcu_end - .Lcu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"
	"\t.uleb128 1\n\t.string \"a.c\"\n\t.string \"/src\"\n\t.long .Lline\n"
	"\t.quad a_fn\n\t.quad .La_end - a_fn\n"
	".Lcu_end:\n"
	"\t.section .debug_line,\"\",@progbits\n"
	".Lline:\n"
	"\t.long .Lline_end - .Lline - 4\n\t.value 4\n\t.long .Lprog - .Lline - 10\n"
	"\t.byte 1, 1, 1, -5, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1\n"
	"\t.byte 0\n\t.string \"a.c\"\n\t.uleb128 0, 0, 0\n\t.byte 0\n"
	".Lprog:\n"
	/* a_fn + 2: line 30, ending at a_fn + 4 */
	"\t.byte 0, 9, 2\n\t.quad a_fn + 2\n\t.byte 3\n\t.sleb128 29\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 2\n\t.byte 0, 1, 1\n"
	/* a_late: line 40, ending at a_late + 3 */
	"\t.byte 0, 9, 2\n\t.quad a_late\n\t.byte 3\n\t.sleb128 39\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 3\n\t.byte 0, 1, 1\n"
	".Lline_end:\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* tmpdir/sub/name1.s and name2.s (the assembly texts src1, src2) linked, in that order, into
 * tmpdir/sub/out (its path into bin). */
static void build_asm_pair(const char *sub, const char *name1, const char *src1, const char *name2,
			   const char *src2, const char *out, char *bin)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	char dir[PATH_MAX], p1[PATH_MAX], p2[PATH_MAX];

	tmp_path(dir, sizeof(dir), sub);
	fmt_path(p1, sizeof(p1), "%s/%s.s", dir, name1);
	fmt_path(p2, sizeof(p2), "%s/%s.s", dir, name2);
	fmt_path(bin, PATH_MAX, "%s/%s", dir, out);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	write_file(p1, src1);
	write_file(p2, src2);
	assert_int_equal(run("%s -g0 -o '%s' '%s' '%s'", cc, bin, p1, p2), 0);
}

static void assert_line(const struct dwarf_index *di, uint64_t vaddr, const char *file,
			unsigned int line)
{
	const char *f;
	unsigned int l;

	dwarf_index__line(di, vaddr, &f, &l);
	if (!same_str(f, file) || l != line)
		fail_msg("0x%" PRIx64 ": %s:%u, not %s:%u", vaddr, f ? f : "-", l, file, line);
}

static void dwarf_lazy_index_keeps_a_row_in_force_past_its_units_ranges(void **state)
{
	char bin[PATH_MAX];
	struct func cold, fn, m, late;
	struct dwarf_index *di;
	uint64_t lo, hi;

	(void)state;
#ifndef __x86_64__
	print_message("the fixture is x86-64 assembly; not checked\n");
	skip();
#endif
	build_asm_pair("trailing-row", "b", trailing_b_asm, "a", trailing_a_asm, "ab", bin);
	cold = elf_func(bin, "b_cold");
	fn = elf_func(bin, "a_fn");
	m = elf_func(bin, "main");
	late = elf_func(bin, "a_late");
	if (!(cold.start + cold.size < fn.start && fn.start + fn.size < m.start &&
	      m.start + m.size < late.start)) {
		print_message("b_cold, a_fn, main, a_late laid out otherwise; not checked\n");
		skip();
	}
	assert_lazy_answers_as_eager(bin, bin);
	text_span(bin, &lo, &hi);
	di = index_file(bin, bin, false, lo, hi);
	/* a.c's unit has no row at or below a_fn + 1: the row in force is b.c's last. */
	assert_line(di, fn.start + 1, "/src/b.c", 9);
	assert_line(di, fn.start, "/src/b.c", 9);
	assert_line(di, cold.start + 4, "/src/b.c", 9);
	assert_line(di, fn.start + 2, "/src/a.c", 30);
	assert_line(di, fn.start + 4, NULL, 0);
	/* main's first row repeats line 9: b.c's table must still have a row there. */
	assert_line(di, m.start, "/src/b.c", 9);
	assert_line(di, m.start + 1, "/src/b.c", 20);
	/* Outside a.c's ranges, in its line table. */
	assert_line(di, late.start, "/src/a.c", 40);
	assert_line(di, late.start + 3, NULL, 0);
	dwarf_index__free(di);
}

/*
 * Two units whose rows meet at one address: h.c's first sequence ends at g_fn with a row there
 * (as gcc's often do, line 61), and g.c starts there (line 70). The merged table orders the rows
 * at that address by unit, and h.c comes second in .debug_info, so the two must be indexed
 * together. h.c (.text.unlikely) lies right before g_fn (.text.exit, unaligned) in GNU ld's
 * default layout.
 */
#define MEETING_UNIT_DWARF(name, low_pc)                                              \
	"\t.section .debug_abbrev,\"\",@progbits\n"                                   \
	".Labbrev:\n"                                                                 \
	"\t.uleb128 1, 0x11\n\t.byte 0\n"                                             \
	"\t.uleb128 0x03, 0x08, 0x1b, 0x08, 0x10, 0x17, 0x11, 0x01, 0x12, 0x07\n"     \
	"\t.byte 0, 0, 0\n"                                                           \
	"\t.section .debug_info,\"\",@progbits\n"                                     \
	".Lcu:\n"                                                                     \
	"\t.long .Lcu_end - .Lcu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte 8\n"      \
	"\t.uleb128 1\n\t.string \"" name "\"\n\t.string \"/src\"\n\t.long .Lline\n"  \
	"\t.quad " low_pc "\n\t.quad 2\n"                                             \
	".Lcu_end:\n"                                                                 \
	"\t.section .debug_line,\"\",@progbits\n"                                     \
	".Lline:\n"                                                                   \
	"\t.long .Lline_end - .Lline - 4\n\t.value 4\n\t.long .Lprog - .Lline - 10\n" \
	"\t.byte 1, 1, 1, -5, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1\n"           \
	"\t.byte 0\n\t.string \"" name "\"\n\t.uleb128 0, 0, 0\n\t.byte 0\n"          \
	".Lprog:\n"

static const char meeting_g_asm[] =
	/* g_fn: two bytes; and main */
	"\t.section .text.exit.g,\"ax\",@progbits\n"
	"\t.type g_fn, @function\n"
	"g_fn:\n\tnop\n\tnop\n"
	"\t.size g_fn, .-g_fn\n"
	"\t.text\n"
	"\t.globl main\n"
	"\t.type main, @function\n"
	"main:\n\txorl %eax, %eax\n\tret\n"
	"\t.size main, .-main\n"
	/* its unit, and its line table: */
	MEETING_UNIT_DWARF("g.c", "g_fn")
	/* g_fn: line 70, g_fn + 1: line 71, ending at g_fn + 2 */
	"\t.byte 0, 9, 2\n\t.quad g_fn\n\t.byte 3\n\t.sleb128 69\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 1\n\t.byte 3\n\t.sleb128 1\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 1\n\t.byte 0, 1, 1\n"
	".Lline_end:\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static const char meeting_h_asm[] =
	/* h_fn: two bytes; h_nine: one */
	"\t.section .text.unlikely.h,\"ax\",@progbits\n"
	"\t.type h_fn, @function\n"
	"h_fn:\n\tnop\n\tnop\n"
	"\t.size h_fn, .-h_fn\n"
	"\t.section .text.h9,\"ax\",@progbits\n"
	"\t.type h_nine, @function\n"
	"h_nine:\n\tnop\n"
	"\t.size h_nine, .-h_nine\n"
	/* its unit (h_nine is outside its range), and its line table: */
	MEETING_UNIT_DWARF("h.c", "h_fn")
	/* h_fn: line 60; h_fn + 2: line 61 (special opcode), and there the end of the sequence */
	"\t.byte 0, 9, 2\n\t.quad h_fn\n\t.byte 3\n\t.sleb128 59\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 2\n\t.byte 19\n\t.byte 0, 1, 1\n"
	/* h_nine: line 90, ending at h_nine + 1 */
	"\t.byte 0, 9, 2\n\t.quad h_nine\n\t.byte 3\n\t.sleb128 89\n\t.byte 1\n"
	"\t.byte 2\n\t.uleb128 1\n\t.byte 0, 1, 1\n"
	".Lline_end:\n"
	"\t.section .note.GNU-stack,\"\",@progbits\n";

static void dwarf_lazy_index_orders_rows_at_one_address_by_unit(void **state)
{
	char bin[PATH_MAX];
	struct func gf, hf;

	(void)state;
#ifndef __x86_64__
	print_message("the fixture is x86-64 assembly; not checked\n");
	skip();
#endif
	build_asm_pair("meeting-rows", "g", meeting_g_asm, "h", meeting_h_asm, "gh", bin);
	gf = elf_func(bin, "g_fn");
	hf = elf_func(bin, "h_fn");
	if (hf.start + hf.size != gf.start) {
		print_message("h_fn does not end where g_fn starts; not checked\n");
		skip();
	}
	assert_lazy_answers_as_eager(bin, bin);
}

/* tests/fixtures, absolute, into dir (PATH_MAX bytes). */
/* A compile unit (DWARF 4, address size addr_size) whose DIE has a name and, with low_pc, a
 * DW_AT_low_pc of DW_FORM_addr; its address bytes are zeros. */
#define ODD_UNIT_ASM(addr_size, low_pc_abbrev, low_pc_value)                            \
	"\t.section .debug_abbrev,\"\",@progbits\n"                                     \
	".Labbrev:\n"                                                                   \
	"\t.uleb128 1, 0x11\n\t.byte 0\n"                                               \
	"\t.uleb128 0x03, 0x08" low_pc_abbrev "\n"                                      \
	"\t.byte 0, 0, 0\n"                                                             \
	"\t.section .debug_info,\"\",@progbits\n"                                       \
	".Lcu:\n"                                                                       \
	"\t.long .Lcu_end - .Lcu - 4\n\t.value 4\n\t.long .Labbrev\n\t.byte " addr_size \
	"\n\t.uleb128 1\n\t.string \"odd.c\"\n" low_pc_value ".Lcu_end:\n"              \
	"\t.section .note.GNU-stack,\"\",@progbits\n"

static const char main_asm[] = "\t.text\n\t.globl main\n\t.type main, @function\n"
			       "main:\n\txorl %eax, %eax\n\tret\n\t.size main, .-main\n"
			       "\t.section .note.GNU-stack,\"\",@progbits\n";

/* The lazy index of a program built from main_asm and the DWARF text dwarf: none (ENODATA: no
 * unit holds code), or one with no line anywhere. */
static void assert_indexes_without_lines(const char *sub, const char *dwarf)
{
	char bin[PATH_MAX];
	struct dwarf_index *di;
	uint64_t lo, hi;
	struct func m;
	Elf *elf;
	int fd;

	build_asm_pair(sub, "odd", dwarf, "main", main_asm, "prog", bin);
	m = elf_func(bin, "main");
	text_span(bin, &lo, &hi);
	elf = open_elf(bin, &fd);
	errno = 0;
	di = dwarf_index__build(elf, bin, lo, hi);
	elf_end(elf);
	close(fd);
	if (!di) {
		assert_int_equal(errno, ENODATA);
		return;
	}
	assert_line(di, m.start, NULL, 0);
	dwarf_index__free(di);
}

/* Found by the sanitizer build: a file whose units claim no code at all gave qsort() a NULL
 * array (UB, even for 0 elements). */
static void dwarf_lazy_index_of_units_claiming_no_code(void **state)
{
	(void)state;
#ifndef __x86_64__
	print_message("the fixture is x86-64 assembly; not checked\n");
	skip();
#endif
	assert_indexes_without_lines("no-claims", ODD_UNIT_ASM("8", "", ""));
}

/* A unit header with an address size of 16: reading a DW_FORM_addr of 16 bytes shifted a byte by
 * 64 bits (UB); the unit is damaged, the rest of the file still indexed. */
static void dwarf_lazy_index_survives_an_address_size_of_16(void **state)
{
	(void)state;
#ifndef __x86_64__
	print_message("the fixture is x86-64 assembly; not checked\n");
	skip();
#endif
	assert_indexes_without_lines("addr16", ODD_UNIT_ASM("16", ", 0x11, 0x01", "\t.zero 16\n"));
}

static bool find_fixtures(char *dir)
{
	const char *env = getenv("PERCH_FIXTURES");
	char exe[PATH_MAX], cand[PATH_MAX], *slash;
	ssize_t n;

	if (env && realpath(env, dir))
		return true;
	/* Built from the repository root: __FILE__ is tests/test_dwarf.c. */
	snprintf(cand, sizeof(cand), "%s", __FILE__);
	slash = strrchr(cand, '/');
	if (slash)
		slash[1] = '\0';
	else
		cand[0] = '\0';
	strncat(cand, "fixtures", sizeof(cand) - strlen(cand) - 1);
	if (realpath(cand, dir))
		return true;
	/* build/tests/test_dwarf -> tests/fixtures */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	snprintf(cand, sizeof(cand), "%.*s/../../tests/fixtures", PATH_MAX - 32, exe);
	return realpath(cand, dir) != NULL;
}

static int group_setup(void **state)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *cxx = getenv("CXX") ? getenv("CXX") : "c++";
	char fixtures[PATH_MAX];

	(void)state;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	snprintf(tmpdir, sizeof(tmpdir), "%s/perch-test-dwarf-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir) || !find_fixtures(fixtures)) {
		fprintf(stderr, "test_dwarf: no temporary directory or no tests/fixtures\n");
		return -1;
	}
	snprintf(inl_src, sizeof(inl_src), "%.*s/inl.c", PATH_MAX - 16, fixtures);
	snprintf(tmpl_src, sizeof(tmpl_src), "%.*s/tmpl.cpp", PATH_MAX - 16, fixtures);
	snprintf(inl_bin, sizeof(inl_bin), "%s/inl", tmpdir);
	snprintf(tmpl_bin, sizeof(tmpl_bin), "%s/tmpl", tmpdir);
	snprintf(other_bin, sizeof(other_bin), "%s/other", tmpdir);
	snprintf(empty_root, sizeof(empty_root), "%s/empty-root", tmpdir);
	if (mkdir(empty_root, 0755) || run("%s -O2 -g -o '%s' '%s'", cc, inl_bin, inl_src) != 0 ||
	    run("%s -O1 -g -o '%s' '%s'", cc, other_bin, inl_src) != 0) {
		fprintf(stderr, "test_dwarf: cannot build tests/fixtures/inl.c with %s\n", cc);
		return -1;
	}
	/* Without a C++ compiler the C++ tests skip, saying so; the rest still run. */
	have_cxx = run("%s -O2 -g -o '%s' '%s'", cxx, tmpl_bin, tmpl_src) == 0;
	line_leaf = marker_line(inl_src, "leaf");
	line_middle_calls_leaf = marker_line(inl_src, "middle_calls_leaf");
	line_outer_calls_middle = marker_line(inl_src, "outer_calls_middle");
	line_plain = marker_line(inl_src, "plain");
	line_cxx_add = marker_line(tmpl_src, "cxx_add");
	line_cxx_calls_add = marker_line(tmpl_src, "cxx_calls_add");
	if (!line_leaf || !line_middle_calls_leaf || !line_outer_calls_middle || !line_plain ||
	    !line_cxx_add || !line_cxx_calls_add) {
		fprintf(stderr, "test_dwarf: a LINE: marker is missing from the fixtures\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return run("rm -rf '%s'", tmpdir) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dwarf_resolves_inline_chain_with_call_sites),
		cmocka_unit_test(dwarf_every_address_ends_in_the_out_of_line_function),
		cmocka_unit_test(dwarf_plain_function_has_one_frame_with_its_line),
		cmocka_unit_test(dwarf_chain_longer_than_max_gives_enospc_and_innermost_frames),
		cmocka_unit_test(dwarf_offset_outside_segments_gives_no_frames),
		cmocka_unit_test(dwarf_matches_eu_addr2line_at_every_address_of_c_fixture),
		cmocka_unit_test(dwarf_matches_eu_addr2line_at_every_address_of_cxx_fixture),
		cmocka_unit_test(dwarf_matches_llvm_symbolizer_on_clang_built_fixtures),
		cmocka_unit_test(dwarf_cxx_names_are_demangled),
		cmocka_unit_test(dwarf_cxx_names_stay_mangled_when_demangling_is_off),
		cmocka_unit_test(dwarf_symbol_table_names_are_demangled_without_debug_info),
		cmocka_unit_test(dwarf_uses_debug_info_in_the_binary_itself),
		cmocka_unit_test(dwarf_finds_separate_debug_file_by_build_id),
		cmocka_unit_test(dwarf_rejects_build_id_path_holding_another_build),
		cmocka_unit_test(dwarf_compressed_debug_file_is_read_through_a_plain_copy),
		cmocka_unit_test(dwarf_plain_copy_is_made_once_and_replaced_when_not_to_be_trusted),
		cmocka_unit_test(dwarf_plain_copy_not_in_dir_of_another_user_nor_from_fifo),
		cmocka_unit_test(dwarf_finds_debuglink_file_next_to_the_binary),
		cmocka_unit_test(dwarf_finds_debuglink_file_in_dot_debug_directory),
		cmocka_unit_test(dwarf_finds_debuglink_file_under_debug_root),
		cmocka_unit_test(dwarf_rejects_debuglink_file_with_wrong_crc),
		cmocka_unit_test(dwarf_follows_dwz_alt_file_for_shared_entries),
		cmocka_unit_test(dwarf_plain_copy_keeps_the_dwz_alt_file_in_reach),
		cmocka_unit_test(dwarf_without_debug_info_falls_back_to_symbol_table),
		cmocka_unit_test(dwarf_stripped_binary_takes_local_names_from_debug_file_symtab),
		cmocka_unit_test(dwarf_fully_stripped_binary_resolves_no_frame),
		cmocka_unit_test(dwarf_index_outlives_the_debug_file),
		cmocka_unit_test(dwarf_build_id_is_the_gnu_build_id_note_in_hex),
		cmocka_unit_test(dwarf_setters_reject_bad_arguments),
		cmocka_unit_test(dwarf_libc_agrees_with_eu_addr2line_through_build_id_debug_file),
		cmocka_unit_test(dwarf_resolve_names_libc_internal_function_from_debug_file_symtab),
		cmocka_unit_test(dwarf_resolve_names_stripped_binary_from_debuglink_file_symtab),
		cmocka_unit_test(dwarf_addr2line_helpers_give_offsets_files_and_discriminators),
		cmocka_unit_test(dwarf_lazy_index_answers_as_eager_index_at_every_address),
		cmocka_unit_test(dwarf_lazy_index_answers_as_eager_index_with_dwz_partial_units),
		cmocka_unit_test(dwarf_lazy_index_answers_as_eager_index_on_libc_debug_file),
		cmocka_unit_test(
			dwarf_plain_copy_of_libc_debug_file_answers_as_the_compressed_file),
		cmocka_unit_test(dwarf_lazy_index_reads_units_after_the_file_is_deleted),
		cmocka_unit_test(dwarf_lazy_index_does_not_read_another_file_at_the_path),
		cmocka_unit_test(dwarf_walks_partial_units_a_unit_imports),
		cmocka_unit_test(dwarf_lazy_index_keeps_a_row_in_force_past_its_units_ranges),
		cmocka_unit_test(dwarf_lazy_index_orders_rows_at_one_address_by_unit),
		cmocka_unit_test(dwarf_lazy_index_of_units_claiming_no_code),
		cmocka_unit_test(dwarf_lazy_index_survives_an_address_size_of_16),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
