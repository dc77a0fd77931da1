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
if within "$jh" "$ejh" 3 && within "$jc" "$ejc" 3 && within "$an" 0 1; then
	ok "map written at exit: jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), [anon] frames on $an %"
else
	bad "map written at exit" "jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), [anon] frames on $an % (want < 1)"
fi

it_end
