// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A command's option table (cli/opts.h) as people read it: `perch CMD --help` (usage lines,
 * about, options), and its option list as markdown (the generated block of docs/perch-CMD.md)
 * and as troff (the OPTIONS of the man page perch-CMD.1). One spelling of each option, the
 * table's; tests/help.sh holds the docs and man pages to it.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "opts.h"

#define HELP_COL   23	  /* where the option texts start */
#define HELP_WIDTH 88	  /* the widest line of help */
#define NBSP	   '\x01' /* a space the wrapping keeps ("[-F HZ]" stays whole) */

/* Words of text from column col on, wrapped at width to column indent; the column after. */
static size_t put_wrapped(const char *text, size_t col, size_t indent, size_t width, FILE *out)
{
	size_t start = col;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (col > start && col + 1 + len > width) {
			fprintf(out, "\n%*s", (int)indent, "");
			col = start = indent;
		} else if (col > start) {
			fputc(' ', out);
			col++;
		}
		for (size_t i = 0; i < len; i++)
			fputc(text[i] == NBSP ? ' ' : text[i], out);
		col += len;
		text += len + (text[len] == ' ');
	}
	return col;
}

/* o's spelling: "-F, --freq=HZ", "--freq=HZ", "-r SEC" (sep between a short name and its
 * argument). */
static int spell(const struct cli_opt *o, char *buf, size_t size, char sep)
{
	char arg[64] = "";

	if (o->arg)
		snprintf(arg, sizeof(arg), "%c%s", o->long_name ? '=' : sep, o->arg);
	if (o->short_name && o->long_name)
		return snprintf(buf, size, "-%c, --%s%s", o->short_name, o->long_name, arg);
	if (o->long_name)
		return snprintf(buf, size, "--%s%s", o->long_name, arg);
	return snprintf(buf, size, "-%c%s", o->short_name, arg);
}

/* The spellings of row *i and the rows after it without help (other spellings of it), "a, b",
 * into buf; *i becomes the last of them. */
static void entry(const struct cli_opts *t, size_t *i, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	do {
		if (len + 2 < size)
			len += (size_t)snprintf(buf + len, size - len, "%s", len ? ", " : "");
		if (len < size)
			len += (size_t)spell(&t->rows[*i], buf + len, size - len, ' ');
	} while (*i + 1 < t->n && !t->rows[*i + 1].help && ++*i);
}

/* -h and --help, every command's: a row of no table. */
static const struct cli_opt help_row = {
	'h', "help", NULL,
	"this help; --help=markdown (the option list), --help=synopsis, --help=man (the option "
	"list in troff): what the command's docs page docs/perch-CMD.md and its man page hold",
	.type = CLI_OPT_NOP};

/* One synopsis item of o into buf: "-F HZ", "--timeline", "[...]" unless bare. */
static void item(const struct cli_opt *o, bool bare, char *buf, size_t size)
{
	const struct cli_opt alone = {o->short_name, o->short_name ? NULL : o->long_name, o->arg,
				      .type = CLI_OPT_NOP};
	char s[128];

	spell(&alone, s, sizeof(s), NBSP); /* "-F HZ" where there is a short name */
	snprintf(buf, size, bare ? "%s" : "[%s]", s);
}

/* Synopsis line k: "perch CMD" and its items, as one string of words. */
static void synopsis_line(const struct cli_command *cmd, size_t k, char *buf, size_t size)
{
	const struct cli_opts *t = cmd->opts;
	size_t len = (size_t)snprintf(buf, size, "perch %s", cmd->name);
	unsigned int bit = 1u << k;
	char it[160];

	for (size_t i = 0; i < t->n && len < size; i++) {
		const struct cli_opt *o = &t->rows[i];

		if (!((o->in | o->needs) & bit) || o->type == CLI_OPT_TEXT)
			continue;
		item(o, o->needs & bit, it, sizeof(it));
		len += snprintf(buf + len, size - len, " %s", it);
	}
	/* the operands stay whole: "-- CMD [ARGS...]" */
	for (const char *c = t->lines[k]; *c && len + 2 < size; c++) {
		if (c == t->lines[k])
			buf[len++] = ' ';
		buf[len++] = *c == ' ' ? NBSP : *c;
	}
	buf[len < size ? len : size - 1] = '\0';
}

void cli_help__synopsis(const struct cli_command *cmd, const char *first, const char *prefix,
			FILE *out)
{
	char line[4096];

	for (size_t k = 0; cmd->opts->lines[k]; k++) {
		const char *lead = k ? prefix : first;
		size_t col = strlen(lead) + strlen("perch  ") + strlen(cmd->name);

		fputs(lead, out);
		synopsis_line(cmd, k, line, sizeof(line));
		put_wrapped(line, strlen(lead), col, HELP_WIDTH, out);
		fputc('\n', out);
	}
}

/* One entry of the option list: its spellings s (a long-only one indented past "-X, "), the
 * help from column HELP_COL on. */
static void text_entry(const char *s, bool has_short, const char *help, FILE *out)
{
	int col = fprintf(out, "  %s%s", has_short ? "" : "    ", s);

	if (col + 2 > HELP_COL + 8) /* too long to share its line */
		col = fprintf(out, "\n") - 1;
	col += fprintf(out, "%*s", col + 2 > HELP_COL ? 2 : HELP_COL - col, "");
	put_wrapped(help, (size_t)col, HELP_COL, HELP_WIDTH, out);
	fputc('\n', out);
}

void cli_help__md_synopsis(const struct cli_command *cmd, FILE *out)
{
	fputs("```\n", out);
	cli_help__synopsis(cmd, "", "", out);
	fputs("```\n", out);
}

void cli_help__text(const struct cli_command *cmd, FILE *out)
{
	const struct cli_opts *t = cmd->opts;
	char s[256];

	cli_help__synopsis(cmd, "usage: ", "       ", out);
	fputc('\n', out);
	put_wrapped(t->summary, 0, 0, HELP_WIDTH, out);
	fputc('\n', out);
	if (t->about) {
		fputc('\n', out);
		put_wrapped(t->about, 0, 0, HELP_WIDTH, out);
		fputc('\n', out);
	}
	fputs("\noptions:\n", out);
	for (size_t i = 0; i < t->n; i++) {
		const struct cli_opt *o = &t->rows[i];

		if (o->type == CLI_OPT_TEXT) {
			put_wrapped(o->help, 0, 0, HELP_WIDTH, out);
			fputc('\n', out);
			continue;
		}
		entry(t, &i, s, sizeof(s));
		text_entry(s, o->short_name, o->help, out);
	}
	spell(&help_row, s, sizeof(s), ' ');
	text_entry(s, true, help_row.help, out);
}

/* Markdown: text with the characters markdown would read as markup escaped. */
static void md_text(const char *s, FILE *out)
{
	for (; *s; s++) {
		if (strchr("\\`*_[]<>|#", *s))
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* One item of the markdown list: each spelling in backticks, then the help (one line each, so
 * no wrapped line can start a list or a heading). */
static void md_entry(const struct cli_opts *t, size_t *i, FILE *out)
{
	const struct cli_opt *o = &t->rows[*i];
	char s[128];

	fputs("\n- ", out);
	do {
		spell(&t->rows[*i], s, sizeof(s), ' ');
		fprintf(out, "%s`%s`", o == &t->rows[*i] ? "" : ", ", s);
	} while (*i + 1 < t->n && !t->rows[*i + 1].help && ++*i);
	fputs(": ", out);
	md_text(o->help, out);
	fputc('\n', out);
}

void cli_help__markdown(const struct cli_command *cmd, FILE *out)
{
	const struct cli_opts *t = cmd->opts;
	const struct cli_opts h = {.rows = &help_row, .n = 1};
	size_t i = 0;

	for (i = 0; i < t->n; i++) {
		if (t->rows[i].type == CLI_OPT_TEXT) {
			fputc('\n', out);
			md_text(t->rows[i].help, out);
			fputc('\n', out);
		} else {
			md_entry(t, &i, out);
		}
	}
	i = 0;
	md_entry(&h, &i, out);
}

/* troff: a line of text, backslashes and a leading control character escaped. */
static void man_text(const char *s, FILE *out)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else
			fputc(*s, out);
	}
	fputc('\n', out);
}

/* troff: s with every - a minus (options are typed, not hyphenated). */
static void man_minus(const char *s, FILE *out)
{
	for (; *s; s++) {
		if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

/* troff: o's spelling, names bold, the argument italic, every - a minus. */
static void man_spell(const struct cli_opt *o, FILE *out)
{
	if (o->short_name)
		fprintf(out, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
	if (o->long_name) {
		fputs("\\fB\\-\\-", out);
		man_minus(o->long_name, out);
		fputs("\\fR", out);
	}
	if (!o->arg)
		return;
	fputs(o->long_name ? "=\\fI" : " \\fI", out);
	man_minus(o->arg, out);
	fputs("\\fR", out);
}

static void man_entry(const struct cli_opts *t, size_t *i, FILE *out)
{
	const struct cli_opt *o = &t->rows[*i];

	fputs(".TP\n", out);
	man_spell(o, out);
	while (*i + 1 < t->n && !t->rows[*i + 1].help) {
		fputs(", ", out);
		man_spell(&t->rows[++*i], out);
	}
	fputc('\n', out);
	man_text(o->help, out);
}

void cli_help__man(const struct cli_command *cmd, FILE *out)
{
	const struct cli_opts *t = cmd->opts;
	const struct cli_opts h = {.rows = &help_row, .n = 1};
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->rows[i].type == CLI_OPT_TEXT) {
			fputs(".PP\n", out);
			man_text(t->rows[i].help, out);
		} else {
			man_entry(t, &i, out);
		}
	}
	i = 0;
	man_entry(&h, &i, out);
}
