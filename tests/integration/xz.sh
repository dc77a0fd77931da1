#!/usr/bin/env bash
# A Debian binary without frame pointers (xz, stripped, through liblzma) against perf record
# --call-graph dwarf on the same run. Code no symbol names is one function per .eh_frame FDE on
# both sides (perch's MODULE+0xSTART?; perf's addresses mapped by readelf, tests/lib.sh).
#
#   tests/integration/xz.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin xz "${1:-build}"

# perf script (leaf first) -> folded (root first) with perch's names: unnamed frames
# MODULE+0xSTART? after the .eh_frame FDE readelf says covers them (FDES: fde_table's file; perf
# shows a return address minus one, inside the call's function), else MODULE+0xOFF (perch shows
# a return address as it is); named frames by the name perch gives their address (NAMES: name_table's
# file, so perf's choice among aliases is not compared; perf shows a symbol whose DWARF name differs,
# as glibc's __libc_start_main@@GLIBC_2.34 of __libc_start_main_impl, as an inlined frame of
# that name over the symbol's); kernel frames with _[k]
perf_folded() {
	awk "$FDE_AWK"'function hex(s,  i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	function flush(  s, i) { if (n) { s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++ } n = 0 }
	FILENAME == ARGV[1] { fde_load(); next }
	FILENAME == ARGV[2] { nt[$1, $2] = $3; nta[$2] = $3; next }
	/^[^ \t]/ { flush(); comm = $1; next }
	/^$/ { flush(); next }
	{ ip = $1; rest = $0; sub(/^[ \t]*[0-9a-f]+ /, "", rest); dso = ""; sym = rest
	  if (match(rest, / \([^()]*\)$/)) { dso = substr(rest, RSTART + 2, RLENGTH - 3); sym = substr(rest, 1, RSTART - 1) }
	  if (dso == "inlined") dso = ""
	  m = dso; sub(/.*\//, "", m)
	  if (sym == "[unknown]" || sym == "") { sym = fde_of(m, hex(ip))
		if (sym == "") sym = sprintf("%s+0x%x", m, hex(ip) + (n > 0)) }
	  else if ((m, sym) in nt) sym = nt[m, sym]
	  else if (m == "" && sym in nta) sym = nta[sym]
	  f[++n] = sym (dso ~ /kernel/ ? "_[k]" : "") }
	END { flush(); for (s in c) print s, c[s] }' "$2" "$3" "$1"
}
# totals FOLDED: "frame percent" for every frame, the share of samples it is on
totals() {
	awk "$FOLD_AWK"'{ parse(); all += n; split("", seen)
		for (i = 2; i <= k; i++) { b = fr[i]; sub(/_\[k\]$/, "", b); if (!(b in seen)) { seen[b] = 1; s[b] += n } } }
		END { for (b in s) printf "%s %.2f\n", b, 100 * s[b] / all }' "$1" | sort -k2 -nr
}
# outermost FOLDED: the most common outermost named frame and its share
outermost() {
	awk "$FOLD_AWK"'{ parse(); all += n; o = "-"
		for (i = 2; i <= k; i++) if (fr[i] !~ /\+0x[0-9a-f]+\??$/ && fr[i] !~ /^\[/) { o = fr[i]; break }
		s[o] += n } END { for (o in s) printf "%s %.2f\n", o, 100 * s[o] / all }' "$1" | sort -k2 -nr | head -1
}

if ! command -v xz >/dev/null || ! command -v perf >/dev/null; then
	bad "xz vs perf" "needs xz and perf (scripts/install-deps.sh installs xz-utils and linux-perf)"
else
	seq 1 200000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >"$T/xz.in"
	# Both profilers on the same run of xz (perch launches perf, perf launches xz; perch's samples
	# of xz are those its thread name marks): how xz splits its time between functions varies
	# from run to run with what the caches see (up to 10 points on a memory-bound match finder
	# between two runs here), so two runs are no oracle for each other; one run is.
	"$PERCH" record -q -o "$T/xz.data" -- perf record -q -e cpu-clock -F 997 --call-graph dwarf \
		-o "$T/xz.perf" -- xz -T1 -9 -c "$T/xz.in" >/dev/null 2>"$T/err" || bad "xz" "$(cat "$T/err")"
	folded "$T/xz.data" | grep '^xz;' >"$T/xz.folded"
	perf script -i "$T/xz.perf" -F comm,ip,sym,dso 2>/dev/null >"$T/xz.script"
	xzlib=$(ldd "$(command -v xz)" | awk '$1 ~ /^liblzma/ { print $3 }')
	mods=("$(realpath "$(command -v xz)")" ${xzlib:+"$(realpath "$xzlib")"})
	fde_table "${mods[@]}" >"$T/xz.fdes"
	libc=$(ldd "$(command -v xz)" | awk '$1 ~ /^libc\.so/ { print $3 }')
	name_table "${mods[@]}" ${libc:+"$(realpath "$libc")"} >"$T/xz.names"
	perf_folded "$T/xz.script" "$T/xz.fdes" "$T/xz.names" >"$T/xz.perf.folded"
	po=$(outermost "$T/xz.folded")
	fo=$(outermost "$T/xz.perf.folded")
	totals "$T/xz.folded" >"$T/xz.tot"
	totals "$T/xz.perf.folded" >"$T/xz.perf.tot"
	# every frame on at least 10 % of perf's samples: perch's share within what sampling allows.
	# Two runs of the same work sample it independently, so a share p measured from n1 and n2
	# samples differs by chance with a standard deviation of sqrt(p(1-p)(1/n1+1/n2)): 1.7 points
	# at p = 0.3 and 1500 samples each. Allowed: 4.5 of those (one false alarm in 10^5 frames),
	# and never under 2 points.
	n1=$(samples "$T/xz.folded")
	n2=$(samples "$T/xz.perf.folded")
	diffs=$(awk -v n1="$n1" -v n2="$n2" 'NR == FNR { p[$1] = $2; next } $2 >= 10 { d = $2 - p[$1]; if (d < 0) d = -d; n++;
		q = $2 / 100; tol = 450 * sqrt(q * (1 - q) * (1 / n1 + 1 / n2)); if (tol < 2) tol = 2
		if (d > tol) bad = bad " " $1 " perf " $2 " perch " ($1 in p ? p[$1] : 0) " (allowed " sprintf("%.1f", tol) ")"; if (d > worst) worst = d }
		END { printf "%d %.2f%s", n, worst, bad }' "$T/xz.tot" "$T/xz.perf.tot")
	ps_=$(share "$T/xz.folded" __libc_start_call_main)
	# lzma_code samples whose stack is cut short of main's caller
	cut_=$(samples "$T/xz.folded" ';lzma_code;' '__libc_start_call_main;xz\+0x[0-9a-f]+\??;xz\+0x[0-9a-f]+\??;lzma_code;')
	if [ "${po% *}" = "${fo% *}" ] && within "${po#* }" 100 1 && within "$ps_" 100 1 && [ "$cut_" -eq 0 ] &&
		[ "${diffs%% *}" -ge 5 ] && [ "$(echo "$diffs" | wc -w)" -eq 2 ]; then
		ok "xz (stripped, no frame pointers): outermost named frame $po % (perf: $fo %); __libc_start_call_main;xz+0x..;xz+0x..;lzma_code on every lzma_code stack; ${diffs%% *} frames on >= 10 % of perf's samples within sampling error (4.5 sd) of perf --call-graph dwarf ($n1 vs $n2 samples; worst $(echo "$diffs" | cut -d' ' -f2))"
	else
		bad "xz vs perf" "outermost perch '$po' perf '$fo'; __libc_start_call_main on $ps_ %; $cut_ lzma_code samples cut; frames compared / worst / off: $diffs; heaviest stacks short of it: $(misses "$T/xz.folded" ';__libc_start_call_main;' '^xz;'); $("$PERCH" report --format=stats "$T/xz.data" | grep -E '^(dwarf|unwind)' | tr '\n' ' ')"
	fi
fi

it_end
