#!/usr/bin/env bash
# Unwinding code built without frame pointers: perch (user stacks unwound in the kernel from
# .eh_frame tables) next to `perf record --call-graph dwarf` (8 KiB stack copies unwound later
# with libdw), `perf record -g` and `perch record --unwind=fp` (frame pointers), as a Markdown
# table.
#
#   bash bench/unwind.sh [BUILD]          BUILD: the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), FREQ (Hz, default 999), ROUNDS (work units; 7300 = ~3 s on the 2-CPU VM)
#
# The target is bench/cpu_work.c built the way distributions build: -O2 -fomit-frame-pointer
# (and no sibling calls, so that every function keeps a frame for any unwinder to find). Each
# round runs it five times, interleaved: unprofiled, under `perch record -p PID` (and with
# --unwind=fp: what unwinding from tables adds), under `perf record --call-graph dwarf -p PID`
# and under `perf record -g -p PID`, all at FREQ Hz on cpu-clock. The workload blocks on a FIFO
# until released, so the profiler attaches first; the profiler runs under bench/rusage.c, which
# reports the CPU time the kernel charged to its process alone. perch adds its BPF programs' run
# time, which it records itself when kernel.bpf_stats_enabled=1 (set here for the run, restored
# on exit). A stack is complete when `main` is on it.
#
# Needs root (BPF, perf at any paranoid level, the sysctl). Takes about 1.5 minutes at RUNS=3; the
# last run's recordings and per-run numbers (results.tsv) stay in BUILD/bench/unwind/.
set -euo pipefail
# the table also into BENCH_OUT (docs/BENCHMARKS.md) when set: bench/publish.sh
. "$(dirname "$0")/publish.sh" unwind "$@"

MODES="baseline perch perch-cold perch-fp perf-dwarf perf-fp"

cd "$(dirname "$0")/.."
BENCH_NAME=unwind
OUT_NAME=unwind
WORKLOAD=cpu_work_nofp
EXTRA_COLUMN=complete # the share of complete stacks, after the common columns
# shellcheck source=bench/lib.sh
. bench/lib.sh

bench_check

mkdir -p "$BENCH"
gcc -O2 -g -Wall -Wextra -Werror -fomit-frame-pointer -fno-optimize-sibling-calls \
	-o "$BENCH/cpu_work_nofp" bench/cpu_work.c || die "cannot build bench/cpu_work.c"
gcc -O2 -Wall -Wextra -Werror -o "$BENCH/rusage" bench/rusage.c || die "cannot build bench/rusage.c"

bench_start

# profiler_cmd MODE PID REC: the command line of MODE's profiler (see bench/lib.sh).
profiler_cmd() {
	case $1 in
	perch) cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q -F "$FREQ" -p "$2" -o "$3") ;;
	perch-cold)
		# Every cache empty: the first perch of a boot on binaries it never saw.
		rm -rf "$OUT/cold-cache" /run/perch
		cmd=(env XDG_CACHE_HOME="$OUT/cold-cache" "$PERCH" record -q -F "$FREQ" -p "$2" -o "$3")
		;;
	perch-fp)
		cmd=(env XDG_CACHE_HOME="$OUT/cache" "$PERCH" record -q --unwind=fp -F "$FREQ" -p "$2"
			-o "$3")
		;;
	perf-dwarf) cmd=(perf record -q --call-graph dwarf -e cpu-clock -F "$FREQ" -p "$2" -o "$3") ;;
	perf-fp) cmd=(perf record -q -g -e cpu-clock -F "$FREQ" -p "$2" -o "$3") ;;
	esac
}


# Samples, BPF run time in ms ("-" where there is none) and the share of samples with `main`
# on the stack. perf's stacks are unwound by `perf script` (libdw for dwarf mode), timed as the
# report: what perch does while recording, perf does there.
read_recording() {
	local mode=$1 rec=$2 cost=$3

	case $mode in
	perch*)
		"$BENCH/rusage" "$cost" "$PERCH" report --format=folded "$rec" >"$rec.folded" 2>&1 ||
			die "perch report $rec failed"
		"$PERCH" report "$rec" >"$rec.head" 2>&1 || die "perch report $rec failed"
		samples=$(sed -n 's/^sampling .* \([0-9][0-9]*\) samples.*/\1/p' "$rec.head")
		bpf_ms=$(sed -n 's/.*BPF programs ran [0-9]* times for \([0-9.]*\) ms.*/\1/p' "$rec.head")
		[ -n "$samples" ] || die "no sample count in the header of perch report $rec"
		[ -n "$bpf_ms" ] || bpf_ms=-
		complete=$(awk '{ n = $NF; all += n; if ($0 ~ /;main;/) hit += n }
			END { printf "%.2f", all ? 100 * hit / all : 0 }' "$rec.folded")
		;;
	perf-*)
		"$BENCH/rusage" "$cost" perf script -i "$rec" -F comm,ip,sym >"$rec.script" 2>/dev/null ||
			die "perf script $rec failed"
		bpf_ms=-
		# A header line starts each sample, its frames follow indented with a tab ("ADDR SYM").
		read -r samples complete < <(awk '
			/^\t/ { if ($2 == "main") m = 1; next }
			/^$/ { next }
			{ if (n) hit += m; n++; m = 0 }
			END { hit += m; printf "%d %.2f\n", n, n ? 100 * hit / n : 0 }' "$rec.script")
		;;
	esac
}

warm_caches perch # for perch and perch-fp; perch-cold empties them

for ((run = 1; run <= RUNS; run++)); do
	for mode in $MODES; do
		echo "unwind: round $run/$RUNS: $mode" >&2
		run_one "$mode" "$run"
	done
done

# ---- the table ----

# median MODE COLUMN: the bare median, for the ratios below.
median() {
	summary "$1" "$2" 1 3 | cut -d' ' -f1
}

base_wall=$(median baseline 3)
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
event=$(sed -n 's/^sampling *\([^ ]*\) at .*/\1/p' "$OUT/perch.1.data.head")
echo "### Unwinding without frame pointers (bench/unwind.sh)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "- kernel: $(uname -r) ($(uname -m)); CPU: ${cpu_model:-unknown}, $(nproc) CPUs"
echo "- event: ${event:-?} at $FREQ Hz for perch, cpu-clock at $FREQ Hz for perf ($(perf --version))"
echo "- target: bench/cpu_work.c built with -O2 -fomit-frame-pointer, $ROUNDS rounds (about $(awk -v w="$base_wall" 'BEGIN { printf "%.1f", w / 1000 }') s unprofiled), single-threaded, attached with -p; $RUNS runs per mode, interleaved"
echo
echo "| mode | target wall s | slowdown (x) | profiler CPU ms (user+sys) | BPF ms | samples | CPU ms per 1000 samples | complete stacks % | recording KB | profiler max RSS MB | report ms |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
# Columns of results.tsv: 1 mode, 2 run, 3 target wall ms, 4 target CPU ms, 5 profiler user+sys
# ms, 6 BPF ms, 7 samples, 8 CPU ms per 1000 samples, 9 max RSS KB, 10 recording bytes,
# 11 report wall ms, 12 complete stacks %.
for mode in $MODES; do
	row="| $mode | $(summary "$mode" 3 1000 2) | $(summary "$mode" 3 "$base_wall" 3)"
	row+=" | $(summary "$mode" 5) | $(summary "$mode" 6 1 2) | $(summary "$mode" 7 1 0)"
	row+=" | $(summary "$mode" 8) | $(summary "$mode" 12 1 2) | $(summary "$mode" 10 1024 0)"
	row+=" | $(summary "$mode" 9 1024) | $(summary "$mode" 11 1 0) |"
	echo "$row"
done
echo
awk -v pc="$(median perch 8)" -v dc="$(median perf-dwarf 8)" -v ps="$(median perch 10)" \
	-v ds="$(median perf-dwarf 10)" -v pk="$(median perch 12)" -v fc="$(median perch-fp 8)" \
	-v cc="$(median perch-cold 8)" '
	BEGIN {
		fmt = "Goal (issue 4): complete stacks for at least 99%% of samples: %s (%.2f %%); "
		fmt = fmt "profiler CPU per sample at most a third of perf --call-graph dwarf: %s "
		fmt = fmt "(%.1f vs %.1f µs, %.1fx less); a recording at least 20 times smaller: %s (%.0fx).\n"
		printf(fmt, (pk >= 99 ? "met" : "NOT met"), pk, (pc * 3 <= dc ? "met" : "NOT met"), pc,
			dc, (pc ? dc / pc : 0), (ps * 20 <= ds ? "met" : "NOT met"), (ps ? ds / ps : 0))
		fmt = "\nWith every cache empty (perch-cold: the first perch of a boot, on binaries it has "
		fmt = fmt "not seen): %.1f µs per sample, %.1fx less than perf --call-graph dwarf.\n"
		printf(fmt, cc, (cc ? dc / cc : 0))
		fmt = "\nWhat unwinding from the tables adds to perch: %.1f µs per sample (perch %.1f, "
		fmt = fmt "perch --unwind=fp %.1f); the rest is the same in both modes.\n"
		printf(fmt, pc - fc, pc, fc)
	}'
echo
echo "Medians, with min-max over the runs in parentheses. Slowdown is the target's wall time over"
echo "the unprofiled median; the baseline row's own range is the run-to-run noise."
echo
echo "1. Profiler CPU: user+system time the kernel charged to the profiler process (wait4 rusage"
echo "   from bench/rusage.c), attaching through writing the recording. CPU per 1000 samples is"
echo "   (profiler CPU + BPF) / samples * 1000, in ms (the same number is µs per sample)."
echo "2. BPF ms: run time of perch's BPF programs (the in-kernel unwinding included) from the"
echo "   kernel's BPF statistics (kernel.bpf_stats_enabled=1), as perch records it; it runs in the"
echo "   interrupted task's context, not in perch's rusage. perf uses no BPF: \"-\"; its in-kernel"
echo "   cost of copying 8 KiB of stack (dwarf) or the callchain (-g) per sample is charged to the"
echo "   target and shows only in the slowdown."
echo "3. Complete stacks: samples with \`main\` on the stack (perch: its folded report; perf:"
echo "   \`perf script\`, which unwinds the dwarf recordings with libdw)."
echo "4. Report ms: \`perch report --format=folded\` and \`perf script\` on that run's recording. perf"
echo "   unwinds its DWARF samples there; perch did all of it while recording."
echo "5. perch and perch-fp use caches one untimed recording filled first (kernel symbols and BTF"
echo "   for the boot in /run/perch; source lines and decompressed debug files per build-id in"
echo "   XDG_CACHE_HOME/perch). perch-cold starts each run with all of them empty."
echo
echo "Per-run values in $OUT/results.tsv."
