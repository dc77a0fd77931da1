/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The libcuda.so entry points `perch record --gpu -p PID` probes (attach mode: CUPTI cannot be
 * injected into a running process), written once: record/gpu/gpu_attach.c attaches a uprobe to each
 * one the library exports, with its index here as the probe's cookie, and a CALL entry of the
 * GPU block (format/recording.h) names the entry point by that index, which the report reads
 * back. Appending an entry is a compatible change; reordering one is a format change.
 *
 *   X(symbol, class, copy direction, arg, arg2, element bytes)
 *
 * class: REC_GPU_F_LAUNCH (arg: the argument holding the CUfunction handle), REC_GPU_F_COPY
 * (arg: the byte count), REC_GPU_F_SET (arg: the element count, times arg2's when arg2 >= 0: a
 * 2D memset's width and height, times the element bytes). Arguments count from 0 (x86-64: rdi,
 * rsi, rdx, rcx, r8, r9). The names are the ones cuda.h's macros resolve to (cuMemcpyHtoD is
 * cuMemcpyHtoD_v2), and their per-thread default stream variants (_ptds, _ptsz) that a program
 * built with --default-stream per-thread calls.
 */
#ifndef PERCH_FORMAT_GPU_ENTRIES_H
#define PERCH_FORMAT_GPU_ENTRIES_H

#include "recording.h"

#define REC_GPU_ENTRY_LAUNCHES(X)                                                    \
	X(cuLaunchKernel, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 0, -1, 0)            \
	X(cuLaunchKernel_ptsz, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 0, -1, 0)       \
	X(cuLaunchKernelEx, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 1, -1, 0)          \
	X(cuLaunchKernelEx_ptsz, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 1, -1, 0)     \
	X(cuLaunchCooperativeKernel, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 0, -1, 0) \
	X(cuLaunchCooperativeKernel_ptsz, REC_GPU_F_LAUNCH, REC_GPU_COPY_OTHER, 0, -1, 0)

#define REC_GPU_ENTRY_COPIES(X)                                                   \
	X(cuMemcpy, REC_GPU_F_COPY, REC_GPU_COPY_OTHER, 2, -1, 1)                 \
	X(cuMemcpy_ptds, REC_GPU_F_COPY, REC_GPU_COPY_OTHER, 2, -1, 1)            \
	X(cuMemcpyAsync, REC_GPU_F_COPY, REC_GPU_COPY_OTHER, 2, -1, 1)            \
	X(cuMemcpyAsync_ptsz, REC_GPU_F_COPY, REC_GPU_COPY_OTHER, 2, -1, 1)       \
	X(cuMemcpyHtoD_v2, REC_GPU_F_COPY, REC_GPU_COPY_HTOD, 2, -1, 1)           \
	X(cuMemcpyHtoD_v2_ptds, REC_GPU_F_COPY, REC_GPU_COPY_HTOD, 2, -1, 1)      \
	X(cuMemcpyHtoDAsync_v2, REC_GPU_F_COPY, REC_GPU_COPY_HTOD, 2, -1, 1)      \
	X(cuMemcpyHtoDAsync_v2_ptsz, REC_GPU_F_COPY, REC_GPU_COPY_HTOD, 2, -1, 1) \
	X(cuMemcpyDtoH_v2, REC_GPU_F_COPY, REC_GPU_COPY_DTOH, 2, -1, 1)           \
	X(cuMemcpyDtoH_v2_ptds, REC_GPU_F_COPY, REC_GPU_COPY_DTOH, 2, -1, 1)      \
	X(cuMemcpyDtoHAsync_v2, REC_GPU_F_COPY, REC_GPU_COPY_DTOH, 2, -1, 1)      \
	X(cuMemcpyDtoHAsync_v2_ptsz, REC_GPU_F_COPY, REC_GPU_COPY_DTOH, 2, -1, 1) \
	X(cuMemcpyDtoD_v2, REC_GPU_F_COPY, REC_GPU_COPY_DTOD, 2, -1, 1)           \
	X(cuMemcpyDtoD_v2_ptds, REC_GPU_F_COPY, REC_GPU_COPY_DTOD, 2, -1, 1)      \
	X(cuMemcpyDtoDAsync_v2, REC_GPU_F_COPY, REC_GPU_COPY_DTOD, 2, -1, 1)      \
	X(cuMemcpyDtoDAsync_v2_ptsz, REC_GPU_F_COPY, REC_GPU_COPY_DTOD, 2, -1, 1) \
	X(cuMemcpyPeer, REC_GPU_F_COPY, REC_GPU_COPY_PTOP, 4, -1, 1)              \
	X(cuMemcpyPeer_ptds, REC_GPU_F_COPY, REC_GPU_COPY_PTOP, 4, -1, 1)         \
	X(cuMemcpyPeerAsync, REC_GPU_F_COPY, REC_GPU_COPY_PTOP, 4, -1, 1)         \
	X(cuMemcpyPeerAsync_ptsz, REC_GPU_F_COPY, REC_GPU_COPY_PTOP, 4, -1, 1)

#define REC_GPU_ENTRY_SETS(X)                                                  \
	X(cuMemsetD8_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 1)          \
	X(cuMemsetD8_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 1)     \
	X(cuMemsetD16_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 2)         \
	X(cuMemsetD16_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 2)    \
	X(cuMemsetD32_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 4)         \
	X(cuMemsetD32_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 4)    \
	X(cuMemsetD8Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 1)        \
	X(cuMemsetD8Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 1)   \
	X(cuMemsetD16Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 2)       \
	X(cuMemsetD16Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 2)  \
	X(cuMemsetD32Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 4)       \
	X(cuMemsetD32Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 2, -1, 4)  \
	X(cuMemsetD2D8_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 1)         \
	X(cuMemsetD2D8_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 1)    \
	X(cuMemsetD2D16_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 2)        \
	X(cuMemsetD2D16_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 2)   \
	X(cuMemsetD2D32_v2, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 4)        \
	X(cuMemsetD2D32_v2_ptds, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 4)   \
	X(cuMemsetD2D8Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 1)       \
	X(cuMemsetD2D8Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 1)  \
	X(cuMemsetD2D16Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 2)      \
	X(cuMemsetD2D16Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 2) \
	X(cuMemsetD2D32Async, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 4)      \
	X(cuMemsetD2D32Async_ptsz, REC_GPU_F_SET, REC_GPU_COPY_OTHER, 3, 4, 4)

#define REC_GPU_ENTRIES(X) REC_GPU_ENTRY_LAUNCHES(X) REC_GPU_ENTRY_COPIES(X) REC_GPU_ENTRY_SETS(X)

struct rec_gpu_entry {
	const char *symbol;
	uint32_t class; /* REC_GPU_F_LAUNCH, REC_GPU_F_COPY or REC_GPU_F_SET */
	uint32_t dir;	/* enum rec_gpu_copy */
	int arg, arg2;	/* argument indexes (see above); arg2 -1: none */
	uint32_t elem;	/* bytes an element of a memset */
};

#define REC_GPU_ENTRY_ROW(sym, cls, d, a, a2, el) {#sym, cls, d, a, a2, el},
static const struct rec_gpu_entry rec_gpu_entries[]
	__attribute__((unused)) = {REC_GPU_ENTRIES(REC_GPU_ENTRY_ROW)};
#undef REC_GPU_ENTRY_ROW
#define REC_GPU_NENTRIES (sizeof(rec_gpu_entries) / sizeof(rec_gpu_entries[0]))

#endif /* PERCH_FORMAT_GPU_ENTRIES_H */
