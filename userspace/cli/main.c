// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * perch's command line: the command table (bpftool's way) and `perch --help` built from it. The
 * only part that exits; every other part returns an error and has printed its one line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
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
	&cli_record, &cli_report, &cli_symbolize, &cli_diff,   &cli_merge,
	&cli_push,   &cli_top,	  &cli_annotate,  &cli_script, &cli_model,
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Each synopsis line that starts "perch " behind "usage: " (the first) or its indentation. */
static void print_synopsis(const char *s, bool *first, FILE *out)
{
	while (*s) {
		size_t len = strcspn(s, "\n");

		if (!strncmp(s, "perch ", 6)) {
			fputs(*first ? "usage: " : "       ", out);
			*first = false;
		}
		fprintf(out, "%.*s\n", (int)len, s);
		s += len + (s[len] == '\n');
	}
}

void cli_usage(FILE *out)
{
	bool first = true;

	for (size_t i = 0; i < NCOMMANDS; i++)
		print_synopsis(commands[i]->synopsis, &first, out);
	print_synopsis("perch --version      perch's version and commit; libbpf's, libdw's, "
		       "capstone's\n",
		       &first, out);
	fputs("\n  -h, --help           this help (perch --help, or perch CMD --help)\n\n", out);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (commands[i]->options)
			commands[i]->options(out);
	}
}

int cli_bad_option(char **argv)
{
	return log_usage(NULL, "unknown option '%s'", argv[optind - 1]);
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
	for (size_t i = 0; i < NCOMMANDS; i++) {
		if (!strcmp(cmd, commands[i]->name))
			return commands[i]->run(argc - 1, argv + 1);
	}
	return unknown_command(cmd);
}
