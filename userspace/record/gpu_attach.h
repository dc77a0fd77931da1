/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `perch record --gpu -p PID` (attach mode). CUPTI cannot be injected into a process that is
 * already running, so perch probes the CUDA driver library the process has mapped: uprobes,
 * for that process only, on libcuda.so's exported launch, copy and memset entry points
 * (format/gpu_entries.h) capture each call's CPU stack and region stack with the sampler's
 * unwinder (sampler_gpucall.c), and uprobes on its name lookups (cuModuleGetFunction,
 * cuLibraryGetKernel, cuKernelGetFunction) name the CUfunction handles resolved after attach.
 * Every call goes to the recording's GPU block as a CALL entry; there are no GPU durations. A
 * process that does not map libcuda.so, or whose probes fail, gets one GPU note; its CPU
 * profile is unchanged.
 */
#ifndef PERCH_RECORD_GPU_ATTACH_H
#define PERCH_RECORD_GPU_ATTACH_H

#include <stdint.h>
#include <sys/types.h>
#include "format/recording.h"
#include "sampler.h"

enum gpu_attach_stat {
	GPU_ATTACH_PROCESSES,  /* processes whose libcuda.so was probed */
	GPU_ATTACH_NO_LIBCUDA, /* processes that map no libcuda.so (or whose probes failed) */
	GPU_ATTACH_PROBES,     /* uprobes attached, name lookups' return probes included */
	GPU_ATTACH_CALLS,      /* entry point hits written with their stack */
	GPU_ATTACH_NAMES,      /* handles named by a lookup perch saw */
	GPU_ATTACH_UNNAMED,    /* launches of a handle no lookup named (resolved before attach) */
	GPU_ATTACH_STAT_NR
};

struct gpu_attach;

/* Read the sampler's libcuda probes into w (both borrowed for the gpu_attach's life). NULL +
 * errno, or NULL with *exit_code (enum perch_exit, logged) when the sampler's side failed. */
struct gpu_attach *gpu_attach__new(struct rec_writer *w, struct sampler *sp, int *exit_code);
void gpu_attach__free(struct gpu_attach *ga);
/* Probe the libcuda.so that pid maps (call it once the process is a target, so no call in
 * between is missed); a process without one, or whose probes fail, gets a note. 0 or -ENOMEM. */
int gpu_attach__process(struct gpu_attach *ga, pid_t pid);
/* Read the probes' records so far: the name lookups now, the calls at their drain. */
void gpu_attach__poll(struct gpu_attach *ga);
uint64_t gpu_attach__stat(const struct gpu_attach *ga, enum gpu_attach_stat i);

#endif /* PERCH_RECORD_GPU_ATTACH_H */
