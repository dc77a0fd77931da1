/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Creating an output file where someone else may have put something in the way: a symlink
 * planted at the name (a sticky /tmp, a shared folder) would send root's writes onto its target,
 * and truncating what is there would lose it before perch has anything to put in its place. So
 * the output is written under a new name beside it (PATH.XXXXXX, made with O_EXCL, which follows
 * no symlink) and renamed over PATH only once it is complete (or, for a recording, once
 * everything has opened); a FIFO or character device already at PATH (a pipe to a reader,
 * /dev/null) is written as it is.
 */
#ifndef PERCH_SAFEOUT_H
#define PERCH_SAFEOUT_H

#include <stdbool.h>
#include <sys/types.h>

/* A regular file or symlink at PATH is moved to PATH.old at publish (perf's way, recordings);
 * without it a symlink at PATH is refused (-ELOOP) and a regular file is replaced. */
#define SAFEOUT_KEEP_OLD 1u

struct safeout {
	char *path; /* the name asked for */
	char *tmp;  /* the name written under until safeout__publish(); NULL: streamed, or done */
	unsigned flags;
};

/* Open path for writing as above, mode (less the umask) for a new file: a descriptor (O_CLOEXEC)
 * and *o filled, or -errno with nothing left behind: -ELOOP for a refused symlink, -EEXIST for
 * anything but a regular file, symlink, FIFO or character device at path (or one that changed
 * kind while it was opened). */
int safeout__open(struct safeout *o, const char *path, mode_t mode, unsigned flags);
/* The name the output is at now (PATH.XXXXXX until published, PATH after). */
const char *safeout__name(const struct safeout *o);
/* Give the file its name: PATH.old kept first where asked. 0 or -errno (the file stays at its
 * temporary name, and safeout__discard() removes it). The descriptor is the caller's. */
int safeout__publish(struct safeout *o);
/* An output not published is removed; the names are freed (NULL-safe, idempotent). */
void safeout__discard(struct safeout *o);

/* Whether out names the file in (the same device and inode; out not followed if a symlink, which
 * perch never writes through): writing out would destroy in. */
bool safeout__is_input(const char *out, const char *in);

#endif /* PERCH_SAFEOUT_H */
