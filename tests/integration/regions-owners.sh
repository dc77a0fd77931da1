#!/usr/bin/env bash
# Region markers with more than one perch, on one process linked with libperch.so: a second perch
# attaching while another owns the region runtime is refused (one line on stderr, exit status 75)
# and leaves the first one's figures whole; a perch killed with SIGKILL does not lock the process
# out; a clean detach hands the runtime back.
#
#   tests/integration/regions-owners.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-owners "${1:-build}"

# batches_ok NAME REC: the "batch" regions of `regions loop` (200 ms, longer when the workload was
# preempted in its last tick: it measures its shortest and longest) are all there: their mean
# between the workload's shortest and longest batch (1 ms for the two clocks), and as many as fit
# in the recording at the longest, less the two it cuts (open at attach, open at the end)
batches_ok() {
	local name=$1 rec=$2 calls mean dur want lo hi
	lo=$(truth "$T/loop.truth" batch_min)
	hi=$(truth "$T/loop.truth" batch_max)
	calls=$(csv_all "$rec" batch 3)
	mean=$(csv_all "$rec" batch 6)
	dur=$(seconds "$rec")
	want=$(awk -v d="${dur:-0}" -v h="${hi:-1}" 'BEGIN { printf "%d", d / h - 2 }')
	if [ "${calls:-0}" -ge "$want" ] && [ "$want" -gt 0 ] &&
		awk -v m="${mean:-0}" -v l="${lo:-1}" -v h="${hi:-0}" 'BEGIN { exit !(m >= l - 0.001 && m <= h + 0.001) }'; then
		ok "$name: $calls batches (>= $want in $dur s), mean $mean s (the workload's $lo to $hi)"
	else
		bad "$name" "${calls:-?} batches (want >= $want in ${dur:-?} s), mean ${mean:-?} s (the workload's ${lo:-?} to ${hi:-?})"
	fi
}

"$WL/regions-so" loop 9 >"$T/loop.truth" &
wpid=$!
sleep 0.3

# ---- two perch on one process: the second is refused, the first's figures stay whole ---------
"$PERCH" record -q -p "$wpid" -d 3 -o "$T/first.data" 2>"$T/first.err" &
first=$!
sleep 1
"$PERCH" record -p "$wpid" -d 1 -o "$T/second.data" >"$T/second.out" 2>"$T/second.err"
rc=$?
lines=$(wc -l <"$T/second.err")
if [ $rc -eq 75 ] && [ "$lines" -eq 1 ] && grep -q "another perch (pid $first)" "$T/second.err"; then
	ok "second perch on one process: exit 75, one line: $(cat "$T/second.err")"
else
	bad "second perch" "exit $rc, $lines lines on stderr: $(head -3 "$T/second.err" | tr '\n' '|')"
fi
wait "$first"
rc=$?
[ $rc -eq 0 ] || bad "first perch" "exit $rc: $(cat "$T/first.err")"

# ---- a perch killed with SIGKILL leaves its claim behind: a live perch may take it over --------
"$PERCH" record -q -p "$wpid" -d 10 -o "$T/killed.data" 2>/dev/null &
killed=$!
sleep 1
kill -9 "$killed"
wait "$killed" 2>/dev/null
"$PERCH" record -q -p "$wpid" -d 1.5 -o "$T/after-kill.data" 2>"$T/after-kill.err"
kill_rc=$?

# ---- a clean detach hands the runtime back -------------------------------------------------------
"$PERCH" record -q -p "$wpid" -d 1.5 -o "$T/after-detach.data" 2>"$T/after-detach.err"
detach_rc=$?
wait "$wpid" # its truth: the batches' lengths

batches_ok "first perch keeps its figures (no new epoch, timing left on)" "$T/first.data"
if [ $kill_rc -eq 0 ]; then
	batches_ok "perch after a SIGKILLed one" "$T/after-kill.data"
else
	bad "perch after a SIGKILLed one" "exit $kill_rc: $(cat "$T/after-kill.err")"
fi
if [ $detach_rc -eq 0 ]; then
	batches_ok "perch after a clean detach" "$T/after-detach.data"
else
	bad "perch after a clean detach" "exit $detach_rc: $(cat "$T/after-detach.err")"
fi

it_end
