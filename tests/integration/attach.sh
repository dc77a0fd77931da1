#!/usr/bin/env bash
# perch record -p PID -d SECONDS on a running tests/workloads/shares: the same shares as when
# launched, and a recording that says it attached and how long it ran, and names the process by
# its command line without the blanks that end it.
#
#   tests/integration/attach.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin attach "${1:-build}"

# the workload runs on after perch stops, to print its measures
# (its command line ends in blank arguments, as a program that rewrites its argv pads it: postgres)
"$WL/shares" 3.8 "pad   " "" "" >"$T/attach.truth" &
wpid=$!
sleep 0.3
"$PERCH" record -q -o "$T/attach.data" -p "$wpid" -d 3 2>"$T/err"
rc=$?
wait "$wpid" 2>/dev/null
if [ $rc -ne 0 ]; then
	bad "attach shares" "perch exited $rc: $(cat "$T/err")"
else
	folded "$T/attach.data" >"$T/attach.folded"
	check_shares "attach shares" "$T/attach.folded" "$T/attach.truth"
	mode=$(rec_stat "$T/attach.data" mode)
	dur=$(rec_stat "$T/attach.data" duration_ns)
	if [ "$mode" = attach ] && [ -n "$dur" ]; then
		ok "attach: the recording says mode attach and has a duration ($dur ns)"
	else
		bad "attach header" "mode '$mode' (want attach), duration_ns '$dur'"
	fi
	cmd=$("$PERCH" report --format=stats "$T/attach.data" | sed -n 's/^command //p')
	if [ "$cmd" = "$WL/shares 3.8 pad" ]; then
		ok "attach: the command line, trailing blanks and NULs trimmed: '$cmd'"
	else
		bad "attach command" "'$cmd' (want '$WL/shares 3.8 pad')"
	fi
fi

# -p on an idle parent whose child burns: no samples (perch follows the PID's threads, as perf
# record -p), and one note names the child and what to do
bash -c '"$1" 3 >/dev/null & wait' _ "$WL/shares" &
parent=$!
sleep 0.3
child=$(pgrep -P "$parent" | head -1)
"$PERCH" record -o "$T/idle.data" -p "$parent" -d 1 >/dev/null 2>"$T/idle.err"
kill "$child" "$parent" 2>/dev/null
wait "$parent" 2>/dev/null
if [ -n "$child" ] && [ "$(rec_stat "$T/idle.data" sampled)" = 0 ] &&
	[ "$(grep -c "no samples: $parent was idle.*($child).*give their PIDs, or -a" "$T/idle.err")" = 1 ]; then
	ok "attach to an idle parent: 0 samples and one note naming its child $child"
else
	bad "idle parent" "child '$child', sampled $(rec_stat "$T/idle.data" sampled): $(tr '\n' '|' <"$T/idle.err")"
fi

it_end
