#!/usr/bin/env bash
# Integration tests of region markers with more than one perch: a second perch attaching to a
# process whose region runtime another perch owns is refused (one line on stderr, exit status
# 75) and leaves the first one's figures whole; a perch killed with SIGKILL does not lock the
# process out; a clean detach hands the runtime back. And past the runtime's limits (names,
# depth): counted apart and said, never credited to another name. Needs root and BPF.
#
#   tests/integration-regions.sh [BUILD_DIR]
set -u
. "$(dirname "$0")/lib.sh"
it_begin integration-regions "${1:-build}"

# csv_all REC NAME COLUMN: the all-threads row's COLUMN (3 calls, 6 mean_s) for region NAME
csv_all() { "$PERCH" report --format=csv "$1" | awk -F, -v n="$2" -v c="$3" '$1 == n && $2 == "" { print $c }'; }
# duration REC: the recording's duration in seconds
duration() { "$PERCH" report "$1" | sed -n 's/^duration *\([0-9.]*\) s.*/\1/p'; }
# batches_ok NAME REC: the 200 ms "batch" regions of `regions loop` are all there: mean 0.2 s, and
# as many as fit in the recording, less the two it cuts (open at attach, open at the end)
batches_ok() {
	local name=$1 rec=$2 calls mean dur want
	calls=$(csv_all "$rec" batch 3)
	mean=$(csv_all "$rec" batch 6)
	dur=$(duration "$rec")
	want=$(awk -v d="${dur:-0}" 'BEGIN { printf "%d", d / 0.2 - 2 }')
	if [ "${calls:-0}" -ge "$want" ] && [ "$want" -gt 0 ] && within "${mean:-0}" 0.2 0.01; then
		ok "$name: $calls batches (>= $want in $dur s), mean $mean s (the workload's 0.2)"
	else
		bad "$name" "${calls:-?} batches (want >= $want in ${dur:-?} s), mean ${mean:-?} s (want 0.2)"
	fi
}

"$WL/regions-so" loop 9 >/dev/null &
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
batches_ok "first perch keeps its figures (no new epoch, timing left on)" "$T/first.data"

# ---- a perch killed with SIGKILL leaves its claim behind: a live perch may take it over --------
"$PERCH" record -q -p "$wpid" -d 10 -o "$T/killed.data" 2>/dev/null &
killed=$!
sleep 1
kill -9 "$killed"
wait "$killed" 2>/dev/null
"$PERCH" record -q -p "$wpid" -d 1.5 -o "$T/after-kill.data" 2>"$T/after-kill.err"
rc=$?
if [ $rc -eq 0 ]; then
	batches_ok "perch after a SIGKILLed one" "$T/after-kill.data"
else
	bad "perch after a SIGKILLed one" "exit $rc: $(cat "$T/after-kill.err")"
fi

# ---- a clean detach hands the runtime back -------------------------------------------------------
"$PERCH" record -q -p "$wpid" -d 1.5 -o "$T/after-detach.data" 2>"$T/after-detach.err"
rc=$?
if [ $rc -eq 0 ]; then
	batches_ok "perch after a clean detach" "$T/after-detach.data"
else
	bad "perch after a clean detach" "exit $rc: $(cat "$T/after-detach.err")"
fi
wait "$wpid"

# ---- past the runtime's limits: 4106 names (10 beyond the table), nesting 70 deep --------------
# (the table's 4096th name is name_4094: "nest" came first)
"$PERCH" record -q -o "$T/limits.data" -- "$WL/regions" limits 2>"$T/err" || bad "limits" "perch failed: $(cat "$T/err")"
last=$(csv_all "$T/limits.data" name_4094 3)
beyond=$(csv_all "$T/limits.data" "[region names beyond the runtime's table]" 3)
nest=$(csv_all "$T/limits.data" nest 3)
"$PERCH" report "$T/limits.data" >"$T/limits.txt"
if [ "${last:-}" = 1 ] && [ "${beyond:-}" = 10 ] && [ "${nest:-}" = 64 ] &&
	grep -q "^  10 region calls had names beyond the 4096" "$T/limits.txt" &&
	grep -q "^  6 region begins and marks were nested deeper than the 64" "$T/limits.txt"; then
	ok "limits: the 4096th name 1 call, the 10 names beyond it counted apart, 64 of 70 nested levels timed, 6 counted; both said in the notes"
else
	bad "limits" "name_4094 ${last:-?} calls (want 1), beyond ${beyond:-?} (want 10), nest ${nest:-?} (want 64); notes: $(grep -c 'beyond the 4096\|deeper than the 64' "$T/limits.txt")"
fi

it_end
