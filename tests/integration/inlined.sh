#!/usr/bin/env bash
# Inline frames and source lines: a function inlined into its caller is its own frame, and with
# --lines both carry the source lines the workload marks (LINE:burn, LINE:call).
#
#   tests/integration/inlined.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin inlined "${1:-build}"

launch inl -- "$WL/inlined" 1
folded "$T/inl.data" --lines >"$T/inl.lines"
src=$TESTS/workloads/inlined.c
lburn=$(grep -n 'LINE:burn' "$src" | cut -d: -f1)
lcall=$(grep -n 'LINE:call' "$src" | cut -d: -f1)
ih=$(share "$T/inl.folded" hot_inline)
ic=$(stack_pct "$T/inl.lines" ";caller \\(inlined\\.c:$lcall\\);hot_inline \\(inlined\\.c:$lburn\\)\$")
if within "$ih" 100 5 && within "$ic" 100 5; then
	ok "inline: hot_inline (inlined into caller) on $ih % of stacks; --lines caller (inlined.c:$lcall);hot_inline (inlined.c:$lburn) on $ic %"
else
	bad inline "hot_inline on $ih %, with lines on $ic %: $(sort -t' ' -k2 -n "$T/inl.lines" | tail -2)"
fi

it_end
