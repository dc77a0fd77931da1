#!/usr/bin/env bash
# Region marker cost table (bench/regions.c): ns per begin/end pair, 1 and 2 threads, median of
# RUNS runs each (default 5), the loop's own cost shown separately.
# Usage: [RUNS=N] bash bench/regions.sh [BUILD_DIR]
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" regions "$@"
BUILD=${1:-build}
RUNS=${RUNS:-5}
cd "$(dirname "$0")/.."
out="$BUILD/bench"
mkdir -p "$out"
CFLAGS=(-O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iinclude -pthread)
gcc "${CFLAGS[@]}" -o "$out/regions" bench/regions.c runtime/perch.c
gcc "${CFLAGS[@]}" -DPERCH_DISABLE -o "$out/regions-disabled" bench/regions.c

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() { for _ in $(seq "$RUNS"); do "$@"; done | median; }

echo "## Region marker cost (bench/regions.sh)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs: $(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1)"
echo "- 50M begin/end pairs per thread in a tight loop; median of $RUNS runs; ns per pair including the loop"
echo
echo "| markers | 1 thread ns/pair | 2 threads ns/pair |"
echo "|---|---|---|"
row() { echo "| $1 | $(run "${@:2}" 1) | $(run "${@:2}" 2) |"; }
row "empty loop (baseline)" "$out/regions" empty
row "perch, no profiler" "$out/regions" perch
row "perch, -DPERCH_DISABLE" "$out/regions-disabled" perch
row "two rdtsc reads, back to back, values unused" "$out/regions" rdtsc2
row "a minimal timed pair: two calls, rdtsc each, the difference summed (the floor)" "$out/regions" timed
row "perch, profiler active (timestamps + region tree)" "$out/regions" active
row "perch, profiler active with the timeline ring (--timeline)" "$out/regions" timeline
row "perch, under perch record -F 997 (sampled, regions timed)" "$BUILD/perch" record -q -o "$out/regions.data" -- "$out/regions" perch
row "perch, under perch record -F 997 --timeline (spans too)" "$BUILD/perch" record -q --timeline -o "$out/regions.data" -- "$out/regions" perch
row "perch_region_begin_n, profiler active (+ cost-model slot)" "$out/regions" sized-active
row "perch_region_begin_n, under perch record -F 997 (sizes kept for perch model)" "$BUILD/perch" record -q -o "$out/regions.data" -- "$out/regions" sized
row "NVTX-style function pointers (no tool)" "$out/regions" nvtx
row "USDT probes (sys/sdt.h, not traced)" "$out/regions" usdt
echo
echo "'profiler active' sets perch_registry.active as perch record does ('with the timeline ring':"
echo "perch_registry.timeline too, so each begin and end also goes into the thread's ring, which"
echo "nobody reads: the ring overwrites itself, the cost of the write alone); 'under perch record' is"
echo "the real thing: perch launched the benchmark, times every region and samples it at 997 Hz (with"
echo "--timeline it also reads the rings every 100 ms; at this rate most entries are overwritten first)."
