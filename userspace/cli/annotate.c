// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch annotate FUNCTION [-i FILE]`: where inside FUNCTION its self samples fell, per source
 * line or, without lines, per instruction (report/annotate.c), and the exit status a missing
 * function or module gets.
 */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/recording.h"
#include "report/report.h"

#define HELP_DONE (-1)

static void annotate_options(FILE *out)
{
	fputs("annotate and script options:\n"
	      "  -i, --input=FILE     the recording (default perch.data; FILE alone works too)\n"
	      "annotate: FUNCTION as the report names it (MODULE+0xSTART? too); its self samples\n"
	      "  (the leaf frames, as the report counts them) per source line, beside the source\n"
	      "  where the file is readable; without DWARF lines (stripped debug info, record\n"
	      "  --no-lines) per instruction of its disassembly (capstone), read from the module\n"
	      "  file the recording names, bounds from its symbol table or .eh_frame FDE\n"
	      "script: one entry per sample of a recording made with --timeline (perf script's\n"
	      "  shape: comm pid/tid seconds: count event:, then the stack, leaf first)\n",
	      out);
}

/* -i FILE, or FILE after the other arguments: 0, HELP_DONE or the usage status. */
int cli_input_option(int argc, char **argv, const char **path, const char **arg)
{
	static const struct option longopts[] = {
		{"input", required_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "i:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			cli_usage(stdout);
			return HELP_DONE;
		}
		if (c != 'i')
			return cli_bad_option(argv);
		*path = optarg;
	}
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
	int ret = cli_input_option(argc, argv, &path, &name), err;

	if (ret)
		return ret == HELP_DONE ? 0 : ret;
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
	.synopsis = "perch annotate FUNCTION [-i FILE]\n",
	.options = annotate_options,
};
