/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The keys of a recording's META, STATS and END blocks, written once: `perch record` writes them
 * by these lists, `perch report` (text and --format=stats) and the tests read them through the
 * enums below, so a key is spelled in one place and a misspelling does not compile.
 *
 * STATS lists are X(key, index), grouped by the part that counts them; index is that part's own
 * counter (the BPF stats map, collector__stat(), unwinder__stat(), regions__stat(), or the
 * order of the cost counters) and is only expanded where the part's header is included.
 * Appending a key is a compatible change; renaming one is a format change (recording.h).
 */
#ifndef PERCH_FORMAT_KEYS_H
#define PERCH_FORMAT_KEYS_H

/* Counted in the BPF program, summed over CPUs (bpf/perch_bpf.h). */
#define REC_STATS_BPF(X)                                              \
	X(samples, PERCH_STAT_SAMPLES)                                \
	X(lost_count_map_full, PERCH_STAT_COUNT_FULL)                 \
	X(lost_user_stack_map_full, PERCH_STAT_USTACK_FULL)           \
	X(lost_kernel_stack_map_full, PERCH_STAT_KSTACK_FULL)         \
	X(user_stack_unreadable, PERCH_STAT_USTACK_FAULT)             \
	X(kernel_stack_unreadable, PERCH_STAT_KSTACK_FAULT)           \
	X(lost_children_target_map_full, PERCH_STAT_TARGET_FULL)      \
	X(lost_process_events, PERCH_STAT_EVENT_LOST)                 \
	X(dwarf_unwound, PERCH_STAT_DWARF)                            \
	X(dwarf_truncated, PERCH_STAT_DWARF_TRUNCATED)                \
	X(dwarf_stopped_unreadable, PERCH_STAT_DWARF_FAULT)           \
	X(dwarf_stopped_no_cfi, PERCH_STAT_DWARF_NO_CFI)              \
	X(dwarf_stopped_bad_frame, PERCH_STAT_DWARF_BAD_FRAME)        \
	X(lost_user_stack_hash_collision, PERCH_STAT_DWARF_COLLISION) \
	X(dwarf_frame_pointer_fallback, PERCH_STAT_FP_FALLBACK)       \
	X(region_stack_unreadable, PERCH_STAT_REGION_LOST)            \
	X(timeline_ticks_lost, PERCH_STAT_TICK_LOST)

/* Counted by the collector (record/collect/collect.h). */
#define REC_STATS_COLLECT(X)                            \
	X(truncated_stacks, COLLECT_TRUNCATED)          \
	X(leaf_caller_restored, COLLECT_LEAF_FIXED)     \
	X(samples_without_mappings, COLLECT_NO_MAPS)    \
	X(unnamed_user_frames, COLLECT_UNNAMED)         \
	X(unwind_stopped_early, COLLECT_UNWIND_STOPPED) \
	X(damaged_user_stacks, COLLECT_DAMAGED)         \
	X(jit_maps_capped, COLLECT_JIT_CAPPED)          \
	X(jit_frames_named_late, COLLECT_JIT_LATE)

/* Counted by the unwinder (record/unwinder.h); written only when it ran. */
#define REC_STATS_UNWINDER(X)                               \
	X(unwind_tables, UNWINDER_TABLES)                   \
	X(unwind_rows, UNWINDER_ROWS)                       \
	X(unwind_modules_without_table, UNWINDER_NO_TABLE)  \
	X(unwind_modules_cfi_damaged, UNWINDER_CFI_DAMAGED) \
	X(unwind_modules_rows_full, UNWINDER_ROWS_FULL)     \
	X(unwind_mappings_over_limit, UNWINDER_MAPS_FULL)   \
	X(unwind_processes_not_listed, UNWINDER_PROCS_FULL)

/* Counted by the region reader (record/regions/regions.h). */
#define REC_STATS_REGIONS(X)                                   \
	X(region_processes, REGIONS_PROCS)                     \
	X(region_processes_unreadable, REGIONS_UNREADABLE)     \
	X(region_processes_no_handshake, REGIONS_NO_HANDSHAKE) \
	X(region_stacks_lost, REGIONS_STACKS_LOST)             \
	X(region_processes_busy, REGIONS_BUSY)                 \
	X(region_calls_names_over_limit, REGIONS_NAMES_OVER)   \
	X(region_calls_tree_full, REGIONS_TREE_FULL)           \
	X(region_calls_too_deep, REGIONS_TOO_DEEP)             \
	X(region_spans_lost, REGIONS_SPANS_LOST)               \
	X(region_processes_without_spans, REGIONS_NO_TIMELINE)

/* --timeline: ticks whose bucket had no key id (the sampler's); written only with --timeline.
 * What --max-size dropped the writer counts (REC_STATS_WRITER). */
#define REC_STATS_TIMELINE(X) X(timeline_ticks_unkeyed, 0)

/* perch's own cost, written once a second and at the end: its BPF programs' run time and runs
 * (all of them, and the tick program's alone: the per-sample part), its own CPU time. */
#define REC_STATS_COST(X)          \
	X(bpf_run_time_ns, 0)      \
	X(bpf_run_count, 1)        \
	X(perch_user_us, 2)        \
	X(perch_sys_us, 3)         \
	X(bpf_tick_run_time_ns, 4) \
	X(bpf_tick_run_count, 5)

/* Dropped by the recording writer past --max-size (rec_writer__events_dropped/spans_dropped), and
 * entries it refused as its reader would (rec_writer__refused(): a time past REC_TIME_MAX, a
 * step ending before it starts). */
#define REC_STATS_WRITER(X)           \
	X(timeline_events_dropped, 0) \
	X(timeline_spans_dropped, 1)  \
	X(entries_refused, 2)

/* What the region reader refused of a runtime's memory (record/regions/regions.h): spans whose
 * time is outside the run, reads whose thread list came back on itself, blocks past a process's
 * budget. After the writer's counters: `report --format=stats` shows them where a recording has
 * them. */
#define REC_STATS_REGIONS_REFUSED(X)                        \
	X(region_spans_refused, REGIONS_SPANS_REFUSED)      \
	X(region_thread_list_cycles, REGIONS_THREAD_CYCLES) \
	X(region_threads_refused, REGIONS_THREADS_REFUSED)

/* --gpu (record/gpu/gpu.h): the channel from the CUDA injection library and the correlation join;
 * written only with --gpu. */
#define REC_STATS_GPU(X)                                           \
	X(gpu_activities, GPU_ACTIVITIES)                          \
	X(gpu_activities_joined, GPU_JOINED)                       \
	X(gpu_activities_without_launch, GPU_ACTIVITIES_UNMATCHED) \
	X(gpu_launches_without_activity, GPU_LAUNCHES_UNMATCHED)   \
	X(gpu_records_dropped, GPU_DROPPED)                        \
	X(gpu_launch_probes, GPU_PROBES)                           \
	X(gpu_channel_bytes, GPU_BYTES)                            \
	X(gpu_channel_damaged, GPU_DAMAGED)                        \
	X(gpu_launches_inherited, GPU_INHERITED)                   \
	X(gpu_launches_inherited_lost, GPU_INHERITED_LOST)         \
	X(gpu_site_reprobes, GPU_REPROBES)                         \
	X(gpu_site_reprobes_differ, GPU_REPROBES_DIFFER)           \
	X(gpu_launches_dropped, GPU_LAUNCHES_DROPPED)              \
	X(gpu_activities_waits_cut, GPU_WAITS_CUT)                 \
	X(gpu_channel_records_refused, GPU_REFUSED)                \
	X(gpu_entries_dropped_max_size, GPU_SIZE_DROPPED)

/* --gpu: the sampler's uprobe on the library's probe (bpf/perch_bpf.h): launches whose CPU stack
 * was captured, and those whose stack was lost (counts map or ring buffer full, or no key id);
 * written only with --gpu. */
#define REC_STATS_LAUNCH(X)                       \
	X(gpu_launch_stacks, PERCH_STAT_LAUNCHES) \
	X(gpu_launch_stacks_lost, PERCH_STAT_LAUNCH_LOST)

/* --gpu -p (record/gpu/gpu_attach.h): libcuda's entry points probed in attach mode; written only
 * then. */
#define REC_STATS_GPU_ATTACH(X)                                        \
	X(gpu_attach_processes, GPU_ATTACH_PROCESSES)                  \
	X(gpu_attach_processes_without_libcuda, GPU_ATTACH_NO_LIBCUDA) \
	X(gpu_attach_probes, GPU_ATTACH_PROBES)                        \
	X(gpu_attach_calls_written, GPU_ATTACH_CALLS)                  \
	X(gpu_attach_handles_named, GPU_ATTACH_NAMES)                  \
	X(gpu_attach_launches_unnamed, GPU_ATTACH_UNNAMED)

/* --gpu -p: the sampler's libcuda uprobes (bpf/perch_bpf.h): calls of target threads, those
 * whose stack was lost (counts map or ring buffer full, or no key id), name lookups not sent. */
#define REC_STATS_GPU_CALLS(X)                             \
	X(gpu_attach_calls, PERCH_STAT_GPU_CALLS)          \
	X(gpu_attach_calls_lost, PERCH_STAT_GPU_CALL_LOST) \
	X(gpu_attach_names_lost, PERCH_STAT_GPU_NAME_LOST)

/* --metrics (record/metrics.h): samples taken, and the CPU time perch spent taking them and
 * writing the series; written only with metrics on. */
#define REC_STATS_METRICS(X)  \
	X(metrics_samples, 0) \
	X(metrics_cost_ns, 1)

/* --off-cpu: the sampler's sched_switch program (bpf/perch_bpf.h): blocks of target threads at
 * least --off-cpu-min long, and those lost (start or off-CPU map full, or no key id); written
 * only with --off-cpu. */
#define REC_STATS_OFFCPU(X)                   \
	X(off_cpu_blocks, PERCH_STAT_OFF_CPU) \
	X(off_cpu_blocks_lost, PERCH_STAT_OFF_CPU_LOST)

/* Steps and program pauses (record/steps.h, record/regions/regions.h): control log entries a
 * program overwrote before perch read them, and steps or pauses past REC_STEPS_MAX; written only
 * when a process with a region runtime of ABI 5 was recorded (0 and 1: their sources' own ids). */
#define REC_STATS_STEPS(X)                             \
	X(region_control_lost, REGIONS_LOG_LOST)       \
	X(steps_dropped, 0)                            \
	X(region_control_refused, REGIONS_LOG_REFUSED) \
	X(steps_refused, 1)

/* Early stacks (bpf/perch_bpf.h, struct perch_early): ticks right after an exec whose walk
 * stopped short, copied for the loader (in the BPF program), and what the loader's walk of them
 * gave (record/sampler/sampler.h): whole stacks, stacks still short, stacks walked by frame
 * pointers (no tables came), copies not kept; the same three for --off-cpu switch-outs. Written only when the sampler unwound from tables
 * (after the writer's counters: `report --format=stats` shows them only where a recording has
 * them). */
#define REC_STATS_EARLY_BPF(X)                   \
	X(early_stacks_copied, PERCH_STAT_EARLY) \
	X(early_stacks_ring_full, PERCH_STAT_EARLY_LOST)
#define REC_STATS_EARLY(X)                                 \
	X(early_stacks_rescued, SAMPLER_EARLY_RESCUED)     \
	X(early_stacks_short, SAMPLER_EARLY_SHORT)         \
	X(early_stacks_frame_pointers, SAMPLER_EARLY_FP)   \
	X(early_stacks_lost, SAMPLER_EARLY_LOST)           \
	X(early_off_cpu_stacks, SAMPLER_EARLY_OFFCPU)      \
	X(early_off_cpu_short, SAMPLER_EARLY_OFFCPU_SHORT) \
	X(early_off_cpu_frame_pointers, SAMPLER_EARLY_OFFCPU_FP)

/* --off-cpu --timeline (OFFSPANS): block spans written, lost (the sampler's ring was full, or
 * the span's key had no key id) and dropped past --max-size; written only with both options.
 * The index is record/stats.c's own. */
#define REC_STATS_OFFSPANS(X)    \
	X(off_cpu_spans, 0)      \
	X(off_cpu_spans_lost, 1) \
	X(off_cpu_spans_dropped, 2)

/* A launched command (bpf/perch_bpf.h): its ticks before its exec, perch's own code in the forked
 * child, left out of the samples; written only for a launched command. */
#define REC_STATS_LAUNCHED(X) X(pre_exec_ticks_left_out, PERCH_STAT_PRE_EXEC)

/* CPython (record/python/python.h): the sampler's walks of Python frames (bpf/perch_bpf.h) and
 * the naming of what they found; written only when a process ran an interpreter. */
#define REC_STATS_PYTHON_BPF(X)                                       \
	X(python_stacks, PERCH_STAT_PY_STACKS)                        \
	X(python_ticks_without_thread_state, PERCH_STAT_PY_NO_THREAD) \
	X(python_stacks_truncated, PERCH_STAT_PY_TRUNCATED)           \
	X(python_stacks_unreadable, PERCH_STAT_PY_FAULT)              \
	X(python_stacks_lost, PERCH_STAT_PY_LOST)
#define REC_STATS_PYTHON(X)                                 \
	X(python_processes, PYTHON_PROCS)                   \
	X(python_processes_unsupported, PYTHON_UNSUPPORTED) \
	X(python_frames_unnamed, PYTHON_FRAMES_UNNAMED)     \
	X(python_frames_unplaced, PYTHON_FRAMES_UNPLACED)   \
	X(python_samples_frames_lost, PYTHON_SAMPLES_LOST)

/* perch agent (record_opts.forget_exited): the exited processes it forgot (written only then). */
#define REC_STATS_FORGET(X) X(processes_forgotten, 0)

#define REC_STATS(X)                 \
	REC_STATS_BPF(X)             \
	REC_STATS_COLLECT(X)         \
	REC_STATS_UNWINDER(X)        \
	REC_STATS_REGIONS(X)         \
	REC_STATS_TIMELINE(X)        \
	REC_STATS_COST(X)            \
	REC_STATS_WRITER(X)          \
	REC_STATS_REGIONS_REFUSED(X) \
	REC_STATS_EARLY_BPF(X)       \
	REC_STATS_EARLY(X)           \
	REC_STATS_GPU(X)             \
	REC_STATS_LAUNCH(X)          \
	REC_STATS_GPU_ATTACH(X)      \
	REC_STATS_GPU_CALLS(X)       \
	REC_STATS_METRICS(X)         \
	REC_STATS_OFFCPU(X)          \
	REC_STATS_STEPS(X)           \
	REC_STATS_OFFSPANS(X)        \
	REC_STATS_LAUNCHED(X) REC_STATS_PYTHON_BPF(X) REC_STATS_PYTHON(X) REC_STATS_FORGET(X)

/* META: strings fixed when the recording starts. event: the events sampled, comma-separated
 * (format/events.h); period: per event, the events (nanoseconds for a clock) per sample, 0 for
 * one sampled at frequency Hz, written only when some event has a period (-c, or an event that
 * is not a clock); cpus: perch record -C's list, when given; realtime_offset_ns: CLOCK_REALTIME
 * less CLOCK_MONOTONIC when the recording started (ns, signed), what turns the windows' and the
 * timeline's times into Unix times (report/otlp.c). */
#define REC_META(X)      \
	X(command)       \
	X(pids)          \
	X(mode)          \
	X(event)         \
	X(frequency)     \
	X(start_time)    \
	X(hostname)      \
	X(kernel)        \
	X(max_stack)     \
	X(unwind)        \
	X(regions_note)  \
	X(clock)         \
	X(window_budget) \
	X(gpu)           \
	X(period)        \
	X(cpus)          \
	X(steps)         \
	X(only_region)   \
	X(realtime_offset_ns)

/* END: numbers known when the recording finishes (absent when perch was stopped first). The
 * last four are written only when sampling did not cover the whole run (--delay, a pause, a cap;
 * see `perch record`): start_ns, the run's start (CLOCK_MONOTONIC); paused_ns, the time of the
 * run not sampled; stopped_at, enum rec_stop; enabled_intervals, how many intervals were sampled,
 * the first REC_END_ENABLED_MAX of them under the keys REC_END_ENABLED_START/END (format strings
 * of their index: CLOCK_MONOTONIC ns, [start, end)). */
#define REC_END(X)     \
	X(duration_ns) \
	X(exit_status) \
	X(drains)      \
	X(start_ns)    \
	X(paused_ns)   \
	X(stopped_at)  \
	X(enabled_intervals)

#define REC_END_ENABLED_MAX   64
#define REC_END_ENABLED_START "enabled_%u_start_ns"
#define REC_END_ENABLED_END   "enabled_%u_end_ns"

/* END stopped_at: why sampling stopped before the targets ended. */
enum rec_stop {
	REC_STOP_NONE = 0,
	REC_STOP_MAX_DURATION = 1, /* --max-duration */
	REC_STOP_MAX_SIZE = 2,	   /* --max-size without --timeline */
	REC_STOP_STEPS = 3,	   /* the last step of --steps ended */
};

#define REC_KEY_ENUM2(key, index) REC_STAT_##key,
enum rec_stat { REC_STATS(REC_KEY_ENUM2) REC_STAT_NR };
#undef REC_KEY_ENUM2

#define REC_KEY_ENUM1(key) REC_META_##key,
enum rec_meta { REC_META(REC_KEY_ENUM1) REC_META_NR };
#undef REC_KEY_ENUM1

#define REC_KEY_ENUM1(key) REC_END_##key,
enum rec_end { REC_END(REC_KEY_ENUM1) REC_END_NR };
#undef REC_KEY_ENUM1

/* The keys as written in the file, indexed by the enums above. */
extern const char *const rec_stat_keys[REC_STAT_NR];
extern const char *const rec_meta_keys[REC_META_NR];
extern const char *const rec_end_keys[REC_END_NR];

#endif /* PERCH_FORMAT_KEYS_H */
