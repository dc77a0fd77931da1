#!/usr/bin/env bash
# A 120-deep call chain without frame pointers: every frame, in order.
#
#   tests/integration/deep.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin deep "${1:-build}"

launch deep -- "$WL/deep" 2
chain="main"
for i in $(seq 1 120); do chain="$chain;$(printf 'f%03d' "$i")"; done
dc=$(pct_within "$T/deep.folded" ";$chain\$" ';f120$')
# f120 burns nearly all of the run's CPU time
mind=$(min_samples "$(truth "$T/deep.truth" cpu)" "$(freq "$T/deep.data")")
if within "${dc% *}" 100 1 && [ "${dc#* }" -ge "${mind:-1}" ]; then
	ok "deep: main;f001;...;f120 complete on ${dc% *} % of the ${dc#* } samples in f120 (>= $mind from the CPU time; no frame pointers)"
else
	bad deep "main;f001;...;f120 complete on only ${dc% *} % of ${dc#* } samples in f120 (want >= $mind)"
fi

it_end
