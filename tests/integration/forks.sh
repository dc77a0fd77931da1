#!/usr/bin/env bash
# A process that forks children, one of which forks a grandchild (tests/workloads/forks): every
# process followed, each function on the share its rusage gives.
#
#   tests/integration/forks.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin forks "${1:-build}"

launch forks -- "$WL/forks" 2
cw=$(share "$T/forks.folded" child_work)
gw=$(share "$T/forks.folded" grandchild_work)
nproc=$(rec_stat "$T/forks.data" processes)
# the grandchild was forked inside child_work, so child_work is on the stacks of the children and
# the grandchild: the children's CPU time with their waited-for grandchild's, from rusage
ecw=$(truth_pct "$T/forks.truth" child_tree)
egw=$(truth_pct "$T/forks.truth" grandchild_work)
if within "$cw" "$ecw" 3 && within "$gw" "$egw" 4 && [ "${nproc:-0}" -ge 4 ]; then
	ok "forks: child_work $cw % (rusage $ecw), grandchild_work $gw % ($egw), $nproc processes"
else
	bad forks "child_work $cw % (rusage $ecw), grandchild_work $gw % ($egw), processes ${nproc:-?}"
fi

it_end
