#!/usr/bin/env bash
# A real JIT: node running a hot JavaScript loop for 2 s, with --perf-basic-prof (its perf map).
# V8's compiled code has frames but no unwind tables, and node's own code calls it: the stacks of
# the main thread must end at the same outermost frame however the walk left the JIT frames
# (issue 23: 49 % of them ended at __libc_start_call_main, the rest at _start, and every tree
# view showed the program twice). Skipped without node. About 3 s.
#
#   tests/integration/jit-node.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin jit-node "${1:-build}"

if ! command -v node >/dev/null; then
	echo "jit-node: skipped: no node"
	it_end
	exit
fi
js='function f(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * ((i & 7) + 1); return s }
const end = Date.now() + 2000; let t = 0; while (Date.now() < end) t += f(100000); console.log(t > 0)'
# in $T: node writes files (isolate-*.log) into its working folder
(cd "$T" && perch_record node -- node --perf-basic-prof -e "$js")
pid=$(rec_stat "$T/node.data" pids)
rm -f "/tmp/perf-$pid.map"
folded "$T/node.data" --tid="$pid" >"$T/node.folded"
IFS=$'\t' read -r pct n root second < <(top_root "$T/node.folded")
# the stacks through JavaScript (V8's JIT frames): the ones whose walk leaves JIT code
grep ';JS:' "$T/node.folded" >"$T/js.folded"
IFS=$'\t' read -r js_pct js_n js_root js_second < <(top_root "$T/js.folded")
# All of the thread's stacks but a few that stop short in the C library at start-up (OpenSSL's
# locks, malloc: 1-2 %, with or without JIT frames, counted in unwind_stopped_early) under one
# frame; the JavaScript ones, all of them under that one.
if [ "$js_n" -ge 100 ] && [ "$js_root" = "$root" ] && within "$js_pct" 100 2 && within "$pct" 100 5; then
	ok "node's main thread: $pct % of its $n samples under $root, $js_pct % of the $js_n in JavaScript"
else
	bad "node's main thread" "$pct % of its $n samples under $root (next: $second), $js_pct % of the $js_n in JavaScript under $js_root (next: $js_second); want one root: 98 % of those in JavaScript (at least 100), 95 % of all; heaviest others: $(misses "$T/node.folded" "^[^;]*;$root;" '' | cut -c1-400)"
fi

it_end
