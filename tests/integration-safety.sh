#!/usr/bin/env bash
# Integration tests of what perch must never do to the user's system or command: hand CMD its own
# raised limits, hang or eat memory on a file that is not a recording. Needs root (perch record).
#
#   tests/integration-safety.sh [BUILD_DIR]
set -u
. "$(dirname "$0")/lib.sh"
it_begin integration-safety "${1:-build}"

# ---- CMD runs with the user's limits, not the descriptor limit perch raises for itself -------
hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
soft=$((hard > 1024 ? 1024 : hard / 2))
limits='ulimit -Sn; ulimit -Hn; ulimit -Sa; ulimit -Ha'
want=$(ulimit -Sn "$soft" && sh -c "$limits")
got=$(ulimit -Sn "$soft" && "$PERCH" record -q -o "$T/limit.data" -- sh -c "$limits" 2>"$T/err")
if [ "$got" = "$want" ]; then
	ok "record -- CMD: CMD's limits are the user's (open files $(echo $want | cut -d' ' -f1-2), and every other)"
else
	bad "record -- CMD limits" "CMD saw '$(echo $got | cut -c1-200)', the user has '$(echo $want | cut -c1-200)' $(cat "$T/err")"
fi

# ---- report refuses what is not a recording file, at once ------------------------------------
start=$(date +%s)
timeout 10 "$PERCH" report /dev/zero >/dev/null 2>"$T/err"
rc=$?
if [ $rc -eq 66 ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then
	ok "report /dev/zero: exit 66 in $(($(date +%s) - start)) s, one line: $(cat "$T/err")"
else
	bad "report /dev/zero" "exit $rc (66 wanted; 124: still reading after 10 s): $(head -c 300 "$T/err")"
fi

it_end
