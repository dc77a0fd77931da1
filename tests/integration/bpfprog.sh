#!/usr/bin/env bash
# A BPF program unloaded before the drain that reads its ticks: tests/workloads/bpfprog loads
# perch_burn, runs it in the kernel for 30 ms and unloads it, all before perch's first drain
# (100 ms in), so /proc/kallsyms no longer lists it when its frames are named. The kernel's
# PERF_RECORD_KSYMBOL records (the mmap watch) must name it, in [bpf]: never [kernel]+0xADDR, and
# never the name of another program that shares its BPF pack (kallsyms has no sizes: an address
# of the unloaded program falls after a loaded neighbour's start, perch's own on_exit here). Its
# share of the process's samples is the share the workload measured itself (the kernel's time in
# the program's runs over the process's CPU time: the rest is exec, the verifier's load and the
# test-run loop), within 20 points: ~80 ticks at 1999 Hz, a binomial spread of ~6 points.
#
#   tests/integration/bpfprog.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin bpfprog "${1:-build}"

if launch bpf -F 1999 -- "$WL/bpfprog"; then
	named=$(stack_pct "$T/bpf.folded" ';bpf_test_run_\[k\];bpf_prog_[0-9a-f]*_perch_burn_\[k\]')
	others=$(sed 's/ [0-9]*$//' "$T/bpf.folded" | grep -o ';bpf_test_run_\[k\];[^;]*' |
		grep -v '_perch_burn_\[k\]$' |
		grep -c ';\(bpf_prog_\|\[kernel\]+0x\)')
	raw=$(grep -c '\[kernel\]+0xffffffffc' "$T/bpf.folded")
	"$PERCH" report --sort=dso "$T/bpf.data" >"$T/bpf.dso" 2>&1
	read -r _ prog_ms cpu_ms <"$T/bpf.truth"
	want=$(awk -v p="${prog_ms:-0}" -v c="${cpu_ms:-0}" 'BEGIN { if (c > 0) printf "%.1f", 100 * p / c; else print 0 }')
	if awk -v p="$named" -v w="$want" 'BEGIN { exit !(w > 0 && p >= w - 20 && p <= w + 20) }' &&
		[ "$others" -eq 0 ] &&
		[ "$raw" -eq 0 ] && grep -q '\[bpf\]' "$T/bpf.dso"; then
		ok "bpfprog: $named % of samples in bpf_prog_*_perch_burn [bpf] ($want % by the workload's own clocks), unloaded before the drain; no other name, no [kernel]+0xffffffffc... frame"
	else
		bad bpfprog "$named % in bpf_prog_*_perch_burn (the workload measured $want %, want within 20 points), $others frames under bpf_test_run named otherwise, $raw [kernel]+0xffffffffc... stacks: $(sort -t' ' -k2 -rn "$T/bpf.folded" | head -2 | sed 's/.*bpf_test_run/bpf_test_run/' | tr '\n' '|')"
	fi
fi

it_end
