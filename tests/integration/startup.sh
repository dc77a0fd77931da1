#!/usr/bin/env bash
# perch loads only the BPF programs a run uses (the kernel verifies each one it loads: start-up
# time): read from the program fds perch holds while it records (/proc/PID/fdinfo prog_type).
# A plain run: the tick (perf_event) and the three process tracepoints (raw_tracepoint), no
# uprobe (the GPU probes) and no tracing program (off-CPU); --off-cpu adds its tracing program.
# And the verifier's walk of the tick program stays within 16 times its length (the kernel's
# verified_insns over its instructions in build/sample.bpf.o; a branch per step of a 64-step loop
# made it 50: ~100 ms more of every start; the region stack's loops inlined into the tick, 19:
# 26,944 against 20,088 with them in global functions).
#
#   tests/integration/startup.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin startup "${1:-build}"

# prog_types PERCH_ARGS...; the tick program's id and verified_insns appended to $T/tick: the sorted prog_type numbers of perch's BPF program fds, mid-run
prog_types() {
	"$PERCH" record -q -o "$T/s.data" "$@" -- sleep 1.5 >/dev/null 2>"$T/record.err" &
	local rec=$! pid="" f
	for _ in $(seq 50); do
		sleep 0.1
		pid=$(pgrep -P "$rec" -x perch || true)
		[ -z "$pid" ] && pid=$rec
		[ "$(ls -l /proc/"$pid"/fd 2>/dev/null | grep -c bpf-prog)" -ge 4 ] && break
	done
	sleep 0.3
	for f in /proc/"$pid"/fd/*; do
		case $(readlink "$f") in
		*bpf-prog*)
			sed -n 's/^prog_type:\t//p' "/proc/$pid/fdinfo/${f##*/}"
			awk '$1 == "prog_type:" && $2 == 7 { t = 1 } $1 == "prog_id:" { id = $2 }
				$1 == "verified_insns:" { v = $2 } END { if (t) print id, v }' \
				"/proc/$pid/fdinfo/${f##*/}" >>"$T/tick"
			;;
		esac
	done | sort -n | tr '\n' ' '
	wait "$rec"
}

# linux/bpf.h: 7 perf_event, 17 raw_tracepoint, 2 kprobe (uprobes), 26 tracing
got=$(prog_types)
if [ "$got" = "7 17 17 17 " ]; then
	ok "startup: a plain run loads the tick and the process tracepoints only"
else
	bad "startup programs" "prog_types '$got' (want '7 17 17 17 ': no GPU uprobes, no off-CPU); perch said: $(head -3 "$T/record.err" | tr '\n' ' ')"
fi
verified=0
[ -s "$T/tick" ] && read -r _ verified <"$T/tick"
# its length: the tick's section and the shared functions (.text) in the object perch embeds
len=0
for h in $(readelf -SW "$BUILD/sample.bpf.o" | sed 's/^ *\[ *[0-9]*\] //' |
	awk '$1 == "perf_event" || $1 == ".text" { print $5 }'); do
	len=$((len + 0x$h / 8))
done
if [ "$len" -gt 0 ] && [ "${verified:-0}" -gt 0 ] && [ "$verified" -le $((16 * len)) ]; then
	ok "startup: the verifier walked the tick program $verified instructions ($len long)"
else
	bad "startup verifier" "walked '$verified' instructions of a $len-instruction tick program (budget 16x)"
fi
got=$(prog_types --off-cpu)
if [ "$got" = "7 17 17 17 26 " ]; then
	ok "startup: --off-cpu adds its sched_switch program"
else
	bad "startup --off-cpu" "prog_types '$got' (want '7 17 17 17 26 ')"
fi
# Its cost, with kernel.bpf_stats_enabled for the run: the tick program's runs and time apart from
# all programs' (every sample is a run of it, and so is every other tick of the CPUs it samples
# on: the events are per CPU, the target filter in the program; the process tracepoints run for
# every process of the machine), and the text header says how much each run took.
was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
perch_record cost -- "$WL/shares" 0.4
sysctl -qw kernel.bpf_stats_enabled="$was"
read -r tns tn ns n sampled < <(for k in bpf_tick_run_time_ns bpf_tick_run_count bpf_run_time_ns bpf_run_count sampled; do
	rec_stat "$T/cost.data" $k; done | tr '\n' ' ')
if [ "${tn:-0}" -ge "${sampled:-1}" ] && [ "$tn" -le "${n:-0}" ] && [ "${tns:-0}" -gt 0 ] &&
	[ "$tns" -le "${ns:-0}" ] && "$PERCH" report "$T/cost.data" | grep -q "the tick program $tn times"; then
	ok "startup: the tick program's cost apart: $tn runs (every CPU's ticks) for $sampled samples, $((tns / tn)) ns each; all programs $n runs"
else
	bad "startup cost" "tick program '$tn' runs, '$tns' ns; all '$n' runs, '$ns' ns; '$sampled' samples"
fi
it_end
