#!/bin/bash
# perch merge: counts add up exactly. For three sets of recordings (format versions 2, 3 and 4;
# one input twice, so pids collide; mkrec's --timeline recordings with spans and the same pid):
#   - every STATS key of the merged file (format/keys.h's STATS list) is the sum of the inputs';
#   - sampled, processes, threads, timeline events and spans are the sums of the inputs';
#   - the folded stacks (comm;frames count) summed per stack equal the inputs' together, exactly;
#   - the region table: each region's calls (all threads) is the sum of the inputs';
#   - a pid taken by an earlier input moves above pid_max (4194304 and up), and each input's
#     samples are its origin's: go tool pprof -tagfocus origin=LABEL totals them;
#   - metrics: each input's Metrics rows (min, mean, max per series) are the merged report's rows
#     after "from LABEL:", exactly; off-CPU slices (OFFSPANS) are the inputs' together;
#   - bad input: different frequencies (64), a cut input (67), --label count (64), a missing
#     input (66), an unwritable output (73), one line on stderr each.
# Needs no BPF and no root.
#   bash tests/merge.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$BUILD/perch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOTOOLCHAIN=local GO111MODULE=off
pass=0 fail=0
STATS_KEYS=$(sed -n 's/^[[:space:]]*X(\([a-z_0-9]*\),.*/\1/p' userspace/format/keys.h)

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
		echo "ok   merge: $1 ($2)"
	else
		fail=$((fail + 1))
		echo "FAIL merge: $1: got '$2', want '$3'"
	fi
}

stat() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
sum_stat() { # sum_stat KEY FILES...
	local k=$1 s=0 v
	shift
	for f in "$@"; do
		v=$(stat "$f" "$k")
		s=$((s + ${v:-0}))
	done
	echo $s
}
folded_sum() { awk '{ n = $NF; sub(/ [0-9]+$/, ""); c[$0] += n } END { for (k in c) print k, c[k] }' | LC_ALL=C sort; }
region_calls() { "$PERCH" report --format=csv "$1" | awk -F, 'NR > 1 && $2 == "" { print $1, $3 }'; }

# merge_set NAME INPUTS...: merge them (labels in0, in1, ...) and check the sums
merge_set() {
	local name=$1 out=$T/$1.data k bad=0 i=0 labels=() want got
	shift
	for f in "$@"; do labels+=(--label="in$i"); i=$((i + 1)); done
	"$PERCH" merge -o "$out" "${labels[@]}" "$@"
	check "$name: exit status" $? 0
	for k in $STATS_KEYS; do
		want=$(sum_stat "$k" "$@")
		got=$(stat "$out" "$k")
		[ "${got:-0}" = "$want" ] || { bad=1; echo "     $k: merged ${got:-none}, inputs sum $want"; }
	done
	check "$name: every STATS key is the inputs' sum" $bad 0
	for k in sampled processes threads events spans; do
		got=$(stat "$out" $k)
		check "$name: $k" "${got:-0}" "$(sum_stat $k "$@")"
	done
	for f in "$@"; do "$PERCH" report --format=folded "$f"; done | folded_sum >"$T/want.folded"
	"$PERCH" report --format=folded "$out" | folded_sum >"$T/got.folded"
	cmp -s "$T/want.folded" "$T/got.folded"
	check "$name: folded stacks sum to the inputs' ($(wc -l <"$T/got.folded") stacks)" $? 0
	for f in "$@"; do region_calls "$f"; done | folded_sum >"$T/want.calls"
	region_calls "$out" | folded_sum >"$T/got.calls"
	cmp -s "$T/want.calls" "$T/got.calls"
	check "$name: region calls sum to the inputs' ($(wc -l <"$T/got.calls") regions)" $? 0
}

"$BUILD/tests/mkrec" -n 3000 -s 40 -t 3 --timeline --regions "$T/a.data" >/dev/null
"$BUILD/tests/mkrec" -n 2000 -s 30 -t 2 --timeline --regions "$T/b.data" >/dev/null

merge_set v2-v4 tests/corpus/shares.data tests/corpus/shares-v4.data tests/corpus/recursion-dwarf.data \
	tests/corpus/regions-share.data tests/corpus/shares.data
merge_set v3 tests/golden/forks.data tests/golden/regions.data tests/golden/threads.data tests/golden/jit.data
merge_set timeline "$T/a.data" "$T/b.data"

# pids: mkrec's both 1000: the second input's moved above pid_max, origins tell them apart
if command -v go >/dev/null; then
	"$PERCH" report --format=pprof -o "$T/timeline.pb.gz" "$T/timeline.data"
	check "timeline: pids (the second input's 1000 moved)" "$(go tool pprof -tags "$T/timeline.pb.gz" 2>/dev/null |
		awk '/^ *pid:/ { p = 1; next } /^ *[a-z_]+:/ { p = 0 } p && NF == 3 { print $3 }' | LC_ALL=C sort | tr '\n' ' ')" "1000 4194304 "
	for i in 0 1; do
		f=$([ $i = 0 ] && echo a || echo b)
		got=$(go tool pprof -raw -tagfocus="origin=^in$i\$" "$T/timeline.pb.gz" 2>&1 |
			awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }')
		check "timeline: pprof -tagfocus origin=in$i totals $f.data's samples" "$got" "$(stat "$T/$f.data" sampled)"
	done
fi

# a merge of a merge: origins compose ("outer/inner"), the inner pids stay the inputs'
"$PERCH" merge -o "$T/nest.data" --label=x --label=y "$T/timeline.data" "$T/a.data"
if command -v go >/dev/null; then
	"$PERCH" report --format=pprof -o "$T/nest.pb.gz" "$T/nest.data"
	check "nested: origins and their samples" "$(go tool pprof -tags -sample_index=samples "$T/nest.pb.gz" 2>/dev/null |
		awk '/^ *origin:/ { p = 1; next } /^ *[a-z_]+:/ { p = 0 } p && NF == 3 { print $3 "=" $1 + 0 }' | LC_ALL=C sort | tr '\n' ' ')" \
		"x/in0=$(stat "$T/a.data" sampled) x/in1=$(stat "$T/b.data" sampled) y=$(stat "$T/a.data" sampled) "
fi

# metrics (METRICS) survive a merge: each input's rows of the report's Metrics section (min,
# mean, max per series) are the rows after "from LABEL:" in the merged file's, exactly; the
# off-CPU slices (OFFSPANS) of the chrome export are the inputs' together
metric_rows() { # metric_rows FILE [LABEL]: the Metrics rows (all, then the summary's), of LABEL's input in a merged FILE
	{ "$PERCH" report --metrics=all "$1"; "$PERCH" report "$1"; } | awk -v l="${2:-}" '/^Metrics / { m = 1; on = (l == ""); next }
		m && /^$/ { m = 0 } m && /^ from / { on = ($0 == " from " l ":"); next } m && on && /^  / { print }'
}
offslices() { "$PERCH" report --format=chrome "$1" | grep -c '"cat":"offcpu"'; }
"$PERCH" merge -o "$T/metrics.data" --label=in0 --label=in1 --label=in2 tests/corpus/metrics.data \
	tests/corpus/offcpu-timeline.data tests/corpus/metrics.data
check "metrics: exit status" $? 0
i=0
for f in tests/corpus/metrics.data tests/corpus/offcpu-timeline.data tests/corpus/metrics.data; do
	want=$(metric_rows "$f") got=$(metric_rows "$T/metrics.data" "in$i")
	[ -n "$want" ] && [ "$got" = "$want" ]
	check "metrics: in$i's $(printf '%s\n' "$want" | wc -l) rows (min, mean, max) are $(basename "$f")'s" $? 0
	i=$((i + 1))
done
check "metrics: off-CPU slices are the inputs'" "$(offslices "$T/metrics.data")" \
	"$(($(offslices tests/corpus/offcpu-timeline.data) + 2 * $(offslices tests/corpus/metrics.data)))"

err_case() { # err_case WHAT STATUS ARGS...
	local what=$1 want=$2
	shift 2
	"$PERCH" merge "$@" 2>"$T/err" >/dev/null
	check "$what: exit status" $? "$want"
	check "$what: one line on stderr" "$(wc -l <"$T/err")" 1
}
err_case "different frequencies" 64 -o "$T/x.data" tests/corpus/shares.data tests/golden/forks.data
err_case "a cut input" 67 -o "$T/x.data" tests/corpus/shares.data tests/corpus/shares-cut.data
err_case "two labels for three inputs" 64 -o "$T/x.data" --label=a --label=b "$T/a.data" "$T/b.data" "$T/a.data"
err_case "missing input" 66 -o "$T/x.data" "$T/none.data"
err_case "unwritable output" 73 -o "$T/no/such/dir/x.data" "$T/a.data"

echo "merge: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
