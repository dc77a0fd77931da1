#!/usr/bin/env bash
# The GPU test of issue 13: tests/gpu/spin.cu on a real GPU with the real CUPTI, through the
# injection library (libperch_cuda.so) and its channel, read back by tests/cuda/dump. Says
# "skipped: no GPU" and passes where there is none (CI, the build machine).
#
#   tests/gpu/run.sh [BUILD_DIR]
#
# Checked here (against what spin.cu's kernels do: they spin on %globaltimer for a set time):
# kernel counts and durations (+-5 %), copies and their bytes, the graph's 40 kernels under 10
# correlation ids, every launch joined and no activity without one, no dropped records, all
# times on CLOCK_MONOTONIC (within the run). NOT yet: the CPU stack and region of each launch
# (perch record --gpu and the uprobe on perch_cuda_launch), GPU time per region, the Chrome
# flows, the overhead goal -- the later steps of issue 13.
set -u
BUILD=$(realpath "${1:-build}")
ROOT=$(realpath "$(dirname "$0")/../..")

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "skipped: no GPU"
	exit 0
fi
make -C "$ROOT" --no-print-directory BUILD="$BUILD" gpu-workloads >/dev/null || exit 1
T=$(mktemp -d /tmp/perch-gpu.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
expect() { # expect DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

CUDA_INJECTION64_PATH="$BUILD/libperch_cuda.so" PERCH_CUDA_FD=3 "$BUILD/gpu/spin" >"$T/out" 3>"$T/bin"
rc=$?
if grep -q '^skipped: no GPU' "$T/out"; then
	cat "$T/out"
	exit 0
fi
expect "spin runs with the injection library (exit $rc)" [ $rc -eq 0 ]
"$BUILD/tests/cuda/dump" "$T/bin" >"$T/dump"
expect "the channel reads to its end" [ $? -eq 0 ]
grep '^note ' "$T/dump" | sed 's/^/  /'
expect "CUPTI took the CLOCK_MONOTONIC callback" grep -q '^clock .* detail=1 ' "$T/dump"

# kernel NAME CALLS NS: that many kernels whose name contains NAME, each NS long +-5 %
kernel() {
	awk -v name="$1" -v calls="$2" -v ns="$3" '
	/^kernel / && $0 ~ "name=[^ ]*" name {
		split($3, s, "="); split($4, e, "="); d = e[2] - s[2]; n++
		if (d < ns * 0.95 || d > ns * 1.05) { bad++; if (bad < 4) print "  " name " took " d " ns" }
	}
	END { if (n != calls) print "  " name ": " n " kernels, expected " calls; exit !(n == calls && !bad) }' "$T/dump"
}
for k in "spin_a 50 2000000" "spin_b 20 5000000" "graph_node 40 1000000"; do
	# shellcheck disable=SC2086 # three words
	expect "kernel ${k%% *}: count and duration within 5 %" kernel $k
done
n=$(grep -c '^kernel .*name=[^ ]*empty' "$T/dump")
expect "storm: 100000 kernels (saw $n)" [ "$n" -eq 100000 ]
ids=$(grep '^kernel .*name=[^ ]*graph_node' "$T/dump" | sed 's/.*corr=\([0-9]*\).*/\1/' | sort -u | wc -l)
expect "graph: 40 kernels under 10 correlation ids (saw $ids)" [ "$ids" -eq 10 ]
for dir in 1 2; do
	expect "copy direction $dir: 64 MiB" grep -q "^memcpy .* bytes=67108864 .* detail=$dir " "$T/dump"
done
j=$(grep '^join ' "$T/dump")
echo "  $j"
case " $j " in
*" activities_unmatched=0 "*" dropped=0 "*) ok "every activity joined to its launch, none dropped" ;;
*) bad "unjoined or dropped activity" ;;
esac
# The four launches made while capturing the graph are recorded, not run: they run as its nodes,
# under the graph launches' ids. Every other launch ran.
case " $j " in
*" launches_unmatched=4 "*) ok "every launch ran but the 4 captured into the graph" ;;
*) bad "launches with no activity: not the 4 captured ones" ;;
esac
# spin's own CLOCK_MONOTONIC before and after: every GPU time between them
t0=$(sed -n 's/^truth t0=//p' "$T/out")
t1=$(sed -n 's/^truth t1=//p' "$T/out")
late=$(awk -v t0="$t0" -v t1="$t1" '/^(kernel|memcpy) / { split($3, s, "="); split($4, e, "=")
	if (s[2] < t0 || e[2] > t1) n++ } END { print n + 0 }' "$T/dump")
expect "GPU times on CLOCK_MONOTONIC, within the run ($late outside)" [ "$late" -eq 0 ]

echo "gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
