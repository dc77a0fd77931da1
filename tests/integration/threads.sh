#!/usr/bin/env bash
# Four threads of known CPU time (tests/workloads/threads): each thread function on its share of
# the samples, and each sample rooted at the name its thread gave itself (spin-N).
#
#   tests/integration/threads.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin threads "${1:-build}"

launch threads -- "$WL/threads" 3
tok=1
shares=""
want=""
for i in 0 1 2 3; do
	s=$(share "$T/threads.folded" "thread_fn_$i")
	e=$(truth_pct "$T/threads.truth" "thread_fn_$i")
	shares="$shares $s"
	want="$want $e"
	within "$s" "$e" 4 || tok=0
done
if [ $tok -eq 1 ]; then
	ok "threads: thread_fn_0..3 =$shares % (threads' CPU clocks:$want, +-4)"
else
	bad threads "thread_fn_0..3 =$shares % (threads' CPU clocks:$want, +-4)"
fi
# each thread names itself spin-N (pthread_setname_np): samples carry the thread's name
tok=1
roots=""
for i in 0 1 2 3; do
	s=$(rooted "$T/threads.folded" "spin-$i")
	roots="$roots $s"
	within "$s" "$(truth_pct "$T/threads.truth" "thread_fn_$i")" 4 || tok=0
done
if [ $tok -eq 1 ]; then
	ok "thread names: samples rooted at spin-0..3 =$roots % (threads' CPU clocks:$want, +-4)"
else
	bad "thread names" "samples rooted at spin-0..3 =$roots % (threads' CPU clocks:$want, +-4)"
fi

it_end
