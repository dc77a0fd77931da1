#!/usr/bin/env bash
# A region runtime turned hostile (tests/workloads/hostile-regions: after real use of the region
# API it corrupts its thread block, its timeline ring, the thread list (thousands of fake blocks
# that come back on themselves) and its control log, and floods marks, steps and names).
# Recorded with and without --timeline: perch exits with its usual status (the workload's, 0),
# the recording loads with exit 0 and counts what perch refused, the region the program kept
# using shows the calls it made, and perch's peak RSS stays under 200 MB (ru_maxrss of the
# recording's processes, measured by a wrapper: the workload's is far smaller).
#
#   tests/integration/hostile-regions.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin hostile-regions "${1:-build}"

MAX_RSS_KB=$((200 * 1024))

# record NAME OPTS...: perch record of the workload under a wrapper that writes the peak RSS
# (KiB) of what it ran to $T/NAME.rss; perch's exit status
record() {
	local name=$1
	shift
	python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$T/$name.rss" "$PERCH" record -q "$@" -o "$T/$name.data" -- "$WL/hostile-regions" 700 \
		>"$T/$name.truth" 2>"$T/$name.err"
}

for mode in plain timeline; do
	opts=()
	[ "$mode" = timeline ] && opts=(--timeline)
	record "$mode" "${opts[@]}"
	rc=$?
	rss=$(cat "$T/$mode.rss" 2>/dev/null || echo 0)
	if [ $rc -eq 0 ] && [ "$rss" -gt 0 ] && [ "$rss" -lt "$MAX_RSS_KB" ]; then
		ok "$mode: perch exits 0 as its command did; peak RSS $((rss / 1024)) MB (< 200 MB)"
	else
		bad "$mode record" "exit $rc, peak RSS ${rss} KiB: $(head -3 "$T/$mode.err")"
	fi
	"$PERCH" report "$T/$mode.data" >"$T/$mode.txt" 2>"$T/$mode.rerr"
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qi damaged "$T/$mode.rerr" "$T/$mode.txt"; then
		ok "$mode: the recording loads whole (perch report exits 0)"
	else
		bad "$mode report" "exit $rc: $(head -3 "$T/$mode.rerr")"
	fi
	"$PERCH" report --format=stats "$T/$mode.data" >"$T/$mode.stats"
	keys="region_thread_list_cycles region_threads_refused region_control_refused"
	[ "$mode" = timeline ] && keys="$keys region_spans_refused"
	refused=""
	for k in $keys; do
		awk -v k="$k" '$1 == k && $2 > 0 { f = 1 } END { exit !f }' "$T/$mode.stats" ||
			refused="$refused $k"
	done
	if [ -z "$refused" ] && grep -q "region thread blocks refused" "$T/$mode.txt"; then
		ok "$mode: what perch refused is counted in the recording and noted in the report"
	else
		bad "$mode counts" "not counted:$refused"
	fi
	want=$(awk '$1 == "truth" && $2 == "good_calls" { print $3 }' "$T/$mode.truth")
	got=$("$PERCH" report --format=csv "$T/$mode.data" |
		awk -F, '$1 == "good" && $2 == "" && $12 == "" { print $3; exit }')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		ok "$mode: region good shows the workload's $want calls"
	else
		bad "$mode good" "region good has '$got' calls, the workload made '$want'"
	fi
done

it_end
