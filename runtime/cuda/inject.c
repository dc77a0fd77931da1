/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CUDA injection library (libperch_cuda.so): the driver loads it into the user's program
 * through CUDA_INJECTION64_PATH and calls InitializeInjection(). It subscribes to CUPTI as
 * "perch", puts CUPTI's times on CLOCK_MONOTONIC, records kernels, copies, memsets, syncs and
 * the runtime/driver API calls, and writes them to the descriptor perch passed in PERCH_CUDA_FD
 * (the channel of perch_cuda.h) while it is still that channel: the variable names the file's
 * device and inode too, and a descriptor of that number that is something else (a descendant
 * closed the channel and opened a file of its own there) is never written. At the exit of each launch, copy and memset call it calls the
 * probe perch_cuda_launch(), where perch's uprobe takes the CPU stack.
 *
 * It runs inside the user's program: it never prints, never exits, and turns every failure into
 * a NOTE record for perch's report. CUPTI's buffer callbacks carry no user pointer, so the state
 * is one static struct.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <cupti.h>
#include "cuda/gpu_records.h"
#include "inject_sites.h"

#define EXPORT __attribute__((visibility("default")))

#define BUFFER_BYTES  (4u << 20) /* one CUPTI activity buffer */
#define OUT_BYTES     4096	 /* one write: PIPE_BUF, never interleaved with another's */
#define RECHECK_NS    1000000000ull
#define CLOCK_TRIES   16
#define CLOCK_STEP_NS 100000 /* a re-measured offset this far off is a clock step: say it */

enum channel { CHANNEL_FILE, CHANNEL_SOCKET, CHANNEL_PIPE };

static struct {
	int fd;	   /* -1: no channel (perch did not ask, or it went away) */
	dev_t dev; /* the channel's, as perch named it */
	ino_t ino;
	enum channel channel;
	uint32_t pid;
	pthread_mutex_t lock; /* out, names, clock, fd */
	char out[OUT_BYTES];
	size_t out_len;
	struct gpu_names *names;
	struct gpu_clock clock;
	uint64_t clock_checked_ns;
	CUpti_SubscriberHandle subscriber;
	uint64_t probes; /* launch, copy and memset calls: probed or attributed to their site */
	/* SITE records, apart from `out`: a launch never waits for a buffer being decoded. */
	pthread_mutex_t site_lock;
	char site_out[OUT_BYTES];
	size_t site_len;
} st = {.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .site_lock = PTHREAD_MUTEX_INITIALIZER};

/* Inside a runtime API call: its driver calls are the same launch, probed once at its exit. */
static __thread int runtime_depth;
static __thread uint32_t my_tid;

/* The probe perch's uprobe attaches to, at the exit of every launch, copy and memset call on the
 * calling thread: the stack under it is the call's call path. A real call with its argument in
 * the first argument register. On x86-64 its first instruction is the 5-byte NOP (0f 1f 44 00
 * 00), which Linux >= 6.16 turns into a call to its uprobe trampoline instead of an int3 trap
 * (PERCH_CUDA_PROBE_NOP_OFFSET and PERCH_CUDA_PROBE_TRAP_OFFSET: where perch attaches). */
#if defined(__x86_64__)
EXPORT __attribute__((naked, noinline, used)) void perch_cuda_launch(uint32_t correlation_id
								     __attribute__((unused)))
{
	__asm__(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"
		"ret");
}
#else
EXPORT __attribute__((noinline, used)) void perch_cuda_launch(uint32_t correlation_id)
{
	__asm__ volatile("" : : "r"(correlation_id) : "memory");
}
#endif

/* The library's own calls go to its own probe, never to a perch_cuda_launch() the program or
 * another library exports (a call through the PLT would take that one, and perch's uprobe,
 * placed on this library's symbol, would not fire). */
extern void probe_launch(uint32_t correlation_id)
	__attribute__((alias("perch_cuda_launch"), visibility("hidden")));

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI monotonic_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

/* A write to a pipe whose reader is gone raises SIGPIPE, which would kill the user's program:
 * block it for this thread, and take back one it raised. */
static ssize_t pipe_write(int fd, const void *p, size_t n)
{
	sigset_t pipe_set, old;
	struct timespec zero = {0, 0};
	ssize_t w;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	w = write(fd, p, n);
	if (w < 0 && errno == EPIPE)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return w;
}

static ssize_t channel_write(const void *p, size_t n)
{
	switch (st.channel) {
	case CHANNEL_SOCKET:
		return send(st.fd, p, n, MSG_NOSIGNAL);
	case CHANNEL_PIPE:
		return pipe_write(st.fd, p, n);
	default:
		return write(st.fd, p, n);
	}
}

/* Whether fd is the channel perch named (device and inode): checked before every write, as the
 * program may close it and open something else under its number. */
static bool is_channel(int fd)
{
	struct stat sb;

	return !fstat(fd, &sb) && sb.st_dev == st.dev && sb.st_ino == st.ino;
}

/* Write buf[0..*len) and empty it. A failed channel, or a descriptor that is no longer the
 * channel, is given up for good: the program goes on without it. */
static void buf_flush(const char *buf, size_t *len)
{
	size_t off = 0;

	if (st.fd >= 0 && *len && !is_channel(st.fd))
		st.fd = -1;
	while (st.fd >= 0 && off < *len) {
		ssize_t w = channel_write(buf + off, *len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			st.fd = -1;
			break;
		}
		off += (size_t)w;
	}
	*len = 0;
}

/* Write what is buffered. Caller holds the lock. */
static void out_flush(void)
{
	buf_flush(st.out, &st.out_len);
}

/* Caller holds site_lock. */
static void site_flush(void)
{
	buf_flush(st.site_out, &st.site_len);
}

/* A call attributed to the stack of its site's probed call (or, reprobe, probed again to
 * re-check it). */
static void out_site(uint32_t corr, uint32_t site, bool reprobe)
{
	struct perch_cuda_rec r = {
		.kind = PERCH_CUDA_SITE,
		.correlation_id = corr,
		.start_ns = now_ns(CLOCK_MONOTONIC),
		.detail = site,
		.pid = st.pid,
		.flags = reprobe ? PERCH_CUDA_F_REPROBE : 0,
	};

	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	r.tid = my_tid;
	pthread_mutex_lock(&st.site_lock);
	if (st.site_len + sizeof(r) > sizeof(st.site_out))
		site_flush();
	memcpy(st.site_out + st.site_len, &r, sizeof(r));
	st.site_len += sizeof(r);
	pthread_mutex_unlock(&st.site_lock);
}

/* Queue one record with its name (cut to the channel's limit). Caller holds the lock. */
static void out_record(struct perch_cuda_rec *r, const char *name)
{
	size_t len = name ? strlen(name) : 0;
	uint32_t size;

	if (len > PERCH_CUDA_NAME_MAX) {
		len = PERCH_CUDA_NAME_MAX;
		r->flags |= PERCH_CUDA_F_TRUNCATED;
	}
	r->name_len = (uint16_t)len;
	r->pid = st.pid;
	size = perch_cuda_rec_size((uint32_t)len);
	if (st.out_len + size > sizeof(st.out))
		out_flush();
	memcpy(st.out + st.out_len, r, sizeof(*r));
	memcpy(st.out + st.out_len + sizeof(*r), name ? name : "", len);
	memset(st.out + st.out_len + sizeof(*r) + len, 0, size - sizeof(*r) - len);
	st.out_len += size;
}

static void note(uint32_t code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(uint32_t code, const char *fmt, ...)
{
	struct perch_cuda_rec r = {.kind = PERCH_CUDA_NOTE, .detail = code};
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&st.lock);
	out_record(&r, text);
	out_flush();
	pthread_mutex_unlock(&st.lock);
}

static const char *cupti_error(CUptiResult res)
{
	const char *s = NULL;

	if (cuptiGetResultString(res, &s) != CUPTI_SUCCESS || !s)
		return "unknown error";
	return s;
}

/* Tell perch the clock in use. Caller holds the lock. */
static void out_clock(void)
{
	uint64_t m1, real, m2;
	struct perch_cuda_rec r = {.kind = PERCH_CUDA_CLOCK, .detail = st.clock.mode};

	gpu_clock_read_system(NULL, &m1, &real, &m2);
	r.start_ns = m1 + (m2 - m1) / 2;
	r.end_ns =
		st.clock.mode == PERCH_CUDA_CLOCK_OFFSET ? r.start_ns + st.clock.offset_ns : real;
	out_record(&r, NULL);
}

/* In offset mode, measure again now and then: an NTP step moves CLOCK_REALTIME, not ours. */
static void clock_recheck(void)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int64_t off, diff;

	if (st.clock.mode != PERCH_CUDA_CLOCK_OFFSET || now - st.clock_checked_ns < RECHECK_NS)
		return;
	st.clock_checked_ns = now;
	off = gpu_clock_measure(gpu_clock_read_system, NULL, CLOCK_TRIES);
	diff = off - st.clock.offset_ns;
	if (diff < -CLOCK_STEP_NS || diff > CLOCK_STEP_NS) {
		st.clock.offset_ns = off;
		out_clock();
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_BYTES);
	*size = *buffer ? BUFFER_BYTES : 0; /* none: CUPTI drops and counts, we report the count */
	*max_records = 0;
}

/* One decoded record to the channel, its kernel name bound first if new. Caller holds the lock. */
static void out_activity(struct perch_cuda_rec *r, const char *name)
{
	bool is_new = false;
	uint32_t id;

	if (!name) {
		out_record(r, NULL);
		return;
	}
	id = gpu_names__intern(st.names, name, &is_new);
	if (is_new) {
		struct perch_cuda_rec n = {.kind = PERCH_CUDA_NAME, .detail = id};

		out_record(&n, name);
	}
	r->detail = id;
	out_record(r, NULL);
}

static void out_dropped(CUcontext ctx, uint32_t stream)
{
	size_t dropped = 0;

	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		struct perch_cuda_rec r = {.kind = PERCH_CUDA_DROPPED, .bytes = dropped};

		r.start_ns = now_ns(CLOCK_MONOTONIC);
		out_record(&r, NULL);
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *a = NULL;
	struct perch_cuda_rec r;
	const char *name;

	(void)size;
	pthread_mutex_lock(&st.lock);
	clock_recheck();
	while (cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
		if (gpu_decode(a, &st.clock, st.pid, &r, &name))
			out_activity(&r, name);
	out_dropped(ctx, stream);
	out_flush();
	pthread_mutex_unlock(&st.lock);
	free(buffer);
}

/* The exit of a launch, copy or memset call: the probe, unless its site's stack is known. */
static void call_exit(uint32_t what, uint32_t corr, const void *frame)
{
	uint32_t site;
	enum site_verdict v = sites_lookup(what, corr, frame, &site);

	__atomic_fetch_add(&st.probes, 1, __ATOMIC_RELAXED);
	if (v != SITE_INHERIT)
		probe_launch(corr);
	if (v != SITE_PROBE)
		out_site(corr, site, v == SITE_REPROBE);
}

static void CUPTIAPI on_api(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			    const void *data)
{
	const CUpti_CallbackData *cb = data;
	bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;

	(void)userdata;
	if (cb->callbackSite == CUPTI_API_ENTER) {
		runtime_depth += runtime;
		return;
	}
	runtime_depth -= runtime;
	if (runtime || runtime_depth == 0)
		call_exit((uint32_t)runtime << 31 | cbid, cb->correlationId,
			  __builtin_frame_address(0));
}

/* Subscribe as "perch"; on error 39 say who holds CUPTI, when CUPTI tells. */
static int subscribe(void)
{
	CUptiResult res;
#ifdef PERCH_HAVE_CUPTI_SUBSCRIBE_V2
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	CUpti_SubscriberParams params = {
		.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
		.subscriberName = "perch",
		.oldSubscriberName = holder,
		.oldSubscriberSize = sizeof(holder) - 1,
	};

	res = cuptiSubscribe_v2(&st.subscriber, on_api, NULL, &params);
#else
	const char holder[] = "";

	res = cuptiSubscribe(&st.subscriber, on_api, NULL);
#endif
	if (res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		note(PERCH_CUDA_NOTE_BUSY, "CUPTI is in use by %s (error 39): no GPU data",
		     holder[0] ? holder : "another tool (it did not say which)");
		return -EBUSY;
	}
	if (res != CUPTI_SUCCESS) {
		note(PERCH_CUDA_NOTE_CUPTI, "cuptiSubscribe: %s (%d): no GPU data",
		     cupti_error(res), (int)res);
		return -EIO;
	}
	return 0;
}

/* Before any kind is enabled: CUPTI's times on our clock, else a measured offset. */
static void setup_clock(void)
{
	CUptiResult res = cuptiActivityRegisterTimestampCallback(monotonic_ns);

	pthread_mutex_lock(&st.lock);
	if (res == CUPTI_SUCCESS) {
		st.clock.mode = PERCH_CUDA_CLOCK_CALLBACK;
	} else {
		st.clock.mode = PERCH_CUDA_CLOCK_OFFSET;
		st.clock.offset_ns = gpu_clock_measure(gpu_clock_read_system, NULL, CLOCK_TRIES);
		st.clock_checked_ns = now_ns(CLOCK_MONOTONIC);
	}
	out_clock();
	pthread_mutex_unlock(&st.lock);
	if (res != CUPTI_SUCCESS)
		note(PERCH_CUDA_NOTE_NOCLOCK,
		     "cuptiActivityRegisterTimestampCallback: %s (%d): GPU times converted from CLOCK_REALTIME by a measured offset",
		     cupti_error(res), (int)res);
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER,
};

static void enable_kinds(void)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult res = cuptiActivityEnable(kinds[i]);

		if (res != CUPTI_SUCCESS)
			note(PERCH_CUDA_NOTE_CUPTI, "cuptiActivityEnable(kind %d): %s (%d)",
			     (int)kinds[i], cupti_error(res), (int)res);
	}
}

static void enable_launch_callbacks(void)
{
	for (int runtime = 0; runtime <= 1; runtime++) {
		CUpti_CallbackDomain dom =
			runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
		size_t n;
		const uint32_t *ids = gpu_launch_cbids(runtime, &n);

		for (size_t i = 0; i < n; i++) {
			CUptiResult res = cuptiEnableCallback(1, st.subscriber, dom, ids[i]);

			if (res != CUPTI_SUCCESS)
				note(PERCH_CUDA_NOTE_CUPTI, "cuptiEnableCallback(%s %u): %s (%d)",
				     runtime ? "runtime" : "driver", ids[i], cupti_error(res),
				     (int)res);
		}
	}
}

/* The copies and memsets get the probe too, so their GPU time has a call path: every callback id
 * whose API name starts so (CUPTI names them; the ids differ between CUDA versions). */
static bool is_copy_call(bool runtime, const char *name)
{
	static const char *const prefix[2][2] = {{"cuMemcpy", "cuMemset"},
						 {"cudaMemcpy", "cudaMemset"}};

	for (int i = 0; i < 2; i++)
		if (!strncmp(name, prefix[runtime][i], strlen(prefix[runtime][i])))
			return true;
	return false;
}

static void enable_copy_callbacks(void)
{
	for (int runtime = 0; runtime <= 1; runtime++) {
		CUpti_CallbackDomain dom =
			runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
		uint32_t n = runtime ? CUPTI_RUNTIME_TRACE_CBID_SIZE : CUPTI_DRIVER_TRACE_CBID_SIZE;

		for (uint32_t id = 1; id < n; id++) {
			const char *name = NULL;
			CUptiResult res;

			if (cuptiGetCallbackName(dom, id, &name) != CUPTI_SUCCESS || !name ||
			    !is_copy_call(runtime, name))
				continue;
			res = cuptiEnableCallback(1, st.subscriber, dom, id);
			if (res != CUPTI_SUCCESS)
				note(PERCH_CUDA_NOTE_CUPTI, "cuptiEnableCallback(%s): %s (%d)",
				     name, cupti_error(res), (int)res);
		}
	}
}

/* At the program's exit: the last buffers, the drops, and the probe count. */
static void at_exit(void)
{
	struct perch_cuda_rec r = {.kind = PERCH_CUDA_END};

	if (st.fd < 0)
		return; /* perch went away, or a forked child: no CUPTI calls */
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&st.lock);
	out_dropped(NULL, 0);
	r.start_ns = now_ns(CLOCK_MONOTONIC);
	r.bytes = __atomic_load_n(&st.probes, __ATOMIC_RELAXED);
	pthread_mutex_lock(&st.site_lock);
	site_flush(); /* before the end record: perch counts the calls against it */
	pthread_mutex_unlock(&st.site_lock);
	out_record(&r, NULL);
	out_flush();
	pthread_mutex_unlock(&st.lock);
}

/* PERCH_CUDA_FD: "FD:DEV:INO", the descriptor and the device and inode of the file it is. */
static int open_channel(void)
{
	const char *s = getenv(PERCH_CUDA_FD_ENV);
	unsigned long long dev, ino;
	struct stat sb;
	int fd, end = 0;

	if (!s || !*s)
		return -ENOENT;
	if (sscanf(s, "%d:%llu:%llu%n", &fd, &dev, &ino, &end) != 3 || s[end] || fd < 0 ||
	    fstat(fd, &sb))
		return -EBADF;
	if (sb.st_dev != (dev_t)dev || sb.st_ino != (ino_t)ino)
		return -ESTALE; /* that number is not perch's channel (any longer) */
	st.fd = fd;
	st.dev = sb.st_dev;
	st.ino = sb.st_ino;
	st.channel = S_ISSOCK(sb.st_mode)   ? CHANNEL_SOCKET
		     : S_ISFIFO(sb.st_mode) ? CHANNEL_PIPE
					    : CHANNEL_FILE;
	st.pid = (uint32_t)getpid();
	return 0;
}

/* A child forked after CUDA started cannot use CUDA (the driver does not survive fork()), so it
 * has nothing to send: it drops its parent's unsent records and the channel, and re-makes a lock
 * another parent thread may have held at the fork. A child that execs a CUDA program is injected
 * afresh, with its own pid on its records. */
static void after_fork_child(void)
{
	pthread_mutex_init(&st.lock, NULL);
	pthread_mutex_init(&st.site_lock, NULL);
	my_tid = 0;
	st.out_len = 0;
	st.site_len = 0;
	st.fd = -1;
}

/* Called by the CUDA driver when it loads this library; 1 tells it to go on either way. */
EXPORT int InitializeInjection(void)
{
	static int done;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return 1;
	if (open_channel())
		return 1; /* perch is not listening: record nothing */
	st.names = gpu_names__new();
	if (!st.names) {
		note(PERCH_CUDA_NOTE_CUPTI, "out of memory: no GPU data");
		return 1;
	}
	if (subscribe())
		return 1;
	setup_clock();
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
		note(PERCH_CUDA_NOTE_CUPTI, "cuptiActivityRegisterCallbacks failed: no GPU data");
		return 1;
	}
	enable_kinds();
	enable_launch_callbacks();
	enable_copy_callbacks();
	sites_init(!getenv(PERCH_CUDA_STACKS_ENV) ||
		   strcmp(getenv(PERCH_CUDA_STACKS_ENV), "every"));
	pthread_atfork(NULL, NULL, after_fork_child);
	atexit(at_exit);
	return 1;
}
