#!/usr/bin/env bash
# Nothing collected is lost when perch itself is killed with SIGKILL: the recording is readable,
# holds at least the samples of all but its last second, and the report says it did not finish.
# And the command perch launched dies with it (PR_SET_PDEATHSIG), within a second.
#
#   tests/integration/killed.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin killed "${1:-build}"

# The workload would run 30 s: perch must still be there when the kill comes, however late a
# loaded machine runs this script (a 3.5 s one had ended first once: nothing to kill); it dies
# with perch (PR_SET_PDEATHSIG), so the length costs nothing.
"$PERCH" record -q -o "$T/killed.data" -- "$WL/shares" 30 2>/dev/null >/dev/null &
ppid=$!
sleep 2.5
# the workload's own CPU time when perch dies (utime + stime of /proc/PID/stat, in clock ticks):
# on a loaded machine 2.5 s of wall time is much less CPU time, so the truth comes from it
wpid=$(pgrep -P "$ppid" | head -1)
wcpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' \
	"/proc/${wpid:-0}/stat" 2>/dev/null)
# the kill's moment on CLOCK_MONOTONIC, the recording's clock (python3's time.monotonic_ns)
killed_ns=$(python3 -c 'import time; print(time.monotonic_ns())')
kill -9 "$ppid" || bad "killed perch" "perch (pid $ppid) had exited before the kill"
wait "$ppid" 2>/dev/null
"$PERCH" report "$T/killed.data" >"$T/killed.txt" 2>"$T/err"
rc=$?
samples=$(rec_stat "$T/killed.data" sampled)
# perch loses at most the last second it held (docs/internals.md): the ticks of all but the last
# second of the workload's CPU time before the kill must be on disk (python3's start-up above runs
# after the CPU time was read, so it only adds time perch held)
mink=$(min_samples "$(awk -v c="${wcpu:-2.5}" 'BEGIN { c -= 1; print (c > 0 ? c : 0) }')" "$(freq "$T/killed.data")")
if [ $rc -eq 0 ] && grep -q "did not finish" "$T/killed.txt" && [ "${samples:-0}" -ge "${mink:-1}" ]; then
	ok "perch killed with SIGKILL: $samples samples readable (>= $mink: the workload had ${wcpu:-?} CPU s), report says it did not finish"
else
	bad "killed perch" "report exit $rc, samples ${samples:-?} (want >= ${mink:-?}): $(cat "$T/err")"
fi
# and its time axis reaches to within a second of the kill
end_ns=$(rec_stat "$T/killed.data" time_end_ns)
lost_ms=$(awk -v k="$killed_ns" -v e="${end_ns:-0}" 'BEGIN { printf "%d", (k - e) / 1e6 }')
if [ -n "$end_ns" ] && [ "$lost_ms" -le 1000 ]; then
	ok "killed perch: the recording's last window ends $lost_ms ms before the kill (<= 1000)"
else
	bad "killed perch" "the recording's last window ends ${lost_ms} ms before the kill (want <= 1000; time_end_ns '${end_ns}')"
fi

# the launched command dies with perch: gone (or a zombie for its new parent to reap) within 1 s
"$PERCH" record -q -o "$T/orphan.data" -- sleep 30 2>/dev/null >/dev/null &
ppid=$!
cpid=
for _ in $(seq 100); do # until the command has exec'd sleep
	cpid=$(pgrep -P "$ppid" -x sleep | head -1)
	[ -n "$cpid" ] && break
	sleep 0.05
done
kill -9 "$ppid"
wait "$ppid" 2>/dev/null
state=running
for i in $(seq 20); do
	st=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/${cpid:-0}/stat" 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] && { state="gone after $((i * 50)) ms"; break; }
	sleep 0.05
done
if [ -n "$cpid" ] && [ "$state" != running ]; then
	ok "perch killed with SIGKILL: its command (sleep 30, pid $cpid) $state"
else
	bad "orphan" "the command (pid '${cpid}') still runs 1 s after perch was killed"
	[ -n "$cpid" ] && kill -9 "$cpid"
fi

it_end
