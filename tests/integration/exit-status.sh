#!/usr/bin/env bash
# perch record -- CMD exits with CMD's status: its code, or 128 + the signal that killed it.
#
#   tests/integration/exit-status.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin exit-status "${1:-build}"

"$PERCH" record -q -o "$T/x.data" -- sh -c 'exit 3' 2>/dev/null
rc=$?
if [ $rc -eq 3 ]; then
	ok "exit status: CMD's 3 passed through"
else
	bad "exit status" "got $rc, want 3"
fi
# shellcheck disable=SC2016 # the script sh -c runs
"$PERCH" record -q -o "$T/x.data" -- sh -c 'kill -9 $$' 2>/dev/null
rc=$?
if [ $rc -eq 137 ]; then
	ok "exit status: CMD killed by SIGKILL gives 137"
else
	bad "killed status" "got $rc, want 137"
fi

it_end
