#!/usr/bin/env bash
# Recursion 300 deep, past the 127-frame stack limit: the samples are counted truncated, and the
# call tree still folds the recursion into one node and its self-recursive child.
#
#   tests/integration/deep-recursion.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin deep-recursion "${1:-build}"

launch deeprec -- "$WL/deep" 1 recurse
tr_=$(rec_stat "$T/deeprec.data" truncated_stacks)
tot=$(rec_stat "$T/deeprec.data" sampled)
# Nodes labelled recurse under each root of the call tree (roots are the outermost frames: their
# total's "%" is the 9th character, a child's is two further right). Complete stacks root at
# _start, truncated ones (127 frames from the leaf) at recurse, or, for the few ticks at depths
# 124..126 on the way down or up, at main or one of the libc frames above it: how many such roots
# a run gets is chance, so the bound is per root. Under each, the recursion must fold into one
# node and its self-recursive child, however deep it went.
rn=$(call_tree "$T/deeprec.data" --min-percent=0 |
	awk 'substr($0, 9, 1) == "%" { root++ } /%  recurse$/ { n[root]++ } END { for (r in n) { if (n[r] > max) max = n[r]; roots++ }
		printf "%d %d", max, roots }')
if [ "${tr_:-0}" -ge $((${tot:-1} * 9 / 10)) ] && [ "${rn% *}" -ge 1 ] && [ "${rn% *}" -le 2 ]; then
	ok "deep recursion (300 > 127 frames): $tr_ of $tot samples counted truncated; recurse folds into at most ${rn% *} node(s) under each of the ${rn#* } roots it is under"
else
	bad "deep recursion" "truncated ${tr_:-?} of ${tot:-?}; recurse nodes under one root: ${rn% *} (want 1..2), roots ${rn#* }"
fi

it_end
