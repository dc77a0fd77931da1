#!/usr/bin/env bash
# A shell that burns, then execs the workload: samples named bash, then shares, as they were.
#
#   tests/integration/exec-name.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin exec-name "${1:-build}"

# shellcheck disable=SC2016 # the script bash -c runs
launch shexec -- bash -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done; exec "$0" 1' "$WL/shares"
# the exec keeps the process's CPU clock: what shares' functions did not burn, bash did
eshares=$(pct "$(awk '$1 == "truth" && $2 ~ /^work_/ { s += $3 } END { printf "%.9f", s }' "$T/shexec.truth")" "$(truth "$T/shexec.truth" cpu)")
sbash=$(rooted "$T/shexec.folded" bash)
sshares=$(rooted "$T/shexec.folded" shares)
if within "$sshares" "$eshares" 3 && within "$sbash" "$(awk -v e="$eshares" 'BEGIN { print 100 - e }')" 3; then
	ok "exec renames: samples named shares $sshares % (its functions' CPU time $eshares %, +-3), bash $sbash %"
else
	bad "exec renames" "samples named shares $sshares % (its functions' CPU time $eshares %, +-3), bash $sbash %"
fi

it_end
