#!/usr/bin/env bash
# --unwind=dwarf (tables only) and --unwind=fp on a binary without frame pointers: the first walks
# every stack to main, the second stops early, and only the first reports DWARF unwinding.
#
#   tests/integration/unwind-modes.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin unwind-modes "${1:-build}"

"$PERCH" record -q --unwind=dwarf -o "$T/nofp-dwarf.data" -- "$WL/shares-nofp" 1 >/dev/null 2>"$T/err"
folded "$T/nofp-dwarf.data" >"$T/nofp-dwarf.folded"
"$PERCH" record -q --unwind=fp -o "$T/nofp-fp.data" -- "$WL/shares-nofp" 1 >/dev/null 2>"$T/err"
folded "$T/nofp-fp.data" >"$T/nofp-fp.folded"
md=$(share "$T/nofp-dwarf.folded" main)
mf=$(share "$T/nofp-fp.folded" main)
if within "$md" 100 1 && awk -v m="$mf" 'BEGIN { exit !(m < 50) }' &&
	says "$T/nofp-dwarf.data" "^unwinding  dwarf: " && ! says "$T/nofp-fp.data" "^unwinding"; then
	ok "--unwind=dwarf (tables only): main on $md %; --unwind=fp on the same binary: $mf % (its stacks stop early)"
else
	bad "--unwind=dwarf/fp" "main on $md % with dwarf (want >= 99), $mf % with fp (want < 50)"
fi

it_end
