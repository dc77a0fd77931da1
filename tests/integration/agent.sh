#!/usr/bin/env bash
# perch agent against the loopback stand-in for the fleet backends (tests/push/receiver.go):
#   - OTLP (--otlp --every=0.5, a launched workload): one request per interval, each with its
#     content type and gzip, each a request tests/otlp_decode.py reads and checks; the intervals
#     meet end to start to the nanosecond (time_unix_nano + duration_nano = the next one's
#     time_unix_nano), the service.name is --name's, and their samples together are the whole
#     run's (-o FILE) stack for stack, at least the samples the workload's CPU time gives;
#   - Pyroscope (the default): one /ingest per interval, whose until is the next one's from;
#     go tool pprof totals the samples of each;
#   - SIGTERM (-p, --every=60): the partial interval is pushed at once and perch exits 0;
#   - a failing backend (503 to the 3rd and 4th requests): the 3rd interval is retried once,
#     then dropped and counted (one line on stderr), and the agent goes on to push the rest;
#   - exited processes forgotten (the forget delay cut to 300 ms for the test): a workload of 150
#     short children, each forgotten while the agent runs, loses nothing by it: the intervals'
#     samples are the whole run's stack for stack, child_burn named with what its CPU time gives;
#   - container.id: a workload that moves itself into a control group named as docker names a
#     container's (docker-ID.scope, ID 64 random hex digits, under the first cgroup2 mount) and
#     execs: every sample of it carries container.id ID, in the agent's pushes and in perch
#     record's --format=otlp.
#
#   tests/integration/agent.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin agent "${1:-build}"
if ! command -v go >/dev/null; then
	bad go "not installed (scripts/install-deps.sh installs golang-go)"
	it_end
	exit
fi
RECV_PID=
CG=
trap '[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null; [ -n "$CG" ] && rmdir "$CG" "${CG%/*}" 2>/dev/null; rm -rf "$T"' EXIT
ROOT=$(dirname "$0")/../..
DECODE=$ROOT/tests/otlp_decode.py
# Go's build cache in the build folder: the sanitizer pass and later runs reuse it
GOCACHE=$(realpath "$BUILD")/go-cache
(export HOME=$T GOCACHE GOPATH=$T/gopath GOTOOLCHAIN=local GO111MODULE=off
	go build -o "$T/receiver" "$ROOT/tests/push/receiver.go") || {
	bad receiver "cannot build tests/push/receiver.go"
	it_end
	exit
}
mkdir "$T/in"
"$T/receiver" "$T/in" &
RECV_PID=$!
for _ in $(seq 100); do [ -s "$T/in/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$T/in/port")
seen=0 # requests the receiver has saved so far

# new_requests: the numbers of the requests saved since the last call into reqs
new_requests() {
	local n
	n=$(find "$T/in" -name '*.query' | wc -l)
	reqs=()
	[ "$n" -gt "$seen" ] && mapfile -t reqs < <(seq $((seen + 1)) "$n")
	seen=$n
}

# ---- OTLP, a launched workload, an interval a second --------------------------------------------
"$PERCH" agent --url="$URL" --otlp --every=0.5 -F 499 --name=svc.test -o "$T/otlp.data" -- "$WL/shares" 2 \
	>"$T/otlp.truth" 2>"$T/otlp.err"
rc=$?
new_requests
if [ "$rc" -eq 0 ] && [ "${#reqs[@]}" -ge 3 ] && grep -q "${#reqs[@]} pushed, 0 dropped" "$T/otlp.err"; then
	ok "otlp: exit 0, ${#reqs[@]} intervals pushed ($(tail -1 "$T/otlp.err"))"
else
	bad "otlp" "exit $rc, ${#reqs[@]} requests: $(tr '\n' ' ' <"$T/otlp.err")"
fi
heads=0 checked=0 meets=0 prev_end="" service=0
: >"$T/otlp.folded"
for n in "${reqs[@]}"; do
	grep -qx 'content-type=application/x-protobuf&content-encoding=gzip' "$T/in/$n.query" && heads=$((heads + 1))
	[ -z "$(python3 "$DECODE" "$T/in/$n.otlp" check)" ] && checked=$((checked + 1))
	python3 "$DECODE" "$T/in/$n.otlp" resource >"$T/res.txt"
	grep -qx 'service.name=svc.test' "$T/res.txt" && service=$((service + 1))
	python3 "$DECODE" "$T/in/$n.otlp" span >"$T/span.txt"
	read -r start dur <"$T/span.txt"
	if [ -n "$prev_end" ] && [ "$start" = "$prev_end" ]; then
		meets=$((meets + 1))
	fi
	prev_end=$((start + dur))
	python3 "$DECODE" "$T/in/$n.otlp" folded samples >>"$T/otlp.folded"
done
k=${#reqs[@]}
if [ "$k" -gt 0 ] && [ "$heads" -eq "$k" ] && [ "$checked" -eq "$k" ] && [ "$service" -eq "$k" ]; then
	ok "otlp: every request application/x-protobuf and gzip, the decoder's checks clean, service.name svc.test"
else
	bad "otlp requests" "$heads of $k with the headers, $checked pass the decoder's checks, $service with service.name svc.test"
fi
if [ "$k" -gt 1 ] && [ "$meets" -eq $((k - 1)) ]; then
	ok "otlp: the $k intervals meet end to start (time_unix_nano + duration_nano = the next's)"
else
	bad "otlp intervals" "$meets of $((k - 1)) neighbours meet end to start"
fi
# the intervals together: the whole run's recording (-o), stack for stack
awk '{ n = $NF; $NF = ""; c[$0] += n } END { for (s in c) print s c[s] }' "$T/otlp.folded" | sort >"$T/otlp.sum"
folded "$T/otlp.data" | sort >"$T/otlp.whole"
total=$(samples "$T/otlp.folded")
mins=$(min_samples "$(truth "$T/otlp.truth" cpu)" 499)
if [ "$total" -ge "${mins:-1}" ] && cmp -s "$T/otlp.sum" "$T/otlp.whole"; then
	ok "otlp: the intervals' $total samples are the whole run's (-o), stack for stack (the workload's CPU time gives >= $mins)"
else
	bad "otlp samples" "$total samples in the intervals (want >= $mins); against the whole run's: $(diff "$T/otlp.sum" "$T/otlp.whole" | head -4 | tr '\n' ' ')"
fi

# ---- Pyroscope ---------------------------------------------------------------------------------
"$PERCH" agent --url="$URL" --every=1 -F 99 -- "$WL/shares" 2.5 >/dev/null 2>"$T/pyro.err"
rc=$?
new_requests
meets=0 totals=0 prev=""
for n in "${reqs[@]}"; do
	from=$(tr '&' '\n' <"$T/in/$n.query" | sed -n 's/^from=//p')
	until=$(tr '&' '\n' <"$T/in/$n.query" | sed -n 's/^until=//p')
	[ -n "$prev" ] && [ "$from" = "$prev" ] && meets=$((meets + 1))
	prev=$until
	got=$(go tool pprof -raw "$T/in/$n.pb.gz" 2>/dev/null |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }')
	[ "${got:-0}" -gt 0 ] && totals=$((totals + 1))
done
k=${#reqs[@]}
if [ "$rc" -eq 0 ] && [ "$k" -ge 2 ] && [ "$meets" -eq $((k - 1)) ] && [ "$totals" -eq "$k" ]; then
	ok "pyroscope: $k /ingest requests, each until the next's from, go tool pprof reads samples in each"
else
	bad "pyroscope" "exit $rc, $k requests, $meets of $((k - 1)) meet, $totals read by go tool pprof: $(tr '\n' ' ' <"$T/pyro.err")"
fi

# ---- SIGTERM: the partial interval ---------------------------------------------------------------
"$WL/shares" 30 >/dev/null &
wl=$!
"$PERCH" agent --url="$URL" --otlp --every=60 -F 99 -p "$wl" >/dev/null 2>"$T/term.err" &
ag=$!
sleep 2
t0=$(date +%s%N)
kill -TERM "$ag"
wait "$ag"
rc=$?
t1=$(date +%s%N)
kill "$wl" 2>/dev/null
wait "$wl" 2>/dev/null
new_requests
n=${reqs[0]:-0}
got=0 dur=0
if [ "${#reqs[@]}" -eq 1 ]; then
	got=$(python3 "$DECODE" "$T/in/$n.otlp" folded samples | awk '{ t += $NF } END { print t + 0 }')
	python3 "$DECODE" "$T/in/$n.otlp" span >"$T/span.txt"
	read -r _ dur <"$T/span.txt"
fi
ms=$(((t1 - t0) / 1000000))
if [ "$rc" -eq 0 ] && [ "${#reqs[@]}" -eq 1 ] && [ "$got" -gt 0 ] && [ "$dur" -lt 60000000000 ]; then
	ok "SIGTERM: exit 0 in $ms ms, the partial interval pushed ($got samples over $((dur / 1000000)) ms)"
else
	bad "SIGTERM" "exit $rc after $ms ms, ${#reqs[@]} requests (want 1), $got samples, $dur ns: $(tr '\n' ' ' <"$T/term.err")"
fi

# ---- a failing backend ------------------------------------------------------------------------------
"$PERCH" agent --url="$URL/flaky/v1development/profiles" --otlp --every=0.5 -F 99 -- "$WL/shares" 2.5 \
	>/dev/null 2>"$T/flaky.err"
rc=$?
new_requests
sum=$(tail -1 "$T/flaky.err")
k=$(sed -n 's/^perch agent: \([0-9]*\) intervals.*/\1/p' "$T/flaky.err")
if [ "$rc" -eq 0 ] && grep -q 'interval 3 .*dropped: the backend failed it twice' "$T/flaky.err" &&
	grep -q ", 1 dropped (1 retried)" "$T/flaky.err" && [ -n "$k" ] && [ "$k" -ge 4 ] &&
	[ "${#reqs[@]}" -eq $((k - 1)) ]; then
	ok "failing backend: interval 3 retried, dropped and counted, the other $((k - 1)) pushed ($sum)"
else
	bad "failing backend" "exit $rc, ${#reqs[@]} saved of ${k:-?} intervals: $(tr '\n' ' ' <"$T/flaky.err")"
fi

# ---- exited processes forgotten ----------------------------------------------------------------
# A continuous run forgets each exited process (its image, tables, caches) 4 s after its exit so
# its memory follows the live processes (PERCH_TEST_FORGET_AFTER_MS cuts that to 300 ms here):
# shortlived's children (fork, exec, 10 ms of child_burn, exit) are forgotten while the agent
# runs, and their samples are the same as without: the intervals' are the whole run's (-o),
# child_burn named in them with at least what the children's CPU time gives.
PERCH_TEST_FORGET_AFTER_MS=300 "$PERCH" agent --url="$URL" --otlp --every=0.5 -F 499 -o "$T/fg.data" \
	-- "$WL/shortlived" 150 >"$T/fg.truth" 2>"$T/fg.err"
rc=$?
new_requests
: >"$T/fg.folded"
for n in "${reqs[@]}"; do
	python3 "$DECODE" "$T/in/$n.otlp" folded samples >>"$T/fg.folded"
done
awk '{ n = $NF; $NF = ""; c[$0] += n } END { for (s in c) print s c[s] }' "$T/fg.folded" | sort >"$T/fg.sum"
folded "$T/fg.data" | sort >"$T/fg.whole"
forgot=$(sed -n 's/.*; \([0-9]*\) exited processes forgotten$/\1/p' "$T/fg.err")
burn=$(awk '/;child_burn/ { s += $NF } END { print s + 0 }' "$T/fg.sum")
mins=$(min_samples "$(truth "$T/fg.truth" child_burn)" 499)
if [ "$rc" -eq 0 ] && [ "${forgot:-0}" -ge 100 ] && cmp -s "$T/fg.sum" "$T/fg.whole" &&
	[ "$burn" -ge "${mins:-1}" ]; then
	ok "forgetting: $forgot exited processes forgotten as the agent ran; the intervals are the whole run stack for stack, child_burn $burn samples (its CPU time gives >= $mins)"
else
	bad "forgetting" "exit $rc, ${forgot:-?} forgotten (want >= 100), child_burn $burn samples (want >= $mins), against the whole run: $(diff "$T/fg.sum" "$T/fg.whole" | head -4 | tr '\n' ' ')"
fi

# ---- container.id ---------------------------------------------------------------------------------
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
CG=$cgroot/perch-test-$$/docker-$id.scope
if [ -z "$cgroot" ] || ! mkdir -p "$CG"; then
	bad "container.id" "no cgroup2 mount to make a control group in (${cgroot:-none})"
else
	inside=(sh -c "echo \$\$ >$CG/cgroup.procs && exec $WL/shares 1.5")
	"$PERCH" agent --url="$URL" --otlp --every=0.5 -F 499 -- "${inside[@]}" >/dev/null 2>"$T/cg.err"
	new_requests
	: >"$T/cg.values"
	for n in "${reqs[@]}"; do
		python3 "$DECODE" "$T/in/$n.otlp" values container.id samples >>"$T/cg.values"
	done
	perch_record cg -F 499 -- "${inside[@]}"
	"$PERCH" report --format=otlp -o "$T/cg.otlp" "$T/cg.data"
	python3 "$DECODE" "$T/cg.otlp" values container.id samples >"$T/cg.rec.values"
	rmdir "$CG" "$cgroot/perch-test-$$" && CG=
	for f in cg.values cg.rec.values; do
		with=$(awk -v id="$id" '$1 == "shares" && $2 == id { n += $3 } END { print n + 0 }' "$T/$f")
		without=$(awk -v id="$id" '$1 == "shares" && $2 != id { n += $3 } END { print n + 0 }' "$T/$f")
		what=$([ $f = cg.values ] && echo "the agent's ${#reqs[@]} pushes" || echo "perch record's --format=otlp")
		if [ "$with" -gt 0 ] && [ "$without" -eq 0 ]; then
			ok "container.id: $what: all $with samples of the workload carry its container's id"
		else
			bad "container.id" "$what: $with samples with the id, $without without: $(head -3 "$T/$f" | tr '\n' ' ')"
		fi
	done
fi

it_end
