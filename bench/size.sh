#!/usr/bin/env bash
# Recording size against run length: perch's next to `perf record -g`'s, as a Markdown table.
#
#   bash bench/size.sh [BUILD]        BUILD: the build folder holding perch and the test workloads
#   env: SECONDS_LIST (run lengths, default "10 60 600"), FREQ (Hz, default 999), WORKLOADS (default
#   "steady shares recursion")
#
# Three workloads, each run for every length in SECONDS_LIST, once under `perch record` and once
# under `perf record -g` (cpu-clock, the same frequency), the two side by side (each workload is
# one thread, the machine has two CPUs; a size does not depend on which ran beside it):
#   steady     bench/steady.c: three functions in a fixed loop, pure user mode: three stacks
#   shares     tests/workloads/shares: the same shape, with a system call (its CPU clock) a round
#   recursion  tests/workloads/recursion: ping <-> pong to depths 1..60, 120 stacks of varying depth
# A perch recording's size should follow the program, not the run (recording.h states the growth
# law); perf's grows with every sample. The recordings stay in BUILD/bench/size/. Needs root; takes
# as long as the lengths add up to, three times (3 x 670 s by default).
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" size "$@"

cd "$(dirname "$0")/.."
BUILD=${1:-build}
FREQ=${FREQ:-999}
SECONDS_LIST=${SECONDS_LIST:-10 60 600}
WORKLOADS=${WORKLOADS:-steady shares recursion}
PERCH=$BUILD/perch
OUT=$BUILD/bench/size

die() {
	echo "size: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || die "needs root (BPF, perf)"
[ -x "$PERCH" ] || die "$PERCH not built (make all)"
command -v perf >/dev/null || die "perf not found (linux-perf)"
for w in shares recursion; do
	[ -x "$BUILD/workloads/$w" ] || die "$BUILD/workloads/$w not built (make all)"
done
rm -rf "$OUT"
mkdir -p "$OUT"
gcc -O2 -Wall -Wextra -Werror -o "$OUT/steady" bench/steady.c || die "cannot build bench/steady.c"

# kib FILE: its size in KiB, one decimal
kib() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f", b / 1024 }'; }

# perch_samples REC: the samples it counted
perch_samples() { "$PERCH" report --format=stats "$1" | awk '$1 == "samples" { print $2 }'; }

printf '| workload | run | perch | perch samples | perf record -g | perf samples | perf / perch |\n'
printf '|---|---:|---:|---:|---:|---:|---:|\n'
for w in $WORKLOADS; do
	bin=$BUILD/workloads/$w
	[ "$w" = steady ] && bin=$OUT/steady
	for s in $SECONDS_LIST; do
		p=$OUT/$w.$s.perch.data
		f=$OUT/$w.$s.perf.data
		"$PERCH" record -q -F "$FREQ" -o "$p" -- "$bin" "$s" >/dev/null 2>"$p.err" &
		pp=$!
		perf record -q -g -e cpu-clock -F "$FREQ" -o "$f" -- "$bin" "$s" \
			>/dev/null 2>"$f.err" &
		fp=$!
		wait $pp || die "perch record $w $s failed: $(head -3 "$p.err")"
		wait $fp || die "perf record $w $s failed: $(head -3 "$f.err")"
		ps=$(perch_samples "$p")
		fs=$(perf report -i "$f" --stdio --header-only 2>/dev/null |
			sed -n 's/^# Total Lost Samples.*//; s/^# Samples: \([0-9.]*[KM]*\).*/\1/p' | head -1)
		[ -n "$fs" ] || fs=$(perf script -i "$f" -F tid 2>/dev/null | wc -l)
		printf '| %s | %s s | %s KiB | %s | %s KiB | %s | %s |\n' "$w" "$s" "$(kib "$p")" "$ps" \
			"$(kib "$f")" "$fs" "$(awk -v a="$(stat -c %s "$f")" -v b="$(stat -c %s "$p")" \
				'BEGIN { printf "%.0fx", a / b }')"
	done
done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), FREQ=$FREQ Hz"
