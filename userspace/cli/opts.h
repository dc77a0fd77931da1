/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A command's options as one table (cli/ only), as perf's OPT_* and argp do: each row is an
 * option's spellings, its argument's name, its help and what it sets. From the table come the
 * getopt string and struct option[] (cli/opts.c), the synopsis lines, `perch CMD --help`, and
 * the option list of docs/perch-CMD.md and the man page perch-CMD.1 (cli/help.c:
 * `perch CMD --help=markdown`, `--help=man`). A new option is one row.
 */
#ifndef PERCH_CLI_OPTS_H
#define PERCH_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CLI_HELP_DONE (-1) /* what parsing returns once --help is printed: exit 0 */
#define CLI_OPTS_MAX  48   /* rows of one table */

enum cli_opt_type {
	CLI_OPT_TEXT,  /* no option: a paragraph of the help, between the options */
	CLI_OPT_TRUE,  /* the bool at .field becomes true */
	CLI_OPT_FALSE, /* the bool at .field becomes false */
	CLI_OPT_STR,   /* the const char * at .field becomes the argument */
	CLI_OPT_NOP,   /* accepted, sets nothing (another tool's spelling of what perch does) */
	CLI_OPT_FN,    /* .fn does it */
};

struct cli_opt {
	char short_name;       /* -X, or 0 */
	const char *long_name; /* --NAME, or NULL */
	const char *arg;       /* the argument's name in the help ("HZ"); NULL: takes none */
	/* The help, one paragraph (wrapped where printed). NULL: one more spelling of the row
	 * above, listed and explained with it. */
	const char *help;
	enum cli_opt_type type;
	size_t field; /* offsetof() the command's context: what the typed rows set */
	/* CLI_OPT_FN: 0, or the exit status after the line saying why (arg NULL for an option
	 * without argument). */
	int (*fn)(void *ctx, const struct cli_opt *opt, const char *arg);
	int val; /* for fn: which of the options it serves is this one */
	/* The synopsis lines listing it (bit k: line k of cli_opts.lines): in brackets (in), or
	 * bare, as what that way of calling the command needs (needs). */
	unsigned int in, needs;
};

struct cli_opts {
	const struct cli_opt *rows;
	size_t n;
	/* getopt's flags: "+" stops at the first operand (a command follows), "" permutes */
	const char *flags;
	/* Missing arguments said as such, and the command named in usage errors (symbolize's
	 * addr2line manner); else every refusal is "unknown option". */
	bool own_errors;
	/* Each synopsis line's operands after its options (the line's bit is 1 << its index);
	 * NULL-terminated. */
	const char *const *lines;
	const char *summary; /* one line: `perch --help`'s list, the man page's NAME */
	const char *about;   /* a paragraph after the usage of `perch CMD --help`, or NULL */
};

#define CLI_OPTS(t) .rows = (t), .n = sizeof(t) / sizeof((t)[0])

/* A row's setter, on a field of CLI_CTX (the table's file defines it: its context's type). */
#define OPT_FIELD(f) offsetof(CLI_CTX, f)
#define OPT_TRUE(f)  .type = CLI_OPT_TRUE, .field = OPT_FIELD(f)
#define OPT_FALSE(f) .type = CLI_OPT_FALSE, .field = OPT_FIELD(f)
#define OPT_STR(f)   .type = CLI_OPT_STR, .field = OPT_FIELD(f)
#define OPT_FN(f)    .type = CLI_OPT_FN, .fn = (f)
#define OPT_TEXT(t)                               \
	{                                         \
		.help = (t), .type = CLI_OPT_TEXT \
	}

struct cli_command;

/* Parse argv[1..] by cmd's table into ctx; optind is then the first operand. 0,
 * CLI_HELP_DONE after --help, or the exit status after a usage line. */
int cli_opts__parse(const struct cli_command *cmd, int argc, char **argv, void *ctx);

/* cli/help.c: `perch CMD --help`: the usage lines, the about paragraph, the options. */
void cli_help__text(const struct cli_command *cmd, FILE *out);
/* The option list alone, as markdown (docs/perch-CMD.md's generated block) or troff (the man
 * page's OPTIONS). */
void cli_help__markdown(const struct cli_command *cmd, FILE *out);
void cli_help__man(const struct cli_command *cmd, FILE *out);
/* The synopsis as a markdown code block (docs/perch-CMD.md's SYNOPSIS). */
void cli_help__md_synopsis(const struct cli_command *cmd, FILE *out);
/* The synopsis lines, each "perch CMD ..." (one a line; `prefix` before each but the first,
 * `first` before the first). */
void cli_help__synopsis(const struct cli_command *cmd, const char *first, const char *prefix,
			FILE *out);

#endif /* PERCH_CLI_OPTS_H */
