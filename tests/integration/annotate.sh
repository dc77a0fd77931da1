#!/usr/bin/env bash
# perch annotate FUNCTION: a workload whose function spends its time on one source line it names
# (tests/workloads/hotline.c, "truth hot_line N"): that line holds most of the function's self
# samples, and the rows add up to the function's self samples in the folded stacks. The same
# binary with its DWARF stripped (hotline-nodebug, recorded with an empty cache so no lines come
# from the debug build's build-id) is shown as disassembly: its instructions are objdump's, and
# the samples lie in the loop (objdump's backward branch and its target). Bad input: one line.
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

expect "no such function" 64 "no sample of" -- "$PERCH" annotate no_such_function -i "$T/hot.data"
expect "no function named" 64 "which function" -- "$PERCH" annotate -i "$T/hot.data"
expect "no recording" 66 "cannot open recording" -- "$PERCH" annotate hot_loop -i "$T/missing.data"
it_end
