#!/usr/bin/env bash
# Cost models (perch model): sized regions of known cost shape (tests/workloads/costs.c: 300 ns
# + 2 ns*n, 40 ns*n*log2(n), 0.5 ns*n^2, 2 % of calls 10x slower), each call timed by the
# workload itself, which prints its own fit of its undisturbed calls (the truth) and of all its
# normal calls, the preempted ones too (what perch sees; one fit on a quiet machine, apart on a
# busy one: the model scenario's nlogn came out +6.4 % of the undisturbed fit once under a load
# of 8). perch's chosen model must be the right one, its coefficients within 5 % of the band
# the two fits span, with culling on;
# without culling the fit must show the outliers (none culled, relative error far higher). The
# intercept is compared with a band: the workload times each call inside its markers (inner)
# and around them (outer), the runtime's timestamps lie between, so perch's intercept must lie in
# [inner - 5 %, outer + 5 %] of the smallest call's time. Then pooling, merge, the outputs, and
# the bad inputs (a region without sizes, too few points, an unparsable --model).
#
#   tests/integration/model.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin model "${1:-build}"

perch_record costs -- "$WL/costs" 400
cp "$T/costs.truth" "$T/truth"
grep '^warning' "$T/truth"
three=--region=linear,nlogn,quadratic # "once" has one point: see the bad inputs below
"$PERCH" model "$three" --format=fits "$T/costs.data" >"$T/fits"
"$PERCH" model "$three" --cull=0 --format=fits "$T/costs.data" >"$T/fits0"

# check REGION MODEL G: G the basis of b (awk expression of n)
check() {
	local region=$1 model=$2 g=$3 line
	line=$(awk -F, -v r="$region" '$1 == r && $3 == 1' "$T/fits")
	if [ "$(echo "$line" | cut -d, -f2)" != "$model" ]; then
		bad "$region: model" "chose '$(echo "$line" | cut -d, -f2)', want '$model' ($(grep "^$region," "$T/fits" | cut -d, -f2,9 | tr '\n' ' '))"
		return
	fi
	ok "$region: chose $model ($(grep -c "^$region," "$T/fits") candidates; held-out $(echo "$line" | cut -d, -f9))"
	read -r ia ib < <(awk -v r="$region" '$1 == "truth" && $2 == r && $3 == "inner" { sub("a=", "", $4); sub("b=", "", $5); print $4, $5 }' "$T/truth")
	read -r oa < <(awk -v r="$region" '$1 == "truth" && $2 == r && $3 == "outer" { sub("a=", "", $4); print $4 }' "$T/truth")
	read -r aa ab < <(awk -v r="$region" '$1 == "truth" && $2 == r && $3 == "all" { sub("a=", "", $4); sub("b=", "", $5); print $4, $5 }' "$T/truth")
	# The band: the undisturbed fit, widened to the fit over all calls (the preempted ones too,
	# which perch cannot tell apart) where they differ: on a quiet machine they are one.
	if echo "$line" | awk -F, -v ia="$ia" -v ib="$ib" -v oa="$oa" -v aa="${aa:-$ia}" -v ab="${ab:-$ib}" '{
		split($5, c, ";"); a = c[1]; b = c[2]; n = 16
		t16 = ia + ib * ('"$g"'); tol = 0.05 * t16
		alo = (aa < ia ? aa : ia) - tol; ahi = (aa > oa ? aa : oa) + tol
		blo = 0.95 * (ab < ib ? ab : ib); bhi = 1.05 * (ab > ib ? ab : ib)
		printf "a = %.4g ns in [%.4g, %.4g], b = %.5g in [%.5g, %.5g] (undisturbed %.5g: %+.2f%%, all calls %.5g); ", a, alo, ahi, b, blo, bhi, ib, 100 * (b / ib - 1), ab
		exit !(a >= alo && a <= ahi && b >= blo && b <= bhi) }' >"$T/cmp"; then
		ok "$region: coefficients within 5 % of the workload's own fits: $(cat "$T/cmp")"
	else
		bad "$region: coefficients" "$(cat "$T/cmp")"
	fi
	# without culling: none culled, and the outliers show in the fit's relative error
	if awk -F, -v r="$region" 'NR == FNR { if ($1 == r && $3 == 1) rms = $8; next }
		$1 == r && $3 == 1 { printf "culled %d, relative RMS %.2f%% against %.2f%% culled; ", $11, 100 * $8, 100 * rms
		exit !($11 == 0 && $8 > 2 * rms) }' "$T/fits" "$T/fits0" >"$T/cmp"; then
		ok "$region: --cull=0 shows the outliers: $(cat "$T/cmp")"
	else
		bad "$region: --cull=0" "$(cat "$T/cmp")"
	fi
}
check linear "a + b*n" "n"
check nlogn "a + b*n*log2(n)" "n * log(n) / log(2)"
check quadratic "a + b*n^2" "n * n"

# outputs: csv has every sampled point with its fitted value, some culled; svg parses, 3 panels
"$PERCH" model --format=csv --region=linear "$T/costs.data" >"$T/csv"
rows=$(awk -F, 'NR > 1 && $1 == "linear"' "$T/csv" | wc -l)
culled=$(awk -F, 'NR > 1 && $6 == 1' "$T/csv" | wc -l)
used=$(awk -F, '$1 == "linear" && $3 == 1 { print $10 }' "$T/fits")
if [ "$rows" -ge 2 ] && [ $((rows - culled)) -eq "$used" ] && [ "$culled" -ge 1 ]; then
	ok "csv: $rows points of linear, $culled culled (the fit used $used)"
else
	bad "csv" "$rows rows, $culled culled, the fit used $used"
fi
"$PERCH" model "$three" --format=svg -o "$T/m.svg" "$T/costs.data"
if python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(sum(1 for t in d.getElementsByTagName("text") if t.firstChild and t.firstChild.data.startswith("region ")) != 3)' "$T/m.svg"; then
	ok "svg: well-formed, one panel per sized region (3)"
else
	bad "svg" "not well-formed or not 3 panels"
fi

# the HTML report carries the same plots (its "Cost models" tab) when the recording has sizes,
# and nothing of the kind when it has none
panels() {
	python3 -c 'import sys, json, re, xml.dom.minidom as m
page = open(sys.argv[1]).read()
d = json.loads(re.search(r"<script type=\"application/json\" id=\"perch-data\">(.*?)</script>", page, re.S).group(1))
if "models" not in d: print(0); sys.exit()
svg = m.parseString(d["models"]["svg"])
print(sum(1 for t in svg.getElementsByTagName("text") if t.firstChild and t.firstChild.data.startswith("region ")))' "$1"
}
"$PERCH" report --format=html -o "$T/costs.html" "$T/costs.data"
"$PERCH" report --format=html -o "$T/golden.html" "$TESTS/golden/regions.data"
with=$(panels "$T/costs.html")
without=$(panels "$T/golden.html")
if [ "$with" = 3 ] && [ "$without" = 0 ]; then
	ok "html: the Cost models tab's SVG has the 3 panels; a recording without sizes has no tab"
else
	bad "html" "$with panels (want 3), $without without sizes (want 0)"
fi

# pooling: two recordings (the same one twice, and through perch merge) double the calls
"$PERCH" merge -o "$T/merged.data" "$T/costs.data" "$T/costs.data" 2>/dev/null
one=$(awk -F, '$1 == "linear" && $3 == 1 { print $12 }' "$T/fits")
two=$("$PERCH" model "$three" --format=fits "$T/costs.data" "$T/costs.data" | awk -F, '$1 == "linear" && $3 == 1 { print $12 "/" $13 }')
mer=$("$PERCH" model "$three" --format=fits "$T/merged.data" | awk -F, '$1 == "linear" && $3 == 1 { print $12 }')
if [ "$one" -ge 400 ] && [ "$two" = "$((2 * one))/2" ] && [ "$mer" = "$((2 * one))" ]; then
	ok "pooling: linear's $one calls, $two over two recordings, $mer in their perch merge"
else
	bad "pooling" "one $one, two $two, merged $mer"
fi

# bad inputs: one line each, an exit status each, the other regions still fitted
expect "region without sizes" 81 "region 'setup' has no sizes" -- "$PERCH" model --region=setup,linear --format=fits "$T/costs.data"
grep -q '^linear,a + b\*n,1' "$T/out" && ok "  ... and linear still fitted" || bad "no sizes" "linear not fitted"
expect "region not recorded" 81 "region 'nosuch' is not in the recording" -- "$PERCH" model --region=nosuch "$T/costs.data"
expect "too few points" 82 "region 'once': 1 point, fewer than the 2 coefficients" -- "$PERCH" model --region=once,linear --format=fits "$T/costs.data"
grep -q '^linear,a + b\*n,1' "$T/out" && ok "  ... and linear still fitted" || bad "too few points" "linear not fitted"
expect "too few points for --model" 82 "fewer than the 3 coefficients of --model '1,n,n^2'" -- "$PERCH" model --region=once,quadratic --model='1,n,n^2' --format=fits "$T/costs.data"
grep -q '^quadratic,"1,n,n^2",' "$T/out" && ok "  ... and quadratic fitted with --model too" || bad "--model" "quadratic not fitted with the user's model: $(grep -c . "$T/out") lines"
expect "unparsable --model" 83 "cannot parse --model 'n^^2' at '^2'" -- "$PERCH" model "$three" --model='n^^2' --format=fits "$T/costs.data"
[ "$(awk -F, '$3 == 1' "$T/out" | wc -l)" -eq 3 ] && ok "  ... and the 3 regions fitted with the built-in models" || bad "bad --model" "$(awk -F, '$3 == 1' "$T/out" | wc -l) regions fitted"
expect "no sized regions" 81 "no sized regions" -- "$PERCH" model "$TESTS/golden/regions.data"

it_end
