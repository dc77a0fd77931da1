// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch script [-i FILE]`: every sample of a --timeline recording, one entry each, as perf
 * script prints them (report/script.c); a recording without a timeline is refused (exit 64).
 */
#include <errno.h>
#include <string.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "format/recording.h"
#include "report/report.h"

static int run_script(int argc, char **argv)
{
	const char *path = "perch.data";
	struct recording *r = NULL;
	uint64_t dropped = 0;
	int ret = cli_input_option(&cli_script, argc, argv, &path, NULL), err;

	if (ret)
		return ret == CLI_HELP_DONE ? 0 : ret;
	err = recording__load(path, &r);
	if (!r)
		return load_error(path, err);
	ret = report__script(r, stdout);
	recording__stat(r, "timeline_events_dropped", &dropped);
	if (ret == -ENODATA)
		ret = log_usage(NULL,
				"%s has no sample times: record with --timeline (perch report "
				"shows its samples aggregated)",
				path);
	else if (ret)
		ret = PERCH_EXIT_INTERNAL;
	if (fflush(stdout) || ferror(stdout)) {
		log_err("cannot write standard output: %s", strerror(errno));
		ret = PERCH_EXIT_OUTPUT;
	}
	if (!ret && dropped)
		log_warn("%s: %llu sample times were dropped past --max-size: not listed", path,
			 (unsigned long long)dropped);
	if (!ret && err)
		ret = report_damage(path, r, err);
	recording__free(r);
	return ret;
}

const struct cli_command cli_script = {
	.name = "script",
	.run = run_script,
	.opts =
		&(const struct cli_opts){
			CLI_OPTS(cli_input_rows),
			.flags = "",
			.lines = (const char *const[]){"", NULL},
			.summary =
				"every sample of a --timeline recording, as perf script prints them",
			.about =
				"perf script's shape: comm pid/tid seconds: count event:, then the stack, leaf "
				"first. A recording without a timeline is refused (exit 64).",
		},
};
