#!/usr/bin/env bash
# C++ names: demangled by default, raw with --no-demangle; and queried as printed, commas and all
# (tests/workloads/cxxnames): each of --callers, --callees, --select, --exclude and --fold given a
# demangled name holding commas (a template, operator(), operator, and operator<) must count what
# awk counts from the unfiltered folded stacks, as must the name with its commas escaped ("\,");
# a name that is not quite one is one line naming the closest.
#
#   tests/integration/cxx.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin cxx "${1:-build}"

launch cxx -- "$WL/cxx" 1
folded "$T/cxx.data" --no-demangle >"$T/cxx.raw"
cd_=$(share "$T/cxx.folded" "void work::spin<3>()")
cr=$(share "$T/cxx.raw" "_ZN4work4spinILi3EEEvv")
if within "$cd_" 100 5 && within "$cr" 100 5; then
	ok "c++: 'void work::spin<3>()' on $cd_ % of stacks, _ZN4work4spinILi3EEEvv with --no-demangle on $cr %"
else
	bad cxx "demangled on $cd_ %, raw on $cr %"
fi

# Queries on C++ names with commas: perch's answer against awk's on the unfiltered folded stacks
launch cxxnames -- "$WL/cxxnames" 0.5
F=$T/cxxnames.folded
LEAF='void q::leaf<int, long>(q::Pair<int, long>&, int)'
DRIVE='q::drive(int, int)'
COMMA='q::operator,(q::Acc&, int)'
CALL='q::Acc::operator()(int, int)'
LESS='q::operator<(q::Acc const&, q::Acc const&)'
sum() { awk '{ s += $NF } END { print s + 0 }'; }
# neighbours FOLDED F DIR: F's callers (DIR -1) or callees (DIR 1, with [self]) as "name<TAB>n"
# rows, each counted once per stack, sorted
neighbours() {
	awk -v f="$2" -v d="$3" "$FOLD_AWK"'{ parse(); delete seen
		for (i = 2; i <= k; i++) if (fr[i] == f) {
			y = i + d < 2 ? "[root]" : i + d > k ? (d > 0 ? "[self]" : "") : fr[i + d]
			sub(/_\[k\]$/, "", y) # folded marks kernel frames; the csv rows name the function
			if (y != "" && !(y in seen)) { seen[y]; c[y] += n } }
		} END { for (y in c) print y "\t" c[y] }' "$1" | sort
}
# table OPTION=F: perch's --callers/--callees csv rows as "name<TAB>n", sorted
table() {
	"$PERCH" report --format=csv "$1" "$T/cxxnames.data" |
		python3 -c 'import csv, sys
for r in list(csv.reader(sys.stdin))[1:]: print(r[0] + "\t" + r[1])' | sort
}
# holding FOLDED F...: the samples whose stack holds any of F...
holding() {
	awk -v fs="$(printf '%s\n' "${@:2}")" "$FOLD_AWK"'BEGIN { m = split(fs, want, "\n") }
		{ parse(); for (i = 2; i <= k; i++) for (j = 1; j <= m; j++) if (fr[i] == want[j]) { s += n; next } }
		END { print s + 0 }' "$1"
}
# without FOLDED F: the stacks with F's frames removed, summed per stack, sorted
without() {
	awk -v f="$2" "$FOLD_AWK"'{ parse(); s = fr[1]; m = 0
		for (i = 2; i <= k; i++) if (fr[i] != f) { s = s ";" fr[i]; m++ }
		c[m ? s : s ";[folded]"] += n } END { for (x in c) print x " " c[x] }' "$1" | sort
}
all=$(sum <"$F")
rows() { echo "$1" | grep -c .; }
want=$(neighbours "$F" "$LEAF" -1)
got=$(table --callers="$LEAF")
if [ "$got" = "$want" ] && [ "$(rows "$want")" -ge 3 ]; then
	ok "--callers='$LEAF': $(rows "$got") rows, as awk counts them: $(echo "$got" | tr '\t\n' '=;')"
else
	bad "--callers='$LEAF'" "got '$got', awk '$want'"
fi
want=$(neighbours "$F" "$DRIVE" 1)
got=$(table --callees="$DRIVE")
[ "$got" = "$want" ] && [ "$(rows "$want")" -ge 3 ] && ok "--callees='$DRIVE': $(rows "$got") rows, as awk counts them" ||
	bad "--callees='$DRIVE'" "got '$got', awk '$want'"
got=$(folded "$T/cxxnames.data" --select="$COMMA" | sum)
want=$(holding "$F" "$COMMA")
[ "$got" = "$want" ] && [ "$want" -gt 0 ] && ok "--select='$COMMA': $got samples, as awk counts" ||
	bad "--select='$COMMA'" "got $got, awk $want"
got=$(folded "$T/cxxnames.data" --select='q::operator\,(q::Acc&\, int)' | sum)
[ "$got" = "$want" ] && ok "--select='q::operator\,(q::Acc&\, int)' (escaped commas): the same $got" ||
	bad "--select with escaped commas" "got $got, want $want"
got=$(folded "$T/cxxnames.data" --exclude="$CALL,$LESS" | sum)
want=$((all - $(holding "$F" "$CALL" "$LESS")))
[ "$got" = "$want" ] && [ "$want" -lt "$all" ] &&
	ok "--exclude='$CALL,$LESS' (a list of two): $got of $all samples, as awk counts" ||
	bad "--exclude='$CALL,$LESS'" "got $got, awk $want of $all"
folded "$T/cxxnames.data" --fold="$LEAF" | awk "$FOLD_AWK"'{ parse(); c[stack] += n }
	END { for (x in c) print x " " c[x] }' | sort >"$T/fold"
without "$F" "$LEAF" >"$T/fold.awk"
if cmp -s "$T/fold" "$T/fold.awk" && [ "$(holding "$F" "$LEAF")" -gt 0 ]; then
	ok "--fold='$LEAF': the stacks awk gets removing its frames ($(wc -l <"$T/fold") stacks, $all samples)"
else
	bad "--fold='$LEAF'" "differs from awk's: $(diff "$T/fold" "$T/fold.awk" | head -4)"
fi
expect "a name short of its ')'" 64 "no function 'q::operator,(q::Acc&, int' in the profile (closest: '$COMMA'" -- \
	"$PERCH" report --callers='q::operator,(q::Acc&, int' "$T/cxxnames.data"

it_end
