// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in libnvidia-ml.so.1 for tests/integration/metrics.sh: the entry points perch's
 * record/nvml.c calls, with nvml.h's signatures, reporting two GPUs whose readings are known
 * (GPU i: utilization 30 + 20 i %, memory used i + 1 GiB). FAKE_NVML_FAIL=1 makes nvmlInit_v2
 * fail as a machine without the driver loaded does (NVML_ERROR_DRIVER_NOT_LOADED, 9). Not a GPU
 * test: it checks perch's side of the interface (loading, binding, per-device reads, the series
 * and the reports), not NVIDIA's library.
 */
#include <stdlib.h>

typedef int nvmlReturn_t;
typedef struct fake_device *nvmlDevice_t;

typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

struct fake_device {
	unsigned int index;
};

static struct fake_device devices[2] = {{0}, {1}};

#define NVML_SUCCESS		     0
#define NVML_ERROR_INVALID_ARGUMENT  2
#define NVML_ERROR_DRIVER_NOT_LOADED 9

nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
const char *nvmlErrorString(nvmlReturn_t result);

nvmlReturn_t nvmlInit_v2(void)
{
	const char *fail = getenv("FAKE_NVML_FAIL");

	return fail && *fail == '1' ? NVML_ERROR_DRIVER_NOT_LOADED : NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = 2;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (index >= 2)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = &devices[index];
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization)
{
	utilization->gpu = 30 + 20 * device->index;
	utilization->memory = 10;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	memory->total = 80ull << 30;
	memory->used = (device->index + 1ull) << 30;
	memory->free = memory->total - memory->used;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
	return result == NVML_ERROR_DRIVER_NOT_LOADED ? "Driver Not Loaded" : "Unknown Error";
}
