#!/usr/bin/env bash
# Through a signal frame, without frame pointers: the handler, __restore_rt, then the interrupted
# code and its callers.
#
#   tests/integration/signals.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin signals "${1:-build}"

launch sig -- "$WL/signals" 1
# every sample inside in_handler (the clock reads it makes in libc, the vDSO and the kernel
# included): as many as the CPU time it measured gives, at least
sg=$(pct_within "$T/sig.folded" ';main;interrupted;(.*;)?__restore_rt;handler;in_handler(;|$)' ';in_handler(;|$)')
mins=$(min_samples "$(truth "$T/sig.truth" in_handler)" "$(freq "$T/sig.data")")
if within "${sg% *}" 100 1 && [ "${sg#* }" -ge "${mins:-1}" ]; then
	ok "signal frames: main;interrupted;...;__restore_rt;handler;in_handler on ${sg% *} % of the ${sg#* } samples in the handler (>= $mins from its CPU time)"
else
	bad signals "main;interrupted;...;__restore_rt;handler;in_handler on ${sg% *} % of ${sg#* } samples in the handler (want >= $mins from its CPU time)"
fi

it_end
