// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mmap_watch: one dummy software perf event per CPU that produces no samples, only the
 * side-band records perf itself relies on: MMAP2 for every executable mapping, COMM with
 * COMM_EXEC for every exec, and KSYMBOL for every kernel symbol registered or unregistered (BPF
 * programs: where the kernel is older than 5.1, the events open without it). Owns the events, their ring buffers, and the ordering of records
 * across CPUs by timestamp.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "lib/log.h"
#include "lib/vec.h"
#include "mmapwatch.h"

#define RING_PAGES 64 /* data pages per CPU (a power of two): 256 KiB */

struct ring {
	int fd;
	void *base; /* metadata page followed by the data pages */
	size_t data_size;
};

struct pending {
	struct mmap_watch_event e;
	char *path;
};

struct mmap_watch {
	struct ring *rings;
	int nrings;
	mmap_watch_fn fn;
	void *ctx;
	uint64_t lost;
	bool no_ksymbol; /* the kernel refused attr.ksymbol */
	struct pending *batch;
	size_t nbatch, cap;
	uint8_t *scratch; /* one record that wrapped around the ring */
};

/* The trailer sample_id_all adds to every non-sample record (TID | TIME). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static int open_ring(struct ring *r, int cpu, bool *no_ksymbol)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.ksymbol = !*no_ksymbol,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	long page = sysconf(_SC_PAGESIZE);

	r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0 && errno == EINVAL && attr.ksymbol) {
		*no_ksymbol = true;
		attr.ksymbol = 0;
		r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (r->fd < 0)
		return -errno;
	r->data_size = RING_PAGES * page;
	r->base = mmap(NULL, page + r->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

struct mmap_watch *mmap_watch__new(int ncpus, mmap_watch_fn fn, void *ctx)
{
	struct mmap_watch *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w)
		goto err_out;
	w->fn = fn;
	w->ctx = ctx;
	w->rings = calloc(ncpus, sizeof(*w->rings));
	w->scratch = malloc(65536);
	if (!w->rings || !w->scratch)
		goto err_out;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct ring *r = &w->rings[w->nrings];

		err = open_ring(r, cpu, &w->no_ksymbol);
		if (err == -ENODEV) {
			err = 0; /* offline CPU */
			continue;
		}
		w->nrings++;
		if (err)
			goto err_out;
	}
	return w;
err_out:
	mmap_watch__free(w);
	errno = -err;
	return NULL;
}

void mmap_watch__free(struct mmap_watch *w)
{
	long page = sysconf(_SC_PAGESIZE);

	if (!w)
		return;
	for (int i = 0; i < w->nrings; i++) {
		if (w->rings[i].base)
			munmap(w->rings[i].base, page + w->rings[i].data_size);
		if (w->rings[i].fd >= 0)
			close(w->rings[i].fd);
	}
	for (size_t i = 0; i < w->nbatch; i++)
		free(w->batch[i].path);
	free(w->batch);
	free(w->rings);
	free(w->scratch);
	free(w);
}

uint64_t mmap_watch__lost(const struct mmap_watch *w)
{
	return w ? w->lost : 0;
}

static struct pending *batch_slot(struct mmap_watch *w)
{
	if (vec_grow(&w->batch, &w->cap, w->nbatch + 1, sizeof(*w->batch), 64))
		return NULL;
	memset(&w->batch[w->nbatch], 0, sizeof(w->batch[0]));
	return &w->batch[w->nbatch++];
}

static void take_mmap2(struct mmap_watch *w, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const struct sample_id *sid = (const void *)((const uint8_t *)h + h->size - sizeof(*sid));
	size_t fixed = 4 * 2 + 8 * 3 + 4 * 2 + 8 * 2 + 4 * 2;
	struct pending *pe;
	size_t maxlen;

	if (h->size < sizeof(*h) + fixed + sizeof(*sid) ||
	    (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
		return;
	pe = batch_slot(w);
	if (!pe)
		return;
	pe->e.type = MW_MMAP;
	memcpy(&pe->e.pid, p, 4);
	memcpy(&pe->e.tid, p + 4, 4);
	memcpy(&pe->e.start, p + 8, 8);
	memcpy(&pe->e.len, p + 16, 8);
	memcpy(&pe->e.pgoff, p + 24, 8);
	memcpy(&pe->e.maj, p + 32, 4);
	memcpy(&pe->e.min, p + 36, 4);
	memcpy(&pe->e.ino, p + 40, 8);
	pe->e.time_ns = sid->time;
	maxlen = h->size - sizeof(*h) - fixed - sizeof(*sid);
	pe->path = strndup((const char *)p + fixed, maxlen);
	if (!pe->path)
		w->nbatch--;
}

static void take_comm(struct mmap_watch *w, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const struct sample_id *sid = (const void *)((const uint8_t *)h + h->size - sizeof(*sid));
	struct pending *pe;

	if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC) || h->size < sizeof(*h) + 8 + sizeof(*sid))
		return;
	pe = batch_slot(w);
	if (!pe)
		return;
	pe->e.type = MW_EXEC;
	memcpy(&pe->e.pid, p, 4);
	memcpy(&pe->e.tid, p + 4, 4);
	pe->e.time_ns = sid->time;
}

/* A kernel symbol registered or unregistered: addr, len, ksym_type, flags, then its name. */
static void take_ksymbol(struct mmap_watch *w, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const struct sample_id *sid = (const void *)((const uint8_t *)h + h->size - sizeof(*sid));
	size_t fixed = 8 + 4 + 2 + 2;
	struct pending *pe;
	uint32_t len;
	uint16_t type, flags;

	if (h->size < sizeof(*h) + fixed + sizeof(*sid))
		return;
	pe = batch_slot(w);
	if (!pe)
		return;
	pe->e.type = MW_KSYMBOL;
	memcpy(&pe->e.start, p, 8);
	memcpy(&len, p + 8, 4);
	memcpy(&type, p + 12, 2);
	memcpy(&flags, p + 14, 2);
	pe->e.len = len;
	pe->e.ksym_bpf = type == PERF_RECORD_KSYMBOL_TYPE_BPF;
	pe->e.ksym_gone = flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
	memcpy(&pe->e.pid, sid, 4);
	memcpy(&pe->e.tid, (const uint8_t *)sid + 4, 4);
	pe->e.time_ns = sid->time;
	pe->path = strndup((const char *)p + fixed, h->size - sizeof(*h) - fixed - sizeof(*sid));
	if (!pe->path)
		w->nbatch--;
}

static void take_record(struct mmap_watch *w, const struct perf_event_header *h)
{
	uint64_t lost;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		take_mmap2(w, h);
		break;
	case PERF_RECORD_COMM:
		take_comm(w, h);
		break;
	case PERF_RECORD_KSYMBOL:
		take_ksymbol(w, h);
		break;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16) {
			memcpy(&lost, (const uint8_t *)(h + 1) + 8, 8);
			w->lost += lost;
		}
		break;
	}
}

static void read_ring(struct mmap_watch *w, struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	uint8_t *data = (uint8_t *)r->base + meta->data_offset;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		size_t off = tail % r->data_size;
		const struct perf_event_header *h = (const void *)(data + off);
		struct perf_event_header copy;

		if (off + sizeof(copy) > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(&copy, data + off, first);
			memcpy((uint8_t *)&copy + first, data, sizeof(copy) - first);
			h = &copy;
		}
		if (h->size < sizeof(*h) || tail + h->size > head)
			break;
		if (off + h->size > r->data_size) {
			size_t first = r->data_size - off;

			memcpy(w->scratch, data + off, first);
			memcpy(w->scratch + first, data, h->size - first);
			h = (const void *)w->scratch;
		}
		take_record(w, h);
		tail += h->size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	return x->e.time_ns < y->e.time_ns ? -1 : x->e.time_ns > y->e.time_ns;
}

int mmap_watch__read(struct mmap_watch *w)
{
	int n;

	for (int i = 0; i < w->nrings; i++)
		read_ring(w, &w->rings[i]);
	/* A process that moved CPUs between exec and its mmaps has records on both rings. */
	if (w->nbatch > 1)
		qsort(w->batch, w->nbatch, sizeof(*w->batch), by_time);
	for (size_t i = 0; i < w->nbatch; i++) {
		w->batch[i].e.path = w->batch[i].path;
		w->fn(w->ctx, &w->batch[i].e);
		free(w->batch[i].path);
	}
	n = (int)w->nbatch;
	w->nbatch = 0;
	return n;
}
