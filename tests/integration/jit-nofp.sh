#!/usr/bin/env bash
# JIT leaves called from native code built without frame pointers (node's, the JVM's): the stacks
# go on through main to the C library's start, as those of native leaves do (issue 10).
#
#   tests/integration/jit-nofp.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin jit-nofp "${1:-build}"

jit_launch nofp jit-nofp plain
full=$(pct_within "$T/nofp.folded" ';__libc_start_call_main;main;jit_(hot|cold)$' ';jit_(hot|cold)$')
full=${full% *}
if within "$full" 100 3; then
	ok "JIT leaves under code without frame pointers: __libc_start_call_main;main;jit_* on $full % of the samples in them"
else
	bad "JIT leaves under code without frame pointers" "__libc_start_call_main;main;jit_* on $full % of the samples in them (want 97 or more); heaviest others: $(misses "$T/nofp.folded" ';__libc_start_call_main;main;jit_(hot|cold)$' ';jit_(hot|cold)$'); $("$PERCH" report --format=stats "$T/nofp.data" | grep -E '^(dwarf|unwind)' | tr '\n' ' ')"
fi

it_end
