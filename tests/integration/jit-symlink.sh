#!/usr/bin/env bash
# A perf map that is a symlink to another file is not read (issue 10). The file names every user
# address: read, it would name every JIT frame, and its text would be in the recording.
#
#   tests/integration/jit-symlink.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin jit-symlink "${1:-build}"

printf '0 7fffffffffff secret_of_the_host\n' >"$T/secret.map"
chmod 600 "$T/secret.map"
jit_launch symlink jit "symlink=$T/secret.map"
copied=$(grep -c secret_of_the_host "$T/symlink.data" "$T/symlink.folded" | awk -F: '{ s += $2 } END { print s + 0 }')
an=$(anon "$T/symlink.folded")
if [ "$copied" -eq 0 ] && awk -v a="$an" 'BEGIN { exit !(a >= 50) }'; then
	ok "symlinked map: not read (its text in the recording $copied times; [anon] frames on $an %)"
else
	bad "symlinked map" "its text in the recording or report $copied times (want 0); [anon] frames on $an % (want >= 50)"
fi

it_end
