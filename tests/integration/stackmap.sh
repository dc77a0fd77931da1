#!/usr/bin/env bash
# The sampler's stack maps are sized to the run: the kernel's stack map refuses a stack whose hash
# bucket another holds (lost_user_stack_map_full, "[no stack]" when the tick kept neither stack),
# so the loss is about the share of buckets in use. Each map has 64 buckets per stack a drain
# period can bring (two a tick: user and kernel; ticks: possible CPUs x 997 Hz x 100 ms), up to
# 16384. Read from perch's own file descriptors (/proc/PID/fdinfo: map_type 7 is a stack map)
# while it records. And the samples that kept no stack are counted as folded shows them.
#
#   tests/integration/stackmap.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin stackmap "${1:-build}"

cpus=$(awk -F, '{ n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1); delete r } print n }' /sys/devices/system/cpu/possible)
want=$(awk -v c="$cpus" 'BEGIN { t = c * 997 * 0.1 * 2 * 64; n = 1024; while (n < t && n < 16384) n *= 2; print n }')
"$PERCH" record -q -F 997 --unwind=fp -o "$T/s.data" -- "$WL/forks" 1.5 >/dev/null 2>"$T/s.err" &
ppid=$!
sizes=
for _ in $(seq 30); do # until perch has loaded its maps
	sleep 0.05
	sizes=$(grep -l '^map_type:[[:space:]]*7$' /proc/$ppid/fdinfo/* 2>/dev/null |
		xargs -r awk '$1 == "max_entries:" { print $2 }' | sort -u | paste -sd' ')
	[ -n "$sizes" ] && break
done
wait $ppid || bad "record" "$(cat "$T/s.err")"
if [ "$sizes" = "$want" ]; then
	ok "stack maps: $sizes entries ($cpus possible CPUs at 997 Hz: want $want)"
else
	bad "stack maps" "entries '$sizes', want $want ($cpus possible CPUs at 997 Hz)"
fi
nostack=$(folded "$T/s.data" | awk '/;\[no stack\] [0-9]+$/ { s += $NF } END { print s + 0 }')
counted=$(rec_stat "$T/s.data" samples_without_stack)
if [ "${counted:-0}" -eq "$nostack" ]; then
	ok "samples without stack: ${counted:-0} counted, $nostack shown as [no stack]"
else
	bad "samples without stack" "${counted:-0} counted, $nostack shown as [no stack]"
fi

it_end
