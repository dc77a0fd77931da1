// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch merge [-o OUT] [--label=NAME]... A B ...`: several recordings (hosts, runs) into one
 * version 4 recording (format/merge.h), each process labelled with the input it came from.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/merge.h"
#include "report/report.h"

#define HELP_DONE  (-1)
#define MAX_INPUTS 4096

static void merge_options(FILE *out)
{
	fputs("merge options:\n"
	      "  -o, --output=FILE    the merged recording (default merged.data)\n"
	      "  --label=NAME         the origin of the next input, in order (default: its file "
	      "name);\n"
	      "                       give one per input or none\n",
	      out);
}

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

static int run_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"label", required_argument, NULL, 'L'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *labels[MAX_INPUTS] = {0}, *out = "merged.data";
	size_t nlabels = 0, n;
	int c;

	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'L' && nlabels < MAX_INPUTS && optarg[0])
			labels[nlabels++] = optarg;
		else if (c == 'L')
			return log_usage(NULL, "bad --label '%s'", optarg);
		else if (c == 'h')
			return cli_usage(stdout), 0;
		else
			return cli_bad_option(argv);
	}
	n = (size_t)(argc - optind);
	if (n < 1 || n > MAX_INPUTS)
		return log_usage(NULL, "merge takes 1 to %d recordings", MAX_INPUTS);
	if (nlabels && nlabels != n)
		return log_usage(NULL, "%zu --label for %zu recordings: give one per input",
				 nlabels, n);
	return merge_files(argv + optind, n, labels, out);
}

const struct cli_command cli_merge = {
	.name = "merge",
	.run = run_merge,
	.synopsis = "perch merge [-o FILE] [--label=NAME]... FILE...\n",
	.options = merge_options,
};
