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
jm=$(stack_pct "$T/jit.folded" ';main;jit_(hot|cold)$')
# jit_hot runs three times as long as jit_cold (the workload times each call); both are frameless
# leaves called from main
ejh=$(truth_pct "$T/jit.truth" jit_hot)
ejc=$(truth_pct "$T/jit.truth" jit_cold)
if within "$jh" "$ejh" 3 && within "$jc" "$ejc" 3 && within "$jm" 100 3; then
	ok "jit: jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), main;jit_* on $jm %"
else
	bad jit "jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), main;jit_* on $jm %"
fi

it_end
