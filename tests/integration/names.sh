#!/usr/bin/env bash
# One address, one name: every user frame of a real program's recording (Debian's xz, through
# liblzma and glibc, whose debug file spells versioned symbols "__libc_start_main@@GLIBC_2.34")
# is named as `perch symbolize` names that module and address, inline chain and all, with no
# symbol version anywhere; and each out-of-line name is one GNU addr2line would accept: its own,
# or another symbol at the same address (readelf, name_table in tests/lib.sh).
#
#   tests/integration/names.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin names "${1:-build}"

if ! command -v xz >/dev/null; then
	bad "names" "needs xz (scripts/install-deps.sh installs xz-utils)"
	it_end
	exit
fi
seq 1 60000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >"$T/in"
perch_record xz --timeline -- xz -T1 -9 -c "$T/in" || { it_end; exit; }
"$PERCH" script "$T/xz.data" >"$T/script" 2>"$T/err" || bad "names: perch script" "$(cat "$T/err")"

# One line per physical user frame in a file-backed module: "MODULE OFFSET ROLE CHAIN", ROLE L for a
# sample's first user frame (a precise pc) and C for the others (return addresses, looked up one
# byte back as every symbolizer does), CHAIN the names innermost first, joined by "|".
awk '/^[^\t]/ { first = 1; chain = ""; next } /^$/ { next }
	{ mod = $NF; gsub(/[()]/, "", mod); if (mod !~ /^\//) next
	  name = $0; sub(/^[ \t]*[0-9a-f]+ /, "", name); sub(/ \([^()]*\)$/, "", name)
	  inl = sub(/ \(inlined\)$/, "", name); chain = chain (chain == "" ? "" : "|") name
	  if (inl) next
	  print mod, $1, (first ? "L" : "C"), chain; first = 0; chain = "" }' "$T/script" | sort -u >"$T/frames"

# perch symbolize -i -a over each module's addresses (the frame's file offset as an ELF address,
# by the module's PT_LOAD segments), its chains in the same shape
for mod in $(awk '{ print $1 }' "$T/frames" | sort -u); do
	[ -f "$mod" ] || continue
	readelf -lW "$mod" 2>/dev/null | awk -v m="$mod" '
		function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		NR == FNR && $1 == "LOAD" { off[++ns] = hex($2); va[ns] = hex($3); fs[ns] = hex($5); next }
		NR == FNR { next }
		$1 == m { o = hex($2); for (i = 1; i <= ns; i++) if (o >= off[i] && o < off[i] + fs[i]) {
			printf "%x\n", o - off[i] + va[i] - ($3 == "C"); break } }' - "$T/frames" |
		sort -u >"$T/addrs"
	"$PERCH" symbolize -i -a -e "$mod" <"$T/addrs" | awk -v m="$mod" '
		function flush() { if (a != "") print m, a, chain; chain = "" }
		/^0x/ { flush(); a = $0; sub(/^0x0*/, "", a); if (a == "") a = "0"; n = 0; next }
		{ if (++n % 2 == 1) chain = chain (chain == "" ? "" : "|") $0 }
		END { flush() }' >>"$T/symbolized"
	name_table "$mod" >>"$T/names"
done

# compare: each frame's chain against symbolize's for its lookup address
nframes=$(wc -l <"$T/frames")
versioned=$(awk '$4 ~ /@/' "$T/frames" | wc -l)
mism=0
checked=0
: >"$T/mismatch"
for mod in $(awk '{ print $1 }' "$T/frames" | sort -u); do
	[ -f "$mod" ] || continue
	readelf -lW "$mod" 2>/dev/null | awk -v m="$mod" '
		function hex(s,  i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
			for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
		FILENAME == "-" && $1 == "LOAD" { off[++ns] = hex($2); va[ns] = hex($3); fs[ns] = hex($5); next }
		FILENAME == "-" { next }
		FILENAME == ARGV[2] { if ($1 == m) s[$2] = $3; next }
		$1 == m { o = hex($2); a = ""; for (i = 1; i <= ns; i++) if (o >= off[i] && o < off[i] + fs[i]) {
				a = sprintf("%x", o - off[i] + va[i] - ($3 == "C")); break }
			e = a in s ? s[a] : "-"
			# an unnamed return address shows as it is (MODULE+0xOFFSET of the frame), not one back
			if ($3 == "C" && e ~ /\+0x[0-9a-f]+$/) { sub(/\+0x[0-9a-f]+$/, "", e); e = e "+0x" $2 }
			c++; if (e != $4) { bad++; print m, $2, $3, "report:", $4, "symbolize:", e > "/dev/stderr" } }
		END { printf "%d %d\n", c, bad + 0 }' - "$T/symbolized" "$T/frames" 2>>"$T/mismatch" >"$T/count"
	read -r c b <"$T/count"
	checked=$((checked + c))
	mism=$((mism + b))
done
if [ "$nframes" -ge 20 ] && [ "$checked" -eq "$nframes" ] && [ "$mism" -eq 0 ] && [ "$versioned" -eq 0 ]; then
	ok "names: all $checked distinct user frames of xz (xz, liblzma, glibc) named as perch symbolize names their address, inline chains included; no symbol version"
else
	bad "names" "$checked of $nframes frames compared, $mism differ, $versioned with a symbol version: $(head -5 "$T/mismatch" | tr '\n' ';')"
fi

# every out-of-line name is an ELF symbol at that function's address (or perch's FDE name)
unknown=$(awk 'NR == FNR { known[$1 SUBSEP $3] = 1; next }
	{ n = split($4, c, "|"); f = c[n]; m = $1; sub(/.*\//, "", m)
	  if (f !~ /\+0x[0-9a-f]+\??$/ && !((m, f) in known)) print m, f }' "$T/names" "$T/frames" | sort -u)
if [ -z "$unknown" ] && grep -q ' __libc_start_main$' <(awk '{ n = split($4, c, "|"); print $1, c[n] }' "$T/frames"); then
	ok "names: every out-of-line function name is a symbol of its module at that address (__libc_start_main, not __libc_start_main@@GLIBC_2.34)"
else
	bad "names: symbols" "not symbols of their module: $(echo "$unknown" | head -5 | tr '\n' ';'); __libc_start_main: $(grep -c '__libc_start_main' "$T/frames")"
fi

it_end
