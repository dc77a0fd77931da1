/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recording file (perch.data): perch's own, versioned, written as it goes. This header is
 * the contract; format/writer.c writes it, format/reader.c loads it, format/codec.h holds the
 * encoding both share, format/keys.h the META, STATS and END keys.
 *
 * Layout: a 16-byte file header, then blocks. Each block is a 16-byte header
 *   u32 type, u32 payload length, u32 CRC-32 of the payload, u32 reserved (0)
 * followed by the payload. All integers little endian. A block is written with one write(), so a
 * killed perch leaves every complete block readable; the reader stops at the first incomplete or
 * damaged one and says which.
 *
 * Blocks only reference what earlier blocks defined (strings before the frames that name them,
 * frames before the samples that use them), so every complete prefix of a file is a valid
 * recording. Symbol names are resolved while the target lives and stored in the file: a
 * recording needs nothing from the machine it was made on to be reported.
 *
 * Payloads (ids are implicit: the n-th string ever defined has id n; id 0 is the empty string):
 *   META     u32 n, n x (str key, str value)       command, pids, event, frequency, ... (once)
 *   STRINGS  u32 n, n x str                        new strings, ids continue from the last block
 *   FRAMES   u32 n, n x frame                      new frames, ids start at 0
 *            frame = u8 kind (0 user, 1 kernel, 2 region), u32 module string id, u32 name string
 *                    id (0 = unknown), u64 offset (file offset in the module; kernel: address,
 *                    since version 4 the function's start address when the frame is named;
 *                    region: 0, module 0, name = the region's name)
 *   THREADS  u32 n, n x (u32 pid, u32 tid, u32 ppid, u32 comm string id)
 *   SAMPLES  u32 n, n x (u32 pid, u32 tid, u64 count, u32 flags, u32 comm, u32 nframes,
 *            nframes x u32 frame id, root first); comm: string id of the thread's name when the
 *            sample was taken (0 unknown; version 3 on, absent before). The thread's open regions
 *            (rec_sample.regions) are stored in the frame list: one region frame (kind 2, named
 *            by the region) each, outermost first, before the function frames. The reader takes
 *            them out again, wherever they stand, into rec_sample.regions (a region frame named
 *            0 is dropped), so no reader of a loaded recording sees a region frame in a stack.
 *   LINES    u32 n, n x (u32 frame id, u32 k, k x (u32 function, u32 file, u32 line))
 *            source lines and inline chain of a frame, innermost first (addr2line -f -i order):
 *            the function the address is in with the address's file:line, then each function
 *            it was inlined into with the call site's file:line, the out-of-line function last;
 *            string ids (0: unknown); a later definition for the same frame replaces it
 *   REGIONS  u32 n, n x region thread               exact region statistics of threads, from
 *            the region runtime (runtime/perch.c); the last definition of a (pid, tid) wins
 *            region thread = u32 pid, u32 tid, u64 mismatches, u32 nnodes, nnodes x node
 *            node = u32 name string id (0 only for node 0, the root), u32 parent (< own index
 *                   for every node but the root), u64 calls, u64 total_ns, u64 self_ns,
 *                   u64 min_ns, u64 max_ns, u64 size_sum, u64 untimed, u32 open, u64 sum_ns
 *            (a bounded path tree of regions, recursion folded; total_ns counts the outermost
 *            activation of a folded recursion once; untimed: ends of activations that were
 *            already open when perch attached; open: activations open at the snapshot)
 *   STATS    u32 n, n x (str key, u64 value)       cumulative counters; the last block wins
 *   END      u32 n, n x (str key, u64 value)       duration_ns, exit_status, ...; last block.
 *            A later perch adds, when sampling did not cover the whole run (perch record
 *            --delay, pauses, --max-duration, --max-size), start_ns, paused_ns, stopped_at
 *            (enum rec_stop), enabled_intervals and the sampled intervals enabled_N_start_ns /
 *            enabled_N_end_ns (format/keys.h); older readers skip keys they do not know
 * where str = u32 length + bytes (no NUL).
 *
 * Version 4 writes no SAMPLES: a stack is stored once, a key (a thread's stack) once, and counts
 * belong to time windows. These blocks open with a u32 count like the others; their entries are
 * LEB128 varints (uleb: 7 bits a byte, low first, at most 64 bits; sleb: zigzag, then uleb), as
 * windows and events are most of a long recording and their numbers are small:
 *   STACKS   u32 n, n x (uleb parent, uleb frame)   new nodes of the stack tree, ids continue
 *            from the last block (the n-th node ever defined has id n, from 0); parent 0: a root
 *            node, p: node p - 1 (defined before); frame: a frame id. A node's stack is the frames
 *            from its root to it, so stacks share prefixes: recursion of varying depth stores one
 *            node a depth, not a stack a depth. At most 65536 frames deep. Region frames come
 *            first, as in SAMPLES, and load as the key's regions.
 *   KEYS     u32 n, n x (uleb pid, uleb tid, uleb comm, uleb flags, uleb stack)   new keys, ids
 *            continue from the last block, from 0; comm: string id (0 unknown); flags: sample
 *            flags; stack: 0 none, s: node s - 1. Each key loads as one rec_sample.
 *   WINDOWS  u32 n, n x (uleb start, uleb duration, uleb k, k x (uleb key, uleb count))
 *            start: ns after the end of the file's previous window (the first: CLOCK_MONOTONIC
 *            ns), so windows are in time order and never overlap; duration: end - start (0: an
 *            untimed window, counts flushed with no rec_writer__window); keys ascending, each
 *            stored as the gap after the one before (the first: its id), counts > 0.
 *   TIMELINE u32 n, n x (sleb time, uleb key)      exact samples (--timeline); time: ns since
 *            the block's previous event (the first: since 0), so a block stands alone and is
 *            copied as it is when the file is compacted; loaded, events are sorted by time
 *   SPANS    u32 n, n x (uleb pid, uleb tid, sleb time, u8 kind, uleb name, uleb size)
 *            region begin (0), end (1), mark (2) of a thread (--timeline); time as in TIMELINE;
 *            name: the region's string id (not 0); size: perch_region_begin_n's n
 *   MODULES  u32 n, n x (uleb path, uleb build_id)  string ids: a module path as the frames name
 *            it, and its GNU build-id in lowercase hex
 *   GPU      u32 n, n x gpu                       GPU activity of `perch record --gpu` (cuda/,
 *            CUPTI), each as it was joined to its launch; appended as it comes, copied as it is
 *            when the file is compacted (as TIMELINE), not counted against --max-size
 *            gpu = u8 kind, sleb start (ns since the block's previous entry's start, the first
 *                  since 0), uleb duration, uleb device, uleb stream, uleb bytes, uleb detail,
 *                  uleb name, uleb correlation, uleb flags, uleb graph, uleb pid, uleb tid,
 *                  sleb launch (ns from start to the launch's API exit; 0 with tid 0)
 *            kind (enum rec_gpu_kind, the channel's numbering of cuda/perch_cuda.h): KERNEL
 *            (name: the kernel's string id; bytes: threads), MEMCPY (detail: enum
 *            rec_gpu_copy; bytes), MEMSET, SYNC (detail: CUPTI's sync type), API (a runtime or
 *            driver call on CPU thread tid: detail its callback id; flags REC_GPU_F_LAUNCH for
 *            launches), NOTE (name: a line saying why GPU data is missing or approximate; the
 *            times 0); pid, tid: the process and CPU thread of the launch (0: no launch known,
 *            counted in STATS gpu_activities_without_launch). LAUNCH (written by a later perch
 *            than the first GPU block's; older readers skip the kind): the CPU side of one
 *            launch, from the uprobe on the injection library's probe: detail the key id of
 *            the launching thread's stack and region stack (a key with no count), pid, tid,
 *            correlation, start the probe's time; every entry of that (pid, correlation) loads
 *            with it as launch_key. CALL (attach mode, `perch record --gpu -p PID`; older
 *            readers skip the kind): one hit of a uprobe on an entry point of libcuda.so
 *            (format/gpu_entries.h): start the hit's time, detail the key id of the calling
 *            thread's stack and region stack (as LAUNCH's), correlation the entry point's index
 *            in REC_GPU_ENTRIES, flags its class (REC_GPU_F_LAUNCH, REC_GPU_F_COPY,
 *            REC_GPU_F_SET), stream the copy direction (enum rec_gpu_copy), bytes the bytes a
 *            copy or memset moves or, for a launch, the CUfunction handle, name the kernel's
 *            name where perch saw the handle resolved (cuModuleGetFunction, cuLibraryGetKernel,
 *            cuKernelGetFunction after attach; else 0), pid, tid the caller; loads into
 *            recording.gpu_calls with launch_key set. A perch that does not know the block
 *            skips it, so version 4 stays 4.
 *   ORIGINS  u32 n, n x (uleb pid, uleb origin, uleb source_pid)   written by `perch merge`
 *            (a later perch than version 4's first; older readers skip the block, so version 4
 *            stays 4): the recording each process of a merged file came from. origin: the
 *            string id of its label (the input's file name, or --label); source_pid: its pid in
 *            that recording. A merged file keeps a process's pid unless an earlier input used
 *            it; then the process gets a pid above the kernel's pid_max (4194304 and up, never
 *            a real one), so every sample, thread, region table, span and GPU entry of it stays
 *            its own, and reports tell the inputs apart by pid and, through this block, by
 *            origin (pprof: label "origin"). A pid has one entry.
 *   CGROUPS  u32 n, n x (uleb pid, uleb path)   written by `perch record` (a later perch than
 *            version 4's first; older readers skip the block, so version 4 stays 4): the
 *            control group of each process whose /proc/PID/cgroup names a container (a path
 *            with a 64-hex-digit id: docker, containerd, CRI-O, podman, Kubernetes), read
 *            when perch first sees the process alive. path: the string id of that line's
 *            path. Reports give the id as container.id (OTLP). A pid has one entry.
 *   METRICS  u32 n, uleb interval_ns, uleb note, n x series   system metrics (record/metrics.c;
 *            a later perch than version 4's first; older readers skip the block, so version 4
 *            stays 4), the whole of every series so far: the last METRICS block wins. note: a
 *            string id (0: none), a line saying what could not be measured ("no NVML: ...").
 *            series = uleb metric (enum rec_metric_id, format/metrics.h), uleb subject (a CPU
 *                     number, a pid or a GPU index, as the metric says), uleb start (ns,
 *                     CLOCK_MONOTONIC: the first point's interval starts there), uleb k,
 *                     k x (uleb duration, sleb value - the previous point's value (the first:
 *                     from 0)): point i covers [end of point i - 1, + duration)
 *            Bounded as the windows are: record/metrics.c merges neighbouring points pairwise
 *            when a series passes REC_METRIC_BUDGET points (values summed, averaged over time or
 *            maxed, as the metric says), and a point holds twice the samples from then on.
 *   OFFCPU   u32 n, n x (uleb key, uleb ns)     written by `perch record --off-cpu` (a later
 *            perch than version 4's first; older readers skip the block, so version 4 stays 4):
 *            the key's off-CPU nanoseconds so far, a total over the whole run (not per window):
 *            the time its thread spent switched out with that stack (blocked, or preempted when
 *            the key's flags say so: REC_SAMPLE_PREEMPTED), blocks shorter than --off-cpu-min
 *            left out. A block lists the keys whose total changed since the previous one; a later
 *            entry for a key replaces an earlier one (a compacted file lists every total once).
 *            Off-CPU keys are keys with no count of their own unless ticks also hit that stack.
 *   STEPS    u32 n, n x step                    written by `perch record` when a program marks
 *            steps (perch_step(), include/perch.h) or pauses itself (perch_profile_pause()); a
 *            later perch than version 4's first (older readers skip the block, so version 4
 *            stays 4); the whole table every time: the last STEPS block wins.
 *            step = uleb kind (enum rec_step_kind), uleb pid, uleb n (STEP: the step number;
 *                   PAUSE: 0), uleb start, uleb end (CLOCK_MONOTONIC ns; start 0: before perch
 *                   read the program's log; end 0: still open when the recording ended),
 *                   uleb k, k x (uleb key, uleb count)
 *            STEP: the samples the sampler took while the program had step n open (each tick
 *            carries its process's open step, read in the BPF program), per key; its counts
 *            are also in the windows. PAUSE (k = 0): the program had paused itself, so the
 *            process was not recorded from start to end. A program whose steps pass
 *            REC_STEPS_MAX keeps the first ones (the rest counted in STATS steps_dropped).
 *   SIZES    u32 n, n x size thread         cost-model data of sized regions (perch_region_begin_n;
 *            region runtime ABI 5 on; a later perch than version 4's first; older readers skip
 *            the block, so version 4 stays 4); the last definition of a (pid, tid) wins.
 *            size thread = uleb pid, uleb tid, uleb over (sized calls that found no model slot),
 *                     uleb k, k x model
 *            model = uleb name (string id of the region), uleb node (its node in the thread's
 *                    REGIONS tree), uleb seen (sized calls), uleb nb, nb x bucket, uleb np,
 *                    np x (uleb n, uleb t_ns): a uniform sample of the calls (np <= seen)
 *            bucket = uleb log2 (n in [2^(log2-1), 2^log2)), uleb count, uleb min_ns, uleb
 *                    max_ns, 4 x f64 (sums of n, t, t^2, n*t; t in ns), log2 ascending
 *   OFFSPANS u32 n, n x (uleb key, sleb start, uleb duration)   written by `perch record
 *            --timeline --off-cpu` (a later perch than version 4's first; older readers skip the
 *            block, so version 4 stays 4): each block of a target thread at least --off-cpu-min
 *            long as a timed span, the time axis of OFFCPU's totals. key: the key its thread left
 *            the CPU with (thread, stack, flags: as OFFCPU's); start: ns since the block's
 *            previous span's start (the first: since 0), as TIMELINE's times; duration: end -
 *            start. Only the part of a block inside the recorded windows is kept (a block that
 *            began before --delay ended or a resume starts there, one still going at a pause
 *            ends there; END's enabled intervals), as OFFCPU's totals count it, so with no span
 *            dropped a key's spans sum to its OFFCPU total. A thread's spans never overlap.
 *            Appended as they come (each drain's in the order read, not sorted; loaded, sorted
 *            by start), copied as they are when the file is compacted, and capped with the
 *            timeline by --max-size: spans past it are dropped and counted (STATS
 *            off_cpu_spans_dropped), as are those the sampler's ring lost (off_cpu_spans_lost).
 *
 * Bounded by the program, not the run. The writer keeps every window in memory up to a budget
 * (REC_WINDOW_BUDGET; rec_writer__window_budget()); when a window would pass it, neighbours
 * merge pairwise (counts summed, exact) and a full window holds twice the drains from then on,
 * so the resolution doubles. Growth law, at perch's 100 ms drains and a budget of 256: windows
 * of 100 ms for the first 25.6 s, 200 ms to 51.2 s, 100 ms x 2^k up to 25.6 s x 2^k (3.2 s at
 * 600 s, 12.8 s at an hour), 128 to 256 windows at any time. A finished file is then
 *   definitions (strings, frames, lines, stack nodes, keys: the program's, growing only as new
 *   stacks appear) + META/REGIONS/STATS (fixed) + <= 256 windows x (6 + ~2.5 bytes a key seen in
 *   the window) + the timeline (linear, capped),
 * so a long steady run's file stops growing with time once its windows hold every key and its
 * definitions every stack. Measured (perch record -- workloads/shares|recursion N): shares 10 s
 * 13 KB, 60 s 26 KB (version 3: 82 KB, 440 KB); recursion 10 s 24 KB, 60 s 57 KB (version 3:
 * 696 KB, 4.4 MB). The budget is a trade: 1024 windows (100 ms for 100 s) made those 60 s files
 * 36 and 89 KB, as a merged window lists every key it counted; what still grows from 10 s to 60 s
 * is mostly definitions: kernel stacks under the same user stacks keep appearing (keys 135 to
 * 408 for shares), and deeper recursion keys. A regular file is compacted: everything it holds (definitions,
 * META, the latest REGIONS of each thread, the STATS as they stand, the merged windows, the
 * TIMELINE and SPANS blocks so far, END) is rewritten into PATH.tmp, which then replaces PATH
 * with rename(), so a killed perch always leaves a readable recording. Between compactions each
 * flush appends its blocks (losing at most the last drain); a compaction runs when the appended
 * tail grows past the compacted size (and 64 KiB), and always at rec_writer__close(). So a
 * finished recording is definitions + at most budget windows (+ the timeline, capped by
 * rec_writer__max_size()), and the file is never more than about twice that while recording.
 * A FIFO or device output is streamed as written: appended blocks only, never compacted, growing
 * one WINDOWS block a flush.
 */
#ifndef PERCH_RECORDING_H
#define PERCH_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERCH_FILE_MAGIC "PERCHREC" /* 8 bytes, then u32 version, u32 header size (16) */
/* 4: the time axis (STACKS, KEYS, WINDOWS, TIMELINE, SPANS, MODULES) instead of SAMPLES;
 * 3: samples carry their thread's name; 2: region frames and REGIONS; 1 to 3 still load */
#define PERCH_FILE_VERSION 4

/* Windows the writer keeps before neighbours merge (see above). */
#define REC_WINDOW_BUDGET 256
/* The latest time a TIMELINE, SPANS, GPU or OFFSPANS entry can carry (INT64_MAX ns, 292 years of
 * CLOCK_MONOTONIC): their signed deltas reach any time up to it from any other. */
#define REC_TIME_MAX ((uint64_t)INT64_MAX)

enum rec_block_type {
	REC_META = 1,
	REC_STRINGS = 2,
	REC_FRAMES = 3,
	REC_THREADS = 4,
	REC_SAMPLES = 5,
	REC_STATS = 6,
	REC_END = 7,
	REC_LINES = 8,
	REC_REGIONS = 9,
	REC_STACKS = 10,
	REC_KEYS = 11,
	REC_WINDOWS = 12,
	REC_TIMELINE = 13,
	REC_SPANS = 14,
	REC_MODULES = 15,
	REC_GPU = 16,
	REC_ORIGINS = 17,
	REC_METRICS = 18,
	REC_OFFCPU = 19,
	REC_STEPS = 20,
	REC_SIZES = 21,
	REC_OFFSPANS = 22,
	REC_CGROUPS = 23,
};

/* Sample flags. */
#define REC_SAMPLE_TRUNCATED (1u << 0) /* the stack hit the depth limit: outer frames missing */
#define REC_SAMPLE_USER_LOST (1u << 1) /* user stack could not be collected */
#define REC_SAMPLE_KERN_LOST (1u << 2) /* kernel stack could not be collected */
#define REC_SAMPLE_PREEMPTED (1u << 3) /* --off-cpu: switched out while runnable, not blocked */
/* perch record -e A,B: the index of the sample's event in META event, in the top byte (0 for
 * the first event, and in every recording of one event). */
#define REC_SAMPLE_EVENT_SHIFT	24
#define REC_SAMPLE_EVENT(flags) ((uint32_t)(flags) >> REC_SAMPLE_EVENT_SHIFT)

enum rec_frame_kind {
	REC_FRAME_USER = 0,
	REC_FRAME_KERNEL = 1,
	REC_FRAME_REGION = 2,
};
/* Writer only, or-ed into a kind: the frame is a return address (named at the call one byte
 * before it), so it is a frame of its own beside a leaf at the same offset, whose name and
 * inline chain may differ. Written as the kind alone: the file has the two as frames with equal
 * fields and their own LINES. */
#define REC_FRAME_CALL 0x80u

/* One level of a frame's inline chain (string ids; 0 when unknown). */
struct rec_line {
	uint32_t function;
	uint32_t file;
	uint32_t line;
};

struct rec_frame {
	uint8_t kind;
	uint32_t module; /* string id: module path (user), "[kernel]" or module name (kernel) */
	uint32_t name;	 /* string id of the function name, 0 when unknown */
	uint64_t offset; /* file offset in module (user) or address (kernel) */
	/* Loaded recordings only: the LINES of this frame, innermost first; NULL, 0 when none. */
	const struct rec_line *lines;
	uint32_t nlines;
};

struct rec_thread {
	uint32_t pid, tid, ppid;
	uint32_t comm; /* string id */
};

/* A sample as the writer takes it and the reader gives it back; loaded, the arrays point into
 * the recording. */
struct rec_sample {
	uint32_t pid, tid;
	uint64_t count;
	uint32_t flags;
	uint32_t comm; /* string id of the thread's name when taken; 0: see THREADS */
	uint32_t nregions;
	const uint32_t *regions; /* string ids of the open regions' names, outermost first */
	uint32_t nframes;
	const uint32_t *frames; /* function frame ids (user, kernel), root first */
	uint64_t offcpu_ns;	/* loaded v4 only: the key's off-CPU time (OFFCPU); else 0 */
};

/* One node of a thread's region tree (see REGIONS); times in nanoseconds. */
struct rec_region_node {
	uint32_t name; /* string id; 0 for the root */
	uint32_t parent;
	uint64_t calls, total_ns, self_ns, min_ns, max_ns, size_sum, untimed;
	uint32_t open;
	uint64_t sum_ns; /* every timed activation's time, nested ones too: the mean per call */
};

struct rec_region_thread {
	uint32_t pid, tid;
	uint64_t mismatches;
	uint32_t nnodes; /* >= 1: node 0 is the root */
	struct rec_region_node *nodes;
};

/* Cost-model data of one sized region node of a thread (SIZES); times in nanoseconds. */
struct rec_size_bucket {
	uint32_t log2; /* n in [2^(log2 - 1), 2^log2) */
	uint64_t count, min_ns, max_ns;
	double sum_n, sum_t, sum_t2, sum_nt;
};

struct rec_size_point {
	uint64_t n, t_ns;
};

struct rec_size_model {
	uint32_t name; /* string id of the region's name */
	uint32_t node; /* its node in the thread's region tree */
	uint64_t seen; /* sized calls; points is a uniform sample of them */
	uint32_t nbuckets, npoints;
	struct rec_size_bucket *buckets;
	struct rec_size_point *points;
};

struct rec_size_thread {
	uint32_t pid, tid;
	uint64_t over; /* sized calls of nodes the runtime had no model slot for */
	uint32_t nmodels;
	struct rec_size_model *models;
};

/*
 * The time axis (version 4 on). Every time is CLOCK_MONOTONIC in nanoseconds, the clock of
 * bpf_ktime_get_ns(), which GPU spans and system metrics share.
 *
 * A loaded v4 recording has one rec_sample per key (a thread's stack: pid, tid, comm, flags,
 * regions, frames), its count the sum over the windows; each window says how much of which key
 * fell into it. Older recordings load as before, with no windows, events or spans.
 */
struct rec_count {
	uint32_t sample; /* index into recording.samples */
	uint64_t count;
};

struct rec_window {
	uint64_t start_ns, end_ns; /* [start, end) */
	uint32_t ncounts;
	const struct rec_count *counts; /* samples ascending */
};

/* One tick of the exact timeline (--timeline): when, and which key (its thread and stack). */
struct rec_event {
	uint64_t time_ns;
	uint32_t sample; /* index into recording.samples */
};

enum rec_span_kind {
	REC_SPAN_BEGIN = 0,
	REC_SPAN_END = 1,
	REC_SPAN_MARK = 2,
};

/* A region begin, end or mark of one thread (--timeline), in the thread's order. */
struct rec_span {
	uint32_t pid, tid;
	uint64_t time_ns;
	uint8_t kind;  /* enum rec_span_kind */
	uint32_t name; /* string id of the region's name (END: of the region it ends) */
	uint64_t size; /* perch_region_begin_n's n; 0 otherwise */
};

/* A module's GNU build-id (for pprof's mappings). */
struct rec_module {
	uint32_t path;	   /* string id, as the frames' module */
	uint32_t build_id; /* string id: lowercase hex */
};

/* The recording a process of a merged file came from (ORIGINS). */
struct rec_origin {
	uint32_t pid;	     /* in this file */
	uint32_t origin;     /* string id: its label */
	uint32_t source_pid; /* its pid in the recording it came from */
};

/* The control group of a process in a container's (CGROUPS). */
struct rec_cgroup {
	uint32_t pid;
	uint32_t path; /* string id: its line's path in /proc/PID/cgroup */
};

/* GPU activity (GPU block); kinds and copy directions as cuda/perch_cuda.h numbers them. */
enum rec_gpu_kind {
	REC_GPU_KERNEL = 1,
	REC_GPU_MEMCPY = 2,
	REC_GPU_MEMSET = 3,
	REC_GPU_SYNC = 4,
	REC_GPU_API = 5,
	REC_GPU_LAUNCH = 6, /* in the file only: loads as launch_key of its correlation's entries */
	REC_GPU_NOTE = 8,
	REC_GPU_CALL = 9, /* attach mode: a libcuda entry point hit (loads into gpu_calls) */
};

enum rec_gpu_copy {
	REC_GPU_COPY_OTHER = 0,
	REC_GPU_COPY_HTOD = 1,
	REC_GPU_COPY_DTOH = 2,
	REC_GPU_COPY_DTOD = 3,
	REC_GPU_COPY_HTOH = 4,
	REC_GPU_COPY_PTOP = 5,
	REC_GPU_COPY_NR
};

#define REC_GPU_F_LAUNCH 0x2  /* API: a launch call */
#define REC_GPU_F_GRAPH	 0x8  /* KERNEL/MEMCPY/MEMSET: a node of a CUDA graph */
#define REC_GPU_F_COPY	 0x10 /* CALL: a copy entry point (cuMemcpy*) */
#define REC_GPU_F_SET	 0x20 /* CALL: a memset entry point (cuMemsetD*) */

struct rec_gpu {
	uint8_t kind;		   /* enum rec_gpu_kind */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC; 0 for a NOTE */
	uint32_t device, stream;
	uint64_t bytes;
	uint32_t detail;
	uint32_t name; /* string id: KERNEL's name, NOTE's line; 0 otherwise */
	uint32_t correlation, flags, graph;
	uint32_t pid, tid;  /* of the launch (API: the caller); 0, 0: no launch known */
	uint64_t launch_ns; /* the launch's API exit; 0 when tid is 0 */
	/* The launch's CPU stack, region stack and thread, as the uprobe on perch_cuda_launch took
	 * them (a LAUNCH entry of the same pid and correlation): index + 1 into recording.samples,
	 * a sample with no count of its own; 0 when none was captured (and in older recordings). */
	uint32_t launch_key;
};

/* One point of a metric series (METRICS): the interval [previous end, end_ns). */
struct rec_metric_point {
	uint64_t end_ns;
	uint64_t value; /* in the metric's unit (format/metrics.h) */
};

struct rec_metric {
	uint32_t metric;  /* enum rec_metric_id */
	uint32_t subject; /* CPU number, pid or GPU index */
	uint64_t start_ns;
	uint32_t npoints;
	const struct rec_metric_point *points; /* loaded: owned by the recording */
};

#define REC_METRIC_BUDGET 1024

/* A step of a program, or a window it paused itself in (STEPS). */
enum rec_step_kind {
	REC_STEP_STEP = 0,
	REC_STEP_PAUSE = 1,
};
#define REC_STEPS_MAX 4096 /* steps and pauses kept per recording */

struct rec_step {
	uint32_t kind; /* enum rec_step_kind */
	uint32_t pid;
	uint64_t n;		   /* STEP: the step number */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC; 0: unknown (start), still open (end) */
	uint32_t ncounts;
	/* Writer: rec_count.sample is a key id; loaded: an index into recording.samples. */
	const struct rec_count *counts;
};

/* One off-CPU block of a thread (OFFSPANS): [start_ns, end_ns), the part inside the recorded
 * windows. */
struct rec_offspan {
	uint64_t start_ns, end_ns;
	uint32_t sample; /* index into recording.samples: the key (thread, stack, reason) */
};

struct rec_kv {
	char *key;
	char *str;	/* META */
	uint64_t value; /* STATS, END */
};

/* A recording loaded into memory (what `perch report` works on). */
struct recording {
	uint32_t version; /* the file's */
	struct rec_kv *meta;
	size_t nmeta;
	char **strings; /* strings[0] == "" */
	size_t nstrings;
	struct rec_frame *frames;
	size_t nframes;
	uint32_t *region_names; /* every region named in the frames (string ids), sampled or not */
	size_t nregion_names;
	struct rec_thread *threads;
	size_t nthreads;
	struct rec_sample *samples;
	size_t nsamples;
	struct rec_region_thread *rthreads; /* region statistics, one per (pid, tid) */
	size_t nrthreads;
	struct rec_size_thread *sthreads; /* cost-model data (SIZES), one per (pid, tid) */
	size_t nsthreads;
	struct rec_window *windows; /* version 4 on: in time order, not overlapping */
	size_t nwindows;
	struct rec_event *events; /* version 4 on, with --timeline: in time order */
	size_t nevents;
	struct rec_span *spans; /* version 4 on, with --timeline: each thread's in its order */
	size_t nspans;
	struct rec_module *modules;
	size_t nmodules;
	struct rec_gpu *gpu; /* GPU activity and API calls, in the order recorded (no NOTE) */
	size_t ngpu;
	uint32_t *gpu_notes; /* string ids of the GPU notes (why GPU data is missing) */
	size_t ngpu_notes;
	struct rec_origin *origins; /* perch merge: where each process came from (else none) */
	size_t norigins;
	struct rec_cgroup *cgroups; /* the processes in containers' control groups (else none) */
	size_t ncgroups;
	struct rec_gpu
		*gpu_calls; /* attach mode (CALL entries): libcuda calls, in recorded order */
	size_t ngpu_calls;
	struct rec_metric *metrics; /* system metrics, from the last METRICS block (else none) */
	size_t nmetrics;
	uint64_t metrics_interval_ns;
	uint32_t metrics_note;	/* string id: what could not be measured (0: none) */
	struct rec_step *steps; /* the programs' steps and pauses, from the last STEPS block */
	size_t nsteps;
	struct rec_offspan *offspans; /* --timeline --off-cpu (OFFSPANS): by start (else none) */
	size_t noffspans;
	struct rec_kv *stats; /* from the last STATS block */
	size_t nstats;
	struct rec_kv *end; /* from the END block; NULL when perch did not finish */
	size_t nend;
	size_t nblocks;	    /* complete, valid blocks read */
	uint64_t good_size; /* bytes of the file up to the end of the last good block */
};

/*
 * Load a recording. Returns 0 with *out set, or -errno with *out NULL for a file that can't be
 * used at all (-ENOENT/-EACCES opening it, -EINVAL not a regular file: a FIFO or device is never
 * read, -EPROTO bad magic, -EPROTONOSUPPORT other version). A file damaged or cut after a valid
 * start returns -EBADMSG (CRC mismatch, malformed payload, a block of type 0 or length 0 such as
 * a zero-filled tail) or -ENODATA (the last block is incomplete), and *out holds every block
 * before the damage, so nothing already collected is lost. Read a block at a time: memory
 * follows what the blocks hold, not the file's size.
 */
int recording__load(const char *path, struct recording **out);
void recording__free(struct recording *r);

/* Lookups on a loaded recording; NULL / 0 when absent. */
const char *recording__meta(const struct recording *r, const char *key);
bool recording__stat(const struct recording *r, const char *key, uint64_t *value);
bool recording__end(const struct recording *r, const char *key, uint64_t *value);
/* The origin of a process of a merged recording (ORIGINS), or NULL when it has none. */
const struct rec_origin *recording__origin(const struct recording *r, uint32_t pid);
/* String by id; "" for an id out of range. */
const char *recording__string(const struct recording *r, uint32_t id);
/* The control group path of process pid (CGROUPS), or NULL when it has none. */
const char *recording__cgroup(const struct recording *r, uint32_t pid);
/* The container id a control group path names (the last run of exactly 64 lowercase hex
 * digits: docker, containerd, CRI-O, podman, Kubernetes pods) into out, or NULL when none. */
const char *rec_container_id(const char *path, char out[65]);

/*
 * The writer (version 4). Strings, frames, stacks and keys are deduplicated; a sample's count
 * goes to its key's pending count, which the next rec_writer__window() takes. Definitions,
 * windows, events and spans are buffered until rec_writer__flush(), which writes STRINGS, FRAMES,
 * LINES, THREADS, STACKS, KEYS, MODULES, WINDOWS, TIMELINE, SPANS blocks (in that order, skipping
 * empty ones) so each block refers only to what came before, then compacts a regular file when
 * its tail has grown past its compacted size (see above). Counts flushed with no window go to an
 * untimed window (start = end = the last window's end).
 */
struct rec_writer;

/* Create a new file (0600) beside path, under a temporary name (lib/safeout.h), and write the
 * file header; rec_writer__publish() gives it path's name. A character device or FIFO at path is
 * written to directly; anything but those, a regular file or a symlink fails. NULL + errno. */
struct rec_writer *rec_writer__open(const char *path);
/* The file takes path's name: a regular file or a symlink there is renamed to path.old now,
 * never written through. A recorder calls it once everything has opened, so a run that fails
 * before leaves the previous recording as it was. 0 or -errno. */
int rec_writer__publish(struct rec_writer *w);
/* Flush what is pending (not END), compact a regular file, close, publish, free. Returns 0 or the
 * first write error (-errno); a failed compaction leaves the file as written and is only logged;
 * a failed publish (-errno) leaves it at its temporary name, logged. */
int rec_writer__close(struct rec_writer *w);
/* A run that failed: an unpublished file is removed (what was at path stays as it was), a
 * published one is closed as rec_writer__close() does. NULL-safe. */
void rec_writer__discard(struct rec_writer *w);

uint32_t rec_writer__string(struct rec_writer *w, const char *s); /* id; 0 for "" or on ENOMEM */
/* id of the frame (deduplicated on all four fields, kind with its REC_FRAME_CALL bit); UINT32_MAX
 * on ENOMEM. */
uint32_t rec_writer__frame(struct rec_writer *w, uint8_t kind, uint32_t module, uint32_t name,
			   uint64_t offset);
/* The inline chain of a frame, innermost first (see LINES); n <= 256. 0, -EINVAL for an
 * undefined frame or string id, -ENOMEM. */
int rec_writer__lines(struct rec_writer *w, uint32_t frame, const struct rec_line *lines,
		      uint32_t n);
int rec_writer__thread(struct rec_writer *w, uint32_t pid, uint32_t tid, uint32_t ppid,
		       uint32_t comm);
/* A sample (see SAMPLES for how its regions are stored). -EINVAL for an undefined frame or
 * string id, a region named 0, or more than 65536 frames and regions together. */
int rec_writer__add_sample(struct rec_writer *w, const struct rec_sample *s);
/* The same with no regions, and with no thread name (rec_writer__sample) or one (_named).
 * Frames are written as given: region frames among them load as the sample's regions. */
int rec_writer__sample(struct rec_writer *w, uint32_t pid, uint32_t tid, uint64_t count,
		       uint32_t flags, const uint32_t *frames, uint32_t nframes);
int rec_writer__sample_named(struct rec_writer *w, uint32_t pid, uint32_t tid, uint32_t comm,
			     uint64_t count, uint32_t flags, const uint32_t *frames,
			     uint32_t nframes);
int rec_writer__flush(struct rec_writer *w);

/*
 * The time axis (version 4). The counts added since the last call belong to the window
 * [start_ns, end_ns); windows come in time order. The writer keeps a fixed budget of windows,
 * merging neighbours pairwise as the run grows, so the file is bounded by the program, not the
 * run (the growth law is in the format comment above).
 */
int rec_writer__window(struct rec_writer *w, uint64_t start_ns, uint64_t end_ns);
/* The key id of s (its thread and stack; s->count is ignored), defined if new: for the
 * timeline. 0 or -errno (as rec_writer__add_sample). */
int rec_writer__key(struct rec_writer *w, const struct rec_sample *s, uint32_t *key);
/* One exact sample at time_ns (--timeline), in time order. -ENOSPC when it would take the file
 * past the size cap: dropped and counted. -ERANGE (refused and counted, rec_writer__refused())
 * for a time past REC_TIME_MAX, here and in every timed entry below: the writer never writes
 * what its reader refuses. */
int rec_writer__event(struct rec_writer *w, uint64_t time_ns, uint32_t key);
/* A region begin, end or mark (--timeline). -ENOSPC as rec_writer__event. */
int rec_writer__span(struct rec_writer *w, const struct rec_span *s);
/* The cap on the file's size for events and spans (0: none); what it drops is counted. */
void rec_writer__max_size(struct rec_writer *w, uint64_t bytes);
uint64_t rec_writer__events_dropped(const struct rec_writer *w);
uint64_t rec_writer__spans_dropped(const struct rec_writer *w);
/* Entries refused with -ERANGE (a time past REC_TIME_MAX, a step that ends before it starts). */
uint64_t rec_writer__refused(const struct rec_writer *w);
/* A module's build-id (hex), once per module path. */
int rec_writer__module(struct rec_writer *w, uint32_t path, const char *build_id);
/* One GPU entry (a NOTE too). -EINVAL for a kind not listed, an undefined string id or end
 * before start; nothing else is checked here. -ENOSPC (dropped and counted) past the --max-size
 * cap the timeline shares. */
int rec_writer__gpu(struct rec_writer *w, const struct rec_gpu *g);
uint64_t rec_writer__gpu_dropped(const struct rec_writer *w);
/* bytes more that GPU data adds to the file elsewhere (a kernel name's string) under the same
 * cap: -ENOSPC (counted with the GPU entries dropped) past it. */
int rec_writer__gpu_charge(struct rec_writer *w, uint64_t bytes);
/* The recording process pid came from (ORIGINS; perch merge): origin a string id (not 0),
 * source_pid its pid there. -EINVAL for an undefined string, -EEXIST for a pid given before. */
int rec_writer__origin(struct rec_writer *w, uint32_t pid, uint32_t origin, uint32_t source_pid);
/* The control group process pid is in (CGROUPS; path a string id, not 0), once per pid:
 * -EEXIST after the first. rec_writer__cgroup_of: the path's string id given for pid, or 0. */
int rec_writer__cgroup(struct rec_writer *w, uint32_t pid, uint32_t path);
uint32_t rec_writer__cgroup_of(const struct rec_writer *w, uint32_t pid);
/* Every metric series so far (METRICS, written at once; the last block wins and compaction
 * keeps it). note: a string id or 0. -EINVAL for an undefined note or metric id, -EFBIG. */
int rec_writer__metrics(struct rec_writer *w, uint64_t interval_ns, uint32_t note,
			const struct rec_metric *m, size_t n);
/* ns more off-CPU time of key (a key id; --off-cpu): the key's total goes to the next OFFCPU
 * block. -EINVAL for an undefined key. */
int rec_writer__offcpu(struct rec_writer *w, uint32_t key, uint64_t ns);
/* Every step and program pause so far (STEPS, written at once; the last block wins and
 * compaction keeps it). -EINVAL for an undefined key or kind, -ERANGE (nothing written,
 * counted refused) for an entry that ends before it starts. */
int rec_writer__steps(struct rec_writer *w, const struct rec_step *s, size_t n);
/* One off-CPU block of key (a key id) over [start_ns, end_ns) (OFFSPANS; --timeline
 * --off-cpu); any order. -EINVAL for an undefined key or end before start, -ENOSPC (dropped and
 * counted) past the --max-size cap the timeline shares. */
int rec_writer__offspan(struct rec_writer *w, uint32_t key, uint64_t start_ns, uint64_t end_ns);
uint64_t rec_writer__offspans_dropped(const struct rec_writer *w);
/* The window budget (>= 2; REC_WINDOW_BUDGET by default): for tests and benches. */
int rec_writer__window_budget(struct rec_writer *w, uint32_t budget);

/* These write their block at once (flushing pending data first). rec_writer__regions: -EINVAL
 * for a thread whose nodes break the rules above or name an undefined string. */
int rec_writer__regions(struct rec_writer *w, const struct rec_region_thread *t, size_t n);
/* SIZES: -EINVAL for an undefined name, more points than seen, a bucket out of order. */
int rec_writer__sizes(struct rec_writer *w, const struct rec_size_thread *t, size_t n);
int rec_writer__meta(struct rec_writer *w, const struct rec_kv *kv, size_t n);
int rec_writer__stats(struct rec_writer *w, const struct rec_kv *kv, size_t n);
int rec_writer__end(struct rec_writer *w, const struct rec_kv *kv, size_t n);

/* The file's size now (compaction shrinks it). */
uint64_t rec_writer__size(const struct rec_writer *w);

#endif /* PERCH_RECORDING_H */
