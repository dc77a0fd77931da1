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
# Of the samples in the workload's own functions: a tick that lands while the process is still in
# execve or ld.so start-up has no main to reach, with any unwinder (0.5-1.2 % of the samples with
# the sanitizer build of perch as the parent, which is what made "of all samples" flaky).
read -r md _ < <(pct_within "$T/nofp-dwarf.folded" ';main;(.*;)?work_' '(^|;)work_')
read -r mf _ < <(pct_within "$T/nofp-fp.folded" ';main;(.*;)?work_' '(^|;)work_')
if within "$md" 100 1 && awk -v m="$mf" 'BEGIN { exit !(m < 50) }' &&
	says "$T/nofp-dwarf.data" "^unwinding  dwarf: " && ! says "$T/nofp-fp.data" "^unwinding"; then
	ok "--unwind=dwarf (tables only): main on $md %; --unwind=fp on the same binary: $mf % (its stacks stop early)"
else
	# what the dwarf run's stacks without main were, and what perch counted of its walks: the
	# evidence a failure needs (the share once came out 98.97 % on a loaded machine, not seen
	# again in 13 runs, with CPU hogs and with the sanitizer build)
	bad "--unwind=dwarf/fp" "main on $md % with dwarf (want >= 99), $mf % with fp (want < 50); dwarf stacks in work_ without main: $(grep -E '(^|;)work_' "$T/nofp-dwarf.folded" | grep -Ev ';main;(.*;)?work_' | head -5 | tr '\n' '|'); $("$PERCH" report --format=stats "$T/nofp-dwarf.data" | awk '/^(dwarf|early_stacks|unwind_stopped|truncated)/ && $2 != 0 { printf "%s %s, ", $1, $2 }')"
fi

it_end
