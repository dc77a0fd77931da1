// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program shaped like one nvcc built with its default static CUDA runtime: no libcuda or
 * libcudart in DT_NEEDED, but a ".nv_fatbin" section (here a few bytes, no device code). NOT a CUDA
 * program: it never loads CUDA. `perch record` must turn --gpu on for it all the same.
 */
__attribute__((section(".nv_fatbin"), used)) static const char fatbin[16] = "not device code";

int main(void)
{
	return fatbin[0] == 'n' ? 0 : 1;
}
