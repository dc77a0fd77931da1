#!/usr/bin/env bash
# What `perch record --gpu` costs a launch-bound program, on the CPU side (the part perch adds):
# tests/cuda/storm makes N launch calls round robin from 4 call sites through the injection
# library's callback path, against the STAND-IN libcupti (tests/cuda/fake_cupti.c: not a GPU,
# no driver; a real launch also spends the driver's own 2-5 us, which is not here). Per mode,
# RUNS runs, the median of the storm's own wall and CPU time per launch (its loop, timed by
# itself) and of perch's CPU time (its STATS), in one run of this script:
#
#   none        the stand-in alone: no injection library, no profiler
#   library     the injection library writing its channel to /dev/null, no perch (every call
#               calls the probe function, nobody is attached to it)
#   record      perch record (CPU sampling only)
#   every/trap  perch record --gpu --gpu-stacks=every, the uprobe on the probe's `ret`: an int3
#               trap per launch (PERCH_GPU_PROBE=trap; what every kernel before 6.16 does)
#   every/nop   the same on the probe's 5-byte NOP: Linux >= 6.16 turns it into a call to the
#               uprobe trampoline (the uprobe syscall), no trap
#   site        perch record --gpu (the default: each call site's stack once, re-checked every
#               1024th call, the other calls attributed to it in-process)
#
# Then the same with STORM_WORK_NS of CPU work per launch beside the call (WORK_NS, default
# 10000: a program making 100k launches/s), as a slowdown against `none`.
#
#   bash bench/gpu_storm.sh [BUILD_DIR]      env: RUNS (5), N (200000), WORK_NS (10000)
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" gpu-storm "$@"
BUILD=${1:-build}
RUNS=${RUNS:-5}
N=${N:-200000}
WORK_NS=${WORK_NS:-10000}
B=$(realpath "$BUILD")
STORM=$B/tests/cuda/storm
OUT=$B/bench/gpu_storm
die() {
	echo "gpu_storm: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (perch record)"
[ -x "$STORM" ] && [ -e "$B/libperch_cuda.so" ] || die "no $STORM or libperch_cuda.so (make cuda-fixtures)"
rm -rf "$OUT"
mkdir -p "$OUT"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
field() { sed -n "s/.* $1=\\([0-9]*\\).*/\\1/p" "$2"; }
stat() { "$B/perch" report --format=stats "$1" | sed -n "s/^$2 //p"; }

# one MODE RUN WORK: the storm once in MODE; appends "wall_ns cpu_ns perch_us lost" per launch
one() {
	local mode=$1 run=$2 work=$3 o=$OUT/${1//\//-}.$2.$3 env=(env LD_LIBRARY_PATH="$B/tests/cuda"
		HOST_SETTLE_MS=300 STORM_WORK_NS="$work")
	case $mode in
	none) "${env[@]}" "$STORM" "$N" >"$o.out" ;;
	library)
		"${env[@]}" CUDA_INJECTION64_PATH="$B/libperch_cuda.so" \
			PERCH_CUDA_FD="3:$(stat -L -c %d:%i /dev/null)" PERCH_CUDA_STACKS=every \
			"$STORM" "$N" >"$o.out" 3>/dev/null
		;;
	record) "${env[@]}" "$B/perch" record -q -o "$o.data" -- "$STORM" "$N" >"$o.out" ;;
	every/trap)
		"${env[@]}" PERCH_GPU_PROBE=trap "$B/perch" record -q --gpu --gpu-stacks=every \
			-o "$o.data" -- "$STORM" "$N" >"$o.out"
		;;
	every/nop)
		"${env[@]}" "$B/perch" record -q --gpu --gpu-stacks=every -o "$o.data" -- \
			"$STORM" "$N" >"$o.out"
		;;
	site) "${env[@]}" "$B/perch" record -q --gpu -o "$o.data" -- "$STORM" "$N" >"$o.out" ;;
	esac
	local perch_us=0 lost=0
	if [ -e "$o.data" ]; then
		perch_us=$(($(stat "$o.data" perch_user_us) + $(stat "$o.data" perch_sys_us)))
		lost=$(stat "$o.data" gpu_launch_stacks_lost)
	fi
	echo "$(field wall_ns "$o.out") $(field cpu_ns "$o.out") $perch_us ${lost:-0}" >>"$OUT/${mode//\//-}.$work"
}

MODES=(none library record every/trap every/nop site)
for work in 0 "$WORK_NS"; do
	for run in $(seq "$RUNS"); do # modes interleaved: a noisy minute hits them all
		for mode in "${MODES[@]}"; do
			one "$mode" "$run" "$work"
		done
	done
done

col() { awk -v c="$1" -v n="$N" '{ print $c / n }' "$2" | median; } # ns per launch
echo "## GPU launch storm (bench/gpu_storm.sh, stand-in CUPTI: not a GPU)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); kernel $(uname -r); $(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p' | head -1)"
echo "- $N launch calls from 4 call sites per run, median of $RUNS runs (modes interleaved)"
echo
echo "| mode | wall ns/launch | CPU ns/launch | added CPU ns/launch | at 100k launches/s | perch CPU ms/run | stacks lost |"
echo "|---|---|---|---|---|---|---|"
base=$(col 2 "$OUT/none.0")
for mode in "${MODES[@]}"; do
	f=$OUT/${mode//\//-}.0
	cpu=$(col 2 "$f")
	awk -v m="$mode" -v w="$(col 1 "$f")" -v c="$cpu" -v b="$base" \
		-v p="$(awk '{ print $3 }' "$f" | median)" -v l="$(awk '{ print $4 }' "$f" | median)" \
		'BEGIN { printf "| %s | %.0f | %.0f | %+.0f | %+.1f %% | %.0f | %d |\n", m, w, c, c - b, (c - b) / 100, p / 1000, l }'
done
echo
echo "With ${WORK_NS} ns of CPU work per launch beside the call (a program at $((1000000000 / WORK_NS)) launches/s):"
echo
echo "| mode | wall ns/launch | CPU ns/launch | slowdown (CPU) | slowdown (wall) |"
echo "|---|---|---|---|---|"
bw=$(col 1 "$OUT/none.$WORK_NS")
bc=$(col 2 "$OUT/none.$WORK_NS")
for mode in "${MODES[@]}"; do
	f=$OUT/${mode//\//-}.$WORK_NS
	awk -v m="$mode" -v w="$(col 1 "$f")" -v c="$(col 2 "$f")" -v bw="$bw" -v bc="$bc" \
		'BEGIN { printf "| %s | %.0f | %.0f | %+.1f %% | %+.1f %% |\n", m, w, c, 100 * (c - bc) / bc, 100 * (w - bw) / bw }'
done
echo
echo "'added' is against 'none'; 'at 100k launches/s' is that CPU time over the 10 us a launch has"
echo "at that rate. The storm's CPU time includes the uprobe and BPF work done in its context;"
echo "perch's own CPU (reading the channel and the launch ring) is the column beside it."
