#!/usr/bin/env bash
# Shared by bench/overhead.sh and bench/unwind.sh (sourced, not run, with the script's arguments):
# the attach-then-release measurement of a profiler on bench/cpu_work.c. The caller sets
# BENCH_NAME, OUT_NAME (its folder under BUILD/bench), WORKLOAD (a binary in $BENCH) and,
# optionally, EXTRA_COLUMN (a variable read_recording sets, appended to each row), and defines
# profiler_cmd MODE PID REC (fills the array `cmd`) and read_recording MODE REC COST (sets samples
# and bpf_ms, and times reading the recording into COST).
#
#   BUILD: the first argument, the build folder holding perch (default build)
#   env: RUNS (rounds, default 3), FREQ (Hz, default 999), ROUNDS (work units; 7300 = ~3 s on the
#   2-CPU VM)

BUILD=${1:-build}
RUNS=${RUNS:-3}
FREQ=${FREQ:-999}
ROUNDS=${ROUNDS:-7300}
ATTACH_WAIT=1 # seconds the profiler gets to attach before the workload is released
STOP_WAIT=20  # seconds a profiler gets to notice its target exited before it is interrupted
PERCH=$BUILD/perch
BENCH=$BUILD/bench
OUT=$BENCH/$OUT_NAME # the last run's recordings and per-run measurements stay here
FIFO=$OUT/release.fifo

die() {
	echo "$BENCH_NAME: $*" >&2
	exit 1
}

# Root, perch and perf present, RUNS sane.
bench_check() {
	[ "$(id -u)" -eq 0 ] || die "needs root (BPF, perf -p, sysctl kernel.bpf_stats_enabled)"
	[ -x "$PERCH" ] || die "$PERCH not built (make all)"
	command -v perf >/dev/null || die "perf not found (linux-perf)"
	[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, not '$RUNS'"
}

# A fresh OUT with the release FIFO; BPF statistics on for the run, restored on exit.
bench_start() {
	rm -rf "$OUT"
	mkdir -p "$OUT"
	mkfifo "$FIFO"
	old_stats=$(sysctl -n kernel.bpf_stats_enabled)
	work_pid= # the workload and the profiler's rusage wrapper while they run, for cleanup
	prof_pid=
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
	sysctl -qw kernel.bpf_stats_enabled=1
}

bench_cleanup() {
	# Only our own children, and only while they are ours: the ids are cleared once waited for.
	[ -z "$prof_pid" ] || pkill -INT -P "$prof_pid" 2>/dev/null || true
	[ -z "$work_pid" ] || kill "$work_pid" 2>/dev/null || true
	sysctl -qw kernel.bpf_stats_enabled="$old_stats" || true
	rm -f "$FIFO"
}

# field NAME FILE: the value of NAME=VALUE in a helper's one-line output.
field() {
	sed -n "s/.*\\<$1=\\([^ ]*\\).*/\\1/p" "$2"
}

# Start the profiler for MODE on PID in the background, under rusage; sets prof_pid.
cmd=() # set by profiler_cmd
start_profiler() {
	local mode=$1 pid=$2 run=$3

	profiler_cmd "$mode" "$pid" "$OUT/$mode.$run.data"
	"$BENCH/rusage" "$OUT/$mode.$run.cost" "${cmd[@]}" >"$OUT/$mode.$run.log" 2>&1 &
	prof_pid=$!
}

# Wait for the profiler to stop by itself after its target exited (both do); interrupt it if not.
stop_profiler() {
	local mode=$1 run=$2 i rc

	for ((i = 0; i < STOP_WAIT * 10; i++)); do
		kill -0 "$prof_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$prof_pid" 2>/dev/null; then
		echo "$BENCH_NAME: $mode did not stop when its target exited; sending SIGINT" >&2
		pkill -INT -P "$prof_pid" || true
	fi
	rc=0
	wait "$prof_pid" || rc=$?
	prof_pid=
	if [ "$rc" -ne 0 ]; then
		cat "$OUT/$mode.$run.log" >&2
		die "$mode record failed (run $run)"
	fi
}

# One measurement: MODE is baseline or a profiler mode. Appends a row to $OUT/results.tsv.
run_one() {
	local mode=$1 run=$2
	local work=$OUT/$mode.$run.work rec=$OUT/$mode.$run.data
	local prof=- rss=- size=- rep=- per1000=- rc extra=

	samples=- bpf_ms=-
	[ -z "${EXTRA_COLUMN:-}" ] || printf -v "$EXTRA_COLUMN" '%s' -
	"$BENCH/$WORKLOAD" "$FIFO" "$ROUNDS" >"$work" &
	work_pid=$!
	[ "$mode" = baseline ] || start_profiler "$mode" "$work_pid" "$run"
	sleep "$ATTACH_WAIT"
	if [ "$mode" != baseline ] && ! kill -0 "$prof_pid" 2>/dev/null; then
		cat "$OUT/$mode.$run.log" >&2
		die "$mode record exited before the workload started (run $run)"
	fi
	timeout 10 sh -c "echo go > '$FIFO'" || die "workload did not open $FIFO"
	rc=0
	wait "$work_pid" || rc=$?
	work_pid=
	[ "$rc" -eq 0 ] || die "workload failed (run $run, $mode)"

	if [ "$mode" != baseline ]; then
		stop_profiler "$mode" "$run"
		prof=$(awk -v u="$(field user_ms "$OUT/$mode.$run.cost")" \
			-v s="$(field sys_ms "$OUT/$mode.$run.cost")" 'BEGIN { printf "%.1f", u + s }')
		rss=$(field maxrss_kb "$OUT/$mode.$run.cost")
		size=$(stat -c %s "$rec")
		read_recording "$mode" "$rec" "$OUT/$mode.$run.report"
		rep=$(field wall_ms "$OUT/$mode.$run.report")
		per1000=$(awk -v p="$prof" -v b="$bpf_ms" -v n="$samples" \
			'BEGIN { printf "%.2f", n ? (p + (b == "-" ? 0 : b)) / n * 1000 : 0 }')
	fi
	[ -z "${EXTRA_COLUMN:-}" ] || extra=$'\t'${!EXTRA_COLUMN}
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n' "$mode" "$run" \
		"$(field wall_ms "$work")" "$(field cpu_ms "$work")" "$prof" "$bpf_ms" "$samples" \
		"$per1000" "$rss" "$size" "$rep" "$extra" >>"$OUT/results.tsv"
}

# summary MODE COLUMN [SCALE [DIGITS]]: "median (min-max)" of a column of results.tsv over MODE's
# runs, each value divided by SCALE; "-" where the runs have no value.
summary() {
	awk -F'\t' -v m="$1" -v c="$2" '$1 == m { print $c }' "$OUT/results.tsv" | sort -g |
		awk -v s="${3:-1}" -v d="${4:-1}" '
		$1 == "-" { dash = 1 }
		$1 != "-" { v[n++] = $1 / s }
		END {
			if (dash || !n) { print "-"; exit }
			med = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
			if (n == 1)
				printf "%.*f\n", d, med
			else
				printf "%.*f (%.*f-%.*f)\n", d, med, d, v[0], d, v[n - 1]
		}'
}

# One recording of MODE first, not in the table, so that perch's caches (XDG_CACHE_HOME=$OUT/cache,
# which the caller's perch command line sets, and the boot's in /run/perch) hold what any earlier
# run on these binaries would have left: source lines, decompressed debug files, kernel symbols.
warm_caches() {
	echo "$BENCH_NAME: warming perch's caches" >&2
	run_one "$1" 0
	sed -i "/^$1\t0\t/d" "$OUT/results.tsv"
}
