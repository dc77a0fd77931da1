#!/usr/bin/env bash
# What perch must never do to the user's command: CMD runs with the user's limits, not the
# descriptor limit perch raises for itself.
#
#   tests/integration/cmd-limits.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin cmd-limits "${1:-build}"

hard=$(ulimit -Hn)
[ "$hard" = unlimited ] && hard=1048576
soft=$((hard > 1024 ? 1024 : hard / 2))
limits='ulimit -Sn; ulimit -Hn; ulimit -Sa; ulimit -Ha'
want=$(ulimit -Sn "$soft" && sh -c "$limits")
got=$(ulimit -Sn "$soft" && "$PERCH" record -q -o "$T/limit.data" -- sh -c "$limits" 2>"$T/err")
# shellcheck disable=SC2086 # the limits on one line
if [ "$got" = "$want" ]; then
	ok "record -- CMD: CMD's limits are the user's (open files $(echo $want | cut -d' ' -f1-2), and every other)"
else
	bad "record -- CMD limits" "CMD saw '$(echo $got | cut -c1-200)', the user has '$(echo $want | cut -c1-200)' $(cat "$T/err")"
fi

it_end
