// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * -o FILE of the commands that write a report (report, model): created the safe way
 * (lib/safeout.h: a new file beside FILE that takes its name once written, never a write through
 * a symlink or into what is there), and never one of the recordings the command reads.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "lib/exitcodes.h"
#include "lib/log.h"
#include "lib/safeout.h"

/* The exit status for what safeout__open() refused, after its line. */
static int refused(const char *path, int err)
{
	if (err == -ELOOP) {
		log_err("cannot write %s: it is a symbolic link, which perch never writes through",
			path);
		return PERCH_EXIT_UNSAFE;
	}
	if (err == -EEXIST)
		log_err("cannot write %s: not a regular file, FIFO or device", path);
	else
		log_err("cannot write %s: %s", path, strerror(-err));
	return PERCH_EXIT_OUTPUT;
}

int cli_output_check(const char *path, char *const *inputs, size_t n)
{
	for (size_t i = 0; path && i < n; i++) {
		if (safeout__is_input(path, inputs[i])) {
			log_err("-o %s is the recording it reads: choose another name", path);
			return PERCH_EXIT_UNSAFE;
		}
	}
	return 0;
}

FILE *cli_output_open(const char *path, char *const *inputs, size_t n, struct safeout *so,
		      int *status)
{
	FILE *out;
	int fd;

	*so = (struct safeout){0};
	if (!path)
		return stdout;
	if ((*status = cli_output_check(path, inputs, n)))
		return NULL;
	fd = safeout__open(so, path, 0666, 0);
	if (fd < 0) {
		*status = refused(path, fd);
		return NULL;
	}
	out = fdopen(fd, "w");
	if (!out) {
		*status = refused(path, -errno);
		close(fd);
		safeout__discard(so);
	}
	return out;
}

int cli_output_close(FILE *out, struct safeout *so, int ret)
{
	const char *name = so->path ? so->path : "standard output";
	int err = 0;

	if (ferror(out) | (out == stdout ? fflush(out) : fclose(out)))
		err = -(errno ? errno : EIO);
	if (!err)
		err = safeout__publish(so);
	safeout__discard(so); /* an output not written whole is removed */
	if (!err)
		return ret;
	/* a failed write (full disk, closed pipe) is the output's fault, not an internal one */
	log_err("cannot write %s: %s", name, strerror(-err));
	return PERCH_EXIT_OUTPUT;
}
