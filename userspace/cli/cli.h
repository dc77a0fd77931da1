/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * perch's command line (cli/ only): the command table main.c dispatches through, one file per
 * command (cli/record.c, report.c, symbolize.c), and what the commands share. A new command is a
 * file defining its cli_command with its option table (cli/opts.h), a row in main.c's table and
 * its page docs/perch-NAME.md.
 */
#ifndef PERCH_CLI_H
#define PERCH_CLI_H

#include <stdio.h>
#include <sys/types.h>

#include "record/record.h"
#include "opts.h"

struct cli_command {
	const char *name;
	/* argv[0] is the command's name. Returns perch's exit status (lib/exitcodes.h). */
	int (*run)(int argc, char **argv);
	/* Its options (cli/opts.h): parsing, synopsis, --help and docs come from them. */
	const struct cli_opts *opts;
};

extern const struct cli_command cli_record, cli_report, cli_symbolize;
extern const struct cli_command cli_diff, cli_merge, cli_push;
extern const struct cli_command cli_model;
extern const struct cli_command cli_top, cli_annotate, cli_script, cli_agent;

/* `perch --help`: the commands, one line each. */
void cli_usage(FILE *out);

/* cli/annotate.c: annotate's and script's arguments by cmd's table (-i FILE, or a FILE after
 * *arg, when arg is not NULL, else alone) into *path, the first other argument into *arg. 0,
 * CLI_HELP_DONE after --help, or the usage exit status. */
extern const struct cli_opt cli_input_rows[1];
int cli_input_option(const struct cli_command *cmd, int argc, char **argv, const char **path,
		     const char **arg);
/* A decimal in [1, max] into *out; -EINVAL otherwise. */
int cli_parse_uint(const char *s, unsigned long max, unsigned long *out);
/* cli/record.c, for record and top: a PID list "1,2,3" appended to *pids (*n of them, grown
 * with vec.h), and an unwind mode (auto, fp, dwarf; enum record_unwind). 0 or -EINVAL
 * (-ENOMEM). */
int cli_parse_pids(const char *s, pid_t **pids, size_t *n);
int cli_parse_unwind(const char *s, enum record_unwind *mode);
/* The row setter of --unwind (record's --call-graph too): the record_opts at opt->field. */
int cli_set_unwind(void *ctx, const struct cli_opt *opt, const char *arg);

/* What top and agent watch: the record options and the -p list they own. */
struct cli_watch {
	struct record_opts o;
	pid_t *pids;
};
/* Row setters of -F and -p: the struct cli_watch at opt->field. */
int cli_watch_freq(void *ctx, const struct cli_opt *opt, const char *arg);
int cli_watch_pids(void *ctx, const struct cli_opt *opt, const char *arg);
/* After the options: argv[optind..] as the command; exactly one of -a, -p and a command (-a may
 * come with one). 0, or the usage exit status after its line. */
int cli_watch_targets(struct cli_watch *w, int argc, char **argv);

struct safeout;
/* cli/output.c, for report and model: -o path (NULL: standard output) opened the safe way
 * (lib/safeout.h), refused when it is one of the recordings inputs[0..n) read; NULL after the
 * line saying why, with *status the exit status. */
FILE *cli_output_open(const char *path, char *const *inputs, size_t n, struct safeout *so,
		      int *status);
/* Only the check: 0, or PERCH_EXIT_UNSAFE after its line when path is one of inputs[0..n). */
int cli_output_check(const char *path, char *const *inputs, size_t n);
/* Close out (standard output: flushed) and give the file its name; one not written whole is
 * removed. ret, or PERCH_EXIT_OUTPUT after the line saying why. */
int cli_output_close(FILE *out, struct safeout *so, int ret);

struct recording;
/* cli/report.c's exit status and one line for a recording that could not be loaded (err from
 * recording__load, *out NULL), and for one loaded up to damage (err -ENODATA or -EBADMSG). */
int load_error(const char *path, int err);
int report_damage(const char *path, const struct recording *r, int err);

#endif /* PERCH_CLI_H */
