// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perch's command line: the command table (bpftool's way) and `perch --help` built from it. The
 * only part that exits; every other part returns an error and has printed its one line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <capstone/capstone.h>
#include <elfutils/libdwfl.h>
#include "cli.h"
#include "version.h" /* generated into BUILD by the Makefile */
#include "lib/exitcodes.h"
#include "lib/log.h"

static const struct cli_command *const commands[] = {
	&cli_record, &cli_report, &cli_symbolize, &cli_diff,   &cli_merge, &cli_push,
	&cli_top,    &cli_agent,  &cli_annotate,  &cli_script, &cli_model,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The command called name, or NULL. */
static const struct cli_command *command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(name, commands[i]->name))
			return commands[i];
	}
	return NULL;
}

void cli_usage(FILE *out)
{
	fputs("usage: perch COMMAND [OPTIONS] [ARGS...]\n\ncommands:\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->opts->summary);
	fputs("\n  perch COMMAND --help (or perch help COMMAND): that command's usage and options\n"
	      "  perch --version: perch's version and commit; libbpf's, libdw's, capstone's\n"
	      "  man perch-COMMAND, or docs/perch-COMMAND.md: each command's page\n",
	      out);
}

int cli_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *out == 0 || *out > max || s[0] == '-' ? -EINVAL : 0;
}

static int unknown_command(const char *cmd)
{
	char names[256] = "";

	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (i)
			strncat(names, ", ", sizeof(names) - strlen(names) - 1);
		strncat(names, commands[i]->name, sizeof(names) - strlen(names) - 1);
	}
	return log_usage(NULL, "unknown command '%s' (%s)", cmd, names);
}

/* `perch --version`: perch's, and the libraries' it runs with (their own words for it). */
static int print_version(void)
{
	int cs_major, cs_minor;

	cs_version(&cs_major, &cs_minor);
	printf("perch %s\nlibbpf %s\nlibdw %s\ncapstone %d.%d\n", PERCH_VERSION_STRING,
	       libbpf_version_string(), dwfl_version(NULL), cs_major, cs_minor);
	return ferror(stdout) ? PERCH_EXIT_OUTPUT : 0;
}

/* `perch help`: the commands; `perch help COMMAND [--help=markdown|man]`: its help. */
static int help_command(int argc, char **argv)
{
	char *args[] = {argv[1], argc > 2 ? argv[2] : "--help", NULL};

	if (argc < 2) {
		cli_usage(stdout);
		return 0;
	}
	if (!command(argv[1]))
		return unknown_command(argv[1]);
	if (argc > 3 || strncmp(args[1], "--help", 6))
		return log_usage(NULL, "perch help COMMAND takes no more arguments");
	return command(argv[1])->run(2, args);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	opterr = 0;
	if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		cli_usage(cmd ? stdout : stderr);
		return cmd ? 0 : PERCH_EXIT_USAGE;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return print_version();
	if (!strcmp(cmd, "help")) /* perch help [COMMAND]: as perch COMMAND --help */
		return help_command(argc - 1, argv + 1);
	return command(cmd) ? command(cmd)->run(argc - 1, argv + 1) : unknown_command(cmd);
}
