#!/usr/bin/env bash
# perch's overhead next to `perf record -g`, as a Markdown table (`make bench` runs it).
#
#   bash bench/overhead.sh [BUILD]        BUILD: the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), FREQ (Hz, default 999), ROUNDS (work units; 7300 = ~3 s on the 2-CPU VM)
#
# Each round runs the same fixed CPU-bound workload (bench/cpu_work.c) four times, interleaved:
# unprofiled, under `perch record -p PID`, under `perch record --timeline -p PID` (every sample's
# time too) and under `perf record -g -p PID`, all at FREQ Hz on
# cpu-clock. The workload blocks on a FIFO until released, so the profiler attaches first and its
# start-up stays out of the target's timing; the profiler runs under bench/rusage.c, which
# reports the CPU time the kernel charged to the profiler's process alone. perch adds its BPF
# programs' run time, which it records itself when kernel.bpf_stats_enabled=1 (set here for the
# run, restored on exit). Then `perch report` and `perf report` are timed on the recordings.
#
# Needs root (BPF, perf at any paranoid level, the sysctl). Takes about 40 s at RUNS=3; the last
# run's recordings and per-run numbers (results.tsv) stay in BUILD/bench/runs/.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" overhead "$@"

cd "$(dirname "$0")/.."
BENCH_NAME=overhead
OUT_NAME=runs
WORKLOAD=cpu_work
# shellcheck source=bench/lib.sh
. bench/lib.sh

bench_check

mkdir -p "$BENCH"
for helper in cpu_work rusage; do
	# Frame pointers so that perf -g (and perch) walk the workload's stacks the same way.
	gcc -O2 -Wall -Wextra -Werror -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-o "$BENCH/$helper" "bench/$helper.c" || die "cannot build bench/$helper.c"
done

bench_start

# profiler_cmd MODE PID REC: the command line of MODE's profiler (see bench/lib.sh).
profiler_cmd() {
	case $1 in
	perch) cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q -F "$FREQ" -p "$2" -o "$3") ;;
	perch-timeline) cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q --timeline -F "$FREQ" -p "$2" -o "$3") ;;
	perf) cmd=(perf record -q -g -e cpu-clock -F "$FREQ" -p "$2" -o "$3") ;;
	esac
}


# Samples in a recording, and the BPF run time in ms ("-" where there is none).
count_samples() {
	local mode=$1 rec=$2

	case $mode in
	perch | perch-timeline)
		"$PERCH" report "$rec" >"$rec.head" 2>&1 || die "perch report $rec failed"
		samples=$(sed -n 's/^sampling .* \([0-9][0-9]*\) samples.*/\1/p' "$rec.head")
		bpf_ms=$(sed -n 's/.*BPF programs ran [0-9]* times for \([0-9.]*\) ms.*/\1/p' "$rec.head")
		event=$(sed -n 's/^sampling *\([^ ]*\) at .*/\1/p' "$rec.head")
		[ -n "$samples" ] || die "no sample count in the header of perch report $rec"
		[ -n "$bpf_ms" ] || bpf_ms=-
		;;
	perf)
		# One line per sample: with -F and no ip/sym field, perf script prints no callchains.
		samples=$(perf script -i "$rec" -F tid 2>/dev/null | wc -l)
		bpf_ms=-
		;;
	esac
}

# The hook bench/lib.sh's run_one calls: samples and BPF time, then `report` timed into cost.
read_recording() {
	local mode=$1 rec=$2 cost=$3

	count_samples "$mode" "$rec"
	case $mode in
	perch | perch-timeline) "$BENCH/rusage" "$cost" "$PERCH" report "$rec" >/dev/null 2>&1 ;;
	perf) "$BENCH/rusage" "$cost" perf report -i "$rec" --stdio >/dev/null 2>&1 ;;
	esac || die "$mode report $rec failed"
}

event='?'
warm_caches perch

for ((run = 1; run <= RUNS; run++)); do
	for mode in baseline perch perch-timeline perf; do
		echo "overhead: round $run/$RUNS: $mode" >&2
		run_one "$mode" "$run"
	done
done

# ---- the table ----

base_wall=$(summary baseline 3 1 3 | cut -d' ' -f1)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "## perch record vs perf record -g: overhead on a CPU-bound target"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- kernel: $(uname -r) ($(uname -m)); CPU: ${cpu_model:-unknown}, $(nproc) CPUs"
echo "- event: $event at $FREQ Hz for perch, cpu-clock at $FREQ Hz for perf ($(perf --version))"
echo "- target: bench/cpu_work.c, $ROUNDS rounds (about $(awk -v w="$base_wall" 'BEGIN { printf "%.1f", w / 1000 }') s unprofiled), single-threaded; $RUNS runs per mode, interleaved"
echo
echo "| mode | target wall s | slowdown (x) | profiler CPU ms (user+sys) | BPF ms | samples | CPU ms per 1000 samples | profiler max RSS MB | recording KB | report ms |"
echo "|---|---|---|---|---|---|---|---|---|---|"
# Columns of results.tsv: 1 mode, 2 run, 3 target wall ms, 4 target CPU ms, 5 profiler user+sys
# ms, 6 BPF ms, 7 samples, 8 CPU ms per 1000 samples, 9 max RSS KB, 10 recording bytes,
# 11 report wall ms.
for mode in baseline perch perch-timeline perf; do
	row="| $mode | $(summary "$mode" 3 1000 2) | $(summary "$mode" 3 "$base_wall" 3)"
	row+=" | $(summary "$mode" 5) | $(summary "$mode" 6 1 2) | $(summary "$mode" 7 1 0)"
	row+=" | $(summary "$mode" 8) | $(summary "$mode" 9 1024) | $(summary "$mode" 10 1024 0)"
	row+=" | $(summary "$mode" 11) |"
	echo "$row"
done
echo
echo "Medians, with min-max over the runs in parentheses. Slowdown is the target's wall time over"
echo "the unprofiled median; the baseline row's own range is the run-to-run noise. Where both tools'"
echo "slowdowns fall inside it (as on a 2-CPU VM), the profiler's CPU cost is the figure that"
echo "separates them."
echo
echo "1. Profiler CPU: user+system time the kernel charged to the profiler process (wait4 rusage"
echo "   from bench/rusage.c), from start-up and attaching through writing the recording, so it"
echo "   includes fixed start-up costs that longer runs would amortise. CPU per 1000 samples is"
echo "   (profiler CPU + BPF) / samples * 1000, in ms (the same number is µs per sample)."
echo "2. BPF ms: run time of perch's BPF programs (stack walks included) from the kernel's BPF"
echo "   statistics (kernel.bpf_stats_enabled=1), as perch records it. It runs in the interrupted"
echo "   task's context, so it is not in perch's own rusage. perch opens one cpu-clock event per"
echo "   CPU and keeps the target's samples in BPF, so this also counts ticks that land on other"
echo "   busy tasks, including during the ${ATTACH_WAIT} s before the target is released. perf uses no BPF: \"-\"."
echo "3. perf's in-kernel cost of copying callchains at each sample is charged to the target, not"
echo "   to either profiler's process; it shows only in the target's slowdown."
echo "4. perch resolves symbols when the recording ends (in its profiler CPU), perf when reporting"
echo "   (in its report time). Report ms: wall time of \`perch report FILE >/dev/null\` and"
echo "   \`perf report -i FILE --stdio >/dev/null\` on that run's recording."
echo "5. perch runs with caches one untimed recording filled first (kernel symbols and BTF for the"
echo "   boot in /run/perch; source lines and decompressed debug files per build-id in"
echo "   XDG_CACHE_HOME/perch), as any run after the first on these binaries has them."
echo
echo "Numbers from bench/overhead.sh: target times from bench/cpu_work.c's own clocks, profiler costs"
echo "from wait4() in bench/rusage.c, perch samples and BPF time from \`perch report\`'s header, perf"
echo "samples from \`perf script -F tid | wc -l\`; per-run values in $OUT/results.tsv."
