#!/usr/bin/env bash
# perch annotate FUNCTION: a workload whose function spends its time on one source line it names
# (tests/workloads/hotline.c, "truth hot_line N"): that line holds most of the function's self
# samples, and the rows add up to the function's self samples in the folded stacks. The same
# binary with its DWARF stripped (hotline-nodebug, recorded with an empty cache so no lines come
# from the debug build's build-id) is shown as disassembly: its instructions are objdump's, and
# the samples lie in the loop (objdump's backward branch and its target). A function's count is
# the report's self (code inlined into it is not), and stripped code named after its .eh_frame
# FDE is disassembled over the FDE's range. Bad input: one line.
#
#   tests/integration/annotate.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin annotate "${1:-build}"

# self NAME FUNC: FUNC's self samples in the folded stacks of $T/NAME.data
self() { folded "$T/$1.data" | awk -v f="$2" '{ n = split($1, fr, ";"); if (fr[n] == f) s += $2 } END { print s + 0 }'; }

perch_record hot -- "$WL/hotline" 0.5
hot=$(awk '$1 == "truth" && $2 == "hot_line" { printf "%d", $3 }' "$T/hot.truth")
"$PERCH" annotate hot_loop -i "$T/hot.data" >"$T/hot.txt" 2>"$T/hot.err"
rc=$?
# rows with samples: "P% COUNT LINE SOURCE"
read -r top_line top_n sum < <(awk '$1 ~ /%$/ && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
	s += $2; if ($2 > m) { m = $2; l = $3 } } END { print l + 0, m + 0, s + 0 }' "$T/hot.txt")
head_n=$(sed -n 's/^hot_loop: \([0-9]*\) self samples.*/\1/p' "$T/hot.txt")
want=$(self hot hot_loop)
if [ $rc -eq 0 ] && [ "$top_line" = "$hot" ] && [ $((top_n * 2)) -gt "$sum" ] &&
	[ "$sum" = "$head_n" ] && [ "$sum" = "$want" ] && grep -q "for (unsigned long i" "$T/hot.txt"; then
	ok "hot line: line $top_line (the workload's $hot) holds $top_n of $sum self samples (folded: $want), shown with its source"
else
	bad "hot line" "exit $rc, line ${top_line:-?} with $top_n of $sum (workload: line $hot; header ${head_n:-?}, folded $want): $(head -3 "$T/hot.err")"
fi

# code inlined into a function is its callee's self, in the report and in annotate alike:
# split_caller's own samples only, split_hot's (inlined into it) said apart in the header
perch_record split -- "$WL/inlined" 0.5 split
"$PERCH" annotate split_caller -i "$T/split.data" >"$T/split.txt" 2>"$T/split.err"
rc=$?
head_n=$(sed -n 's/^split_caller: \([0-9]*\) self samples.*/\1/p' "$T/split.txt")
inl=$(sed -n 's/^ not counted: \([0-9]*\) samples in functions inlined into it.*/\1/p' "$T/split.txt")
want=$(self split split_caller)
hot=$(self split split_hot)
if [ $rc -eq 0 ] && [ "$head_n" = "$want" ] && [ "${inl:-0}" = "$hot" ] && [ "$hot" -gt 0 ]; then
	ok "inlined callee: split_caller's $head_n self samples are the report's; split_hot's $inl (inlined into it) said apart"
else
	bad "inlined callee" "exit $rc, header ${head_n:-?} (folded self $want), inlined ${inl:-?} (split_hot's self $hot): $(head -2 "$T/split.err")"
fi

# stripped of DWARF: the disassembly against objdump's
mkdir -p "$T/cache"
XDG_CACHE_HOME=$T/cache perch_record nodebug -- "$WL/hotline-nodebug" 0.5
"$PERCH" annotate hot_loop -i "$T/nodebug.data" >"$T/nodebug.txt" 2>"$T/nodebug.err"
rc=$?
objdump -d --no-show-raw-insn "$WL/hotline-nodebug" | awk '/<hot_loop>:$/ { on = 1; next } on && /^$/ { exit }
	on { a = $1; sub(":", "", a); print a }' >"$T/objdump.addrs"
# the loop: the backward branch inside hot_loop, from its target to itself (hex in awk: mawk has
# no strtonum)
HEX='function hex(s,  i, v) { v = 0; s = tolower(s); sub(/^0x/, "", s); sub(/:$/, "", s)
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'
read -r lo hi < <(objdump -d --no-show-raw-insn "$WL/hotline-nodebug" | awk "$HEX"'
	/<hot_loop>:$/ { on = 1; next } on && /^$/ { exit }
	on && $2 ~ /^j/ && $NF ~ /<hot_loop\+/ { a = hex($1); t = hex($3); if (t <= a) print t, a }' | head -1)
read -r inloop total < <(awk -v lo="${lo:-0}" -v hi="${hi:--1}" "$HEX"'
	$1 ~ /%$/ && $3 ~ /:$/ { a = hex($3); t += $2; if (a >= lo && a <= hi) n += $2 }
	END { print n + 0, t + 0 }' "$T/nodebug.txt")
awk '$NF != "" { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9a-f]+:$/) { sub(":", "", $i); print $i; next } }' \
	"$T/nodebug.txt" >"$T/perch.addrs"
want=$(self nodebug hot_loop)
if [ $rc -eq 0 ] && grep -q "no source lines; disassembly" "$T/nodebug.txt" && [ "$total" = "$want" ] &&
	[ -n "${lo:-}" ] && [ $((inloop * 10)) -ge $((total * 9)) ] && [ "$total" -gt 0 ]; then
	ok "no DWARF: disassembly; $inloop of $total self samples in the loop $(printf '0x%x-0x%x' "$lo" "$hi") (objdump's backward branch)"
else
	bad "no DWARF" "exit $rc, $inloop of $total samples in the loop ${lo:-?}-${hi:-?} (folded self $want): $(head -3 "$T/nodebug.err")"
fi
if [ -s "$T/objdump.addrs" ] && diff -q "$T/objdump.addrs" "$T/perch.addrs" >/dev/null; then
	ok "no DWARF: the $(wc -l <"$T/objdump.addrs") instructions are objdump's, address for address"
else
	bad "instructions" "perch's addresses differ from objdump's: $(diff "$T/objdump.addrs" "$T/perch.addrs" | head -4 | tr '\n' ' ')"
fi

# Stripped code named after its .eh_frame FDE (Debian's xz through liblzma, both stripped): the
# hottest MODULE+0xSTART? leaf is disassembled over the FDE's range, which binutils' readelf
# reads independently (tests/lib.sh fde_table), with the report's self samples of it.
if command -v xz >/dev/null && command -v readelf >/dev/null; then
	seq 1 100000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >"$T/xz.in"
	perch_record xz -- xz -T1 -2 -c "$T/xz.in"
	xzlib=$(ldd "$(command -v xz)" | awk '$1 ~ /^liblzma/ { print $3 }')
	fde_table "$(realpath "$(command -v xz)")" ${xzlib:+"$(realpath "$xzlib")"} >"$T/xz.fdes"
	read -r fde want < <(folded "$T/xz.data" | awk '{ n = split($1, fr, ";"); s[fr[n]] += $2 }
		END { for (f in s) if (f ~ /\+0x[0-9a-f]+\?$/ && s[f] > m) { m = s[f]; b = f }; print b, m + 0 }')
	"$PERCH" annotate "$fde" -i "$T/xz.data" >"$T/fde.txt" 2>"$T/fde.err"
	rc=$?
	read -r lo hi < <(awk -v f="$fde" '$4 == f { print $2, $3; exit }' "$T/xz.fdes")
	head_n=$(sed -n 's/^.*: \([0-9]*\) self samples.*/\1/p' "$T/fde.txt" | head -1)
	# every listed address (and the rows' samples) against readelf's [lo, hi)
	read -r naddr first outside rows < <(awk -v lo="${lo:-0}" -v hi="${hi:-0}" "$HEX"'
		{ for (i = 1; i <= NF && i <= 3; i++) if ($i ~ /^[0-9a-f]+:$/) { a = hex($i); break }
		  if (i > NF || i > 3) next; n++; if (n == 1) f = a; if (a < lo || a >= hi) out++
		  if ($1 ~ /%$/) s += $2 }
		END { printf "%d %d %d %d\n", n, f, out, s }' "$T/fde.txt")
	if [ $rc -eq 0 ] && [ -n "$fde" ] && [ "${want:-0}" -gt 0 ] && [ "$head_n" = "$want" ] &&
		[ "$rows" = "$want" ] && [ -n "${lo:-}" ] && [ "$naddr" -gt 0 ] && [ "$first" = "$lo" ] &&
		[ "$outside" = 0 ] && grep -q "(.eh_frame FDE)" "$T/fde.txt"; then
		ok "stripped xz: $fde ($want self samples, the report's) disassembled: $naddr instructions from the FDE's start, all inside readelf's $(printf '0x%x-0x%x' "$lo" "$hi")"
	else
		bad "stripped xz FDE" "exit $rc, '$fde': header ${head_n:-?}, rows $rows, folded self $want; $naddr addresses, first $first, $outside outside readelf's ${lo:-?}-${hi:-?}: $(head -2 "$T/fde.err")"
	fi
else
	bad "stripped xz FDE" "needs xz and readelf (scripts/install-deps.sh installs xz-utils, binutils)"
fi

expect "no such function" 64 "no sample of" -- "$PERCH" annotate no_such_function -i "$T/hot.data"
expect "no function named" 64 "which function" -- "$PERCH" annotate -i "$T/hot.data"
expect "no recording" 66 "cannot open recording" -- "$PERCH" annotate hot_loop -i "$T/missing.data"
it_end
