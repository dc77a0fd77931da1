#!/usr/bin/env bash
# What the system metrics (perch record --metrics) cost perch: RUNS rounds, each recording the
# same workload with --metrics=off and with --metrics=100 (alternated, so a change in the
# machine's load hits both). Per mode, the median of perch's own CPU time (user + system: STATS
# perch_user_us + perch_sys_us, perch's getrusage(RUSAGE_SELF) at the end, its launched command
# not included) and, with metrics on, the median of the CPU time the sampler itself counted
# (STATS metrics_cost_ns: its reads of /proc and NVML, and writing the series) per sample.
#
#   bash bench/metrics.sh [BUILD_DIR]      env: RUNS (5), SECONDS_RUN (10), THREADS (1)
#
# The workload: tests/workloads/metrics, SECONDS_RUN x 10 steps of 100 ms, 1 MiB more RSS and
# 50 % of a CPU each (what it does changes nothing the sampler reads, only how many pages
# it touches).
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" metrics "$@"
BUILD=${1:-build}
RUNS=${RUNS:-5}
SECONDS_RUN=${SECONDS_RUN:-10}
B=$(realpath "$BUILD")
OUT=$B/bench/metrics
die() {
	echo "metrics bench: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (perch record)"
[ -x "$B/perch" ] && [ -x "$B/workloads/metrics" ] || die "build first (make)"
mkdir -p "$OUT"

steps=$((SECONDS_RUN * 10))
for i in $(seq "$RUNS"); do
	for mode in off 100; do
		rec=$OUT/$mode.$i.data
		"$B/perch" record -q --metrics=$mode -o "$rec" -- \
			"$B/workloads/metrics" "$steps" 100 1 0.5 >/dev/null
		"$B/perch" report --format=stats "$rec" >"$OUT/$mode.$i.stats"
		st() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$OUT/$mode.$i.stats"; }
		echo "$mode user_us=$(st perch_user_us) sys_us=$(st perch_sys_us)" \
			"samples=$(st metrics_samples) cost_ns=$(st metrics_cost_ns)"
	done
done | tee "$OUT/runs.txt"

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/.*\\b$1=\\([0-9.]*\\).*/\\1/p"; }
echo
printf '%-14s %18s %14s %22s\n' "--metrics" "perch CPU (ms)" "samples" "sampler CPU/sample (us)"
for mode in off 100; do
	cpu=$(grep "^$mode " "$OUT/runs.txt" | while read -r line; do
		u=$(echo "$line" | field user_us)
		s=$(echo "$line" | field sys_us)
		awk -v u="$u" -v s="$s" 'BEGIN { print (u + s) / 1000 }'
	done | median)
	n=$(grep "^$mode " "$OUT/runs.txt" | field samples | median)
	per=$(grep "^$mode " "$OUT/runs.txt" | while read -r line; do
		c=$(echo "$line" | field cost_ns)
		k=$(echo "$line" | field samples)
		awk -v c="$c" -v k="$k" 'BEGIN { if (k > 0) printf "%.1f\n", c / k / 1000; else print 0 }'
	done | median)
	printf '%-14s %18s %14s %22s\n' "$mode" "$cpu" "$n" "$per"
done
echo "(medians of $RUNS runs; $SECONDS_RUN s workload; per-run lines in $OUT/runs.txt)"
