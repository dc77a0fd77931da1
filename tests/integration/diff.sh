#!/usr/bin/env bash
# perch diff on two real recordings of tests/workloads/shift, whose hot function takes 3 ms of
# each 10 ms round in the base run and 7 ms in the new one (cold the rest): the change in hot's
# and cold's total share (their clock reads, in the vDSO, are theirs too, as in the workload's
# count) that perch diff reports equals the change the workload's own CPU clocks measured, within four binomial standard deviations of the difference (+1 point, never under 3:
# binom_tol's rule for two shares); both are significant and ranked first, main (on every stack
# in both) is not significant; the folded diff's columns sum to each recording's samples exactly.
#
#   tests/integration/diff.sh [BUILD_DIR]   (or tests/integration.sh BUILD_DIR diff)
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin diff "${1:-build}"

# diff_tol P1 N1 P2 N2: the tolerance in points for the difference of two shares (percent)
diff_tol() {
	awk -v p="$1" -v n="$2" -v q="$3" -v m="$4" 'BEGIN { p /= 100; q /= 100
		t = n > 0 && m > 0 ? 400 * sqrt(p * (1 - p) / n + q * (1 - q) / m) + 1 : 100
		printf "%.1f", t < 3 ? 3 : t }'
}
# csv_func CSV NAME COLUMN: a function row's column (perch diff --format=csv)
csv_func() { awk -F, -v f="\"$2\"" -v c="$3" '$1 == "function" && $15 == f { print $c }' "$1"; }
points() { awk -v x="$1" 'BEGIN { printf "%.2f", 100 * x }'; }

launch base -- "$WL/shift" 3 3 || { it_end; exit; }
launch new -- "$WL/shift" 3 7 || { it_end; exit; }
nb=$(rec_stat "$T/base.data" sampled)
nn=$(rec_stat "$T/new.data" sampled)
"$PERCH" diff --format=csv "$T/base.data" "$T/new.data" >"$T/diff.csv"

for f in hot cold; do
	eb=$(truth_pct "$T/base.truth" $f)
	en=$(truth_pct "$T/new.truth" $f)
	want=$(awk -v a="$eb" -v b="$en" 'BEGIN { printf "%.2f", b - a }')
	got=$(points "$(csv_func "$T/diff.csv" $f 11)")
	tol=$(diff_tol "$eb" "$nb" "$en" "$nn")
	if within "$got" "$want" "$tol"; then
		ok "$f: total share changed $got points (workload's CPU clocks: $eb% -> $en%, $want, +-$tol)"
	else
		bad "$f" "total share changed $got points; the workload's CPU clocks say $eb% -> $en%: $want (+-$tol)"
	fi
	if [ "$(csv_func "$T/diff.csv" $f 14)" = 1 ]; then
		ok "$f: significant (z total $(csv_func "$T/diff.csv" $f 13))"
	else
		bad "$f" "not significant: z total $(csv_func "$T/diff.csv" $f 13)"
	fi
done
top2=$(awk -F, '$1 == "function" { print $15 }' "$T/diff.csv" | head -2 | LC_ALL=C sort | tr -d '"' | tr '\n' ' ')
if [ "$top2" = "cold hot " ]; then
	ok "hot and cold are ranked first"
else
	bad "ranking" "first two functions: $top2"
fi
if [ "$(csv_func "$T/diff.csv" main 14)" = 0 ]; then
	ok "main not significant (total $(points "$(csv_func "$T/diff.csv" main 8)")% -> $(points "$(csv_func "$T/diff.csv" main 9)")%, z $(csv_func "$T/diff.csv" main 13))"
else
	bad "main" "significant: z total $(csv_func "$T/diff.csv" main 13)"
fi
"$PERCH" diff --format=folded "$T/base.data" "$T/new.data" >"$T/diff.folded"
sums=$(awk '{ b += $(NF - 1); n += $NF } END { print b + 0, n + 0 }' "$T/diff.folded")
if [ "$sums" = "$nb $nn" ]; then
	ok "folded diff: columns sum to the samples ($sums)"
else
	bad "folded diff" "columns sum to $sums, samples $nb $nn"
fi

it_end
