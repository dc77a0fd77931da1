#!/usr/bin/env bash
# A hostile CUDA runtime (the CUDA half of issue 25's hostile-runtime scenario; stand-ins, no
# GPU): `perch record --gpu --max-size=1M` of a shell whose children, through the channel perch
# hands them, write everything perch must bound (tests/cuda/flood: launches nothing runs for,
# kernels whose launch never comes, a new kernel name every 16 records, notes, launch-site records
# whose site never comes, then garbage, then 8 MiB more), and a descendant that reuses the
# channel's descriptor number for a file of its own before loading the injection library
# (tests/cuda/host). Twice: without --timeline (the recording stops at the cap, the channel is
# still read) and with it (GPU records share the timeline's cap; the join sees the whole flood).
# Each time:
#   - perch exits with its usual status (the command's 0) and stays under 200 MB of peak RSS
#     (ru_maxrss, its own and its waited children's);
#   - the flood is read to its end (the writer after the garbage is not left blocked);
#   - the recording loads (report exit 0) and counts what was refused: the damaged channel, the
#     launches shed from the join, the activities written without their launch, the GPU records
#     dropped past --max-size (with --timeline, where the recording does not stop, also the
#     channel records past perch's bounds: the notes past 64); the text report says so;
#   - --max-size holds: the file is under 1.25 MiB (the cap, definitions, windows, STATS);
#   - the descendant's file is untouched: the library wrote nothing to a descriptor that is not
#     the channel.
#
#   tests/integration/hostile-gpu.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin hostile-gpu "${1:-build}"
B=$(realpath "$BUILD")
if [ ! -e "$B/libperch_cuda.so" ] || [ ! -e "$B/tests/cuda/flood" ]; then
	echo "hostile-gpu: skipped: perch was built without the CUDA toolkit (no libperch_cuda.so)"
	it_end
	exit
fi
# a sanitizer build's shadow memory and quarantine are not perch's
limit_kib=$((200 * 1024))
ldd "$PERCH" | grep -q libasan && limit_kib=$((800 * 1024))

# the command perch records: the descendant, then the flood
# shellcheck disable=SC2016 # expanded by that shell
CMD='( eval "exec ${PERCH_CUDA_FD%%:*}>>\"\$U\""
  LD_LIBRARY_PATH="$B/tests/cuda" HOST_SPIN_MS=20 exec "$B/tests/cuda/host" >/dev/null ) &
"$B/tests/cuda/flood" >"$U.flood"
wait'
# perch under python, for its status and ru_maxrss (RUSAGE_CHILDREN: the largest of those waited)
RUN='import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)'

# hostile NAME [RECORD_OPTION...]: perch record --gpu --max-size=1M of CMD into $T/NAME.data;
# "rc peak_rss_kib" in $T/NAME.res, the milliseconds in $T/NAME.ms, the flood's line in
# $T/NAME.user.flood
hostile() {
	local name=$1 start
	shift
	: >"$T/$name.user"
	start=$(date +%s%N)
	B=$B U=$T/$name.user timeout 20 python3 -c "$RUN" "$PERCH" record -q --gpu --max-size=1M \
		"$@" -o "$T/$name.data" -- bash -c "$CMD" >"$T/$name.res" 2>"$T/$name.err"
	echo $((($(date +%s%N) - start) / 1000000)) >"$T/$name.ms"
}

# check NAME WHAT KEY...: the run's status, RSS, load, the counts KEY... (each > 0), its size
# and the descendant's file
check() {
	local name=$1 what=$2 rc rss got="" v missing="" d=$T/$1.data size rrc
	shift 2
	read -r rc rss <"$T/$name.res"
	[ "${rc:-x}" = 0 ] && ok "$what: perch exit 0 in $(cat "$T/$name.ms") ms" ||
		bad "$what: exit" "${rc:-timeout} in $(cat "$T/$name.ms") ms: $(head -3 "$T/$name.err")"
	[ "${rss:-0}" -gt 0 ] && [ "$rss" -lt "$limit_kib" ] &&
		ok "$what: peak RSS $((rss / 1024)) MB (under $((limit_kib / 1024)) MB)" ||
		bad "$what: peak RSS" "${rss:-?} KiB, limit $limit_kib KiB"
	grep -q '^flood records=[1-9]' "$T/$name.user.flood" &&
		ok "$what: the flood ran to its end after the garbage: $(cat "$T/$name.user.flood")" ||
		bad "$what: flood" "not to its end: $(cat "$T/$name.user.flood" 2>/dev/null)"
	"$PERCH" report "$d" >"$T/$name.txt" 2>"$T/$name.rerr"
	rrc=$?
	[ "$rrc" = 0 ] && ok "$what: the recording loads (report exit 0)" ||
		bad "$what: report" "exit $rrc: $(head -3 "$T/$name.rerr")"
	for k in "$@"; do
		v=$(rec_stat "$d" "$k")
		got="$got $k=$v"
		[ "${v:-0}" -gt 0 ] || missing=1
	done
	[ -z "$missing" ] && ok "$what: counted:$got" || bad "$what: counts" "$got"
	grep -q 'GPU records dropped past --max-size' "$T/$name.txt" &&
		{ [ "$name" = stop ] || grep -q 'GPU launches dropped from the full join table' "$T/$name.txt"; } &&
		ok "$what: the text report says what was dropped and refused" ||
		bad "$what: report lines" "$(grep 'also lost' "$T/$name.txt")"
	size=$(stat -c %s "$d")
	[ "$size" -lt $((1024 * 1024 + 256 * 1024)) ] && ok "$what: --max-size=1M holds: $size bytes" ||
		bad "$what: --max-size" "$size bytes"
	[ ! -s "$T/$name.user" ] &&
		ok "$what: a descendant's own file under the channel's descriptor number: untouched" ||
		bad "$what: descriptor reuse" "$(stat -c %s "$T/$name.user") bytes written to it"
}

FLOOD_MS=300 hostile stop
# Without --timeline the cap stops the GPU writing (the channel is still
# drained): whether the 70,000 orphan copies fill the join's waiting table before that depends
# on how the channel's reads fall (once, in a full run: gpu_activities_waits_cut=0), so that count
# is asked of the --timeline run only, which joins to the end.
check stop "stopped at the cap" gpu_channel_damaged \
	gpu_entries_dropped_max_size
FLOOD_MS=300 hostile timeline --timeline
check timeline "--timeline" gpu_channel_damaged gpu_launches_dropped gpu_activities_waits_cut \
	gpu_channel_records_refused gpu_entries_dropped_max_size
it_end
