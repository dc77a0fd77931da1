#!/usr/bin/env bash
# The cost of continuous, system-wide profiling (docs/BENCHMARKS.md, "Agent cost"): perch agent
# -a at 19 Hz for SECS seconds, pushing OTLP every 10 s to a loopback receiver
# (tests/push/receiver.go), while a shell keeps starting short processes (true, ls, sleep PAUSE:
# about 6 execs a second at the default PAUSE) -- a host that keeps starting processes. Then, side
# by side on one interval of the same load, perch record -a -F 99 and perf record -a -g -F 99.
#
#   bash bench/agent.sh [BUILD]     BUILD: the build folder holding perch (default build)
#   env: SECS (default 60), PAUSE (default 0.5), SIDE (seconds of the side-by-side, default 20),
#   RSS_EVERY (seconds between the agent's RSS readings in the table, default SECS / 6: an hour
#   with SECS=3600 RSS_EVERY=300)
#
# CPU: the user + system time the kernel charged to each profiler process (bench/rusage.c's
# wait4), over its wall time, in % of one CPU (BPF programs run in the sampled tasks and are not
# in it: bench/system.sh measures them). RSS: /proc/PID/status VmRSS as the run goes, and the
# peak (maxrss). Needs root and go.
set -euo pipefail
. "$(dirname "$0")/publish.sh" agent "$@"

cd "$(dirname "$0")/.."
BUILD=${1:-build}
SECS=${SECS:-60}
PAUSE=${PAUSE:-0.5}
SIDE=${SIDE:-20}
RSS_EVERY=${RSS_EVERY:-$((SECS / 6))}
PERCH=$BUILD/perch
OUT=$(realpath "$BUILD")/bench/agent

die() {
	echo "agent: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (BPF)"
[ -x "$PERCH" ] || die "$PERCH not built (make all)"
command -v go >/dev/null || die "go not found (scripts/install-deps.sh installs golang-go)"
rm -rf "$OUT"
mkdir -p "$OUT/in"
gcc -O2 -Wall -Wextra -Werror -o "$OUT/rusage" bench/rusage.c || die "cannot build bench/rusage.c"
GOCACHE=$(realpath "$BUILD")/go-cache
(export HOME=$OUT GOCACHE GOPATH=$OUT/gopath GOTOOLCHAIN=local GO111MODULE=off
	go build -o "$OUT/receiver" tests/push/receiver.go) || die "cannot build the receiver"
pids=()
cleanup() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT
"$OUT/receiver" "$OUT/in" &
pids+=($!)
for _ in $(seq 100); do [ -s "$OUT/in/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$OUT/in/port")

# churn SECONDS: short processes until SECONDS have passed; their count in $OUT/execs
churn() {
	local end=$((SECONDS + $1)) n=0
	while [ $SECONDS -lt "$end" ]; do
		/bin/true
		ls / >/dev/null
		sleep "$PAUSE"
		n=$((n + 3))
	done
	echo "$n" >"$OUT/execs"
}
kv() { sed -n "s/.*$2=\([0-9.]*\).*/\1/p" "$1"; }
# pct FILE: the CPU time in FILE (rusage) over its wall time, in % of one CPU
pct() { awk -v u="$(kv "$1" user_ms)" -v s="$(kv "$1" sys_ms)" -v w="$(kv "$1" wall_ms)" 'BEGIN { printf "%.2f", 100 * (u + s) / w }'; }

churn $((SECS + 3)) &
pids+=($!)
sleep 1
"$OUT/rusage" "$OUT/agent.rusage" "$PERCH" agent --url="$URL" --otlp -a -F 19 -d "$SECS" 2>"$OUT/agent.err" &
agent=$!
sleep 1
ap=$(pgrep -P "$agent" -x perch | head -1)
: >"$OUT/rss"
t=0
while kill -0 "$agent" 2>/dev/null; do
	if [ $((t % RSS_EVERY)) -eq 0 ] && [ -n "$ap" ]; then
		echo "$t $(awk '/^VmRSS:/ { print $2 }' "/proc/$ap/status" 2>/dev/null)" >>"$OUT/rss"
	fi
	sleep 1
	t=$((t + 1))
done
wait "$agent" || die "perch agent failed: $(cat "$OUT/agent.err")"
wait "${pids[1]}" || true
execs=$(cat "$OUT/execs")
pushed=$(sed -n 's/.*: \([0-9]*\) pushed.*/\1/p' "$OUT/agent.err")

# side by side: perch record -a -F 99 and perf record -a -g -F 99 over the same SIDE seconds
churn $((SIDE + 3)) &
pids+=($!)
sleep 1
"$OUT/rusage" "$OUT/perch.rusage" "$PERCH" record -q -a -F 99 -d "$SIDE" -o "$OUT/side.data" &
p1=$!
"$OUT/rusage" "$OUT/perf.rusage" perf record -q -a -g -F 99 -o "$OUT/side.perf" -- sleep "$SIDE" 2>/dev/null &
p2=$!
wait "$p1" "$p2" || true
wait "${pids[2]}" || true

echo "perch agent -a -F 19 --otlp for $SECS s on $(nproc) CPUs ($(uname -r)), a shell starting $execs short processes meanwhile ($(awk -v e="$execs" -v s="$SECS" 'BEGIN { printf "%.1f", e / s }') a second); $pushed intervals pushed"
echo
echo "| profiler | CPU (% of one) | peak RSS | wall |"
echo "|---|---|---|---|"
echo "| perch agent -a -F 19 | $(pct "$OUT/agent.rusage") % | $(($(kv "$OUT/agent.rusage" maxrss_kb) / 1024)) MB | $(kv "$OUT/agent.rusage" wall_ms) ms |"
echo "| perch record -a -F 99 ($SIDE s, side by side) | $(pct "$OUT/perch.rusage") % | $(($(kv "$OUT/perch.rusage" maxrss_kb) / 1024)) MB | $(kv "$OUT/perch.rusage" wall_ms) ms |"
echo "| perf record -a -g -F 99 (the same $SIDE s) | $(pct "$OUT/perf.rusage") % | $(($(kv "$OUT/perf.rusage" maxrss_kb) / 1024)) MB | $(kv "$OUT/perf.rusage" wall_ms) ms |"
echo
echo "The agent's RSS as it ran (s: MB): $(awk '{ printf "%s%d: %.1f", (NR > 1 ? ", " : ""), $1, $2 / 1024 }' "$OUT/rss")"
