#!/usr/bin/env bash
# Ctrl-C while attached: perch stops, exits 0 and leaves a complete recording.
#
#   tests/integration/sigint.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin sigint "${1:-build}"

"$WL/shares" 4 >/dev/null &
wpid=$!
sleep 0.2
"$PERCH" record -q -o "$T/int.data" -p "$wpid" 2>"$T/err" &
ppid=$!
sleep 1.5
kill -INT "$ppid"
wait "$ppid"
rc=$?
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
# complete: the recording has its end (a duration)
if [ $rc -eq 0 ] && [ -n "$(rec_stat "$T/int.data" duration_ns)" ]; then
	ok "Ctrl-C while attached: exit 0, recording complete"
else
	bad "Ctrl-C" "exit $rc: $(cat "$T/err")"
fi

it_end
