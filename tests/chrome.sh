#!/bin/bash
# --format=chrome checked against the Trace Event Format's rules and against perch's own numbers,
# on the recordings of tests/golden/ and tests/corpus/ that load cleanly (versions 2 and 3), one
# made version 1 from them, and version 4 ones that tests/mkrec writes (windows; --timeline
# ticks and region spans):
#   - `python3 -m json.tool` parses it;
#   - the checker (tests/chrome_check.py) holds it to the format: an object with traceEvents; every event a ph
#     this exporter writes, with pid, tid and ts; M names processes and threads; B and E nest per
#     thread (each E ends the innermost B, with its name), none left open; timestamps from 0 to
#     the recording's duration;
#   - per thread, the samples it shows (counters per window, or the one slice per thread of a
#     recording with no time axis; ticks too, which must agree with the counters) equal the
#     weights of `perch report --format=speedscope`'s profiles of that thread (which
#     tests/speedscope.sh holds to folded's lines), and in all `--format=folded`'s;
#   - the region spans per thread (completed ones: the calls, and the time of the outermost of
#     each name) equal the region table of `perch report --format=csv`, as does the table a
#     recording without a time axis carries in its slices.
# Bad input: an unknown --format, an unwritable -o and a damaged file each give one line on stderr
# and their own exit status; every version exports to every format.
# Recordings need nothing from this machine, and neither does this test (no BPF, no root).
#   bash tests/chrome.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$BUILD/perch
MKREC=$BUILD/tests/mkrec
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL chrome: $1: got '$2', want '$3'"
	fi
}


# export WHAT ARGS...: the chrome export of ARGS checked against folded and csv
export() {
	local what=$1 err dur
	shift
	"$PERCH" report --format=chrome -o "$T/c.json" "$@" || { check "$what: export" failed ok; return; }
	err=$(python3 -m json.tool "$T/c.json" 2>&1 >/dev/null)
	check "$what: json.tool" "${err:-parses}" parses
	"$PERCH" report --format=folded "$@" >"$T/folded" 2>/dev/null
	"$PERCH" report --format=speedscope "$@" >"$T/ss.json" 2>/dev/null
	"$PERCH" report --format=csv "${@: -1}" >"$T/csv" 2>/dev/null
	dur=$("$PERCH" report --format=stats "${@: -1}" | awk '$1 == "duration_ns" { print $2 }')
	check "$what: form, samples, regions" "$(python3 tests/chrome_check.py "$T/c.json" "${dur:-0}" "$T/folded" "$T/csv" "$T/ss.json" "$EXACT" 2>&1)" ok
}

# v1 FROM TO: FROM (version 3) as version 1 wrote it: samples without their comm
v1() {
	python3 - "$1" "$2" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
out, at = bytearray(data[:16]), 16
out[8:12] = struct.pack("<I", 1)
while at + 16 <= len(data):
    typ, n = struct.unpack_from("<II", data, at)
    pl = data[at + 16:at + 16 + n]
    at += 16 + n
    if typ == 5:  # SAMPLES: drop the u32 comm after pid, tid, count, flags
        cnt, i, new = struct.unpack_from("<I", pl)[0], 4, bytearray(pl[:4])
        for _ in range(cnt):
            nf = struct.unpack_from("<I", pl, i + 24)[0]
            new += pl[i:i + 20] + pl[i + 24:i + 28 + 4 * nf]
            i += 28 + 4 * nf
        pl = bytes(new)
    out += struct.pack("<IIII", typ, len(pl), zlib.crc32(pl), 0) + pl
open(sys.argv[2], "wb").write(out)
PY
}

v1 tests/golden/threads.data "$T/v1.data"
recordings=(tests/golden/*.data tests/corpus/*.data "$T/v1.data")
if [ -x "$MKREC" ]; then
	"$MKREC" -n 20000 -s 50 -t 3 "$T/v4-windows.data" &&
		"$MKREC" -n 20000 -s 50 -t 3 --regions "$T/v4-regions.data" &&
		"$MKREC" -n 20000 -s 50 -t 3 -w 7 --timeline --regions "$T/v4-timeline.data" ||
		check "mkrec writes version 4 recordings" failed ok
	recordings+=("$T"/v4-*.data)
else
	check "$MKREC is built (make all)" missing built
fi
for data in "${recordings[@]}"; do
	base=$(basename "$data" .data)
	EXACT=-
	[ "$base" = v4-timeline ] && EXACT=exact # tests/mkrec's timeline drops nothing
	"$PERCH" report --format=stats "$data" >/dev/null 2>&1 || continue # loads cleanly only
	export "$base" "$data"
	for r in $("$PERCH" report --format=csv "$data" | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u | head -3); do
		export "$base --region=$r" --region="$r" "$data"
	done
	for fmt in text folded csv stats pprof speedscope chrome; do
		"$PERCH" report --format=$fmt -o "$T/out" "$data" 2>"$T/err"
		check "$base to $fmt" "$?:$(cat "$T/err")" "0:"
	done
done

# Bad input: one line on stderr, the exit status of lib/exitcodes.h.
bad() { # bad WHAT WANT_STATUS ARGS...
	local what=$1 want=$2
	shift 2
	"$PERCH" report "$@" >/dev/null 2>"$T/err"
	check "$what: status" "$?" "$want"
	check "$what: one line" "$(wc -l <"$T/err")" 1
}
bad "unknown --format" 64 --format=perfetto tests/corpus/shares.data
bad "unwritable -o" 73 --format=chrome -o /nonexistent/dir/c.json tests/corpus/shares.data
bad "missing recording" 66 --format=chrome "$T/none.data"
head -c 100 tests/corpus/shares.data >"$T/cut.data"
bad "cut recording" 67 --format=chrome -o "$T/cut.json" "$T/cut.data"
check "cut recording: what it holds is still a trace" \
	"$(python3 -m json.tool "$T/cut.json" >/dev/null 2>&1 && echo parses)" parses
# stdout is the default, and the same bytes as -o
"$PERCH" report --format=chrome -o "$T/o.json" tests/corpus/shares.data
check "stdout equals -o" "$("$PERCH" report --format=chrome tests/corpus/shares.data | cmp - "$T/o.json" && echo same)" same
echo "chrome: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
