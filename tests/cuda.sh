#!/usr/bin/env bash
# The CUDA injection library end to end against a STAND-IN CUPTI (tests/cuda/fake_cupti.c), NOT
# a GPU test: no driver, no kernel runs. tests/cuda/host loads libperch_cuda.so as the driver does
# (CUDA_INJECTION64_PATH, InitializeInjection) with LD_LIBRARY_PATH on the stand-in, which plays
# CUPTI's callbacks and activity buffers for known calls; tests/cuda/dump reads the channel the
# way perch will. What real CUPTI on a real GPU does is tests/gpu/'s to check.
#
#   tests/cuda.sh [BUILD_DIR]
set -u
BUILD=$(realpath "${1:-build}")
T=$(mktemp -d /tmp/perch-cuda.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

echo "cuda: stand-in CUPTI (tests/cuda/fake_cupti.c), not a GPU test"

# run NAME [VAR=VALUE...]: the host with the library, its stdout in NAME.out, the channel in
# NAME.bin (PERCH_CUDA_FD names its descriptor, device and inode) and its dump in NAME.dump; the
# host's exit status in NAME.rc
run() {
	local name=$1
	shift
	: >"$T/$name.bin"
	env LD_LIBRARY_PATH="$BUILD/tests/cuda" CUDA_INJECTION64_PATH="$BUILD/libperch_cuda.so" \
		PERCH_CUDA_FD="3:$(stat -c %d:%i "$T/$name.bin")" "$@" "$BUILD/tests/cuda/host" \
		>"$T/$name.out" 2>"$T/$name.err" 3>>"$T/$name.bin"
	echo $? >"$T/$name.rc"
	"$BUILD/tests/cuda/dump" "$T/$name.bin" >"$T/$name.dump"
}

field() { # field NAME LINE: the value of NAME=... in LINE
	sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"
}
count() { grep -c -- "$1" "$2"; }
val() { sed -n "s/^$1 //p" "$2"; } # val KEY FILE: "KEY VALUE" lines of the host's output

# Every GPU time is on CLOCK_MONOTONIC: kernel starts between the host's readings before and after
# (the stand-in's kernels start 10 us after their launch, graph nodes 1 ms apart, so 10 ms of
# slack; a time left on CLOCK_REALTIME would be decades off).
times_on_monotonic() {
	local t0 t1 n=0 s
	t0=$(val t0 "$T/$1.out")
	t1=$(val t1 "$T/$1.out")
	while read -r line; do
		s=$(field start "$line")
		if [ "$s" -lt "$t0" ] || [ "$s" -gt $((t1 + 10000000)) ]; then
			echo "  start $s outside [$t0, $t1 + 10 ms]: $line"
			return 1
		fi
		n=$((n + 1))
	done < <(grep -E '^(kernel|memcpy|memset|api) ' "$T/$1.dump")
	# 8 kernels, a copy, a memset, 7 API calls
	[ "$n" -eq 17 ] || { echo "  $n timed records, expected 17"; return 1; }
}

kernels_named() { # kernels_named RUN NAME CORR N
	[ "$(grep -c "^kernel corr=$3 .* name=$2\$" "$T/$1.dump")" -eq "$4" ]
}

run plain
d=$T/plain.dump
fake=$(grep '^fake ' "$T/plain.out")
check "host runs to the end with the library in it" [ "$(cat "$T/plain.rc")" -eq 0 ]
check "nothing on the program's stdout but its own lines" \
	[ -z "$(grep -vE '^(t0|t1|init|launch|orphan|memcpy|memset|fake) ' "$T/plain.out")" ]
check "subscribed to CUPTI as perch" [ "$(field subscriber "$fake")" = perch ]
check "the CLOCK_MONOTONIC callback registered before any kind was enabled" \
	[ "$(field clock_before_enable "$fake")" = 1 ]
# CONCURRENT_KERNEL 10, MEMCPY 1, MEMSET 2, DRIVER 4, RUNTIME 5, SYNCHRONIZATION 38; never KERNEL 3
check "kinds: concurrent kernel, memcpy, memset, driver, runtime, synchronization (not KERNEL)" \
	[ "$(field kinds "$fake")" = 0x4000000436 ]
check "launch callbacks enabled in both API domains" \
	[ "$(field driver_callbacks "$fake")" -gt 0 -a "$(field runtime_callbacks "$fake")" -gt 0 ]
check "clock record: the timestamp callback" [ "$(field detail "$(grep '^clock ' "$d")")" = 1 ]
check "times on CLOCK_MONOTONIC" times_on_monotonic plain
# Which correlation id each probe hit carries is checked through perch's uprobe on it
# (tests/integration/gpu-standin.sh): the library calls its own probe, which no program can
# interpose on, so the host cannot watch it from here.
check "the end record counts 7 probes, one per launch, copy and memset call (runtime over driver: once)" \
	[ "$(field bytes "$(grep '^end ' "$d")")" = 7 ]
spin_a() { kernels_named plain spin_a 1 1 && kernels_named plain spin_a 2 1 && kernels_named plain spin_a 3 1; }
check "spin_a: three kernels, correlation ids 1, 2, 3" spin_a
check "the graph launch: four graph_node kernels under one correlation id" \
	[ "$(grep -c '^kernel corr=4 .*flags=0x8 graph=1 name=graph_node$' "$d")" -eq 4 ]
check "each kernel name sent once" \
	[ "$(count '^name .* text=spin_a$' "$d")" -eq 1 -a "$(count '^name .* text=graph_node$' "$d")" -eq 1 ]
check "kernel durations as CUPTI gave them (1 ms)" \
	[ -z "$(awk '/^kernel/ { split($3, s, "="); split($4, e, "="); if (e[2] - s[2] != 1000000) print }' "$d")" ]
check "the copy: 1 MiB host to device, joined to its cudaMemcpy" \
	grep -q '^memcpy corr=7 .* bytes=1048576 .* detail=1 ' "$d"
check "the memset: 4 KiB of 0xab, joined to its cuMemsetD8Async" \
	grep -q '^memset corr=8 .* bytes=4096 .* detail=171 ' "$d"
# CUPTI names every callback id; the library turns on the copy and memset ones by name, and only
# them: the stand-in calls back only for what was enabled.
launch_ids() { # launch_ids runtime|driver: the launch callback ids listed in cuda/gpu_records.c
	sed -n "/^static const uint32_t $1_launches\[\] = {/,/^};/p" "$(dirname "$0")/../cuda/gpu_records.c" |
		grep -c CBID
}
copy_callbacks() { # the launches, and the stand-in's two copy/memset names in each domain
	[ "$(field driver_callbacks "$fake")" -eq $(($(launch_ids driver) + 2)) ] &&
		[ "$(field runtime_callbacks "$fake")" -eq $(($(launch_ids runtime) + 2)) ]
}
check "copy and memset callbacks enabled by name, nothing else" copy_callbacks
check "API records carry the caller's thread" \
	[ "$(field tid "$(grep -m1 '^api ' "$d")")" -gt 0 ]
check "dropped records counted: 5" [ "$(field bytes "$(grep '^dropped ' "$d")")" = 5 ]
j=$(grep '^join ' "$d")
check "join: 9 activities joined, the lost launch and the orphan kernel counted" \
	[ "$(field joined "$j")" = 9 -a "$(field launches_unmatched "$j")" = 1 \
	-a "$(field activities_unmatched "$j")" = 1 -a "$(field dropped "$j")" = 5 ]
check "the channel reads to its end" grep -q '^stream ends' "$d"

run offset FAKE_CUPTI_NO_TSCB=1
d=$T/offset.dump
offset_noted() { [ "$(field detail "$(grep '^clock ' "$d")")" = 2 ] && grep -q '^note .* detail=3 ' "$d"; }
check "no timestamp callback: the offset clock, and a note saying so" offset_noted
check "no timestamp callback: CUPTI's CLOCK_REALTIME times converted to CLOCK_MONOTONIC" \
	times_on_monotonic offset

run busy FAKE_CUPTI_BUSY="Nsight Systems"
d=$T/busy.dump
check "CUPTI busy (error 39): the program runs to the end" [ "$(cat "$T/busy.rc")" -eq 0 ]
check "CUPTI busy: one note naming the holder" \
	grep -q '^note .* detail=1 .*text=CUPTI is in use by CUPTI for Nsight Systems (error 39)' "$d"
busy_quiet() { # no activity, and the end record (if any) counts no probe
	! grep -qE '^(kernel|api|memcpy) ' "$d" && ! grep '^end ' "$d" | grep -qv ' bytes=0 '
}
check "CUPTI busy: no activity, no probes" busy_quiet

run fork HOST_FORK=1
fork_quiet() { [ "$(count '^end ' "$T/fork.dump")" -eq 1 ] && [ "$(count '^memcpy ' "$T/fork.dump")" -eq 1 ]; }
check "a forked child sends nothing (no second end, nothing twice)" fork_quiet

# Syncs and who waited: each sync the host printed (type, correlation id, thread, wait) comes
# through the channel with its type and wait, and the join gives it the thread of its API call.
run syncs HOST_SYNCS=1
syncs_joined() {
	local t c tid w n=0 rec
	while read -r _ t c tid w; do
		rec=$(grep "^sync corr=$c " "$T/syncs.dump") || { echo "  no sync record corr=$c"; return 1; }
		[ "$(field detail "$rec")" = "$t" ] && [ $(($(field end "$rec") - $(field start "$rec"))) = "$w" ] ||
			{ echo "  $rec: want type $t, wait $w"; return 1; }
		grep -q "^joined corr=$c kind=sync tid=$tid\$" "$T/syncs.dump" || { echo "  corr=$c not joined to tid $tid"; return 1; }
		n=$((n + 1))
	done < <(grep '^sync ' "$T/syncs.out")
	[ "$n" = 3 ] && [ "$(cut -d' ' -f4 <(grep '^sync ' "$T/syncs.out") | sort -u | wc -l)" = 2 ]
}
check "syncs: 3 (stream, context, event) with their waits, each joined to its caller's thread (2 threads)" syncs_joined

# No PERCH_CUDA_FD: the library stays out of the way.
env LD_LIBRARY_PATH="$BUILD/tests/cuda" CUDA_INJECTION64_PATH="$BUILD/libperch_cuda.so" \
	"$BUILD/tests/cuda/host" >"$T/nofd.out" 2>&1
rc=$?
nofd_quiet() { [ "$rc" -eq 0 ] && grep -q '^fake subscriber= ' "$T/nofd.out"; }
check "no PERCH_CUDA_FD: runs, nothing subscribed" nofd_quiet

# A descriptor of the channel's number that is not the channel (a descendant closed it and opened
# a file of its own there; or the variable names no device and inode): never written.
: >"$T/channel.bin"
for fdvar in "3:$(stat -c %d:%i "$T/channel.bin")" 3; do
	env LD_LIBRARY_PATH="$BUILD/tests/cuda" CUDA_INJECTION64_PATH="$BUILD/libperch_cuda.so" \
		PERCH_CUDA_FD="$fdvar" "$BUILD/tests/cuda/host" >"$T/other.out" 2>&1 3>>"$T/user.txt"
	rc=$?
	check "PERCH_CUDA_FD=$fdvar, fd 3 another file: the program exits 0, that file untouched" \
		[ "$rc" -eq 0 -a ! -s "$T/user.txt" -a ! -s "$T/channel.bin" ]
done

# perch gone: a pipe with no reader. The write fails with EPIPE; SIGPIPE must not kill the program.
exec 4> >(true)
sleep 0.2
env LD_LIBRARY_PATH="$BUILD/tests/cuda" CUDA_INJECTION64_PATH="$BUILD/libperch_cuda.so" \
	PERCH_CUDA_FD="4:$(stat -L -c %d:%i /dev/fd/4)" "$BUILD/tests/cuda/host" >"$T/epipe.out" 2>&1
rc=$?
exec 4>&-
check "perch gone (pipe without reader): no SIGPIPE, the program exits 0" [ "$rc" -eq 0 ]

echo "cuda (stand-in CUPTI): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
