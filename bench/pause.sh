#!/usr/bin/env bash
# What a paused perch costs its target: bench/cpu_work.c's CPU time unprofiled, under a sampling
# `perch record -p PID`, and under one that is paused the whole run (--delay longer than the run:
# the BPF program's perch_paused flag is set), with the BPF program's own run time per run
# (kernel.bpf_stats_enabled=1, set for the run). Prints a Markdown table for docs/BENCHMARKS.md.
#
#   bash bench/pause.sh [BUILD]      env: RUNS (rounds, default 3), FREQ (Hz, default 999), ROUNDS
#
# Each round runs the three modes interleaved, attach-then-release as bench/overhead.sh does
# (bench/lib.sh). Needs root. About 45 s at RUNS=3.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" pause "$@"

cd "$(dirname "$0")/.."
BENCH_NAME=pause
OUT_NAME=pause
WORKLOAD=cpu_work
EXTRA_COLUMN=per_run
# shellcheck source=bench/lib.sh
. bench/lib.sh

bench_check
mkdir -p "$BENCH"
for helper in cpu_work rusage; do
	gcc -O2 -Wall -Wextra -Werror -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-o "$BENCH/$helper" "bench/$helper.c" || die "cannot build bench/$helper.c"
done
bench_start

profiler_cmd() {
	case $1 in
	sampling) cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q -F "$FREQ" -p "$2" -o "$3") ;;
	paused) cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q -F "$FREQ" --delay=100000 -p "$2" -o "$3") ;;
	esac
}

# Samples, the BPF run time (ms) and its ns per run, from the recording's own counters.
read_recording() {
	local rec=$2 stats=$2.stats

	"$PERCH" report --format=stats "$rec" >"$stats" || die "perch report $rec failed"
	samples=$(awk '$1 == "sampled" { print $2 }' "$stats")
	bpf_ms=$(awk '$1 == "bpf_run_time_ns" { printf "%.3f", $2 / 1e6 }' "$stats")
	per_run=$(awk '$1 == "bpf_run_time_ns" { t = $2 } $1 == "bpf_run_count" { n = $2 }
		END { if (n) printf "%.0f", t / n; else print "-" }' "$stats")
	"$BENCH/rusage" "$3" true
}

warm_caches sampling
for ((run = 1; run <= RUNS; run++)); do
	for mode in baseline paused sampling; do
		echo "pause: round $run/$RUNS: $mode" >&2
		run_one "$mode" "$run"
	done
done

base=$(summary baseline 4 1 1 | cut -d' ' -f1)
echo "## A paused perch record: cost on the target"
echo
echo "$(nproc) CPUs, $(uname -r), ${FREQ} Hz, $RUNS rounds; median (min-max)."
echo
echo "| mode | target CPU ms | vs unprofiled | samples | BPF ms | BPF ns per run | perch CPU ms |"
echo "|---|---|---|---|---|---|---|"
for mode in baseline paused sampling; do
	cpu=$(summary "$mode" 4 1 1)
	d=$(awk -v c="${cpu%% *}" -v b="$base" 'BEGIN { printf "%+.1f%%", b ? 100 * (c - b) / b : 0 }')
	echo "| $mode | $cpu | $d | $(summary "$mode" 7 1 0) | $(summary "$mode" 6 1 2) | $(summary "$mode" 12 1 0) | $(summary "$mode" 5 1 1) |"
done
