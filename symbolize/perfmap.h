/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * JIT symbol maps in perf's format (/tmp/perf-PID.map): one symbol a line, "START SIZE NAME",
 * START and SIZE in hex with or without 0x, NAME the rest of the line (spaces allowed).
 */
#ifndef PERCH_PERFMAP_H
#define PERCH_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A map is read up to this many bytes (a JIT's map is a few MiB at most); see perfmap__unread. */
#define PERFMAP_MAX_BYTES (64u << 20)
#define PERFMAP_ANY_OWNER ((uid_t)-1)
/* All the maps one budget holds at once (`-a`: every JIT on the machine, each up to the cap):
 * their text and their index, about what perch's memory holds for them. */
#define PERFMAP_TOTAL_BYTES (64u << 20)
/* The bytes a budget lets be read again each period (a map is re-read whole when it grows). */
#define PERFMAP_READ_PER_PERIOD (4u << 20)

struct perfmap;

/*
 * What a set of maps may cost, together: `total` bytes held at once (the maps loaded through it
 * and not released: their text and PERFMAP_SYMBOL_COST bytes a symbol, what indexing it takes), and a rate of
 * reading: `tokens` bytes may be read now, refilled
 * each period (perfmap_budget__refill) up to total. A zeroed struct is no budget at all.
 */
struct perfmap_budget {
	uint64_t total, held;
	int64_t tokens;
	uint64_t cut; /* maps read short because the total was held by others */
};

void perfmap_budget__init(struct perfmap_budget *b, uint64_t total);
/* One period went by: PERFMAP_READ_PER_PERIOD more bytes may be read (up to total). */
void perfmap_budget__refill(struct perfmap_budget *b);
/* Whether a map of size bytes may be read now (the tokens cover what would be read). */
bool perfmap_budget__may_read(const struct perfmap_budget *b, uint64_t size);
/*
 * perfmap__load_at() within b: read up to what b has left (and PERFMAP_MAX_BYTES), the bytes read
 * held by b and taken from its tokens until perfmap__release(). A map read short because b had
 * less left than the per-map cap is counted in b->cut and says so (perfmap__over_budget).
 */
struct perfmap *perfmap__load_within(int root_fd, const char *path, uid_t owner,
				     struct perfmap_budget *b);
/* Free m (NULL: nothing), giving its bytes back to b. */
void perfmap__release(struct perfmap_budget *b, struct perfmap *m);

/*
 * Read and index the map at path, resolved inside root_fd (a process's /proc/PID/root, so a
 * containerized JIT's /tmp is found) without following any symlink; AT_FDCWD: path as it is, a
 * symlink as its last component refused. Only a regular file owned by owner or by root
 * (PERFMAP_ANY_OWNER: anyone) is read, and only its first PERFMAP_MAX_BYTES. Returns NULL and
 * sets errno: ENOENT, EACCES, ELOOP (a symlink), EINVAL (not a regular file: a FIFO would block
 * the reader), EPERM (another owner), ENOMEM. An empty file is an empty map, not an error: a JIT
 * may not have written anything yet.
 */
struct perfmap *perfmap__load_at(int root_fd, const char *path, uid_t owner);
/* perfmap__load_at(AT_FDCWD, path, PERFMAP_ANY_OWNER). */
struct perfmap *perfmap__load(const char *path);
void perfmap__free(struct perfmap *m);

/* The name of the symbol covering addr ([start, start + size)), or NULL; when found and start is
 * not NULL, *start is set to the symbol's start. When symbols overlap, the one later in the file
 * wins: JITs reuse code memory and append the new symbol. The name lives as long as the map. */
const char *perfmap__find(const struct perfmap *m, uint64_t addr, uint64_t *start);

/* Lines read as symbols (size-0 ones included, though they cover nothing). */
size_t perfmap__count(const struct perfmap *m);
/* Blank and malformed lines, skipped. */
size_t perfmap__skipped(const struct perfmap *m);
/* Bytes of the file past PERFMAP_MAX_BYTES (or a budget's share), left unread (at least 1 when
 * it grew past the cap while being read); 0 when the whole file was read. */
uint64_t perfmap__unread(const struct perfmap *m);
/* What it holds, as a budget counts it: its text, and PERFMAP_SYMBOL_COST bytes a symbol. */
#define PERFMAP_SYMBOL_COST 128
uint64_t perfmap__cost(const struct perfmap *m);
/* Read short because its budget's total was held by other maps (perfmap__load_within). */
bool perfmap__over_budget(const struct perfmap *m);

#endif /* PERCH_PERFMAP_H */
