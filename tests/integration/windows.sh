#!/usr/bin/env bash
# perch record's control of what is recorded: --delay, -d, --max-duration, --max-size without
# --timeline, SIGUSR1/SIGUSR2 and --control=fifo. The truth is the workload's
# (tests/workloads/phases: three phases of burning, each printing its CLOCK_MONOTONIC interval,
# asking its perch to pause after the first and to resume after the second) and the recording's
# own exact sample times (--timeline): every sample falls inside an interval the recording says
# was sampled, and those intervals sit where the workload paused and resumed.
#
#   tests/integration/windows.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin windows "${1:-build}"
DUMP=$(realpath "$BUILD/tests/timeline_dump")

# phase NAME N start|end: the workload's phase N interval, ns
phase() { awk -v n="$2" -v w="$3" '$1 == "phase" && $2 == n { print (w == "start" ? $3 : $4) }' "$T/$1.truth"; }
# iv NAME I start|end: the recording's sampled interval I, ns
iv() { rec_stat "$T/$1.data" "enabled_$2_$3_ns"; }

# outside NAME: the recording's timed ticks that fall in no sampled interval, and all of them
outside() {
	"$PERCH" report --format=stats "$T/$1.data" >"$T/$1.stats"
	"$DUMP" "$T/$1.data" >"$T/$1.tl"
	awk 'FNR == NR { if ($1 ~ /^enabled_[0-9]+_start_ns$/) s[++n] = $2
			 if ($1 ~ /^enabled_[0-9]+_end_ns$/) e[++m] = $2; next }
	     $1 == "event" { all++; in_ = 0
			     for (i = 1; i <= n; i++) if ($2 >= s[i] && $2 < e[i]) in_ = 1
			     if (!in_) out++ }
	     END { print out + 0, all + 0 }' "$T/$1.stats" "$T/$1.tl"
}

# ticks_in NAME FROM TO: timed ticks in [FROM, TO)
ticks_in() { awk -v a="$2" -v b="$3" '$1 == "event" && $2 >= a && $2 < b { n++ } END { print n + 0 }' "$T/$1.tl"; }

# le A B...: A <= B <= ... (ns, as numbers)
le() { awk 'BEGIN { for (i = 1; i < ARGC - 1; i++) if (ARGV[i] == "" || ARGV[i] + 0 > ARGV[i + 1] + 0) exit 1 }' "$@"; }

# paused_run NAME MODE...: the workload pauses its perch after phase 1 and resumes it after
# phase 2; every tick inside the two sampled intervals, none in phase 2 once the pause was taken
paused_run() {
	local name=$1 res out all n p1s p1e p2s p2e p3s e0s e0e e1s
	shift
	perch_record "$name" --timeline "${RECORD_OPTS[@]}" -- "$WL/phases" 1 "$@" || return
	read -r out all <<<"$(outside "$name")"
	n=$(rec_stat "$T/$name.data" enabled_intervals)
	p1s=$(phase "$name" 1 start) p1e=$(phase "$name" 1 end) p2s=$(phase "$name" 2 start)
	p2e=$(phase "$name" 2 end) p3s=$(phase "$name" 3 start)
	e0s=$(iv "$name" 0 start) e0e=$(iv "$name" 0 end) e1s=$(iv "$name" 1 start)
	if [ "$n" = 2 ] && [ "$out" -eq 0 ] && [ "$all" -gt 0 ]; then
		ok "$name: 2 sampled intervals; all $all timed ticks inside them"
	else
		bad "$name" "$n intervals, $out of $all ticks outside them"
	fi
	# The pause is asked after phase 1 ends, the resume after phase 2 ends.
	if le "$e0s" "$p1s" "$p1e" "$e0e" && le "$p2e" "$e1s"; then
		ok "$name: sampled from before phase 1 to its pause, resumed after phase 2"
	else
		bad "$name intervals" "interval 0 [$e0s, $e0e), 1 from $e1s; phases 1 [$p1s, $p1e), 2 [$p2s, $p2e)"
	fi
	res=$(ticks_in "$name" "$e0e" "$e1s")
	if [ "$res" -eq 0 ] && [ "$(ticks_in "$name" "$p1s" "$p1e")" -gt 0 ] &&
		[ "$(ticks_in "$name" "$p3s" 99999999999999999999)" -gt 0 ]; then
		ok "$name: no tick while paused; ticks in phases 1 and 3"
	else
		bad "$name paused" "$res ticks while paused"
	fi
	if [ "$MODE" = fifo ] && le "$e0e" "$p2s" && le "$e1s" "$p3s"; then
		ok "$name: each ack came after its command took effect"
	elif [ "$MODE" = fifo ]; then
		bad "$name acks" "pause at $e0e, phase 2 from $p2s; resume at $e1s, phase 3 from $p3s"
	fi
	if says "$T/$name.data" "^recorded   0.000-"; then
		ok "$name: report says which intervals were recorded: $("$PERCH" report "$T/$name.data" | grep '^recorded')"
	else
		bad "$name header" "no 'recorded' line"
	fi
}

MODE=signal RECORD_OPTS=()
paused_run sig signal
mkfifo "$T/ctl" "$T/ack"
MODE=fifo RECORD_OPTS=("--control=fifo:$T/ctl,$T/ack")
paused_run fifo fifo "$T/ctl" "$T/ack"

# --delay: nothing sampled before it; the command ran meanwhile (its first phase began before)
if perch_record delay --timeline --delay=0.5 -- "$WL/phases" 0.5; then
	read -r out all <<<"$(outside delay)"
	st=$(rec_stat "$T/delay.data" start_ns)
	e0s=$(iv delay 0 start)
	if [ "$out" -eq 0 ] && [ "$all" -gt 0 ] && le $((st + 500000000)) "$e0s" &&
		le "$(phase delay 1 start)" "$e0s" && [ "$(ticks_in delay 0 "$e0s")" -eq 0 ]; then
		ok "delay: sampling began $(((e0s - st) / 1000000)) ms after the start; $all ticks, none before"
	else
		bad "delay" "start $st, interval from $e0s, $out of $all ticks outside"
	fi
fi

# --max-duration: sampling stops for good, the command runs on to its end
if perch_record maxdur --timeline --max-duration=0.5 -- "$WL/phases" 0.5; then
	read -r out all <<<"$(outside maxdur)"
	st=$(rec_stat "$T/maxdur.data" start_ns)
	e0e=$(iv maxdur 0 end)
	if [ "$(rec_stat "$T/maxdur.data" stopped_at)" = 1 ] && [ "$out" -eq 0 ] &&
		[ -n "$(phase maxdur 3 end)" ] && le $((st + 500000000)) "$e0e" "$(phase maxdur 3 start)" &&
		says "$T/maxdur.data" "stopped at --max-duration"; then
		ok "maxdur: stopped at --max-duration after $(((e0e - st) / 1000000)) ms; command ran to its end"
	else
		bad "maxdur" "stopped_at $(rec_stat "$T/maxdur.data" stopped_at), $out ticks outside, interval end $e0e"
	fi
fi

# --max-size without --timeline: sampling stops at the first drain past the cap (the definitions
# of recursion's deep stacks pass 4 KiB early), the command runs on to its end
if perch_record maxsize --max-size=4K -- "$WL/recursion" 1.5; then
	size=$(stat -c %s "$T/maxsize.data")
	st=$(rec_stat "$T/maxsize.data" start_ns)
	e0e=$(iv maxsize 0 end)
	dur=$(rec_stat "$T/maxsize.data" duration_ns)
	if [ "$(rec_stat "$T/maxsize.data" stopped_at)" = 2 ] && le "$e0e" $((st + dur - 1)) &&
		says "$T/maxsize.data" "stopped at --max-size"; then
		ok "maxsize: stopped at --max-size $(((e0e - st) / 1000000)) ms into a $((dur / 1000000)) ms run; $size bytes"
	else
		bad "maxsize" "stopped_at $(rec_stat "$T/maxsize.data" stopped_at), interval end $e0e, $size bytes"
	fi
fi

# attached: --delay and --max-duration count from the attach
"$WL/phases" 2 >/dev/null &
wpid=$!
sleep 0.2
"$PERCH" record -q --delay=0.3 --max-duration=0.8 -o "$T/att.data" -p "$wpid" 2>"$T/att.err"
rc=$?
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
if [ $rc -eq 0 ] && [ "$(rec_stat "$T/att.data" stopped_at)" = 1 ] &&
	[ "$(rec_stat "$T/att.data" enabled_intervals)" = 1 ]; then
	st=$(rec_stat "$T/att.data" start_ns)
	ok "attach: sampled $((($(iv att 0 start) - st) / 1000000))-$((($(iv att 0 end) - st) / 1000000)) ms after the attach, then stopped at --max-duration"
else
	bad "attach" "exit $rc, stopped_at $(rec_stat "$T/att.data" stopped_at): $(cat "$T/att.err")"
fi

# a flood of unknown commands on the FIFO (the command writes them itself): at most 5 complaints
# a second, the rest counted in one line each second; a control byte in a line shows as '?'
mkfifo "$T/flood"
"$PERCH" record -q "--control=fifo:$T/flood" -o "$T/flood.data" -- sh -c \
	"printf 'x\\033[2Jy\\n' >'$T/flood'; yes bogus | head -n 100000 >'$T/flood'" 2>"$T/flood.err"
rc=$?
lines=$(wc -l <"$T/flood.err")
shown=$(grep -c "unknown command '" "$T/flood.err")
held=$(sed -n 's/.*--control: \([0-9]*\) more complaints about the control FIFO not shown.*/\1/p' "$T/flood.err" |
	awk '{ n += $1 } END { print n + 0 }')
if [ $rc -eq 0 ] && [ "$lines" -le 12 ] && [ $((shown + held)) -eq 100001 ] &&
	grep -q "unknown command 'x?\[2Jy'" "$T/flood.err" && ! grep -q $'\033' "$T/flood.err"; then
	ok "flood: 100001 unknown commands, $lines lines on stderr ($shown shown, $held counted), escaped"
else
	bad "flood" "exit $rc, $lines lines, $shown shown + $held counted (want 100001): $(head -3 "$T/flood.err")"
fi

expect "--delay=-1" 64 "bad --delay '-1'" -- "$PERCH" record --delay=-1 -o "$T/n.data" -- true
expect "--max-duration=0" 64 "bad --max-duration '0'" -- "$PERCH" record --max-duration=0 -o "$T/n.data" -- true
expect "--control=tcp:1" 64 "bad value 'tcp:1'" -- "$PERCH" record --control=tcp:1 -o "$T/n.data" -- true
expect "--control not a FIFO" 64 "is not a FIFO" -- "$PERCH" record "--control=fifo:$T/none" -o "$T/n.data" -- true
it_end
