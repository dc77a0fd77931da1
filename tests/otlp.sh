#!/bin/bash
# --format=otlp read back by a decoder of its own (tests/otlp_decode.py: the protobuf wire format
# with opentelemetry-proto v1.11.0's field numbers, not perch's protobuf-c code), on the
# recordings of tests/golden/ and tests/corpus/:
#   - the dictionary keeps the specification's rules (index 0 of every table the zero value, every
#     index in its table, no attribute key twice in a sample);
#   - the samples/count profile, folded by the decoder, is exactly `--format=folded` (the same
#     stacks, counts, thread names, regions), with --lines and --no-demangle too, and for each
#     region NAME with --region=NAME;
#   - the cpu/nanoseconds profile is each stack's count x 1e9 / the frequency, as pprof's;
#   - an off-CPU recording's --view=off profile (off_cpu/nanoseconds) is --view=off's folded,
#     and --view=wall gives wall/nanoseconds as its folded;
#   - --timeline recordings with every tick on the timeline: every tick a timestamp (one value
#     each) inside the profile's time range; others counts alone;
#   - the resource says service.name and host.name, the scope perch; mappings carry build-ids.
# The GPU profile of a recording with launch stacks is checked where one is made
# (tests/integration/gpu-standin.sh). Recordings need nothing from this machine, and neither does
# this test (no BPF, no root).
#   bash tests/otlp.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
PERCH=${1:-build}/perch
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=python3
DEC=tests/otlp_decode.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

check() { # check WHAT GOT_FILE WANT_FILE
	if cmp -s "$2" "$3"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL otlp: $1: $(diff "$2" "$3" | head -4 | tr '\n' '|')"
	fi
}

# same NAME DATA [REPORT_OPTION...]: the samples profile folds to --format=folded's lines
same() {
	local name=$1 data=$2
	shift 2
	if ! "$PERCH" report --format=otlp "$@" -o "$T/x.otlp" "$data" 2>"$T/err"; then
		fail=$((fail + 1))
		echo "FAIL otlp: $name: perch report --format=otlp $*: $(cat "$T/err")"
		return
	fi
	if ! "$PY" "$DEC" "$T/x.otlp" check >"$T/check"; then
		fail=$((fail + 1))
		echo "FAIL otlp: $name: the dictionary: $(head -3 "$T/check" | tr '\n' '|')"
		return
	fi
	"$PY" "$DEC" "$T/x.otlp" folded "${TYPE:-samples}" | LC_ALL=C sort >"$T/got"
	# folded may print one stack twice (two threads of one name); the decoder sums them
	"$PERCH" report --format=folded "$@" "$data" |
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); t[$0] += n } END { for (k in t) print k, t[k] }' |
		LC_ALL=C sort >"$T/want"
	check "$name" "$T/got" "$T/want"
}

for data in tests/golden/*.data tests/corpus/*.data; do
	name=$(basename "$data" .data)
	"$PERCH" report --format=stats "$data" >/dev/null 2>&1 || continue # a damaged one
	for opts in "" "--lines" "--no-demangle"; do
		same "$name${opts:+ $opts}" "$data" $opts
	done
	for r in $("$PERCH" report --format=csv "$data" | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u); do
		same "$name --region=$r" "$data" --region="$r"
	done
	# cpu/nanoseconds: each stack's count x 1e9 / frequency (the folded lines, weighed; each
	# sample's rounded down, so a line of N ticks may be up to N ns under its sum's)
	freq=$("$PERCH" report --format=stats "$data" | awk '$1 == "frequency" { print $2 }')
	"$PERCH" report --format=otlp -o "$T/x.otlp" "$data"
	if [ -n "$freq" ] && [ "$freq" -gt 0 ] && "$PY" "$DEC" "$T/x.otlp" types | grep -qx 'cpu nanoseconds'; then
		"$PY" "$DEC" "$T/x.otlp" folded cpu >"$T/got"
		"$PERCH" report --format=folded "$data" >"$T/want"
		awk -v f="$freq" 'NR == FNR { n = $NF; $NF = ""; got[$0] = n; next }
			{ n = $NF; $NF = ""; want = n * 1000000000 / f; d = want - got[$0]
			  if (!($0 in got) || d < 0 || d > n) { print $0, got[$0], want; bad++ } }
			END { exit bad > 0 }' "$T/got" "$T/want" >"$T/diff"
		check "$name cpu/nanoseconds" "$T/diff" /dev/null
	fi
	# --timeline (STATS events: its ticks) with every tick: each tick's time as a timestamp, one
	# value each, all inside the profile's range; without it (or a timeline cut short), counts
	# alone
	events=$("$PERCH" report --format=stats "$data" | awk '$1 == "events" { print $2 }')
	sampled=$("$PERCH" report --format=stats "$data" | awk '$1 == "sampled" { print $2 }')
	read -r timed ticks outside uneven _ < <("$PY" "$DEC" "$T/x.otlp" times samples)
	if [ "${events:-0}" = "$sampled" ]; then
		want="$sampled $sampled 0 0"
	else
		want="0 $sampled 0 0"
	fi
	echo "$timed $ticks $outside $uneven" >"$T/got"
	echo "$want" >"$T/want"
	check "$name timestamps (timed, ticks, outside the range, uneven)" "$T/got" "$T/want"
	if "$PERCH" report --format=stats "$data" | awk '$1 == "off_cpu_blocks" && $2 > 0 { f = 1 } END { exit !f }'; then
		TYPE=off_cpu same "$name --view=off" "$data" --view=off
		TYPE=wall same "$name --view=wall" "$data" --view=wall
	fi
done

# what the resource, scope and mappings say
"$PERCH" report --format=otlp -o "$T/s.otlp" tests/corpus/shares.data
"$PY" "$DEC" "$T/s.otlp" resource >"$T/res"
cmd=$("$PERCH" report --format=stats tests/corpus/shares.data | awk '$1 == "command" { print $2; exit }')
host=$("$PERCH" report --format=stats tests/corpus/shares.data | awk '$1 == "hostname" { print $2; exit }')
printf 'service.name=%s\nhost.name=%s\nscope=perch\n' "${cmd##*/}" "$host" >"$T/want"
sed 's/^\(scope=perch\) .*/\1/' "$T/res" >"$T/got"
check "resource and scope" "$T/got" "$T/want"
# build-ids: the recording's (40 hex digits each) on the mappings of a recording that has them
"$PERCH" report --format=otlp -o "$T/b.otlp" tests/corpus/offcpu-timeline.data
"$PY" "$DEC" "$T/b.otlp" mappings >"$T/maps"
if awk '$2 != "-" { n++; if ($2 !~ /^[0-9a-f]+$/ || length($2) != 40) bad++ } END { exit !(n > 0 && !bad) }' "$T/maps"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL otlp: build-ids on the mappings: $(tr '\n' '|' <"$T/maps")"
fi
"$PY" "$DEC" "$T/s.otlp" attrs >"$T/got"
printf '%s\n' process.executable.name process.pid thread.id thread.name >"$T/want"
check "sample attributes" "$T/got" "$T/want"

echo "otlp: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
