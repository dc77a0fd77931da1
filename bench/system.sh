#!/usr/bin/env bash
# The cost of `perch record -a` (system-wide: every process, kernel threads and idle) on an idle
# and on a busy machine, as a Markdown table (docs/BENCHMARKS.md, "System-wide cost").
#
#   bash bench/system.sh [BUILD]     BUILD: the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), SECS (seconds of an idle recording, default 5), FREQ (Hz,
#   default 997), ROUNDS (bench/cpu_work's work units per worker, default 4000)
#
# idle: perch record -a -d SECS with nothing of ours running (whatever else the machine runs is
# sampled too). busy: one bench/cpu_work per CPU, a fixed amount of CPU work each, timed from its
# release; each round runs them unprofiled and under perch record -a, interleaved: the medians
# of the workers' CPU times (the sampler's ticks run in the interrupted task and are charged to
# it) and of their wall times (on a shared machine, mostly the other load's doing) are shown.
# The machine's load average is printed beside the table. perch's own cost comes from
# the recording's STATS: the CPU time of the perch process (perch_user_us + perch_sys_us) and its
# BPF programs' run time (bpf_run_time_ns, with kernel.bpf_stats_enabled=1 for the run, restored
# on exit), per second of recording. Needs root. Takes about RUNS x (SECS + 4 x the work) s.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" system "$@"

cd "$(dirname "$0")/.."
BUILD=${1:-build}
RUNS=${RUNS:-3}
SECS=${SECS:-5}
FREQ=${FREQ:-997}
ROUNDS=${ROUNDS:-4000}
PERCH=$BUILD/perch
OUT=$BUILD/bench/system
NCPU=$(nproc)

die() {
	echo "system: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (BPF, sysctl kernel.bpf_stats_enabled)"
[ -x "$PERCH" ] || die "$PERCH not built (make all)"
rm -rf "$OUT"
mkdir -p "$OUT"
gcc -O2 -Wall -Wextra -Werror -o "$OUT/cpu_work" bench/cpu_work.c || die "cannot build bench/cpu_work.c"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
perch_pid=
cleanup() {
	[ -z "$perch_pid" ] || kill -INT "$perch_pid" 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$old_stats" || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sysctl -qw kernel.bpf_stats_enabled=1

stat_of() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# cost REC: "samples/s perch_cpu_% bpf_cpu_% bpf_ns_per_run" of a recording
cost() {
	local rec=$1 dur
	dur=$(stat_of "$rec" duration_ns)
	awk -v d="$dur" -v s="$(stat_of "$rec" sampled)" -v u="$(stat_of "$rec" perch_user_us)" \
		-v y="$(stat_of "$rec" perch_sys_us)" -v b="$(stat_of "$rec" bpf_run_time_ns)" \
		-v n="$(stat_of "$rec" bpf_run_count)" 'BEGIN { sec = d / 1e9
		printf "%.0f %.2f %.2f %.0f\n", s / sec, 100 * (u + y) / 1e6 / sec, 100 * b / 1e9 / sec, n ? b / n : 0 }'
}

# workers TAG: NCPU cpu_work, released together; their wall_ms lines in $OUT/TAG.w*
workers() {
	local tag=$1 fifo=$OUT/release.fifo pids=()
	rm -f "$fifo"
	mkfifo "$fifo"
	for ((i = 0; i < NCPU; i++)); do
		"$OUT/cpu_work" "$fifo" "$ROUNDS" >"$OUT/$tag.w$i" &
		pids+=($!)
	done
	sleep 0.5
	head -c "$NCPU" /dev/zero >"$fifo"
	wait "${pids[@]}"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for ((r = 1; r <= RUNS; r++)); do
	"$PERCH" record -q -a -F "$FREQ" -d "$SECS" -o "$OUT/idle.$r.data"
	echo "idle $(cost "$OUT/idle.$r.data")" >>"$OUT/results.txt"
	workers "base.$r"
	"$PERCH" record -q -a -F "$FREQ" -o "$OUT/busy.$r.data" &
	perch_pid=$!
	sleep 1
	workers "prof.$r"
	kill -INT "$perch_pid"
	wait "$perch_pid" || true
	perch_pid=
	echo "busy $(cost "$OUT/busy.$r.data")" >>"$OUT/results.txt"
done

# med TAG FIELD: the median of the workers' FIELD (wall_ms, cpu_ms) over the rounds
med() { cat "$OUT"/"$1".*.w* | sed -n "s/.*$2=\([0-9.]*\).*/\1/p" | median; }
# change A B: "A ms -> B ms (+P %)"
change() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f ms -> %.0f ms (%+.1f %%)", a, b, 100 * (b - a) / a }'; }
echo "perch record -a at $FREQ Hz on $NCPU CPUs ($(uname -r)), median of $RUNS runs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| machine | samples/s | perch process CPU | BPF programs CPU | BPF ns per run | workers' CPU time | workers' wall time |"
echo "|---|---|---|---|---|---|---|"
for m in idle busy; do
	read -r s c b n < <(awk -v m=$m '$1 == m { print $2, $3, $4, $5 }' "$OUT/results.txt" | sort -k2 -n | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }')
	if [ $m = busy ]; then
		cpu=$(change "$(med base cpu_ms)" "$(med prof cpu_ms)")
		wall=$(change "$(med base wall_ms)" "$(med prof wall_ms)")
	else
		cpu="-" wall="-"
	fi
	echo "| $m | $s | $c % | $b % | $n | $cpu | $wall |"
done
