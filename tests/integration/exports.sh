#!/usr/bin/env bash
# The exports of a live recording (issue 12): the regions workload (known shares, nested regions)
# recorded by the real sampler, then
#   - pprof read back by `go tool pprof`: its total equals the samples of perch's own report, and
#     -tagfocus region=solve (the innermost region) equals `perch report --region=solve`'s;
#   - chrome checked by tests/chrome_check.py: valid Trace Event JSON, B/E nesting per thread,
#     timestamps within the recording's span, per-thread samples equal to speedscope's and
#     folded's;
#   - with --timeline as well: one tick per sample (exact), and the region spans per thread equal
#     the region table's calls and total time. Equal only when the program answered perch's exit
#     handshake (its final table and its last spans read together while it waits); without it
#     (perch held up for the runtime's 2 s, a loaded machine) the table is perch's last drain's,
#     whose ends after that drain's window end no read took: then at most the table's (a run
#     with perch stopped over the program's exit gave 96 step spans for 97 calls).
#
#   tests/integration/exports.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin exports "${1:-build}"
export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local

# pprof_total PROFILE ARGS...: the samples `go tool pprof -raw` lists after ARGS's filters
pprof_total() {
	local f=$1
	shift
	go tool pprof -raw "$@" "$f" 2>&1 |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 }
		END { print t + 0 }'
}

# check_exports NAME EXACT: the pprof and chrome exports of $T/NAME.data against perch's report
check_exports() {
	local name=$1 exact=$2 rec=$T/$1.data total solve pt ps dur res regions=exact
	total=$(samples "$T/$name.folded")
	solve=$(samples "$T/$name.folded" 'region:solve;')
	"$PERCH" report --format=pprof -o "$T/$name.pb.gz" "$rec"
	pt=$(pprof_total "$T/$name.pb.gz")
	ps=$(pprof_total "$T/$name.pb.gz" '-tagfocus=region=^solve$')
	if [ "$total" -gt 0 ] && [ "$pt" = "$total" ] && [ "$ps" = "$solve" ]; then
		ok "$name: go tool pprof totals $pt samples as perch's report, -tagfocus region=solve $ps as --region=solve"
	else
		bad "$name pprof" "go tool pprof totals $pt (perch $total), region=solve $ps (perch --region=solve $solve)"
	fi
	"$PERCH" report --format=chrome -o "$T/$name.json" "$rec"
	"$PERCH" report --format=speedscope -o "$T/$name.ss.json" "$rec"
	"$PERCH" report --format=csv "$rec" >"$T/$name.csv"
	dur=$(rec_stat "$rec" duration_ns)
	[ "$(rec_stat "$rec" region_processes_no_handshake)" = 0 ] || regions=atmost
	res=$(python3 "$(dirname "$0")/../chrome_check.py" "$T/$name.json" "${dur:-0}" "$T/$name.folded" \
		"$T/$name.csv" "$T/$name.ss.json" "$exact" "$regions" 2>&1)
	if [ "$res" = ok ]; then
		ok "$name: chrome trace nests per thread within ${dur} ns, its samples and regions equal the report's (regions: $regions)"
	else
		bad "$name chrome" "$res (regions: $regions; region_spans_lost $(rec_stat "$rec" region_spans_lost))"
	fi
}

launch windows -- "$WL/regions" share 2
check_exports windows -
launch timeline --timeline -- "$WL/regions" share 2
check_exports timeline exact

it_end
