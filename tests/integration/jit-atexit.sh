#!/usr/bin/env bash
# A perf map written only as the process exits (java -XX:+DumpPerfMapAtExit) still names the JIT
# frames sampled before it (issue 10).
#
#   tests/integration/jit-atexit.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin jit-atexit "${1:-build}"

jit_launch atexit jit at-exit
jh=$(share "$T/atexit.folded" jit_hot)
jc=$(share "$T/atexit.folded" jit_cold)
ejh=$(truth_pct "$T/atexit.truth" jit_hot)
ejc=$(truth_pct "$T/atexit.truth" jit_cold)
an=$(anon "$T/atexit.folded")
# the functions run in random order: the tolerance follows the sample count (binom_tol)
n=$(samples "$T/atexit.folded")
th=$(binom_tol "$ejh" "$n")
tc=$(binom_tol "$ejc" "$n")
if within "$jh" "$ejh" "$th" && within "$jc" "$ejc" "$tc" && within "$an" 0 1; then
	ok "map written at exit: jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-$th/$tc of $n samples), [anon] frames on $an %"
else
	bad "map written at exit" "jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-$th/$tc of $n samples), [anon] frames on $an % (want < 1)"
fi

it_end
