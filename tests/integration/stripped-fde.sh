#!/usr/bin/env bash
# Stripped code grouped by function: Debian's stripped bzip2 (its hot code in libbz2, stripped as
# well, where only the exported BZ2_* functions have names) against perf record on the same run.
# perch names code no symbol covers after the .eh_frame FDE that covers it, MODULE+0xSTART?;
# perf lists such code per instruction address, which binutils' readelf maps to the same FDEs
# here (tests/lib.sh fde_table: not perch's reader). Per-FDE self shares must agree within 3
# points, and the grouping must make one row of what perf shows as dozens.
#
#   tests/integration/stripped-fde.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin stripped-fde "${1:-build}"

# perch_self FOLDED: "NAME SAMPLES" per leaf (the innermost frame; kernel leaves as one [kernel])
perch_self() {
	awk "$FOLD_AWK"'{ parse(); l = fr[k]; if (l ~ /_\[k\]$/) l = "[kernel]"; c[l] += n }
		END { for (l in c) print l, c[l] }' "$1"
}
# perf_self REPORT FDES: the same from perf report --sort dso,sym -n (PCT COUNT DSO [.] SYM), an
# unnamed address (0x...) named after the FDE readelf says covers it
perf_self() {
	awk "$FDE_AWK"'NR == FNR { fde_load(); next }
		/^#/ || NF < 5 { next }
		{ n = $2; dso = $3; sym = $5; for (i = 6; i <= NF; i++) sym = sym " " $i
		  if ($4 == "[k]") sym = "[kernel]"
		  else if (sym ~ /^0x[0-9a-f]+$/) { v = 0; s = substr(sym, 3)
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			f = fde_of(dso, v); sym = f != "" ? f : dso "+" sym }
		  c[sym] += n; addrs[sym]++ }
		END { for (s in c) print s, c[s], addrs[s] }' "$2" "$1"
}

bz=$(command -v bzip2 2>/dev/null)
if [ -z "$bz" ] || ! command -v perf >/dev/null || ! command -v readelf >/dev/null; then
	bad "bzip2 vs perf" "needs bzip2, perf and readelf (scripts/install-deps.sh installs bzip2, linux-perf, binutils)"
	it_end
	exit
fi
bz=$(realpath "$bz")
libbz=$(ldd "$bz" | awk '$1 ~ /^libbz2/ { print $3 }')
[ -n "$libbz" ] && libbz=$(realpath "$libbz")
fde_table "$bz" ${libbz:+"$libbz"} >"$T/fdes"

# ~26 MB: random base64 (Huffman-heavy) and numbered lines (sort-heavy), some 3 s of bzip2
head -c 6000000 /dev/urandom | base64 >"$T/rnd"
seq 1 600000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >"$T/seq"
cat "$T/rnd" "$T/seq" "$T/rnd" >"$T/bz.in"
# One run, both profilers (perch launches perf, perf launches bzip2; the bzip2 thread's samples
# are compared): how bzip2 splits its time moves between runs, one run is the oracle.
"$PERCH" record -F 4999 -q -o "$T/bz.data" -- perf record -q -e cpu-clock -F 4999 \
	-o "$T/bz.perf" -- "$bz" -9 -c "$T/bz.in" >/dev/null 2>"$T/err" || bad "record" "$(head -3 "$T/err")"
folded "$T/bz.data" | grep '^bzip2;' >"$T/bz.folded"
perch_self "$T/bz.folded" >"$T/perch.self"
perf report -i "$T/bz.perf" --comm bzip2 -n --sort dso,sym --stdio -g none 2>/dev/null >"$T/perf.report"
perf_self "$T/perf.report" "$T/fdes" >"$T/perf.self"

# every FDE row holding >= 2 % in either: the share of each side's bzip2 samples, 3 points apart
# at most. The two sample independently: with n ~ 10000 samples each a share p differs by chance
# with a standard deviation sqrt(2p(1-p)/n) <= 0.7 points, so 3 points is over 4 of them.
cmp=$(awk 'NR == FNR { a[$1] = $2; ta += $2; next } { b[$1] = $2; tb += $2; na[$1] = $3 }
	END { for (s in a) if (!(s in b)) b[s] = 0; for (s in b) if (!(s in a)) a[s] = 0
		for (s in a) { if (s !~ /\?$/) continue; pa = 100 * a[s] / ta; pb = 100 * b[s] / tb
			if (pa < 2 && pb < 2) continue; d = pa - pb; if (d < 0) d = -d; n++
			if (d > worst) worst = d; if (pa > top) { top = pa; topn = s; topa = na[s] }
			if (d > 3) off = off sprintf(" %s perch %.1f perf %.1f;", s, pa, pb) }
		printf "%d %.2f %d %d %.1f %s %d|%s", n, worst, ta, tb, top, topn, topa, off }' \
	"$T/perch.self" "$T/perf.self")
IFS='|' read -r head off <<<"$cmp"
read -r n worst ta tb top topn topa <<<"$head"
if [ "${n:-0}" -ge 3 ] && [ -z "$off" ] && [ "$ta" -ge 5000 ] && [ "$tb" -ge 5000 ]; then
	ok "bzip2 (stripped libbz2): $n FDE rows of >= 2 % agree with perf's addresses mapped by readelf to the same FDEs within 3 points (worst $worst; $ta vs $tb samples)"
else
	bad "bzip2 vs perf per FDE" "$n rows compared, worst $worst, samples $ta/$tb, off:$off"
fi
# the grouping: the hottest FDE is one row in perch, where perf lists it address by address
if [ -n "$topn" ] && [ "${topa:-0}" -ge 10 ] && awk -v t="$top" 'BEGIN { exit !(t >= 15) }'; then
	ok "hottest unnamed function $topn: one row of $top % (perf: $topa rows, one per address)"
else
	bad "grouping" "hottest FDE '$topn' $top % over $topa perf addresses"
fi
# every name perch inferred is an FDE start readelf lists (the same bounds, read independently)
unknown=$(awk 'NR == FNR { f[$4] = 1; next } $1 ~ /\?$/ && $1 ~ /^(bzip2|libbz2)/ && !($1 in f) { print $1 }' \
	"$T/fdes" "$T/perch.self" | head -3)
if [ -z "$unknown" ] && grep -q '?' "$T/perch.self"; then
	ok "every MODULE+0xSTART? name of bzip2 and libbz2 is an FDE start of readelf --debug-dump=frames"
else
	bad "inferred names" "not FDE starts per readelf: ${unknown:-no inferred names at all}"
fi

it_end
