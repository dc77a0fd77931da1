#!/usr/bin/env bash
# perch record -a (system-wide) and -C: two busy workloads the test starts itself (not children
# of perch, under names of their own) burn 100 % and 40 % duty cycles; each measures its own CPU
# time (tests/workloads/busy.c). -a sees both, with the shares of the samples their CPU clocks
# give, and their stacks reach main; -C 0, with the two pinned to CPUs 0 and 1 (taskset), sees
# only the one on CPU 0. The command perch runs only starts them and waits (perf's
# `perch record -a -- sleep 5` pattern). Also -a -d alone, and -a with --timeline.
#
#   tests/integration/system.sh [BUILD_DIR]   (or tests/integration.sh BUILD_DIR system)
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin system "${1:-build}"

# Two copies of the workload under their own names: the folded stacks lead with the thread's.
cp "$WL/busy" "$T/busyfull"
cp "$WL/busy" "$T/busyhalf"
SECS=2

# pair NAME [RECORD_OPTION...]: start busyfull and busyhalf (PIN_FULL / PIN_HALF: taskset CPU
# lists), waiting for their go file; perch record -q RECORD_OPTIONs with a command that creates
# the go file and waits for both truth lines. Folded stacks in $T/NAME.folded.
pair() {
	local name=$1 go=$T/$1.go rc
	shift
	${PIN_FULL:+taskset -c "$PIN_FULL"} "$T/busyfull" "$go" $SECS 100 >"$T/$name.full" &
	${PIN_HALF:+taskset -c "$PIN_HALF"} "$T/busyhalf" "$go" $SECS 40 >"$T/$name.half" &
	"$PERCH" record -q "$@" -o "$T/$name.data" -- sh -c \
		"touch $go; until [ -s $T/$name.full ] && [ -s $T/$name.half ]; do sleep 0.02; done" \
		2>"$T/$name.err"
	rc=$?
	wait
	[ $rc -eq 0 ] || bad "$name" "perch record exited $rc: $(cat "$T/$name.err")"
	folded "$T/$name.data" >"$T/$name.folded"
	return $rc
}

cpu_of() { awk '$1 == "truth" && $2 == "cpu_s" { print $3 }' "$1"; }
# comm_samples FOLDED NAME: samples of threads called NAME
comm_samples() { awk -v c="$2" "$FOLD_AWK"'{ parse(); if (fr[1] == c) s += n } END { print s + 0 }' "$1"; }

if pair all -a; then
	f=$T/all.folded
	sf=$(comm_samples "$f" busyfull)
	sh=$(comm_samples "$f" busyhalf)
	cf=$(cpu_of "$T/all.full")
	ch=$(cpu_of "$T/all.half")
	want=$(awk -v a="$cf" -v b="$ch" 'BEGIN { printf "%.2f", 100 * a / (a + b) }')
	got=$(awk -v a="$sf" -v b="$sh" 'BEGIN { printf "%.2f", a + b ? 100 * a / (a + b) : 0 }')
	if [ "$sf" -gt 0 ] && [ "$sh" -gt 0 ] && within "$got" "$want" 3; then
		ok "-a: busyfull's share of the two $got% (its CPU clock: $want%; $sf and $sh samples)"
	else
		bad "-a shares" "busyfull $sf samples, busyhalf $sh: $got%, CPU clocks say $want% ($cf s, $ch s)"
	fi
	# each one's samples against its own CPU time at the recorded frequency
	hz=$(freq "$T/all.data")
	for w in full half; do
		s=$(comm_samples "$f" "busy$w")
		c=$(cpu_of "$T/all.$w")
		exp=$(awk -v c="$c" -v h="$hz" 'BEGIN { printf "%d", c * h }')
		if within "$s" "$exp" "$(awk -v e="$exp" 'BEGIN { print 0.1 * e + 20 }')"; then
			ok "-a: busy$w $s samples for $c s of CPU at $hz Hz (want $exp +-10 %)"
		else
			bad "-a busy$w samples" "$s samples for $c s of CPU at $hz Hz (want $exp)"
		fi
	done
	p=$(pct_within "$f" ';main;busy_spin' '^busyfull;')
	if awk -v p="${p% *}" 'BEGIN { exit !(p >= 90) }'; then
		ok "-a: $p (%, of busyfull's samples) of busyfull's stacks reach main;busy_spin"
	else
		bad "-a stacks" "$p of busyfull's stacks reach main;busy_spin: $(misses "$f" ';main;busy_spin' '^busyfull;')"
	fi
	# the text report's processes table says whose samples they are, as the folded stacks count
	"$PERCH" report --top=100000 "$T/all.data" >"$T/all.txt"
	if grep -qE "^ +[0-9.]+% +$sf +[0-9]+  busyfull$" "$T/all.txt" &&
		grep -qE "^ +[0-9.]+% +$sh +[0-9]+  busyhalf$" "$T/all.txt"; then
		ok "-a: the text report's processes table has busyfull ($sf) and busyhalf ($sh)"
	else
		bad "-a processes table" "$("$PERCH" report "$T/all.data" | sed -n '/^Top processes/,/^$/p' | head -8)"
	fi
	mode=$(rec_stat "$T/all.data" mode)
	nproc=$(rec_stat "$T/all.data" processes)
	if [ "$mode" = system-wide ] && [ "${nproc:-0}" -ge 3 ]; then
		ok "-a: mode $mode, $nproc processes sampled"
	else
		bad "-a mode" "mode '$mode', $nproc processes"
	fi
fi

# -C 0: only what ran on CPU 0; busyhalf, pinned to CPU 1, never did.
if [ "$(nproc)" -ge 2 ] && PIN_FULL=0 PIN_HALF=1 pair cpu0 -a -C 0; then
	sf=$(comm_samples "$T/cpu0.folded" busyfull)
	sh=$(comm_samples "$T/cpu0.folded" busyhalf)
	exp=$(awk -v c="$(cpu_of "$T/cpu0.full")" -v h="$(freq "$T/cpu0.data")" 'BEGIN { printf "%d", c * h }')
	if [ "$sh" -eq 0 ] && within "$sf" "$exp" "$(awk -v e="$exp" 'BEGIN { print 0.1 * e + 20 }')"; then
		ok "-C 0: busyfull (CPU 0) $sf samples (its CPU clock: $exp), busyhalf (CPU 1) none"
	else
		bad "-C 0" "busyfull $sf samples (want $exp), busyhalf $sh (want 0)"
	fi
fi

# -a with --timeline: every sample has its time
if pair tl -a --timeline; then
	ticks=$(rec_stat "$T/tl.data" events)
	lost=$(($(rec_stat "$T/tl.data" timeline_ticks_lost) + $(rec_stat "$T/tl.data" timeline_events_dropped)))
	total=$(samples "$T/tl.folded")
	if [ -n "$ticks" ] && [ "$ticks" -gt 0 ] && [ $((ticks + lost)) -eq "$total" ]; then
		ok "-a --timeline: $ticks ticks in the timeline ($lost lost, counted), one per sample"
	else
		bad "-a --timeline" "$ticks ticks and $lost lost for $total samples"
	fi
fi

# -a alone: until -d
"$PERCH" record -q -a -d 0.5 -o "$T/d.data" 2>"$T/d.err"
rc=$?
n=$(samples <(folded "$T/d.data"))
if [ $rc -eq 0 ] && [ "$n" -gt 0 ]; then
	ok "-a -d 0.5: exit 0, $n samples"
else
	bad "-a -d" "exit $rc, $n samples: $(cat "$T/d.err")"
fi

expect "-C out of range" 64 "bad CPU list" -- "$PERCH" record -a -C 4096 -d 1
expect "-C malformed" 64 "bad CPU list" -- "$PERCH" record -C 1-0 -d 1
expect "-a with -p" 64 "either -a or -p" -- "$PERCH" record -a -p 1 -d 1

it_end
