#!/usr/bin/env bash
# perch loads only the BPF programs a run uses (the kernel verifies each one it loads: start-up
# time): read from the program fds perch holds while it records (/proc/PID/fdinfo prog_type).
# A plain run: the tick (perf_event) and the three process tracepoints (raw_tracepoint), no
# uprobe (the GPU probes) and no tracing program (off-CPU); --off-cpu adds its tracing program.
#
#   tests/integration/startup.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin startup "${1:-build}"

# prog_types PERCH_ARGS...: the sorted prog_type numbers of perch's BPF program fds, mid-run
prog_types() {
	"$PERCH" record -q -o "$T/s.data" "$@" -- sleep 1.5 >/dev/null 2>&1 &
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
		*bpf-prog*) sed -n 's/^prog_type:\t//p' "/proc/$pid/fdinfo/${f##*/}" ;;
		esac
	done | sort -n | tr '\n' ' '
	wait "$rec"
}

# linux/bpf.h: 7 perf_event, 17 raw_tracepoint, 2 kprobe (uprobes), 26 tracing
got=$(prog_types)
if [ "$got" = "7 17 17 17 " ]; then
	ok "startup: a plain run loads the tick and the process tracepoints only"
else
	bad "startup programs" "prog_types '$got' (want '7 17 17 17 ': no GPU uprobes, no off-CPU)"
fi
got=$(prog_types --off-cpu)
if [ "$got" = "7 17 17 17 26 " ]; then
	ok "startup: --off-cpu adds its sched_switch program"
else
	bad "startup --off-cpu" "prog_types '$got' (want '7 17 17 17 26 ')"
fi
it_end
