#!/usr/bin/env bash
# The bounded tree: its size is set by the call graph, not the run time. ping and pong recurse
# into each other 60 deep (tests/workloads/recursion); the call tree must fold them the same after
# 1 s and after 5 s.
#
#   tests/integration/recursion.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin recursion "${1:-build}"

launch rec1 -- "$WL/recursion" 1
launch rec5 -- "$WL/recursion" 5
# Nodes labelled ping or pong that hold at least 2 % of the samples. Were the tree to grow with
# the recursion, nodes at depths 3..50 would each hold more than that (a node's total is the
# samples at or below its depth). The cut-off hides the odd startup sample (a tick in the first
# milliseconds after exec, before the kernel has the unwind table of a library just mapped, ends
# its stack early and roots the recursion elsewhere; on a loaded machine there are more of them).
rnodes() { call_tree "$1" --min-percent=2 | grep -cE '%  (ping|pong)$'; }
n1=$(rnodes "$T/rec1.data")
n5=$(rnodes "$T/rec5.data")
# Both bounded by the call graph however long it ran (not required equal: a startup sample's
# node may pass the cut-off in the short run on a loaded machine, which is chance, not the tree).
if [ "$n1" -gt 0 ] && [ "$n5" -gt 0 ] && [ "$n1" -le 4 ] && [ "$n5" -le 4 ]; then
	ok "recursion: ping/pong fold into $n1 tree nodes after 1 s and $n5 after 5 s (depth 60)"
else
	bad recursion "ping/pong tree nodes after 1 s: ${n1:-?}, after 5 s: ${n5:-?}"
fi

it_end
