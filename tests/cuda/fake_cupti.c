// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A stand-in libcupti.so.13 for tests/cuda.sh: NOT a GPU and not CUPTI. It exports the CUPTI
 * entry points the injection library (runtime/cuda/inject.c) calls, remembers what it was asked for
 * (subscriber name, the clock registered before any kind was enabled, kinds, callbacks), and on
 * the test program's request (fake_cupti_*) calls the subscriber's API callbacks the way CUPTI
 * does (runtime enter, driver enter/exit, runtime exit, one correlation id) and hands buffers of
 * real CUPTI activity structs (CUDA 13's) to the registered buffer callbacks. Times are taken
 * from the registered timestamp callback, else from CLOCK_REALTIME, as CUPTI's are.
 *
 * Environment: FAKE_CUPTI_BUSY=NAME makes cuptiSubscribe_v2 fail with error 39, naming NAME as
 * the holder; FAKE_CUPTI_NO_TSCB=1 refuses the timestamp callback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cupti.h>

#define EXPORT	 __attribute__((visibility("default")))
#define MAX_RECS 256
#define MAX_CBID 1024 /* above both domains' CBID_SIZE */
#define REC_SIZE 512  /* a slot per record, larger than any struct here */

struct fake_state {
	char subscriber[64];
	int clock_before_enable; /* timestamp callback registered before the first enable */
	int clock_registered;
	int enables;
	unsigned long long kinds; /* bit per CUpti_ActivityKind < 64 */
	int callbacks[2];	  /* callbacks enabled: [0] driver, [1] runtime */
};

static struct {
	struct fake_state s;
	unsigned char enabled[2][MAX_CBID]; /* [domain is runtime][cbid]: the callback is on */
	CUpti_CallbackFunc api_cb;
	void *api_ud;
	CUpti_TimestampCallbackFunc ts;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc comp;
	uint32_t next_corr;
	size_t dropped;
	unsigned char recs[MAX_RECS][REC_SIZE];
	size_t sizes[MAX_RECS];
	int nrecs;
} f = {.next_corr = 1};

/* Prototypes of the test program's controls (no header: it finds them with dlsym). */
EXPORT void fake_cupti_state(struct fake_state *out);
EXPORT uint32_t fake_cupti_launch(int runtime, uint32_t cbid, const char *kernel, int nkernels);
EXPORT uint32_t fake_cupti_memcpy(uint64_t bytes, uint8_t copy_kind);
EXPORT uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value);
EXPORT uint32_t fake_cupti_orphan_kernel(const char *kernel);
EXPORT uint32_t fake_cupti_sync(uint32_t type, uint64_t wait_ns);
EXPORT void fake_cupti_drop(size_t n);
EXPORT void fake_cupti_complete(void);

static uint64_t stamp(void)
{
	struct timespec ts;

	if (f.ts)
		return f.ts();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
		       ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
		       : "CUPTI_ERROR_FAKE";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc cb,
				     void *ud, CUpti_SubscriberParams *p)
{
	const char *busy = getenv("FAKE_CUPTI_BUSY");

	if (busy) {
		if (p && p->oldSubscriberName && p->oldSubscriberSize)
			snprintf(p->oldSubscriberName, p->oldSubscriberSize, "CUPTI for %s", busy);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	snprintf(f.s.subscriber, sizeof(f.s.subscriber), "%s",
		 p && p->subscriberName ? p->subscriberName : "");
	f.api_cb = cb;
	f.api_ud = ud;
	*subscriber = (CUpti_SubscriberHandle)&f;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc cb,
				  void *ud)
{
	return cuptiSubscribe_v2(subscriber, cb, ud, NULL);
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	if (getenv("FAKE_CUPTI_NO_TSCB"))
		return CUPTI_ERROR_NOT_SUPPORTED;
	f.ts = fn;
	f.s.clock_registered = 1;
	f.s.clock_before_enable = f.s.enables == 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc comp)
{
	f.req = req;
	f.comp = comp;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	f.s.enables++;
	if ((unsigned)kind < 64)
		f.s.kinds |= 1ull << kind;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
				       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (sub != (CUpti_SubscriberHandle)&f || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		f.s.callbacks[domain == CUPTI_CB_DOMAIN_RUNTIME_API] += enable ? 1 : 0;
		f.enabled[domain == CUPTI_CB_DOMAIN_RUNTIME_API][cbid] = enable ? 1 : 0;
	}
	return CUPTI_SUCCESS;
}

/* The names of the calls the stand-in makes, as CUPTI spells them; any other id of the two API
 * domains gets a name that is no copy, memset or launch (CUPTI names every id). */
EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					const char **name)
{
	static const struct {
		int runtime;
		uint32_t cbid;
		const char *name;
	} known[] = {
		{1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
		{1, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, "cudaMemsetAsync_v3020"},
		{1, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
		{0, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
		{0, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, "cuMemsetD8Async"},
		{0, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
	};
	int runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;

	if (!name || (!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) || cbid == 0 ||
	    cbid >= (runtime ? CUPTI_RUNTIME_TRACE_CBID_SIZE : CUPTI_DRIVER_TRACE_CBID_SIZE))
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = runtime ? "cudaGetDeviceCount" : "cuDeviceGet";
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].runtime == runtime && known[i].cbid == cbid)
			*name = known[i].name;
	return CUPTI_SUCCESS;
}

/* Records in a buffer: each in a REC_SIZE slot, the slot's first 8 bytes its size. */
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	uint8_t *next = *rec ? (uint8_t *)*rec + REC_SIZE - 8 : buffer;

	if ((size_t)(next - buffer) + REC_SIZE > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(next + 8);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = f.dropped;
	f.dropped = 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	fake_cupti_complete();
	return CUPTI_SUCCESS;
}

static void *queue(size_t size)
{
	if (f.nrecs == MAX_RECS || size > REC_SIZE - 8)
		abort(); /* the test asked for more than it should */
	memset(f.recs[f.nrecs], 0, REC_SIZE);
	f.sizes[f.nrecs] = size;
	return f.recs[f.nrecs++];
}

static void queue_api(int runtime, uint32_t cbid, uint32_t corr, uint64_t start, uint64_t end)
{
	CUpti_ActivityKind kind =
		runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
	CUpti_ActivityAPI *a;

	if (!(f.s.kinds & (1ull << kind)))
		return;
	a = queue(sizeof(*a));
	a->kind = kind;
	a->cbid = cbid;
	a->start = start;
	a->end = end;
	a->processId = (uint32_t)getpid();
	a->threadId = (uint32_t)syscall(SYS_gettid);
	a->correlationId = corr;
}

static void queue_kernel(const char *name, uint32_t corr, uint32_t graph, uint64_t start)
{
	CUpti_ActivityKernel10 *k;

	if (!(f.s.kinds & (1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
		return;
	k = queue(sizeof(*k));
	k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k->start = start;
	k->end = start + 1000000; /* 1 ms */
	k->streamId = 7;
	k->correlationId = corr;
	k->graphId = graph;
	k->gridX = k->gridY = k->gridZ = 1;
	k->blockX = 32, k->blockY = k->blockZ = 1;
	k->name = name;
}

static void api_callback(CUpti_CallbackDomain dom, uint32_t cbid, CUpti_ApiCallbackSite site,
			 uint32_t corr)
{
	CUpti_CallbackData d = {.callbackSite = site, .correlationId = corr};

	if (f.api_cb && cbid < MAX_CBID && f.enabled[dom == CUPTI_CB_DOMAIN_RUNTIME_API][cbid])
		f.api_cb(f.api_ud, dom, cbid, &d);
}

/* A call as CUPTI reports it: runtime enter, driver enter and exit, runtime exit (runtime 0:
 * the driver call alone), all under one correlation id. */
static void api_calls(int runtime, uint32_t rt_cbid, uint32_t drv_cbid, uint32_t corr)
{
	if (runtime)
		api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, CUPTI_API_ENTER, corr);
	api_callback(CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, CUPTI_API_ENTER, corr);
	api_callback(CUPTI_CB_DOMAIN_DRIVER_API, drv_cbid, CUPTI_API_EXIT, corr);
	if (runtime)
		api_callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt_cbid, CUPTI_API_EXIT, corr);
}

/* A launch call as CUPTI reports it: callbacks nested runtime over driver, one correlation id,
 * an API record, and nkernels kernels (more than one: the nodes of a graph). */
EXPORT uint32_t fake_cupti_launch(int runtime, uint32_t cbid, const char *kernel, int nkernels)
{
	uint32_t corr = f.next_corr++;
	uint64_t start = stamp();

	api_calls(runtime, cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr);
	queue_api(runtime, cbid, corr, start, stamp());
	for (int i = 0; i < nkernels; i++)
		queue_kernel(kernel, corr, nkernels > 1 ? 1 : 0, start + 10000 + i * 1000000ull);
	return corr;
}

/* cudaMemcpy (over cuMemcpyHtoD_v2): 1.8 us of copy. */
EXPORT uint32_t fake_cupti_memcpy(uint64_t bytes, uint8_t copy_kind)
{
	uint32_t corr = f.next_corr++;
	uint64_t start = stamp();
	CUpti_ActivityMemcpy6 *m;

	api_calls(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
		  CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, corr);
	queue_api(1, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, corr, start, start + 2000);
	m = queue(sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m->copyKind = copy_kind;
	m->bytes = bytes;
	m->start = start + 100;
	m->end = start + 1900;
	m->streamId = 7;
	m->correlationId = corr;
	return corr;
}

/* cuMemsetD8Async, the driver API alone: 2.5 us of memset. */
EXPORT uint32_t fake_cupti_memset(uint64_t bytes, uint32_t value)
{
	uint32_t corr = f.next_corr++;
	uint64_t start = stamp();
	CUpti_ActivityMemset4 *m;

	api_calls(0, 0, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, corr);
	queue_api(0, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, corr, start, start + 3000);
	if (!(f.s.kinds & (1ull << CUPTI_ACTIVITY_KIND_MEMSET)))
		return corr;
	m = queue(sizeof(*m));
	m->kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m->value = value;
	m->bytes = bytes;
	m->start = start + 200;
	m->end = start + 2700;
	m->streamId = 7;
	m->correlationId = corr;
	return corr;
}

/* A synchronization of CUpti_ActivitySynchronizationType type that waited wait_ns, inside its
 * runtime API call on the calling thread (one correlation id): what cudaStreamSynchronize and
 * its kin report. It returns after the wait, so the calls of a thread do not overlap. */
EXPORT uint32_t fake_cupti_sync(uint32_t type, uint64_t wait_ns)
{
	static const uint32_t cbids[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
	};
	uint32_t corr = f.next_corr++;
	uint64_t start = stamp();
	CUpti_ActivitySynchronization2 *s;

	queue_api(1, cbids[type < 5 ? type : 0], corr, start, start + wait_ns + 1000);
	if (!(f.s.kinds & (1ull << CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)))
		return corr;
	s = queue(sizeof(*s));
	s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s->type = (CUpti_ActivitySynchronizationType)type;
	s->start = start + 500;
	s->end = start + 500 + wait_ns;
	s->correlationId = corr;
	s->streamId = 7;
	usleep((useconds_t)(wait_ns / 1000 + 2)); /* the call returns after its wait, as CUDA's */
	return corr;
}

EXPORT uint32_t fake_cupti_orphan_kernel(const char *kernel)
{
	uint32_t corr = f.next_corr++;

	queue_kernel(kernel, corr, 0, stamp());
	return corr;
}

EXPORT void fake_cupti_drop(size_t n)
{
	f.dropped += n;
}

/* Hand what is queued to the buffer callbacks, in buffers CUPTI would have asked for. */
EXPORT void fake_cupti_complete(void)
{
	uint8_t *buf = NULL;
	size_t size = 0, max = 0, valid = 0;

	if (!f.req || !f.comp)
		return;
	f.req(&buf, &size, &max);
	if (!buf) {
		f.dropped += (size_t)f.nrecs;
		f.nrecs = 0;
		return;
	}
	for (int i = 0; i < f.nrecs && valid + REC_SIZE <= size; i++, valid += REC_SIZE) {
		memcpy(buf + valid, &f.sizes[i], 8);
		memcpy(buf + valid + 8, f.recs[i], REC_SIZE - 8);
	}
	f.nrecs = 0;
	f.comp(NULL, 0, buf, size, valid);
}

EXPORT void fake_cupti_state(struct fake_state *out)
{
	*out = f.s;
}
