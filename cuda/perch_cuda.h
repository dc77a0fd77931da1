/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The channel from the CUDA injection library (runtime/cuda/inject.c, inside the user's program)
 * to perch: the one header both sides include.
 *
 * perch opens a pipe (or a file) and passes its descriptor to the launched command in the
 * environment variable PERCH_CUDA_FD, as "FD:DEV:INO" (the descriptor, and the st_dev and st_ino
 * of what it is): the library writes to FD only while fstat() says it is still that file, never
 * to whatever a descendant opened under the same number. It writes a stream of records:
 *
 *   record := struct perch_cuda_rec (64 bytes, little-endian)
 *             name bytes (rec.name_len of them, no NUL), zero-padded to a multiple of 8
 *
 * so a reader steps by perch_cuda_rec_size(). The library writes whole records, at most PIPE_BUF
 * bytes at a time, so a pipe shared by a process and its children (they inherit the variable)
 * never interleaves within a record; pid says whose each record is. Every time is nanoseconds on CLOCK_MONOTONIC, the
 * sampler's bpf_ktime_get_ns() clock, already converted by the injection library (the CLOCK
 * record says how). Kernel names are sent once: a NAME record binds a name to name_id, and
 * KERNEL records carry the id (a launch-bound program would otherwise send the same mangled C++
 * name 100k times a second).
 *
 * The launch side of the join is the probe perch_cuda_launch(correlation_id), which the library
 * calls at the exit of every launch, memcpy and memset API call; perch's uprobe there captures the CPU stack and the
 * region stack. API records (kind PERCH_CUDA_API) carry the same correlation ids with the
 * thread and the call's duration.
 */
#ifndef PERCH_CUDA_H
#define PERCH_CUDA_H

#include <stdint.h>

#define PERCH_CUDA_FD_ENV "PERCH_CUDA_FD"
/* "every": the probe at every call; "site" (the default): once per launch site (inject_sites.h) */
#define PERCH_CUDA_STACKS_ENV "PERCH_CUDA_STACKS"
#define PERCH_CUDA_NAME_MAX   1024 /* longer names are cut (and flagged PERCH_CUDA_F_TRUNCATED) */
#define PERCH_CUDA_REC_BYTES  64
#define PERCH_CUDA_REC_MAX    (PERCH_CUDA_REC_BYTES + PERCH_CUDA_NAME_MAX)

enum perch_cuda_kind {
	PERCH_CUDA_KERNEL = 1,	/* a kernel ran: detail = name_id, bytes = threads (grid x block) */
	PERCH_CUDA_MEMCPY = 2,	/* detail: enum perch_cuda_copy; bytes */
	PERCH_CUDA_MEMSET = 3,	/* detail: the value; bytes */
	PERCH_CUDA_SYNC = 4,	/* detail: CUPTI's CUpti_ActivitySynchronizationType */
	PERCH_CUDA_API = 5,	/* a runtime or driver API call: tid; detail: its cbid */
	PERCH_CUDA_NAME = 6,	/* detail: the name_id bound to the name that follows */
	PERCH_CUDA_DROPPED = 7, /* bytes: activity records CUPTI dropped since the last one */
	PERCH_CUDA_NOTE = 8,	/* detail: enum perch_cuda_note; the name: a line for the report */
	PERCH_CUDA_CLOCK = 9,	/* detail: enum perch_cuda_clock; start: CLOCK_MONOTONIC and end:
				 * CLOCK_REALTIME read together (the offset in use) */
	PERCH_CUDA_END = 10,	/* the library flushed at exit: bytes = launch probes it called */
	PERCH_CUDA_SITE = 11,	/* a call that did not take the probe (its site's stack was taken
				 * before): tid, start_ns: its exit; detail: the correlation id of
				 * the site's probed call, whose stack it is attributed to */
};

/* rec.flags */
#define PERCH_CUDA_F_RUNTIME   0x1 /* API: the runtime API (else the driver API) */
#define PERCH_CUDA_F_LAUNCH    0x2 /* API: a launch call (kernel, cooperative, graph) */
#define PERCH_CUDA_F_TRUNCATED 0x4 /* the name was cut to PERCH_CUDA_NAME_MAX */
#define PERCH_CUDA_F_GRAPH     0x8 /* KERNEL/MEMCPY/MEMSET: ran as a node of a CUDA graph */
#define PERCH_CUDA_F_REPROBE \
	0x10 /* SITE: this call took the probe again for its site (detail:
				     * the site's previous probe): the two stacks should agree */

/* Copy directions, perch's own numbering (CUPTI's CUpti_ActivityMemcpyKind mapped). */
enum perch_cuda_copy {
	PERCH_CUDA_COPY_OTHER = 0,
	PERCH_CUDA_COPY_HTOD = 1,
	PERCH_CUDA_COPY_DTOH = 2,
	PERCH_CUDA_COPY_DTOD = 3,
	PERCH_CUDA_COPY_HTOH = 4,
	PERCH_CUDA_COPY_PTOP = 5,
};

enum perch_cuda_clock {
	PERCH_CUDA_CLOCK_CALLBACK = 1, /* CUPTI takes its times from our CLOCK_MONOTONIC callback */
	PERCH_CUDA_CLOCK_OFFSET = 2,   /* CUPTI's CLOCK_REALTIME minus the measured offset */
};

enum perch_cuda_note {
	PERCH_CUDA_NOTE_BUSY = 1,    /* CUPTI error 39: the name is the tool holding it, if told */
	PERCH_CUDA_NOTE_CUPTI = 2,   /* another CUPTI call failed: the name says which and why */
	PERCH_CUDA_NOTE_NOCLOCK = 3, /* no timestamp callback: times come from a measured offset */
};

struct perch_cuda_rec {
	uint16_t kind;	   /* enum perch_cuda_kind */
	uint16_t name_len; /* bytes of name following this record */
	uint32_t correlation_id;
	uint64_t start_ns; /* CLOCK_MONOTONIC; 0 where CUPTI did not know */
	uint64_t end_ns;
	uint64_t bytes;	 /* MEMCPY/MEMSET bytes, KERNEL threads, DROPPED/END counts */
	uint32_t device; /* CUPTI device id */
	uint32_t context;
	uint32_t stream;
	uint32_t detail; /* per kind, above */
	uint32_t pid;	 /* the process: correlation ids are per process, children share the fd */
	uint32_t tid;	 /* API: the system thread id of the caller */
	uint32_t flags;	 /* PERCH_CUDA_F_* */
	uint32_t graph_id;
};

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the channel is little-endian: add byte swaps before building on a big-endian machine"
#endif
_Static_assert(sizeof(struct perch_cuda_rec) == PERCH_CUDA_REC_BYTES, "channel record layout");

/* Bytes a record with name_len bytes of name takes in the stream. */
static inline uint32_t perch_cuda_rec_size(uint32_t name_len)
{
	return PERCH_CUDA_REC_BYTES + ((name_len + 7u) & ~7u);
}

/* Exported by libperch_cuda.so. The driver calls InitializeInjection() when it loads the library
 * (CUDA_INJECTION64_PATH). perch_cuda_launch() is the probe: perch's uprobe on it reads the
 * correlation id from the first argument register. */
int InitializeInjection(void);
void perch_cuda_launch(uint32_t correlation_id);

/* Where in perch_cuda_launch() perch attaches (x86-64): the 5-byte NOP it starts with, which
 * Linux >= 6.16 optimizes into a call to the uprobe trampoline, or the `ret` after it, which is
 * always an int3 trap (PERCH_GPU_PROBE=trap: the benchmark's "before"). */
#define PERCH_CUDA_PROBE_NOP_OFFSET  0
#define PERCH_CUDA_PROBE_TRAP_OFFSET 5

#endif /* PERCH_CUDA_H */
