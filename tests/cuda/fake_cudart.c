// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in libcudart.so.13: NOT the CUDA runtime. It exists so that a test program can be linked
 * against "libcudart" (tests/cuda/host-linked: DT_NEEDED libcudart.so.13), which is what
 * `perch record` looks for to turn --gpu on by itself.
 */
#define EXPORT __attribute__((visibility("default")))

EXPORT int cudaRuntimeGetVersion(int *version);

EXPORT int cudaRuntimeGetVersion(int *version)
{
	*version = 13000;
	return 0;
}
