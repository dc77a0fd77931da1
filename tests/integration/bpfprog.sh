#!/usr/bin/env bash
# A BPF program unloaded before the drain that reads its ticks: tests/workloads/bpfprog loads
# perch_burn, runs it in the kernel for 30 ms and unloads it, all before perch's first drain
# (100 ms in), so /proc/kallsyms no longer lists it when its frames are named. The kernel's
# PERF_RECORD_KSYMBOL records (the mmap watch) must name it, in [bpf]: never [kernel]+0xADDR, and
# never the name of another program that shares its BPF pack (kallsyms has no sizes: an address
# of the unloaded program falls after a loaded neighbour's start, perch's own on_exit here). The
# share is >= 30 %, not more: the rest of the 30 ms is the verifier's (the load) and the test-run
# loop around the program, more of it on a loaded machine.
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
	if awk -v p="$named" 'BEGIN { exit !(p >= 30) }' && [ "$others" -eq 0 ] &&
		[ "$raw" -eq 0 ] && grep -q '\[bpf\]' "$T/bpf.dso"; then
		ok "bpfprog: $named % of samples in bpf_prog_*_perch_burn [bpf], unloaded before the drain; no other name, no [kernel]+0xffffffffc... frame"
	else
		bad bpfprog "$named % in bpf_prog_*_perch_burn (want >= 30), $others frames under bpf_test_run named otherwise, $raw [kernel]+0xffffffffc... stacks: $(sort -t' ' -k2 -rn "$T/bpf.folded" | head -2 | sed 's/.*bpf_test_run/bpf_test_run/' | tr '\n' '|')"
	fi
fi

it_end
