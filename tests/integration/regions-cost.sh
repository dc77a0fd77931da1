#!/usr/bin/env bash
# What a profiled region pair runs (runtime/perch.c), counted rather than timed, so a shared or
# loaded machine cannot make it pass or fail: under callgrind, 20,000 begin/end pairs of
# bench/regions.c with the profiler's flag set make no call beyond perch__begin_slow and
# perch__end_slow (the thread's block, the epoch, pauses and the node found without a call); and
# libperch.so reaches its thread-local state at a fixed offset from the thread pointer (initial-
# exec), never through __tls_get_addr. Skipped (as passed, said so) without valgrind.
#
#   tests/integration/regions-cost.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin regions-cost "${1:-build}"
SRC=$TESTS/..

tls=$(objdump -d --no-show-raw-insn "$BUILD/libperch.so" | grep -c '__tls_get_addr')
dyn=$(readelf -rW "$BUILD/libperch.so" | grep -c 'DTPMOD64\|DTPOFF64')
if [ "$tls" -eq 0 ] && [ "$dyn" -eq 0 ]; then
	ok "libperch.so: thread-local state at a fixed offset from the thread pointer (no __tls_get_addr)"
else
	bad "libperch.so TLS" "$tls calls to __tls_get_addr, $dyn dynamic TLS relocations"
fi

if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
	ok "regions: callgrind check skipped (no valgrind)"
	it_end
	exit
fi
gcc -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/include" -pthread -o "$T/regions" \
	"$SRC/bench/regions.c" "$SRC/runtime/perch.c"
valgrind -q --tool=callgrind --callgrind-out-file="$T/cg" "$T/regions" active 1 20000 >/dev/null
# calls out of the two entry points: the thread's first begin takes its block (a handful of calls)
callgrind_annotate --tree=calling "$T/cg" 2>/dev/null | awk '
	/^ *[0-9,]+ .*\* / { f = $0 ~ /:perch__(begin|end)_slow / }
	f && /> / && match($0, /\([0-9,]+x\)/) {
		n = substr($0, RSTART + 1, RLENGTH - 3)
		gsub(",", "", n)
		if (n + 0 > 100)
			print
	}
' >"$T/calls"
pairs=$(callgrind_annotate "$T/cg" 2>/dev/null | grep -c ':perch__\(begin\|end\)_slow ')
if [ "$pairs" -eq 2 ] && [ ! -s "$T/calls" ]; then
	ok "regions: a profiled pair calls nothing beyond perch__begin_slow and perch__end_slow"
else
	bad "regions calls" "entry points seen: $pairs; calls out of them: $(head -3 "$T/calls" | tr -s ' ')"
fi
it_end
