// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A command's option table (cli/opts.h) as getopt reads it: the short string and struct
 * option[] built from the rows, each option getopt returns handed to its row's setter. -h and
 * --help[=markdown|man] are every command's.
 */
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "opts.h"
#include "lib/log.h"

#define VAL_LONG 256 /* getopt's code of long-only row i: VAL_LONG + i */

/* The getopt string (flags, then each short letter, ':' after one taking an argument) and the
 * long options of t, -h and --help last. */
static void build(const struct cli_opts *t, char *shorts, struct option *longs)
{
	size_t s = strlen(t->flags), l = 0;

	memcpy(shorts, t->flags, s);
	for (size_t i = 0; i < t->n; i++) {
		const struct cli_opt *o = &t->rows[i];
		int val = o->short_name ? o->short_name : VAL_LONG + (int)i;

		if (o->short_name) {
			shorts[s++] = o->short_name;
			if (o->arg)
				shorts[s++] = ':';
		}
		if (o->long_name)
			longs[l++] = (struct option){
				o->long_name, o->arg ? required_argument : no_argument, NULL, val};
	}
	memcpy(shorts + s, "h", 2);
	longs[l++] = (struct option){"help", optional_argument, NULL, 'h'};
	longs[l] = (struct option){0};
}

/* The row getopt's code c stands for, or NULL. */
static const struct cli_opt *row_of(const struct cli_opts *t, int c)
{
	if (c >= VAL_LONG && (size_t)(c - VAL_LONG) < t->n)
		return &t->rows[c - VAL_LONG];
	for (size_t i = 0; c > 0 && c < VAL_LONG && i < t->n; i++) {
		if (t->rows[i].short_name == c)
			return &t->rows[i];
	}
	return NULL;
}

static int set(const struct cli_opt *o, void *ctx, const char *arg)
{
	char *field = (char *)ctx + o->field;

	switch (o->type) {
	case CLI_OPT_TRUE:
	case CLI_OPT_FALSE:
		*(bool *)field = o->type == CLI_OPT_TRUE;
		return 0;
	case CLI_OPT_STR:
		*(const char **)field = arg;
		return 0;
	case CLI_OPT_FN:
		return o->fn(ctx, o, arg);
	default:
		return 0;
	}
}

/* -h, --help (text); --help=markdown, =synopsis, =man: for the docs and man pages. */
static int help(const struct cli_command *cmd, const char *how)
{
	if (!how)
		cli_help__text(cmd, stdout);
	else if (!strcmp(how, "markdown"))
		cli_help__markdown(cmd, stdout);
	else if (!strcmp(how, "man"))
		cli_help__man(cmd, stdout);
	else if (!strcmp(how, "synopsis"))
		cli_help__md_synopsis(cmd, stdout);
	else
		return log_usage(NULL, "bad --help '%s' (markdown, synopsis or man)", how);
	return CLI_HELP_DONE;
}

/* What getopt refused: argv[optind - 1]. */
static int refused(const struct cli_command *cmd, int c, char **argv)
{
	const char *name = cmd->opts->own_errors ? cmd->name : NULL;

	if (c == ':' && name)
		return log_usage(name, "option '%s' needs an argument", argv[optind - 1]);
	return log_usage(name, "unknown option '%s'", argv[optind - 1]);
}

int cli_opts__parse(const struct cli_command *cmd, int argc, char **argv, void *ctx)
{
	const struct cli_opts *t = cmd->opts;
	char shorts[3 * CLI_OPTS_MAX + 8];
	struct option longs[CLI_OPTS_MAX + 2];
	const struct cli_opt *o;
	int c, ret = 0;

	if (t->n > CLI_OPTS_MAX)
		return log_usage(cmd->name, "internal: option table too long");
	build(t, shorts, longs);
	opterr = 0;
	while (!ret && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'h')
			ret = help(cmd, optarg);
		else if ((o = row_of(t, c)) && o->type != CLI_OPT_TEXT)
			ret = set(o, ctx, o->arg ? optarg : NULL);
		else
			ret = refused(cmd, c, argv);
	}
	return ret;
}
