#!/usr/bin/env bash
# JIT leaves called from native code built without frame pointers (node's, the JVM's): the stacks
# go on through main to the C library's start, as those of native leaves do (issue 10), framed
# ones too (issue 23).
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

# JIT leaves with frames called through a JIT function with one too (V8's and the JVM's code): no
# return address on top of the stack, so the leaf is left by its frame pointer, and from main on
# the tables walk on to _start as for the thread's other stacks, not to where the frame-pointer
# chain ends (issue 23: node's JIT stacks rooted at __libc_start_call_main, the rest at _start)
perch_record framed -- "$WL/jit-nofp" 1 framed
rm -f "/tmp/perf-$(rec_stat "$T/framed.data" pids).map"
folded "$T/framed.data" | grep '^jit-nofp;' >"$T/framed.folded"
read -r full in_jit < <(pct_within "$T/framed.folded" '^jit-nofp;_start;[^;]*;__libc_start_call_main;main;jit_entry;jit_(hot|cold)$' ';jit_(hot|cold)$')
IFS=$'\t' read -r pct n root second < <(top_root "$T/framed.folded")
if [ "$in_jit" -gt 0 ] && within "$full" 100 3 && [ "$root" = _start ] && within "$pct" 100 2; then
	ok "framed JIT leaves: _start;...;main;jit_entry;jit_* on $full % of the $in_jit samples in them; $pct % of the thread's $n under $root"
else
	bad "framed JIT leaves" "_start;...;main;jit_entry;jit_* on $full % of the $in_jit samples in them (want 97 or more); $pct % of $n under $root (want _start, 98 % or more; next: $second); heaviest others: $(misses "$T/framed.folded" '^jit-nofp;_start;' '')"
fi

it_end
