/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The channel stream read back (gpu_records.h, gpu_stream_next). Apart from gpu_records.c because
 * it needs no CUPTI header: perch links it (and gpu_join.c) whether or not the CUDA toolkit was
 * there to build the injection library.
 */
#include <errno.h>
#include <string.h>
#include "gpu_records.h"

int gpu_stream_next(const void *buf, size_t len, size_t *off, struct perch_cuda_rec *rec,
		    const char **name)
{
	const char *p = (const char *)buf + *off;
	size_t left;
	uint32_t size;

	if (*off > len)
		return -EINVAL;
	left = len - *off;
	if (left < PERCH_CUDA_REC_BYTES)
		return 0;
	memcpy(rec, p, sizeof(*rec));
	if (rec->kind < PERCH_CUDA_KERNEL || rec->kind > PERCH_CUDA_SITE ||
	    rec->name_len > PERCH_CUDA_NAME_MAX)
		return -EINVAL;
	size = perch_cuda_rec_size(rec->name_len);
	if (left < size)
		return 0;
	*name = rec->name_len ? p + PERCH_CUDA_REC_BYTES : NULL;
	*off += size;
	return 1;
}
