#!/usr/bin/env bash
# A shell that burns, then execs the workload: samples named bash, then shares, as they were.
# And what perch's forked child runs before its exec is perch's code, not the command's: a PATH of
# 40000 missing folders makes execvp's search take tens of ms (measured here, outside perch); its
# ticks are left out and counted (pre_exec_ticks_left_out), never shown as perch;...;execve.
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

# the search's CPU time outside perch: what perch's child spends before its exec
path=$(printf '/n:%.0s' $(seq 40000))/usr/bin:/bin
search_s=$( { TIMEFORMAT='%3U %3S'; time PATH=$path /usr/bin/env true; } 2>&1 | awk '{ print $1 + $2 }')
env PATH="$path" "$PERCH" record -q -F 997 -o "$T/preexec.data" -- true 2>"$T/preexec.err" ||
	bad "pre-exec: record" "$(cat "$T/preexec.err")"
left=$(rec_stat "$T/preexec.data" pre_exec_ticks_left_out)
nperch=$(folded "$T/preexec.data" | awk '$1 ~ /^perch;/ { s += $NF } END { print s + 0 }')
want=$(awk -v s="$search_s" 'BEGIN { printf "%d", s * 997 }')
# left out: about the search's ticks (Poisson, and the search timed in another process: a factor 3)
if [ "$nperch" -eq 0 ] && [ "${left:-0}" -ge 1 ] && [ "${left:-0}" -ge $((want / 3)) ] &&
	[ "${left:-0}" -le $((want * 3 + 10)) ]; then
	ok "pre-exec: no samples named perch; $left ticks before the exec left out and counted (the search's ${search_s}s outside perch: ~$want at 997 Hz)"
else
	bad "pre-exec" "$nperch samples named perch, ${left:-no} pre_exec_ticks_left_out (the search's ${search_s}s outside perch: ~$want at 997 Hz)"
fi

it_end
