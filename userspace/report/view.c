// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `perch report --view=cpu|off|wall`: which time the samples weigh (model/sampleset.h weighs
 * them, as a profile option, when an output runs: the loaded recording stays as it was), and
 * what the text header says of the off-CPU time.
 *
 * Why a thread was off the CPU, from the stack it blocked with: a label per key, first match:
 *   preempted  switched out while still runnable (the recording's flag, not the stack)
 *   gpu-sync   a user frame is a CUDA synchronize call (cudaStreamSynchronize, cuCtxSynchronize,
 *              ...): the thread waited for the GPU, whatever the kernel frames below say
 *   lock       futex_wait in the kernel stack: a contended mutex, but also a condition
 *              variable, semaphore or any futex-based wait (the kernel cannot tell them apart)
 *   sleep      do_nanosleep / hrtimer_nanosleep: nanosleep, usleep, sleep
 *   io         (anon_)pipe_read, io_schedule, filemap/folio/blk waits, socket receives
 *   wait       poll, select, epoll
 *   other      anything else (and keys with no kernel stack)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "format/keys.h"
#include "report.h"

#define OFFCPU_REASON(X) \
	X(preempted)     \
	X(gpu_sync)      \
	X(lock)          \
	X(sleep)         \
	X(io)            \
	X(wait)          \
	X(other)

#define REASON_ENUM(n) REASON_##n,
enum offcpu_reason { OFFCPU_REASON(REASON_ENUM) REASON_NR };
#undef REASON_ENUM

struct reason_rule {
	enum offcpu_reason reason;
	uint8_t kind; /* enum rec_frame_kind the name is looked for in */
	const char *prefix;
};

/* First match wins, in this order (see the comment at the top). */
static const struct reason_rule rules[] = {
	{REASON_gpu_sync, REC_FRAME_USER, "cudaStreamSynchronize"},
	{REASON_gpu_sync, REC_FRAME_USER, "cudaDeviceSynchronize"},
	{REASON_gpu_sync, REC_FRAME_USER, "cudaEventSynchronize"},
	{REASON_gpu_sync, REC_FRAME_USER, "cuCtxSynchronize"},
	{REASON_gpu_sync, REC_FRAME_USER, "cuStreamSynchronize"},
	{REASON_gpu_sync, REC_FRAME_USER, "cuEventSynchronize"},
	{REASON_lock, REC_FRAME_KERNEL, "futex_wait"},
	{REASON_sleep, REC_FRAME_KERNEL, "do_nanosleep"},
	{REASON_sleep, REC_FRAME_KERNEL, "hrtimer_nanosleep"},
	{REASON_io, REC_FRAME_KERNEL, "pipe_read"},
	{REASON_io, REC_FRAME_KERNEL, "anon_pipe_read"},
	{REASON_io, REC_FRAME_KERNEL, "io_schedule"},
	{REASON_io, REC_FRAME_KERNEL, "filemap_"},
	{REASON_io, REC_FRAME_KERNEL, "folio_wait"},
	{REASON_io, REC_FRAME_KERNEL, "blk_"},
	{REASON_io, REC_FRAME_KERNEL, "sock_recvmsg"},
	{REASON_io, REC_FRAME_KERNEL, "unix_stream_read"},
	{REASON_wait, REC_FRAME_KERNEL, "do_epoll_wait"},
	{REASON_wait, REC_FRAME_KERNEL, "do_sys_poll"},
	{REASON_wait, REC_FRAME_KERNEL, "do_select"},
};

static bool has_frame(const struct recording *r, const struct rec_sample *s, uint8_t kind,
		      const char *prefix)
{
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct rec_frame *f = &r->frames[s->frames[i]];

		if (f->kind == kind &&
		    !strncmp(recording__string(r, f->name), prefix, strlen(prefix)))
			return true;
	}
	return false;
}

static enum offcpu_reason reason_of(const struct recording *r, const struct rec_sample *s)
{
	if (s->flags & REC_SAMPLE_PREEMPTED)
		return REASON_preempted;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (has_frame(r, s, rules[i].kind, rules[i].prefix))
			return rules[i].reason;
	}
	return REASON_other;
}

const char *report__offcpu_reason(const struct recording *r, const struct rec_sample *s)
{
	static const char *const names[] = {
#define REASON_NAME(n) #n,
		OFFCPU_REASON(REASON_NAME)
#undef REASON_NAME
	};

	return names[reason_of(r, s)];
}

int report__parse_view(const char *s, enum report_view *v)
{
	static const char *const names[] = {"cpu", "off", "wall"};

	for (int i = 0; i < 3; i++) {
		if (!strcmp(s, names[i])) {
			*v = (enum report_view)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool report__has_offcpu(const struct recording *r)
{
	for (size_t i = 0; i < r->nsamples; i++) {
		if (r->samples[i].offcpu_ns)
			return true;
	}
	return false;
}

void report__view_header(const struct recording *r, enum report_view v, FILE *out)
{
	static const char *const names[] = {
#define REASON_NAME(n) #n,
		OFFCPU_REASON(REASON_NAME)
#undef REASON_NAME
	};
	uint64_t by[REASON_NR] = {0}, total = 0;

	if (v == REPORT_VIEW_CPU)
		return;
	for (size_t i = 0; i < r->nsamples; i++) {
		by[reason_of(r, &r->samples[i])] += r->samples[i].offcpu_ns;
		total += r->samples[i].offcpu_ns;
	}
	fprintf(out, "view: %s (weights in nanoseconds%s)\n", v == REPORT_VIEW_OFF ? "off" : "wall",
		v == REPORT_VIEW_WALL ? ": on-CPU ticks x period + off-CPU time" : "");
	fprintf(out, "off-CPU: %.3f s", total / 1e9);
	for (int k = 0; k < REASON_NR; k++) {
		if (by[k])
			fprintf(out, ", %s %.3f s (%.1f%%)", names[k], by[k] / 1e9,
				100.0 * by[k] / total);
	}
	fputs("\n\n", out);
}
