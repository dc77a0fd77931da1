#!/usr/bin/env bash
# The text report leads with what was asked: after `perch record -a -d 2` (a machine's worth of
# processes, most of them idle) the functions table comes first, not under a block of metrics
# per process; the Metrics section is a summary (no all-zero "not sampled" blocks); the NVML note
# shows only where a GPU is involved; and --metrics=all still shows every series: a block for
# each process the recording holds series of (counted from its series: --format=stats'
# metrics_series, one cpu_busy series a CPU and nine a process).
#
#   tests/integration/report-layout.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin report-layout "${1:-build}"

if "$PERCH" record -q -a -d 2 -o "$T/a.data" 2>"$T/a.err"; then
	"$PERCH" report "$T/a.data" >"$T/a.txt"
	"$PERCH" report --metrics=all "$T/a.data" >"$T/all.txt"
	line=$(grep -n -m1 '^Top functions by self' "$T/a.txt" | cut -d: -f1)
	if [ -n "$line" ] && [ "$line" -le 40 ]; then
		ok "the functions table starts at line $line of $(wc -l <"$T/a.txt")"
	else
		bad "functions first" "the functions table at line '${line:-none}': $(grep -n '^[A-Z]' "$T/a.txt" | head -5 | tr '\n' ' ')"
	fi
	blocks=$(grep -cE '^ process [0-9]+ .*:$' "$T/a.txt")
	if [ "$blocks" -eq 0 ] && ! grep -q 'not sampled' "$T/a.txt" && grep -q '^ processes by CPU time' "$T/a.txt"; then
		ok "Metrics: a summary (no per-process blocks, none 'not sampled')"
	else
		bad "metrics summary" "$blocks per-process blocks: $(sed -n '/^Metrics/,/^$/p' "$T/a.txt" | head -8)"
	fi
	if grep -q '^ GPU [0-9]* (NVML)' "$T/all.txt"; then
		echo "skip NVML note: this machine has GPU metrics"
	elif ! grep -q 'NVML' "$T/a.txt"; then
		ok "no GPU involved: no NVML note"
	else
		bad "NVML note" "$(grep NVML "$T/a.txt")"
	fi
	ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
	want=$((($(rec_stat "$T/a.data" metrics_series) - ncpu) / 9))
	got=$(grep -cE '^ process [0-9]+ .*:$' "$T/all.txt")
	zero=$(grep -c '(not sampled):$' "$T/all.txt")
	shown=$(sed -n '/^ processes by CPU time/,/^ [^ ]/p' "$T/a.txt" | grep -cE '^  [0-9]+ ')
	more=$(sed -n 's/^  \.\.\. \([0-9]*\) more processes.*/\1/p' "$T/a.txt")
	if [ "$want" -gt 1 ] && [ "$got" -eq "$want" ] && [ "$zero" -gt 0 ] && [ $((shown + ${more:-0})) -eq "$want" ]; then
		ok "--metrics=all: all $got processes' series ($zero not sampled); the summary: $shown rows + $more more"
	else
		bad "--metrics=all" "$got process blocks, $want from the series; summary $shown rows + '$more' more"
	fi
else
	bad "record -a -d 2" "$(cat "$T/a.err")"
fi

it_end
