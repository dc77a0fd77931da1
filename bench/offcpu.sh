#!/usr/bin/env bash
# perch record --off-cpu's cost on a context-switch-heavy workload, next to `perf sched record`,
# as a Markdown table.
#
#   bash bench/offcpu.sh [BUILD]     BUILD: the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), ROUNDS (pingpong round trips, default 300000), MIN (us,
#        --off-cpu-min, default perch's)
#
# bench/pingpong.c passes a byte between two threads over two pipes (~180,000 voluntary context
# switches a second on the 2-CPU VM): every round trip is two blocks and two wake-ups, so every
# switch runs perch's sched_switch program. Each round runs it, interleaved, unprofiled; under
# `perch record` (ticks only); under `perch record --off-cpu`; under `perch record --off-cpu
# --timeline` (every block also a span: the offspans ring and the OFFSPANS block); and under
# `perf sched record`
# (every sched_switch/wakeup event to a file, system wide: the reference for tracing the
# scheduler). The workload times its own loop (round trips a second: the slowdown) and its own
# CPU (user + system, which includes the BPF programs that run in its threads' context); the
# profiler's own CPU is what bench/rusage.c charges to the whole run minus the workload's.
# Medians of RUNS. Needs root.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" offcpu "$@"

cd "$(dirname "$0")/.."
BUILD=${1:-build}
PERCH=$(realpath "$BUILD/perch")
RUNS=${RUNS:-3}
ROUNDS=${ROUNDS:-300000}
B=$(mktemp -d /tmp/perch-bench-offcpu.XXXXXX)
trap 'rm -rf "$B"' EXIT

gcc -O2 -Wall -Wextra -Werror -pthread -o "$B/pingpong" bench/pingpong.c
gcc -O2 -Wall -Wextra -Werror -o "$B/rusage" bench/rusage.c
command -v perf >/dev/null || echo "bench/offcpu.sh: no perf: its row is left out" >&2
OFFCPUTIME=$(command -v offcputime || true)
[ -n "$OFFCPUTIME" ] || echo "bench/offcpu.sh: no offcputime (apt install libbpf-tools): its row is left out" >&2
MIN_US=${MIN:-100}

# offcputime attaches to a running process: the workload waits 500 ms before its loop, the tool
# runs under rusage (its own CPU) until the workload is done
run_bcc() {
	"$B/pingpong" "$ROUNDS" 500 >"$B/out" &
	local pid=$!
	sleep 0.1
	"$B/rusage" "$B/ru" "$OFFCPUTIME" -p "$pid" -m "$MIN_US" >"$B/bcc.out" 2>&1 &
	local tool=$!
	wait "$pid"
	pkill -INT -P "$tool" || true # offcputime itself: rusage ignores SIGINT in the background
	wait "$tool" || true
	# the tool's own CPU, in the fields the other modes' total has
	sed 's/user_ms=/tool_user_ms=/; s/sys_ms=/tool_sys_ms=/' "$B/ru" >"$B/ru.tool"
	echo "$(cat "$B/out") user_ms=0 sys_ms=0 $(cat "$B/ru.tool")" >"$B/$1.$2"
}

run() { # MODE RUN: one run, its line to $B/MODE.RUN
	local cmd=()
	[ "$1" = bcc ] && {
		run_bcc "$@"
		return
	}
	case $1 in
	none) cmd=() ;;
	perch) cmd=("$PERCH" record -q -o "$B/rec.data" --) ;;
	offcpu) cmd=("$PERCH" record -q --off-cpu ${MIN:+--off-cpu-min="$MIN"} -o "$B/rec.data" --) ;;
	offspans) cmd=("$PERCH" record -q --off-cpu --timeline ${MIN:+--off-cpu-min="$MIN"} -o "$B/rec.data" --) ;;
	perf) cmd=(perf sched record -q -o "$B/perf.data" --) ;;
	esac
	"$B/rusage" "$B/ru" "${cmd[@]}" "$B/pingpong" "$ROUNDS" 500 >"$B/out" 2>/dev/null
	echo "$(cat "$B/out") $(cat "$B/ru")" >"$B/$1.$2"
}

modes="none perch offcpu offspans"
command -v perf >/dev/null && modes="$modes perf"
[ -n "$OFFCPUTIME" ] && modes="$modes bcc"
for r in $(seq "$RUNS"); do
	for m in $modes; do
		run "$m" "$r"
	done
done

# med MODE KEY: the median of KEY=V over the runs
med() { cat "$B/$1".* | tr ' ' '\n' | sed -n "s/^$2=//p" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

base=$(med none wall_ns)
echo "| mode | round trips/s | slowdown | workload CPU s | profiler CPU s |"
echo "|---|---:|---:|---:|---:|"
for m in $modes; do
	w=$(med "$m" wall_ns) c=$(med "$m" cpu_us) u=$(med "$m" user_ms) s=$(med "$m" sys_ms)
	tu=$(med "$m" tool_user_ms) ts=$(med "$m" tool_sys_ms)
	awk -v m="$m" -v w="$w" -v b="$base" -v c="$c" -v u="$u" -v s="$s" -v n="$ROUNDS" \
		-v tu="${tu:-0}" -v ts="${ts:-0}" -v min="$MIN_US" 'BEGIN {
		name["none"] = "unprofiled"; name["perch"] = "perch record (ticks only)"
		name["offcpu"] = "perch record --off-cpu"; name["perf"] = "perf sched record"
		name["offspans"] = "perch record --off-cpu --timeline"
		name["bcc"] = "offcputime -m " min " (libbpf-tools)"
		prof = m == "bcc" ? (tu + ts) / 1e3 : (u + s) / 1e3 - c / 1e6
		printf "| %s | %.0f | %+.1f %% | %.2f | %s |\n", name[m], n / (w / 1e9), 100 * (w - b) / b,
			c / 1e6, m == "none" ? "-" : sprintf("%.2f", prof < 0 ? 0 : prof)
	}'
done
