// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch symbolize -e FILE [-i] [--no-demangle] [ADDR...]`: addresses of one ELF file to function
 * and file:line, in the output format of GNU `addr2line -f [-i] -e FILE`, names demangled unless
 * --no-demangle. This part owns the command line, the reading of addresses (arguments, or one per
 * line on stdin) and the output; the symbolizer (symbolize/) does the lookups.
 *
 * Addresses are what addr2line takes: ELF virtual addresses of FILE in hex, 0x optional, parsed
 * as strtoull() does (so a word that is no number is address 0). Output is fully buffered and
 * flushed whenever perch is about to wait for more input, so a program that writes one address and
 * reads the answer (addr2line as a coprocess) gets it, and a batch pays for few writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/exitcodes.h"
#include "lib/log.h"
#include "symbolize/symbolizer.h"
#include "cli.h"

#define MAX_FRAMES 256	       /* deeper inline chains are cut to their innermost frames */
#define IN_BUF	   (64 * 1024) /* stdin is read this much at a time */
#define OUT_BUF	   (64 * 1024)

struct symcmd_opts {
	const char *file;
	bool inlines;
	bool addresses;
	bool demangle;
	bool addr2line;
};

struct symcmd {
	struct symbolizer *sym;
	struct sym_module *mod; /* FILE's module, loaded by open_module() */
	char *path; /* FILE made absolute: its directory is searched for .gnu_debuglink files */
	bool inlines;
	bool addresses;
	bool addr2line; /* ?? where nothing names an address, as addr2line; else MODULE+0xOFFSET */
	struct sym_frame frames[MAX_FRAMES];
};

/* The address on a line or argument, as addr2line reads it (strtoul, base 16). */
static uint64_t parse_addr(const char *s)
{
	return strtoull(s, NULL, 16);
}

/* One frame's source position: "FILE:LINE", "??" for no file and "?" for no line. */
static void print_position(const char *file, unsigned int line, unsigned int disc)
{
	fputs(file ? file : "??", stdout);
	if (!line) {
		fputs(":?\n", stdout);
		return;
	}
	if (disc)
		printf(":%u (discriminator %u)\n", line, disc);
	else
		printf(":%u\n", line);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void print_addr(struct symcmd *c, uint64_t vaddr)
{
	const char *sym_file = NULL;
	unsigned int disc = 0;
	size_t n = 0, k, shown;
	uint64_t off;
	int err;

	if (c->addresses)
		printf("0x%016" PRIx64 "\n", vaddr);
	err = sym_module__vaddr_to_offset(c->mod, vaddr, &off);
	if (!err) {
		err = sym_module__resolve_inline(c->mod, off, c->frames, MAX_FRAMES, &n);
		if (err && err != -ENOSPC)
			n = 0;
	}
	if (!n) {
		/* what every report shows for code nothing names: its module and file offset */
		if (!err && !c->addr2line)
			printf("%s+0x%" PRIx64 "\n??:0\n", base_name(c->path), off);
		else
			fputs("??\n??:0\n", stdout);
		return;
	}
	/* addr2line prints the innermost row's discriminator on every frame of the chain. */
	if (c->frames[0].file && c->frames[0].line)
		sym_module__discriminator(c->mod, off, &disc);
	/* Where no line table covers the address, the symbol table's source file stands in. */
	if (!c->frames[0].file)
		sym_module__symbol_file(c->mod, off, &sym_file);
	shown = c->inlines ? n : 1;
	for (k = 0; k < shown; k++) {
		const struct sym_frame *f = &c->frames[k];

		fputs(f->function ? f->function : "??", stdout);
		fputc('\n', stdout);
		print_position(k == 0 && !f->file ? sym_file : f->file, f->file ? f->line : 0,
			       disc);
	}
}

/* Flush what was printed; false (with the one error line) when stdout cannot be written. */
static bool flush_out(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return true;
	log_err("symbolize: write output: %s", strerror(errno));
	return false;
}

/*
 * Answer every complete line of buf[0..len) and move the unfinished last one to the front; returns
 * its length. A line that fills the whole buffer is answered from its start (addr2line's fgets()
 * reads no further either) and the rest of it is skipped.
 */
static size_t answer_lines(struct symcmd *c, char *buf, size_t len, bool *skip)
{
	size_t start = 0, i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		buf[i] = '\0';
		if (!*skip)
			print_addr(c, parse_addr(buf + start));
		*skip = false;
		start = i + 1;
	}
	len -= start;
	memmove(buf, buf + start, len);
	if (len == IN_BUF) {
		buf[len] = '\0';
		if (!*skip)
			print_addr(c, parse_addr(buf));
		*skip = true;
		len = 0;
	}
	return len;
}

/*
 * Addresses from stdin, one per line. Every complete line in hand is answered before the next
 * read(), and the answers are flushed before it: the reader never waits on buffered output.
 */
static int run_stdin(struct symcmd *c)
{
	char *buf = malloc(IN_BUF + 1);
	bool skip = false;
	size_t len = 0;
	ssize_t n;

	if (!buf) {
		log_err("symbolize: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	for (;;) {
		if (!flush_out()) {
			free(buf);
			return PERCH_EXIT_OUTPUT;
		}
		n = read(STDIN_FILENO, buf + len, IN_BUF - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			log_err("symbolize: read stdin: %s", strerror(errno));
			free(buf);
			return PERCH_EXIT_INTERNAL;
		}
		if (n == 0)
			break;
		len = answer_lines(c, buf, len + (size_t)n, &skip);
	}
	if (len && !skip) {
		buf[len] = '\0'; /* a last line without its newline */
		print_addr(c, parse_addr(buf));
	}
	free(buf);
	return flush_out() ? PERCH_EXIT_OK : PERCH_EXIT_OUTPUT;
}

/* Open FILE as the one module of this run: 0, or the exit status after its one error line. */
static int open_module(struct symcmd *c, const char *file)
{
	struct stat st;
	struct sym_module_id id;
	int fd, err;

	if (stat(file, &st)) {
		log_err("symbolize: %s: %s", file, strerror(errno));
		return PERCH_EXIT_NOFILE;
	}
	if (!S_ISREG(st.st_mode)) {
		log_err("symbolize: %s: not a regular file", file);
		return PERCH_EXIT_NOFILE;
	}
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		log_err("symbolize: %s: %s", file, strerror(errno));
		return PERCH_EXIT_NOFILE;
	}
	close(fd);
	c->path = realpath(file, NULL);
	if (!c->path) {
		log_err("symbolize: %s: %s", file, strerror(errno));
		return PERCH_EXIT_NOFILE;
	}
	id = (struct sym_module_id){.dev = st.st_dev, .inode = st.st_ino, .path = c->path};
	/* Load the module now: its failure is known before anything is printed. */
	err = symbolizer__module(c->sym, &id, c->path, &c->mod);
	if (err == -ENOEXEC) {
		log_err("symbolize: %s: not an ELF executable or shared object", file);
		return PERCH_EXIT_NOFILE;
	}
	if (err == -ENOMEM) {
		log_err("symbolize: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	if (err) {
		log_err("symbolize: %s: cannot open", file);
		return PERCH_EXIT_NOFILE;
	}
	return 0;
}

extern const struct cli_command cli_symbolize;

/* The options into o; 0, CLI_HELP_DONE, or the exit status after the usage line. */
static int parse_opts(int argc, char **argv, struct symcmd_opts *o)
{
	int ret;

	*o = (struct symcmd_opts){.demangle = true};
	optind = 1;
	ret = cli_opts__parse(&cli_symbolize, argc, argv, o);
	if (!ret && !o->file)
		return log_usage("symbolize", "no file: -e FILE is required");
	return ret;
}

static int run_symbolize(int argc, char **argv)
{
	struct symcmd_opts o;
	struct symcmd *c;
	int ret, i;

	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret == CLI_HELP_DONE ? PERCH_EXIT_OK : ret;
	c = calloc(1, sizeof(*c));
	if (!c) {
		log_err("symbolize: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	c->inlines = o.inlines;
	c->addresses = o.addresses;
	c->addr2line = o.addr2line;
	c->sym = symbolizer__new();
	if (!c->sym) {
		log_err("symbolize: symbolizer: %s", strerror(errno));
		free(c);
		return PERCH_EXIT_INTERNAL;
	}
	symbolizer__set_demangle(c->sym, o.demangle);
	/* One address, one name in every perch command; addr2line prints DWARF's names, and ?? where
	 * no symbol covers an address. */
	symbolizer__set_infer_bounds(c->sym, !o.addr2line);
	symbolizer__set_public_names(c->sym, !o.addr2line);
	symbolizer__prefetch_discriminators(c->sym, true);
	ret = open_module(c, o.file);
	if (ret)
		goto cleanup;
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, OUT_BUF);
	if (optind == argc) {
		ret = run_stdin(c);
		goto cleanup;
	}
	for (i = optind; i < argc; i++)
		print_addr(c, parse_addr(argv[i]));
	ret = flush_out() ? PERCH_EXIT_OK : PERCH_EXIT_OUTPUT;
cleanup:
	symbolizer__free(c->sym);
	free(c->path);
	free(c);
	return ret;
}

#define CLI_CTX struct symcmd_opts

static const struct cli_opt symbolize_rows[] = {
	{'e', "exe", "FILE", "the ELF file the addresses belong to", OPT_STR(file), .needs = 1},
	{'i', "inlines", NULL, "also print the functions the address was inlined into",
	 OPT_TRUE(inlines), .in = 1},
	{'a', "addresses", NULL, "print each address (0x%016x) before its frames",
	 OPT_TRUE(addresses), .in = 1},
	{0, "no-demangle", NULL, "show C++ names as the binary spells them", OPT_FALSE(demangle),
	 .in = 1},
	{0, "addr2line", NULL,
	 "name functions as GNU addr2line does: DWARF's own name (glibc's __GI___libc_malloc for "
	 "malloc), ?? where no symbol covers",
	 OPT_TRUE(addr2line), .in = 1},
	{'C', "demangle", NULL, "accepted for addr2line compatibility (always on)",
	 .type = CLI_OPT_NOP},
	{'f', "functions", NULL, NULL, .type = CLI_OPT_NOP},
};

const struct cli_command cli_symbolize = {
	.name = "symbolize",
	.run = run_symbolize,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(symbolize_rows),
			.flags = ":",
			.own_errors = true,
			.lines = (const char *const[]){"[ADDR...]", NULL},
			.summary =
				"function and file:line of addresses of an ELF file, like addr2line -f -C",
			.about =
				"FILE is an ELF executable or shared object; addresses as nm and addr2line "
				"show them, in hex. Without ADDR arguments, addresses are read from stdin, one "
				"per line. Functions get the names every perch report gives them (the public "
				"alias, no symbol version, MODULE+0xSTART? for code only an .eh_frame FDE "
				"bounds); --addr2line gives GNU addr2line's names instead.",
		},
};
