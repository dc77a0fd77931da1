/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch record --gpu -p PID` (attach mode). CUPTI cannot be injected into a process that is
 * already running, so perch probes the CUDA driver library the process has mapped: uprobes,
 * for that process only, on libcuda.so's exported launch, copy and memset entry points
 * (format/gpu_entries.h) capture each call's CPU stack and region stack with the sampler's
 * unwinder (sampler_gpucall.c), and uprobes on its name lookups (cuModuleGetFunction,
 * cuLibraryGetKernel, cuKernelGetFunction) name the CUfunction handles resolved after attach.
 * Every call goes to the recording's GPU block as a CALL entry; there are no GPU durations. A
 * library a target maps later (dlopen, exec) is probed then, and a child a probed process forks
 * is probed too. A process that never maps libcuda.so, or whose probes fail, gets one GPU note;
 * its CPU profile is unchanged.
 */
#ifndef PERCH_RECORD_GPU_ATTACH_H
#define PERCH_RECORD_GPU_ATTACH_H

#include <stdint.h>
#include <sys/types.h>
#include "format/recording.h"
#include "record/procs.h"
#include "record/sampler/sampler.h"

enum gpu_attach_stat {
	GPU_ATTACH_PROCESSES,  /* processes whose libcuda.so was probed */
	GPU_ATTACH_NO_LIBCUDA, /* processes that mapped no libcuda.so (or whose probes failed) */
	GPU_ATTACH_PROBES,     /* uprobes attached, name lookups' return probes included */
	GPU_ATTACH_CALLS,      /* entry point hits written with their stack */
	GPU_ATTACH_NAMES,      /* handles named by a lookup perch saw */
	GPU_ATTACH_UNNAMED,    /* launches of a handle no lookup named (resolved before attach) */
	GPU_ATTACH_STAT_NR
};

struct gpu_attach;

/* Read the sampler's libcuda probes into w (both borrowed for the gpu_attach's life), and listen
 * to ps (freed before the gpu_attach) for the targets that map a libcuda.so later (dlopen, exec)
 * or fork a child that runs one. NULL + errno, or NULL with *exit_code (enum perch_exit, logged)
 * when the sampler's side failed. */
struct gpu_attach *gpu_attach__new(struct rec_writer *w, struct sampler *sp, struct procs *ps,
				   int *exit_code);
void gpu_attach__free(struct gpu_attach *ga);
/* Probe the libcuda.so each of pids (borrowed until gpu_attach__finish()) maps, and from now on
 * the ones targets map; call it once they are targets, so that no call in between is missed.
 * Probes that fail are a note each. 0 or -ENOMEM. */
int gpu_attach__start(struct gpu_attach *ga, const pid_t *pids, size_t npids);
/* The end of the run: a note for each of pids that never mapped a libcuda.so. */
void gpu_attach__finish(struct gpu_attach *ga);
/* Read the probes' records so far: the name lookups now, the calls at their drain. */
void gpu_attach__poll(struct gpu_attach *ga);
uint64_t gpu_attach__stat(const struct gpu_attach *ga, enum gpu_attach_stat i);

#endif /* PERCH_RECORD_GPU_ATTACH_H */
