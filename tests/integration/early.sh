#!/usr/bin/env bash
# Early ticks: a launched shell script runs fresh copies (new paths: no table built before) of a
# binary without frame pointers that burns CPU from main's first instruction. Ticks taken before
# perch has listed a copy's unwind tables are copied in the kernel and walked once they are
# (struct perch_early): every sample of the copies reaches main, whatever the machine's load.
#
#   tests/integration/early.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin early "${1:-build}"

cat >"$T/run.sh" <<SH
for i in 1 2 3; do cp "$WL/early-nofp" "$T/early\$i" && "$T/early\$i" 0.2; done
cp "$WL/early-nofp" "$T/early4" && exec "$T/early4" 0.2
SH
# check NAME [RECORD_OPTION...]: record run.sh as NAME, and check its copies' stacks
check() {
	local name=$1 swap gone n short copied rescued still fps full runs want
	launch "$name" "${@:2}" -- bash "$T/run.sh"
	# Ticks inside the exec that starts a copy (bprm_execve: the old memory is gone, the new
	# not yet running) or the exit that ends it (do_exit tears its memory down) have no user
	# stack to read, for any unwinder: left out, and counted in the line.
	swap='(bprm_execve|do_exit)_\[k\]'
	grep '^early[1-4];' "$T/$name.folded" | grep -Ev "$swap" >"$T/$name.copies"
	gone=$(grep '^early[1-4];' "$T/$name.folded" | grep -E "$swap" | awk '{ s += $NF } END { print s + 0 }')
	n=$(samples "$T/$name.copies")
	short=$(samples "$T/$name.copies" "" "$done_re")
	copied=$(rec_stat "$T/$name.data" early_stacks_copied)
	rescued=$(rec_stat "$T/$name.data" early_stacks_rescued)
	still=$(rec_stat "$T/$name.data" early_stacks_short)
	fps=$(rec_stat "$T/$name.data" early_stacks_frame_pointers)
	full=$(rec_stat "$T/$name.data" early_stacks_ring_full)
	runs=$(grep -c '^cpu ' "$T/$name.truth")
	# The copies burn 4 x 0.2 s of CPU: at the recording's frequency that is their expected
	# samples; at least half of them must be there for the share below to mean anything.
	want=$(awk -v f="$(freq "$T/$name.data")" 'BEGIN { printf "%d", 4 * 0.2 * f / 2 }')
	if [ "$runs" -eq 4 ] && [ "$n" -ge "$want" ] && [ $((short * 100)) -le "$n" ] && [ "${full:-1}" -eq 0 ]; then
		ok "$name: $((n - short)) of $n samples of 4 fresh no-frame-pointer copies reach main, its caller or the loader's start; $gone in exec or exit left out (early stacks of the run: $copied copied, $rescued rescued, $still short, $fps by frame pointers)"
	else
		bad "$name" "$runs runs, $n samples (want >= $want), $short short of main; early stacks: copied $copied rescued $rescued short $still by frame pointers $fps ring full $full; heaviest short: $(misses "$T/$name.copies" "$done_re" '^early')"
	fi
}

# complete: through main, or main's caller (exit), or the dynamic loader's start (before main),
# or at the loader's entry itself (the process's first instruction: a stack of one frame)
done_re=';(main|__libc_start_call_main|_dl_start)(;|$)|^[^;]*;ld-linux[^;]*(;[^;]*_\[k\])*$'
check early
# With --timeline the early ticks are walked as well, and each one is timed when it was taken:
# every tick of the run on the timeline, in order (issue 23; tests/integration/early-gcc.sh
# checks a big binary's).
check timed --timeline
"$BUILD/tests/timeline_dump" "$T/timed.data" >"$T/timed.tl"
read -r diff events order < <(timeline_counts "$T/timed.tl")
sampled=$(rec_stat "$T/timed.data" sampled)
if [ "$diff" -eq 0 ] && [ "$order" -eq 0 ] && [ "$events" -eq "$sampled" ]; then
	ok "timed: $events timed ticks in time order, each key's as many as its count ($sampled samples; $(rec_stat "$T/timed.data" early_stacks_copied) early)"
else
	bad "timed timeline" "$events timed ticks for $sampled samples ($diff keys differ, $order out of order)"
fi

it_end
