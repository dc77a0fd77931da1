// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * NVML through dlopen: the few entry points perch calls, declared here with the signatures of
 * NVIDIA's nvml.h (nvmlReturn_t is an enum, NVML_SUCCESS 0; the structs as the header lays them
 * out), so perch builds and runs where no NVIDIA software is installed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/log.h"
#include "nvml.h"

#define NVML_MAX_DEVICES 64

typedef int nvml_ret;		      /* nvmlReturn_t */
typedef struct nvml_device *nvml_dev; /* nvmlDevice_t */

struct nvml_util { /* nvmlUtilization_t */
	unsigned int gpu, memory;
};

struct nvml_mem { /* nvmlMemory_t */
	unsigned long long total, free, used;
};

struct nvml {
	void *lib;
	nvml_ret (*shutdown)(void);
	nvml_ret (*util)(nvml_dev, struct nvml_util *);
	nvml_ret (*mem)(nvml_dev, struct nvml_mem *);
	unsigned int ndev;
	nvml_dev devs[NVML_MAX_DEVICES];
};

struct nvml_start {
	nvml_ret (*init)(void);
	nvml_ret (*count)(unsigned int *);
	nvml_ret (*handle)(unsigned int, nvml_dev *);
	const char *(*error)(nvml_ret);
};

static int bind(struct nvml *n, struct nvml_start *st)
{
	*(void **)&st->init = dlsym(n->lib, "nvmlInit_v2");
	*(void **)&st->count = dlsym(n->lib, "nvmlDeviceGetCount_v2");
	*(void **)&st->handle = dlsym(n->lib, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&st->error = dlsym(n->lib, "nvmlErrorString");
	*(void **)&n->shutdown = dlsym(n->lib, "nvmlShutdown");
	*(void **)&n->util = dlsym(n->lib, "nvmlDeviceGetUtilizationRates");
	*(void **)&n->mem = dlsym(n->lib, "nvmlDeviceGetMemoryInfo");
	return st->init && st->count && st->handle && st->error && n->shutdown && n->util && n->mem
		       ? 0
		       : -ENOENT;
}

/* Init and the device handles; a message in why when it fails. */
static int start(struct nvml *n, const struct nvml_start *st, char *why, size_t len)
{
	unsigned int count = 0;
	nvml_ret r = st->init();

	if (r) {
		snprintf(why, len, "no NVML: nvmlInit_v2: %s", st->error(r));
		return -EIO;
	}
	r = st->count(&count);
	if (r) {
		snprintf(why, len, "no NVML: nvmlDeviceGetCount_v2: %s", st->error(r));
		n->shutdown();
		return -EIO;
	}
	for (unsigned int i = 0; i < count && n->ndev < NVML_MAX_DEVICES; i++) {
		if (!st->handle(i, &n->devs[n->ndev]))
			n->ndev++;
	}
	return 0;
}

struct nvml *nvml__open(char *why, size_t len)
{
	struct nvml_start st = {};
	struct nvml *n = calloc(1, sizeof(*n));

	if (!n) {
		snprintf(why, len, "no NVML: out of memory");
		return NULL;
	}
	n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!n->lib) {
		snprintf(why, len, "no NVML: %s", dlerror());
		free(n);
		return NULL;
	}
	if (bind(n, &st)) {
		snprintf(why, len, "no NVML: libnvidia-ml.so.1 lacks an entry point perch calls");
		goto err_out;
	}
	if (start(n, &st, why, len))
		goto err_out;
	log_debug("metrics: NVML: %u GPU(s)", n->ndev);
	return n;
err_out:
	dlclose(n->lib);
	free(n);
	return NULL;
}

void nvml__close(struct nvml *n)
{
	if (!n)
		return;
	n->shutdown();
	dlclose(n->lib);
	free(n);
}

unsigned int nvml__devices(const struct nvml *n)
{
	return n ? n->ndev : 0;
}

int nvml__read(const struct nvml *n, unsigned int i, unsigned int *util_pct, uint64_t *mem_used)
{
	struct nvml_util u;
	struct nvml_mem m;

	if (!n || i >= n->ndev || n->util(n->devs[i], &u) || n->mem(n->devs[i], &m))
		return -EIO;
	*util_pct = u.gpu;
	*mem_used = m.used;
	return 0;
}
