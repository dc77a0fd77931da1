#!/usr/bin/env bash
# What walking CPython's frames costs, and what it shows, on tests/workloads/pyshare.py (Debian's
# python3.11: pure-Python loops, zlib under a Python function, a 40-deep recursion) as a Markdown
# table.
#
#   bash bench/python.sh [BUILD]     BUILD: the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), SEC (the workload's seconds, default 4)
#
# Each round runs the workload unprofiled; under `perch record --no-python` (native frames only:
# the tick program as it was before the walk); under `perch record` (every tick also walks the
# thread's Python frames); and under Debian's Austin (a Python-only sampler), when installed. The
# tick program's own time per run is perch's STATS (bpf_tick_run_time_ns over bpf_tick_run_count,
# from the kernel's bpf_stats); perch's CPU is what bench/rusage.c charges to the whole run less
# the workload's own CPU (the workload prints its process time). The Python functions' shares
# (of all samples, each function with what it calls) sit beside the shares the workload measured
# of itself with time.thread_time(). Medians of RUNS (the tick program's with its range: it moves
# with what else the VM runs). Needs root.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" python "$@"

cd "$(dirname "$0")/.."
BUILD=${1:-build}
PERCH=$(realpath "$BUILD/perch")
RUNS=${RUNS:-3}
SEC=${SEC:-4}
PY=/usr/bin/python3.11
WORK=tests/workloads/pyshare.py
B=$(mktemp -d /tmp/perch-bench-python.XXXXXX)
# the kernel's BPF run-time statistics for the run (perch records them), restored on exit
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$B"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1
gcc -O2 -Wall -Wextra -Werror -o "$B/rusage" bench/rusage.c
FUNCS="work_a work_b work_c work_z rec"

stat_of() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2 }'; }

# shares FOLDED: "a b c z rec", each function's percent of the samples (with what it calls)
shares() {
	awk -v fs="$FUNCS" 'BEGIN { n = split(fs, f, " ") }
		{ c = $NF; all += c; for (i = 1; i <= n; i++) if (index($0, ";" f[i] ";") || $0 ~ ";" f[i] " [0-9]+$") hit[i] += c }
		END { for (i = 1; i <= n; i++) printf "%.1f ", all ? 100 * hit[i] / all : 0 }' "$1"
}

run() { # MODE RUN: one run, "key=value ..." to $B/MODE.RUN
	local out="$B/$1.$2" cmd=()
	case $1 in
	none) cmd=() ;;
	native) cmd=("$PERCH" record -q --no-python -o "$B/rec.data" --) ;;
	python) cmd=("$PERCH" record -q -o "$B/rec.data" --) ;;
	esac
	"$B/rusage" "$B/ru" "${cmd[@]}" "$PY" "$WORK" "$SEC" >"$B/truth" 2>/dev/null
	local cpu
	cpu=$(awk '$2 == "cpu" { print $3 }' "$B/truth")
	echo "$(cat "$B/ru") wl_cpu_s=$cpu" >"$out"
	if [ "$1" != none ]; then
		echo "bpf_ns=$(stat_of "$B/rec.data" bpf_tick_run_time_ns) bpf_runs=$(stat_of "$B/rec.data" bpf_tick_run_count) samples=$(stat_of "$B/rec.data" samples)" >>"$out"
		"$PERCH" report --format=folded "$B/rec.data" >"$B/folded"
		echo "shares=$(shares "$B/folded" | tr ' ' ,)" >>"$out"
	fi
	echo "truth=$(for f in $FUNCS; do awk -v f="$f" '$2 == f { a = $3 } $2 == "cpu" { c = $3 } END { printf "%.1f,", 100 * a / c }' "$B/truth"; done)" >>"$out"
}

for r in $(seq "$RUNS"); do
	for m in none native python; do
		run "$m" "$r"
	done
done

# med MODE KEY: the median of KEY=V over the runs
med() { cat "$B/$1".* | tr ' ' '\n' | sed -n "s/^$2=//p" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
last() { tr ' ' '\n' <"$B/$1.$RUNS" | sed -n "s/^$2=//p" | tr ',' ' '; }

echo "| mode | tick program per run, median (min-max) | perch CPU per s of run | samples | work_a / b / c / z / rec (% of samples) |"
echo "|---|---:|---:|---:|---|"
echo "| the workload's own clocks (thread_time) | - | - | - | $(last python truth | awk '{ printf "%s / %s / %s / %s / %s", $1, $2, $3, $4, $5 }') |"
for m in native python; do
	per=$(for f in "$B/$m".*; do tr ' ' '\n' <"$f" | awk -F= '$1 == "bpf_ns" { n = $2 } $1 == "bpf_runs" { r = $2 } END { if (r) printf "%.2f\n", n / r / 1e3 }'; done | sort -g | awk '{ v[NR] = $1 } END { printf "%s µs (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }')
	awk -v m="$m" -v per="$per" -v u="$(med "$m" user_ms)" \
		-v s="$(med "$m" sys_ms)" -v wl="$(med "$m" wl_cpu_s)" -v wall="$(med "$m" wall_ms)" \
		-v n="$(med "$m" samples)" -v sh="$(last "$m" shares)" 'BEGIN {
		name["native"] = "perch record --no-python"; name["python"] = "perch record"
		split(sh, v, " ")
		prof = (u + s) / 1e3 - wl
		printf "| %s | %s | %.2f %% | %d | %s / %s / %s / %s / %s |\n", name[m],
			per, 100 * (prof < 0 ? 0 : prof) / (wall / 1e3), n,
			v[1], v[2], v[3], v[4], v[5]
	}'
done
if command -v austin >/dev/null; then
	if timeout 30 austin -s -i 1000 -o "$B/austin.out" "$PY" "$WORK" 1 >/dev/null 2>"$B/austin.err" &&
		[ -s "$B/austin.out" ]; then
		echo "| austin -s -i 1000 ($(austin --version 2>&1 | head -1)) | - | - | - | ran: see bench/python.sh |"
	else
		echo "| austin -s -i 1000 ($(austin --version 2>&1 | head -1)) | - | - | - | no samples: \"$(head -1 "$B/austin.err")\" |"
	fi
fi
