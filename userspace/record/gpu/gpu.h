/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch record --gpu`: the channel from the CUDA injection library (runtime/cuda/inject.c, loaded
 * into the launched command through CUDA_INJECTION64_PATH) read in the event loop without blocking,
 * decoded (cuda/gpu_records.h), each activity joined to its launch (cuda/gpu_join.h) and written
 * to the recording's GPU block with the library's notes; the counts go to STATS (format/keys.h,
 * REC_STATS_GPU). It needs no process events: every channel record names its process.
 */
#ifndef PERCH_RECORD_GPU_H
#define PERCH_RECORD_GPU_H

#include <stdint.h>
#include "format/recording.h"

enum gpu_stat {
	GPU_ACTIVITIES,
	GPU_JOINED,
	GPU_ACTIVITIES_UNMATCHED,
	GPU_LAUNCHES_UNMATCHED,
	GPU_DROPPED,
	GPU_PROBES,
	GPU_BYTES,
	GPU_DAMAGED,
	GPU_INHERITED,	      /* calls attributed to their site's probed call (PERCH_CUDA_SITE) */
	GPU_INHERITED_LOST,   /* ...whose site's stack never came (its probe's stack was lost) */
	GPU_REPROBES,	      /* a known site's periodic probe */
	GPU_REPROBES_DIFFER,  /* ...whose stack was not the site's: the site key missed a frame */
	GPU_LAUNCHES_DROPPED, /* launches shed from the join's full table before their activity */
	GPU_WAITS_CUT,	      /* activities written without a launch: the waiting table was full */
	GPU_REFUSED,	  /* channel records refused past perch's bounds (names, notes, sites) */
	GPU_SIZE_DROPPED, /* GPU entries dropped past --max-size */
	GPU_STAT_NR
};

struct gpu;

/* --gpu-stacks: "site" or "every", for the injection library of the command perch launches
 * (through the environment it inherits) and for gpu__new(). 0 or -errno. */
int gpu_set_stacks(const char *mode);

/* The injection library next to the perch binary, else under ../lib/perch/ (make install):
 * 0 with its path in buf, or -ENOENT (perch was built without the CUDA toolkit). */
int gpu_find_library(char *buf, size_t len);

/* The channel (a pipe; perch's end non-blocking, the command's end close-on-exec until
 * gpu__child() hands it on), writing into w (borrowed for the gpu's life). NULL + errno. */
struct gpu *gpu__new(struct rec_writer *w, const char *library);
void gpu__free(struct gpu *g);
/* In the launched child, just before exec: CUDA_INJECTION64_PATH, PERCH_CUDA_FD (the descriptor
 * and the pipe's device and inode: the library writes nothing to a descriptor of that number that
 * is not the pipe) and the channel's descriptor for the command alone. Async-signal-safe apart
 * from setenv. */
void gpu__child(void *g);
/* In perch, once the command is launched: perch's copy of the command's end is closed, so the
 * channel ends when the command and its children are gone. */
void gpu__launched(struct gpu *g);
/* Read what the channel holds now (never blocks), writing each activity as it joins. A damaged
 * channel is still read (and discarded), so the program writing it never blocks on it. */
void gpu__poll(struct gpu *g);
/* The recording stopped (--max-size): what comes from now on is read, counted, not written. */
void gpu__stop(struct gpu *g);
/* The end of the run: what is left in the channel, the unmatched of both sides, the note when
 * no GPU data came at all. */
void gpu__finish(struct gpu *g);
uint64_t gpu__stat(const struct gpu *g, enum gpu_stat i);
/* The CPU side of one launch (the sampler's uprobe on perch_cuda_launch): key, the writer's key
 * id of the launching thread's stack and region stack, written as the GPU block's LAUNCH entry of
 * (pid, correlation id). 0 or -errno. */
int gpu__launch_key(struct gpu *g, uint32_t pid, uint32_t tid, uint32_t correlation_id,
		    uint64_t time_ns, uint32_t key);

#endif /* PERCH_RECORD_GPU_H */
