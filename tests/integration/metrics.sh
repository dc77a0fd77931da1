#!/usr/bin/env bash
# System metrics (perch record --metrics) on tests/workloads/metrics, which grows its RSS by a
# known ramp, burns a known CPU share, faults each page it touches once and writes known bytes,
# and measures all of it itself (getrusage): perch's series, read from the chrome export's
# counters (tests/metrics_sum.py), must give those back. Then --metrics=off writes none, and a
# bad value is refused.
#
#   tests/integration/metrics.sh [BUILD_DIR]   (or tests/integration.sh BUILD_DIR metrics)
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin metrics "${1:-build}"

# metric NAME FIELD: from $T/m.sums (FIELD 2: the maximum, 3: the integral over time)
metric() { awk -v n="$1" -v f="$2" '$1 == n { print $f }' "$T/m.sums"; }

if perch_record m -- "$WL/metrics" 20 100 10 0.5; then
	"$PERCH" report --format=chrome "$T/m.data" >"$T/m.json"
	python3 "$TESTS/metrics_sum.py" "$T/m.json" metrics >"$T/m.sums" || bad "chrome counters" "metrics_sum.py failed"
	hz=$(getconf CLK_TCK)

	# RSS: the largest sample within 10 % of the workload's peak (ru_maxrss)
	rss=$(metric rss 2)
	peak=$(awk -v k="$(truth "$T/m.truth" maxrss_kib)" 'BEGIN { printf "%.3f", k / 1024 }')
	if within "$rss" "$peak" "$(awk -v p="$peak" 'BEGIN { print p / 10 }')"; then
		ok "rss: max $rss MiB, workload's peak $peak MiB"
	else
		bad "rss" "max $rss MiB, workload's peak $peak MiB (more than 10 % apart)"
	fi

	# CPU: /proc's utime and getrusage's ru_utime split the same precise run time by the ticks
	# that hit user or kernel mode, so user time agrees within a binomial spread of those ticks
	# (four standard deviations) plus two ticks for the reads' timing
	user=$(awk -v v="$(metric cpu_user 3)" 'BEGIN { printf "%.3f", v / 100 }')
	want=$(truth "$T/m.truth" user_s)
	sys=$(truth "$T/m.truth" sys_s)
	tol=$(awk -v u="$want" -v s="$sys" -v hz="$hz" 'BEGIN { n = (u + s) * hz; p = n > 0 ? u * hz / n : 0
		printf "%.3f", (4 * sqrt(n * p * (1 - p)) + 2) / hz }')
	if within "$user" "$want" "$tol"; then
		ok "cpu user: $user s, workload's ru_utime $want s (+-$tol)"
	else
		bad "cpu user" "$user s, workload's ru_utime $want s (+-$tol)"
	fi
	share=$(awk -v u="$(metric cpu_user 2)" 'BEGIN { print u }')
	if awk -v s="$share" 'BEGIN { exit !(s > 0 && s <= 100.5) }'; then
		ok "cpu user: the busiest interval's share $share % is a share of one CPU (1 thread)"
	else
		bad "cpu user share" "busiest interval $share % (one thread: 0 to 100 %)"
	fi

	# faults: every page touched faulted once (no huge pages); the total is ru_minflt's
	faults=$(awk -v v="$(metric minor_faults 3)" 'BEGIN { printf "%.0f", v }')
	pages=$(truth "$T/m.truth" pages_touched)
	minflt=$(truth "$T/m.truth" minflt)
	if awk -v f="$faults" -v p="$pages" -v m="$minflt" 'BEGIN { exit !(f >= p && f <= m) }'; then
		ok "minor faults: $faults >= $pages pages touched, <= ru_minflt $minflt"
	else
		bad "minor faults" "$faults (pages touched $pages, ru_minflt $minflt)"
	fi

	# bytes written: the workload's writes to /dev/null (wchar counts them)
	wrote=$(awk -v v="$(metric write_bytes 3)" 'BEGIN { printf "%.0f", v * 1024 }')
	wbytes=$(truth "$T/m.truth" written_bytes)
	if awk -v w="$wrote" -v b="$wbytes" 'BEGIN { exit !(w >= b && w <= b + 65536) }'; then
		ok "write bytes: $wrote, workload wrote $wbytes"
	else
		bad "write bytes" "$wrote, workload wrote $wbytes"
	fi

	# a busy share for every CPU /proc/stat lists
	ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
	got=$(metric cpus 2)
	if [ "$got" = "$ncpu" ]; then
		ok "cpu busy: a series for each of the $ncpu CPUs"
	else
		bad "cpu busy" "$got series, /proc/stat lists $ncpu CPUs"
	fi

	# the text report's section; without NVML, one note saying why
	if says "$T/m.data" '^Metrics (every 100 ms'; then
		ok "text report: Metrics section"
	else
		bad "text report" "no Metrics section"
	fi
	if [ ! -e /dev/nvidiactl ]; then
		if "$PERCH" report --metrics=all "$T/m.data" | grep -q 'note: no NVML' && ! says "$T/m.data" 'NVML'; then
			ok "no GPU driver: --metrics=all's note says no NVML; the default report, no GPU involved, does not"
		else
			bad "no NVML note" "$("$PERCH" report --metrics=all "$T/m.data" | grep -A2 '^Metrics')"
		fi
	fi
fi

# the HTML report's Metrics tab, rendered by a browser: a row per series
if [ -e "$T/m.data" ] && command -v chromium >/dev/null; then
	"$PERCH" report --format=html -o "$T/m.html" "$T/m.data"
	rows=$(timeout 120 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$T/m.html#tab=metrics" 2>/dev/null |
		grep -o '<table class="metrics">.*</table>' | grep -o '<tr><td' | wc -l)
	series=$(rec_stat "$T/m.data" metrics_series)
	if [ "$rows" -gt 0 ] && [ "$rows" = "$series" ]; then
		ok "html: the Metrics tab shows $rows rows, one per series"
	else
		bad "html Metrics tab" "$rows rows, $series series"
	fi
else
	echo "skip html: no chromium"
fi

# attached: the counters start at the attach (what the process ran before is not in the series):
# its user time over the attach is its own user share (ru_utime over its steps) times the time
# attached, within a quarter of that time (tick accounting, the last interval and start-up)
"$WL/metrics" 40 100 1 0.5 >"$T/att.truth" &
wpid=$!
sleep 1.5
"$PERCH" record -q -o "$T/att.data" -p "$wpid" -d 1.5 2>"$T/att.err"
rc=$?
wait "$wpid"
if [ $rc -eq 0 ]; then
	"$PERCH" report --format=chrome "$T/att.data" >"$T/att.json"
	python3 "$TESTS/metrics_sum.py" "$T/att.json" metrics >"$T/m.sums"
	user=$(awk -v v="$(metric cpu_user 3)" 'BEGIN { printf "%.3f", v / 100 }')
	att=$(awk -v d="$(rec_stat "$T/att.data" duration_ns)" 'BEGIN { printf "%.3f", d / 1e9 }')
	want=$(awk -v u="$(truth "$T/att.truth" user_s)" -v a="$att" 'BEGIN { printf "%.3f", u / 4.0 * a }')
	if within "$user" "$want" "$(awk -v a="$att" 'BEGIN { print a / 4 }')"; then
		ok "attach: user time $user s over $att s attached, the workload's share gives $want s"
	else
		bad "attach" "user time $user s over $att s attached, the workload's share gives $want s"
	fi
else
	bad "attach" "perch exited $rc: $(cat "$T/att.err")"
fi

# GPUs through a stand-in NVML (tests/nvml/fake_nvml.c: GPU i at 30 + 20 i % and i + 1 GiB),
# loaded from LD_LIBRARY_PATH as the driver's would be; then its nvmlInit_v2 failing: one note
nvml=$BUILD/tests/nvml
if [ -e "$nvml/libnvidia-ml.so.1" ]; then
	if LD_LIBRARY_PATH=$nvml perch_record gpu -- sleep 0.5; then
		"$PERCH" report --format=chrome "$T/gpu.data" >"$T/gpu.json"
		python3 "$TESTS/metrics_sum.py" "$T/gpu.json" system >"$T/m.sums"
		got="$(metric gpu0_gpu_util 2) $(metric gpu1_gpu_util 2) $(metric gpu0_gpu_memory_used 2) $(metric gpu1_gpu_memory_used 2)"
		if [ "$got" = "30.0 50.0 1024.0 2048.0" ] && ! says "$T/gpu.data" 'no NVML'; then
			ok "stand-in NVML: utilization and memory of both GPUs ($got)"
		else
			bad "stand-in NVML" "got '$got' (want '30.0 50.0 1024.0 2048.0')"
		fi
	fi
	if FAKE_NVML_FAIL=1 LD_LIBRARY_PATH=$nvml perch_record nogpu -- sleep 0.2; then
		if "$PERCH" report --metrics=all "$T/nogpu.data" | grep -q 'note: no NVML: nvmlInit_v2: Driver Not Loaded' &&
			! "$PERCH" report --format=chrome "$T/nogpu.data" | grep -q '"name":"gpu'; then
			ok "NVML init failing: one note, no GPU series"
		else
			bad "NVML init failing" "$("$PERCH" report "$T/nogpu.data" | grep -A1 '^Metrics')"
		fi
	fi
else
	echo "skip stand-in NVML: $nvml/libnvidia-ml.so.1 not built"
fi

# --metrics=off: no METRICS block, no counters
if perch_record off --metrics=off -- "$WL/metrics" 3 100 1 0.2; then
	if [ -z "$(rec_stat "$T/off.data" metrics_series)" ] &&
		! "$PERCH" report --format=chrome "$T/off.data" | grep -q '"cat":"metrics"'; then
		ok "--metrics=off: no series"
	else
		bad "--metrics=off" "the recording has metrics"
	fi
fi
# --metrics=200: points 200 ms apart
if perch_record slow --metrics=200 -- "$WL/metrics" 6 100 1 0.2; then
	if says "$T/slow.data" '^Metrics (every 200 ms'; then
		ok "--metrics=200: every 200 ms"
	else
		bad "--metrics=200" "$("$PERCH" report "$T/slow.data" | grep '^Metrics')"
	fi
fi

# -a: every process of the host that perch meets is a target, most of them idle most of the
# time; a process is read only when it had a tick since its last sample, else every 10 s (reading
# all of them every 100 ms cost perch record -a twice perf record -a -g's CPU). The workload, busy
# at each interval, keeps its user time as ru_utime gives it; a bash under a name of its own that
# spins 0.3 s and then waits 3 s in read is read while it spins (3 intervals, a few more when a
# tick lands late) and not again for 10 s: at most 8 points where reading every interval gave 20.
cp "$(command -v bash)" "$T/idler"
# shellcheck disable=SC2016 # the idler's own script
spin='end=$(( ${EPOCHREALTIME/./} + 300000 )); while [ "${EPOCHREALTIME/./}" -lt $end ]; do :; done; exec 3<>"$0"; read -r -t 3 -u 3'
mkfifo "$T/idle.fifo"
# shellcheck disable=SC2016 # expanded by that sh
if perch_record all -a -- sh -c '"$1" -c "$2" "$3" & exec "$4" 20 100 10 0.5' sh "$T/idler" "$spin" "$T/idle.fifo" "$WL/metrics"; then
	"$PERCH" report --format=chrome "$T/all.data" >"$T/all.json"
	python3 "$TESTS/metrics_sum.py" "$T/all.json" metrics >"$T/m.sums" || bad "-a chrome counters" "metrics_sum.py failed"
	user=$(awk -v v="$(metric cpu_user 3)" 'BEGIN { printf "%.3f", v / 100 }')
	want=$(truth "$T/all.truth" user_s)
	sys=$(truth "$T/all.truth" sys_s)
	tol=$(awk -v u="$want" -v s="$sys" -v hz="$(getconf CLK_TCK)" 'BEGIN { n = (u + s) * hz; p = n > 0 ? u * hz / n : 0
		printf "%.3f", (4 * sqrt(n * p * (1 - p)) + 2) / hz }')
	pts=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
pid = [e["pid"] for e in d["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"] == "idler"]
print(max([sum(1 for e in d["traceEvents"] if e.get("ph") == "C" and e.get("cat") == "metrics" and e["pid"] == p and e["name"].startswith("cpu_user")) for p in pid] or [-1]))' "$T/all.json")
	if within "$user" "$want" "$tol" && [ "$pts" -ge 1 ] && [ "$pts" -le 8 ]; then
		ok "-a: the busy workload's user time $user s (ru_utime $want s +-$tol); the idler's cpu user series $pts points over its 0.3 s spin and 2 s wait"
	else
		bad "-a metrics" "user $user s (ru_utime $want s +-$tol), the idler's cpu user series $pts points (want 1 to 8)"
	fi
fi
pkill -f "$T/idler" 2>/dev/null

expect "bad --metrics" 64 "bad --metrics value 'often'" -- "$PERCH" record --metrics=often -o "$T/n.data" -- true
expect "--metrics below the drain period" 64 "bad --metrics value '10'" -- "$PERCH" record --metrics=10 -o "$T/n.data" -- true

it_end
