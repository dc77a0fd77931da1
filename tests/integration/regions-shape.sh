#!/usr/bin/env bash
# Region markers (include/perch.h): exact calls per region name over all threads, where the calls
# are known (tests/workloads/regions.c shape: nesting, recursion, one name in three places,
# marks, a mismatched end, a region left open); coherent times; the report's notes.
#
#   tests/integration/regions-shape.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-shape "${1:-build}"

launch rshape -- "$WL/regions" shape
"$PERCH" report --format=csv "$T/rshape.data" >"$T/rshape.csv" 2>"$T/err"
got=$(awk -F, 'NR > 1 && $2 == "" { print $1 "=" $3 }' "$T/rshape.csv" | sort | tr '\n' ' ')
want="checkpoint=2 draw=45 frame=10 inner=1 left_open=0 outer=1 rec=10 render=10 ui=10 update=10 worker=5 "
threads=$(awk -F, 'NR > 1 && $2 != "" { print $2 }' "$T/rshape.csv" | sort -u | wc -l)
"$PERCH" record -q -o "$T/rshape2.data" -- "$WL/regions" shape 2>"$T/rerr" >/dev/null
diag=$(grep -c 'region "inner" was still open' "$T/rerr")
# two threads ran regions: the main one, and a worker whose figures are merged, once it exits,
# into the block of exited threads (thread 0); a periodic read while it lived may also have
# named it by its tid. The exact calls above are the invariant.
if [ "$got" = "$want" ] && [ "$threads" -ge 2 ] && [ "$threads" -le 3 ] && [ "$diag" -eq 1 ]; then
	ok "regions: exact calls per region over 2 threads (nesting, recursion, one name in 3 places, marks, mismatch, left open); the mismatch said once on stderr"
else
	bad "regions shape" "calls '$got' (want '$want'), $threads threads, $diag mismatch lines on stderr"
fi
# times: self <= total and min <= mean <= max on every timed row (the mean is over every call's
# own time, a recursive region's nested calls included); each node's times are rounded to the
# ns on their own, so sums may differ by a few ns
if awk -F, 'NR > 1 && $3 > 0 && $4 > 0 { if ($5 > $4 + 1e-8 || $7 > $6 + 1e-8 || $6 > $8 + 1e-8) { print; bad = 1 } }
	END { exit bad }' "$T/rshape.csv" >"$T/rbad"; then
	ok "regions: self <= total and min <= mean <= max on every row"
else
	bad "regions times" "$(head -3 "$T/rbad")"
fi
# what the report tells the user in words
"$PERCH" report "$T/rshape.data" >"$T/rshape.txt" 2>&1
if grep -q "mismatch\|did not match" "$T/rshape.txt" && grep -q "left_open" "$T/rshape.txt" && grep -qi "still open" "$T/rshape.txt"; then
	ok "regions: the report names the mismatched end and the region left open at exit"
else
	bad "regions report" "no mismatch / left-open note in the report"
fi

it_end
