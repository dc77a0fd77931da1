// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in libcuda.so.1 for `perch record --gpu -p PID` (tests/integration/gpu-attach.sh): NOT
 * a driver. It exports the entry points perch probes, with the signatures of the toolkit's
 * cuda.h (whose macros give them their real names: cuMemcpyHtoD is cuMemcpyHtoD_v2), and does
 * nothing but return CUDA_SUCCESS; the name lookups hand out distinct opaque handles. Built
 * twice into the one library: once plain, once with CUDA_API_PER_THREAD_DEFAULT_STREAM, which
 * names the same functions _ptds / _ptsz as the real library exports them (FAKE_PER_THREAD).
 * Built with -fno-ipa-icf: identical bodies must stay distinct functions, as the driver's are.
 */
#include <stdint.h>
#include <stdlib.h>
#include <cuda.h>

#define API __attribute__((visibility("default"), noinline))

/* Something to do, so that no two functions are one. */
static volatile unsigned long calls[64];
#define TOUCH(i) (calls[(i)]++, CUDA_SUCCESS)

#ifndef FAKE_PER_THREAD
API CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return TOUCH(0);
}

/* A handle per lookup: opaque, as the driver's are (the test never frees them). */
static void *new_handle(void)
{
	return malloc(16);
}

API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	(void)hmod;
	if (!hfunc || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*hfunc = new_handle();
	return *hfunc ? TOUCH(1) : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	(void)library;
	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	*pKernel = new_handle();
	return *pKernel ? TOUCH(2) : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	if (!pFunc || !kernel)
		return CUDA_ERROR_INVALID_VALUE;
	*pFunc = new_handle();
	return *pFunc ? TOUCH(3) : CUDA_ERROR_OUT_OF_MEMORY;
}
#define BASE 4
#else
#define BASE 34
#endif

API CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			    unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
			    CUstream s, void **params, void **extra)
{
	(void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s;
	(void)params, (void)extra;
	return TOUCH(BASE + 0);
}

API CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
			      void **extra)
{
	(void)config, (void)f, (void)params, (void)extra;
	return TOUCH(BASE + 1);
}

API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
				       unsigned int gz, unsigned int bx, unsigned int by,
				       unsigned int bz, unsigned int shmem, CUstream s,
				       void **params)
{
	(void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)s;
	(void)params;
	return TOUCH(BASE + 2);
}

API CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	(void)dst, (void)src, (void)n;
	return TOUCH(BASE + 3);
}

API CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	(void)dst, (void)src, (void)n, (void)s;
	return TOUCH(BASE + 4);
}

API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
	(void)dst, (void)src, (void)n;
	return TOUCH(BASE + 5);
}

API CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	(void)dst, (void)src, (void)n, (void)s;
	return TOUCH(BASE + 6);
}

API CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	(void)dst, (void)src, (void)n;
	return TOUCH(BASE + 7);
}

API CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	(void)dst, (void)src, (void)n, (void)s;
	return TOUCH(BASE + 8);
}

API CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	(void)dst, (void)src, (void)n;
	return TOUCH(BASE + 9);
}

API CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	(void)dst, (void)src, (void)n, (void)s;
	return TOUCH(BASE + 10);
}

API CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
			  size_t n)
{
	(void)dst, (void)dctx, (void)src, (void)sctx, (void)n;
	return TOUCH(BASE + 11);
}

API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
			       size_t n, CUstream s)
{
	(void)dst, (void)dctx, (void)src, (void)sctx, (void)n, (void)s;
	return TOUCH(BASE + 12);
}

#define MEMSET(fn, T, i)                                \
	API CUresult fn(CUdeviceptr dst, T v, size_t n) \
	{                                               \
		(void)dst, (void)v, (void)n;            \
		return TOUCH(BASE + (i));               \
	}
#define MEMSET_ASYNC(fn, T, i)                                      \
	API CUresult fn(CUdeviceptr dst, T v, size_t n, CUstream s) \
	{                                                           \
		(void)dst, (void)v, (void)n, (void)s;               \
		return TOUCH(BASE + (i));                           \
	}
#define MEMSET_2D(fn, T, i)                                                     \
	API CUresult fn(CUdeviceptr dst, size_t pitch, T v, size_t w, size_t h) \
	{                                                                       \
		(void)dst, (void)pitch, (void)v, (void)w, (void)h;              \
		return TOUCH(BASE + (i));                                       \
	}
#define MEMSET_2D_ASYNC(fn, T, i)                                                           \
	API CUresult fn(CUdeviceptr dst, size_t pitch, T v, size_t w, size_t h, CUstream s) \
	{                                                                                   \
		(void)dst, (void)pitch, (void)v, (void)w, (void)h, (void)s;                 \
		return TOUCH(BASE + (i));                                                   \
	}

MEMSET(cuMemsetD8, unsigned char, 13)
MEMSET(cuMemsetD16, unsigned short, 14)
MEMSET(cuMemsetD32, unsigned int, 15)
MEMSET_ASYNC(cuMemsetD8Async, unsigned char, 16)
MEMSET_ASYNC(cuMemsetD16Async, unsigned short, 17)
MEMSET_ASYNC(cuMemsetD32Async, unsigned int, 18)
MEMSET_2D(cuMemsetD2D8, unsigned char, 19)
MEMSET_2D(cuMemsetD2D16, unsigned short, 20)
MEMSET_2D(cuMemsetD2D32, unsigned int, 21)
MEMSET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 22)
MEMSET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 23)
MEMSET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 24)
