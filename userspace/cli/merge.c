// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch merge [-o OUT] [--label=NAME]... A B ...`: several recordings (hosts, runs) into one
 * version 4 recording (format/merge.h), each process labelled with the input it came from.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/merge.h"
#include "report/report.h"

#define MAX_INPUTS 4096

/* Input i sampled what the first did (the same events, -e, with the same periods, -c): each
 * sample's event index and count mean the same in the merged file. 0 or the exit status. */
static int same_events(char **paths, const struct rec_merge_input *in, size_t i)
{
	const struct recording *a = in[0].r, *b = in[i].r;

	if (report__same_events(a, b, true))
		return 0;
	return log_usage(NULL,
			 "%s sampled %s (period %s), %s sampled %s (period %s): cannot merge "
			 "different events or periods",
			 paths[0], report__events(a), report__periods(a), paths[i],
			 report__events(b), report__periods(b));
}

/* Every input loaded, undamaged, of one sampling frequency and the same events; the exit
 * status. */
static int load_inputs(char **paths, size_t n, struct rec_merge_input *in)
{
	const char *freq0 = NULL;

	for (size_t i = 0; i < n; i++) {
		struct recording *r = NULL;
		int err = recording__load(paths[i], &r);
		const char *freq;

		if (!r)
			return load_error(paths[i], err);
		in[i].r = r;
		if (err) { /* what it holds would merge, but not add up to what was recorded */
			log_err("merge: %s is %s after %zu good blocks: leave it out or report it alone",
				paths[i], err == -ENODATA ? "truncated" : "damaged", r->nblocks);
			return err == -ENODATA ? PERCH_EXIT_TRUNCATED : PERCH_EXIT_BADFILE;
		}
		freq = recording__meta(r, "frequency");
		if (i && strcmp(freq ? freq : "", freq0 ? freq0 : ""))
			return log_usage(NULL, "%s was sampled at %s Hz, %s at %s Hz: cannot merge",
					 paths[0], freq0 ? freq0 : "?", paths[i],
					 freq ? freq : "?");
		if (!i)
			freq0 = freq;
		else if ((err = same_events(paths, in, i)))
			return err;
	}
	return 0;
}

static int merge_files(char **paths, size_t n, const char **labels, const char *out)
{
	struct rec_merge_input *in = calloc(n, sizeof(*in));
	int ret, err;

	if (!in) {
		log_err("merge: out of memory");
		return PERCH_EXIT_INTERNAL;
	}
	for (size_t i = 0; i < n; i++)
		in[i].label = labels[i] ? labels[i] : paths[i];
	ret = load_inputs(paths, n, in);
	if (!ret && (err = rec_merge(in, n, out))) {
		log_err("merge: cannot write %s: %s", out, strerror(-err));
		ret = err == -ENOMEM ? PERCH_EXIT_INTERNAL : PERCH_EXIT_OUTPUT;
	}
	for (size_t i = 0; i < n; i++)
		recording__free((struct recording *)in[i].r);
	free(in);
	return ret;
}

/* What the options set. */
struct merge_cli {
	const char *labels[MAX_INPUTS], *out;
	size_t nlabels;
};

static int add_label(void *ctx, const struct cli_opt *opt, const char *arg)
{
	struct merge_cli *c = ctx;

	(void)opt;
	if (c->nlabels == MAX_INPUTS || !arg[0])
		return log_usage(NULL, "bad --label '%s'", arg);
	c->labels[c->nlabels++] = arg;
	return 0;
}

extern const struct cli_command cli_merge;

static int run_merge(int argc, char **argv)
{
	static struct merge_cli c = {.out = "merged.data"};
	int ret = cli_opts__parse(&cli_merge, argc, argv, &c);
	size_t n;

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	n = (size_t)(argc - optind);
	if (n < 1 || n > MAX_INPUTS)
		return log_usage(NULL, "merge takes 1 to %d recordings", MAX_INPUTS);
	if (c.nlabels && c.nlabels != n)
		return log_usage(NULL, "%zu --label for %zu recordings: give one per input",
				 c.nlabels, n);
	return merge_files(argv + optind, n, c.labels, c.out);
}

#define CLI_CTX struct merge_cli

static const struct cli_opt merge_rows[] = {
	{'o', "output", "FILE", "the merged recording (default merged.data)", OPT_STR(out),
	 .in = 1},
	{0, "label", "NAME",
	 "the origin of the next input, in order (default: its file name); give one per input or "
	 "none",
	 OPT_FN(add_label), .in = 1},
};

const struct cli_command cli_merge = {
	.name = "merge",
	.run = run_merge,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(merge_rows),
			.flags = "",
			.lines = (const char *const[]){"FILE...", NULL},
			.summary =
				"several recordings (hosts, runs) into one, each process labelled by origin",
		},
};
