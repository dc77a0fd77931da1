#!/usr/bin/env bash
# Short-lived processes: 200 exec'd children of ~10 ms, all gone before the report. Their samples
# are named, child_burn is on its share of the tree's CPU time, and none lacks mappings.
#
#   tests/integration/shortlived.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin shortlived "${1:-build}"

launch short -- "$WL/shortlived"
# share of samples whose innermost user frame has a function name
named=$(leaf_named "$T/short.folded")
burn=$(share "$T/short.folded" child_burn)
nomaps=$(rec_stat "$T/short.data" samples_without_mappings)
# ld.so and libc internals are named through their separate debug info (libc6-dbg).
total=$(samples "$T/short.folded")
# child_burn's share of the tree's time (rusage: forks, execs, start-up and exits included), a
# range: a tick of the guest's timer may land in time the hypervisor stole from the vCPU, which
# the CPU clocks leave out, and it steals from a spinning vCPU more than from the short phases
# between (CI14: 86.46 % against 83.11 % of CPU time). Measured on the 2-vCPU Xeon VM, 200
# children of a copy of this workload that bracketed its burn by wall clock and schedstat: the ticks in the burns
# were 2271 where their CPU time gives 2001 and their wall time less the run-queue wait 2461;
# a steady 2-s burner gave 1955 samples for 1.88 s of CPU, 1927 for 1.81; perf record -a -e
# cpu-clock beside perch counted as many. The ends: child_burn's CPU time over the tree's, and
# its time current on the vCPU (child_burn_oncpu) over the tree's CPU time plus the burns' steal.
# perf record -g on this workload with inherited cpu-clock events (frequency mode) misses most
# ticks of each child's exec, start-up and exit, so it is no reference here.
range=$(awk -v b="$(truth "$T/short.truth" child_burn)" -v o="$(truth "$T/short.truth" child_burn_oncpu)" \
	-v c="$(truth "$T/short.truth" cpu)" 'BEGIN { if (c > 0) printf "%.2f %.2f", 100 * b / c, 100 * o / (c + o - b) }')
lo=${range% *} hi=${range#* }
mins=$(min_samples "$(truth "$T/short.truth" cpu)" "$(freq "$T/short.data")")
if within "$named" 100 5 && [ -n "$range" ] && awk -v g="$burn" -v l="$lo" -v h="$hi" 'BEGIN { exit !(g >= l - 3 && g <= h + 3) }' &&
	[ "${nomaps:-1}" -eq 0 ] && [ "$total" -ge "${mins:-1}" ]; then
	ok "short-lived: $named % of samples named at the leaf, child_burn $burn % (workload $lo-$hi, +-3), $nomaps of $total without mappings (>= $mins samples)"
else
	bad shortlived "named $named %, child_burn $burn % (workload ${lo:-?}-${hi:-?}, +-3), ${nomaps:-?} of $total samples without mappings (want 0, and >= $mins samples)"
fi

# Samples of a child the process table did not know yet at the drain were looked up in the maps
# /proc shows then (none once it has exited): 1 of 2224 samples under the sanitizer build on a
# busy machine. Two ways in: (1) a child forked after the drain's read of the process events,
# sampled before the flip: the drain now reads the events again after its flip; (2) an early tick
# (right after an exec) taken while the drain read the early ring, newer than the time the drain
# had taken before: `now - time` wrapped around, "older than PERCH_EARLY_NS", handed on at once
# instead of waiting for the table: the time is now taken after the read. PERCH_TEST_DRAIN_DELAY_MS
# widens (1)'s window to 50 of every 100 ms: 80 children gave 11-17 such samples of ~900 without
# the second read; with it and without (2)'s fix, the sanitizer build still gave 0-3; none with
# both. (3) (session 13, CI8: 1 of 2458) an early tick taken after the flip, in a module whose
# mmap record the drain's catch-up had not read, walked short and handed on at that drain with
# its leaf in no mapping: such a tick now waits for the next drain. The same variable delays the
# parts' drains after the catch-up too: 8 runs gave 10-13 early stacks short in 4 and one
# sample without mappings before, at most 1 short and none without mappings after.
PERCH_TEST_DRAIN_DELAY_MS=50 launch slow -- "$WL/shortlived" 80
nomaps=$(rec_stat "$T/slow.data" samples_without_mappings)
total=$(samples "$T/slow.folded")
if [ "${nomaps:-1}" -eq 0 ] && [ "$total" -gt 0 ]; then
	ok "short-lived, slow drains: $nomaps of $total samples without mappings"
else
	bad "shortlived slow drains" "${nomaps:-?} of $total samples without mappings (want 0)"
fi

it_end
