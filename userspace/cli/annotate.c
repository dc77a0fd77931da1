// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch annotate FUNCTION [-i FILE]`: where inside FUNCTION its self samples fell, per source
 * line or, without lines, per instruction (report/annotate.c), and the exit status a missing
 * function or module gets.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/recording.h"
#include "report/report.h"

/* annotate's and script's -i FILE. */
struct input_cli {
	const char *path;
};

#define CLI_CTX struct input_cli

const struct cli_opt cli_input_rows[1] = {
	{'i', "input", "FILE", "the recording (default perch.data; FILE alone works too)",
	 OPT_STR(path), .in = 1},
};

int cli_input_option(const struct cli_command *cmd, int argc, char **argv, const char **path,
		     const char **arg)
{
	struct input_cli c = {*path};
	int ret = cli_opts__parse(cmd, argc, argv, &c);

	if (ret)
		return ret;
	*path = c.path;
	if (arg && optind < argc)
		*arg = argv[optind++];
	if (optind < argc && !strcmp(*path, "perch.data"))
		*path = argv[optind++];
	if (optind < argc)
		return log_usage(NULL, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int run_annotate(int argc, char **argv)
{
	const char *path = "perch.data", *name = NULL;
	struct recording *r = NULL;
	int ret = cli_input_option(&cli_annotate, argc, argv, &path, &name), err;

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	if (!name || !*name)
		return log_usage(NULL, "annotate: which function? (perch annotate FUNCTION)");
	err = recording__load(path, &r);
	if (!r)
		return load_error(path, err);
	ret = report__annotate(r, name, stdout);
	if (ret == -ENOENT)
		ret = log_usage(NULL, "no sample of %s has %s as its leaf (its self samples)", path,
				name);
	else if (ret == -ENODATA)
		ret = PERCH_EXIT_NOFILE; /* annotate has said why */
	else if (ret)
		ret = PERCH_EXIT_INTERNAL;
	if (fflush(stdout) || ferror(stdout)) {
		log_err("cannot write standard output: %s", strerror(errno));
		ret = PERCH_EXIT_OUTPUT;
	}
	if (!ret && err)
		ret = report_damage(path, r, err);
	recording__free(r);
	return ret;
}

const struct cli_command cli_annotate = {
	.name = "annotate",
	.run = run_annotate,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(cli_input_rows),
			.flags = "",
			.lines = (const char *const[]){"FUNCTION", NULL},
			.summary =
				"where inside FUNCTION its self samples fell, per line or instruction",
			.about =
				"FUNCTION as the report names it (MODULE+0xSTART? too); its self samples (the "
				"leaf frames, as the report counts them) per source line, beside the source "
				"where the file is readable; without DWARF lines (stripped debug info, record "
				"--no-lines) per instruction of its disassembly (capstone), read from the "
				"module file the recording names, bounds from its symbol table or .eh_frame "
				"FDE.",
		},
};
