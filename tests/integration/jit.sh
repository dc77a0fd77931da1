#!/usr/bin/env bash
# JIT code named through /tmp/perf-PID.map (tests/workloads/jit: two functions that exist only as
# machine code in anonymous memory), the map gone by report time.
#
#   tests/integration/jit.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin jit "${1:-build}"

jit_launch jit jit
jh=$(share "$T/jit.folded" jit_hot)
jc=$(share "$T/jit.folded" jit_cold)
# of the samples in the JIT code, those whose stack goes on to main (the rest of the run is the
# workload reading its clocks)
jm=$(pct_within "$T/jit.folded" ';main;jit_(hot|cold)$' ';jit_(hot|cold)$')
jm=${jm% *}
# jit_hot runs three times as long as jit_cold (the workload times each call); both are frameless
# leaves called from main, in random order: the shares' tolerance follows the sample count
ejh=$(truth_pct "$T/jit.truth" jit_hot)
ejc=$(truth_pct "$T/jit.truth" jit_cold)
n=$(samples "$T/jit.folded")
th=$(binom_tol "$ejh" "$n")
tc=$(binom_tol "$ejc" "$n")
if within "$jh" "$ejh" "$th" && within "$jc" "$ejc" "$tc" && within "$jm" 100 3; then
	ok "jit: jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-$th/$tc of $n samples), main;jit_* on $jm % of the JIT samples"
else
	bad jit "jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-$th/$tc of $n samples), main;jit_* on $jm % of the JIT samples"
fi

it_end
