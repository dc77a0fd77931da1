#!/usr/bin/env bash
# Integration tests of JIT code naming (issue 10): the real BPF sampler on tests/workloads/jit,
# whose two functions exist only as machine code in anonymous memory, named by the perf map the
# workload writes. A map written only as the process exits (java -XX:+DumpPerfMapAtExit) still
# names the frames; a map that is a symlink to another file is not read. Needs root and BPF.
#
#   tests/integration-jit.sh [BUILD_DIR]
set -u
. "$(dirname "$0")/lib.sh"
it_begin integration-jit "${1:-build}"

# anon FOLDED: percent of samples with an unnamed frame in anonymous memory ([anon]+0x...)
anon() { awk '{ n += $NF } /\[anon\]\+0x/ { a += $NF } END { printf "%.2f", n ? 100 * a / n : 0 }' "$1"; }

# record NAME MODE: run the workload for 2 s under perch; its map is removed afterwards
record() { # NAME MODE [WORKLOAD]
	local pid
	"$PERCH" record -q -o "$T/$1.data" -- "$WL/${3:-jit}" 2 "$2" >"$T/$1.truth" 2>"$T/$1.err" ||
		bad "$1" "perch record failed: $(cat "$T/$1.err")"
	pid=$("$PERCH" report "$T/$1.data" | sed -n 's/^pids *\([0-9]*\).*/\1/p')
	[ -n "$pid" ] && rm -f "/tmp/perf-$pid.map"
	"$PERCH" report --format=folded "$T/$1.data" >"$T/$1.folded"
}

# ---- a map written only at exit names the frames sampled before it ---------------------------
record atexit at-exit
jh=$(share "$T/atexit.folded" jit_hot)
jc=$(share "$T/atexit.folded" jit_cold)
ejh=$(truth_pct "$T/atexit.truth" jit_hot)
ejc=$(truth_pct "$T/atexit.truth" jit_cold)
an=$(anon "$T/atexit.folded")
if within "$jh" "$ejh" 3 && within "$jc" "$ejc" 3 && within "$an" 0 1; then
	ok "map written at exit: jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), [anon] frames on $an %"
else
	bad "map written at exit" "jit_hot $jh %, jit_cold $jc % (workload's CPU clocks $ejh/$ejc, +-3), [anon] frames on $an % (want < 1)"
fi

# ---- a map that is a symlink to another file is not read ---------------------------------------
# The file names every user address: read, it would name every JIT frame, and its text would be
# in the recording.
printf '0 7fffffffffff secret_of_the_host\n' >"$T/secret.map"
chmod 600 "$T/secret.map"
record symlink "symlink=$T/secret.map"
copied=$(grep -c secret_of_the_host "$T/symlink.data" "$T/symlink.folded" | awk -F: '{ s += $2 } END { print s + 0 }')
an=$(anon "$T/symlink.folded")
if [ "$copied" -eq 0 ] && awk -v a="$an" 'BEGIN { exit !(a >= 50) }'; then
	ok "symlinked map: not read (its text in the recording $copied times; [anon] frames on $an %)"
else
	bad "symlinked map" "its text in the recording or report $copied times (want 0); [anon] frames on $an % (want >= 50)"
fi

# JIT leaves called from native code built without frame pointers (node's, the JVM's): the
# stacks go on through main to the C library's start, as those of native leaves do
record nofp plain jit-nofp
full=$(awk '/;jit_(hot|cold) [0-9]+$/ { n += $NF } /;__libc_start_call_main;main;jit_(hot|cold) [0-9]+$/ { m += $NF }
	END { printf "%.2f", n ? 100 * m / n : 0 }' "$T/nofp.folded")
if within "$full" 100 3; then
	ok "JIT leaves under code without frame pointers: __libc_start_call_main;main;jit_* on $full % of the samples in them"
else
	bad "JIT leaves under code without frame pointers" "__libc_start_call_main;main;jit_* on $full % of the samples in them (want 97 or more)"
fi

it_end
