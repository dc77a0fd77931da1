#!/usr/bin/env bash
# perch record -p A,B: two processes at once, each on the share of the samples its CPU time gives;
# perch stops when both have exited.
#
#   tests/integration/attach-two.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin attach-two "${1:-build}"

"$WL/shares" 3 >"$T/twoa.truth" &
apid=$!
"$WL/recursion" 3 >"$T/twob.truth" &
bpid=$!
sleep 0.2
"$PERCH" record -q -o "$T/two.data" -p "$apid,$bpid" 2>"$T/err"
rc=$?
wait "$apid" "$bpid" 2>/dev/null
folded "$T/two.data" >"$T/two.folded"
sa=$(share "$T/two.folded" work_a)
sp=$(share "$T/two.folded" ping)
# both ran the same span; each one's share of the samples is its share of the two's CPU time
both=$(awk -v a="$(truth "$T/twoa.truth" cpu)" -v b="$(truth "$T/twob.truth" cpu)" 'BEGIN { print a + b }')
ea=$(pct "$(truth "$T/twoa.truth" work_a)" "$both")
ep=$(pct "$(truth "$T/twob.truth" cpu)" "$both")
if [ $rc -eq 0 ] && within "$sa" "$ea" 5 && within "$sp" "$ep" 5; then
	ok "attach -p A,B: work_a $sa % (workloads' clocks $ea), ping $sp % ($ep); stopped when both exited"
else
	bad "attach two" "exit $rc, work_a $sa % (workloads' clocks $ea), ping $sp % ($ep): $(cat "$T/err")"
fi

it_end
