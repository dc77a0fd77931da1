#!/bin/bash
# perch push against a loopback stand-in for the fleet backends (tests/push/receiver.go, Go's
# standard library only): no Pyroscope or Parca server is installable here.
#   - Pyroscope's form: POST /ingest?name=APP&from=S&until=S&format=pprof&sampleRate=HZ&
#     spyName=perch with the profile as the multipart field "profile": the receiver's saved
#     profile is byte for byte `perch report --format=pprof`'s, `go tool pprof -raw` totals the
#     samples perch's stats count (sampled), and the query carries the name, the frequency and
#     the recording's time range (until - from = its duration, rounded up to seconds);
#   - Parca's form (--parca): POST /profiles/writeraw, JSON with the base64 profile: the same;
#   - a merged recording: go tool pprof's -tagfocus origin=LABEL totals each input's samples;
#   - OTLP/HTTP (--otlp): POST /v1development/profiles, application/x-protobuf, gzip: the body,
#     gunzipped, is byte for byte `perch report --format=otlp`'s and tests/otlp_decode.py reads
#     it, its samples totalling perch's;
#   - errors: refused connection (exit 76), an HTTP 503 (78, naming the status), a bad URL
#     (64), a missing recording (66), each with one line on stderr;
#   - hostile servers: "100 Continue" then a 500 (78, not 0), a 200 on a connection the server
#     keeps open (0, at once), a head dripped a byte every 1.5 s (76 at --timeout=2, within ~2 s).
# Needs no BPF and no root.
#   bash tests/push.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$BUILD/perch
command -v go >/dev/null || { echo "push: go not found (scripts/install-deps.sh installs golang-go)"; exit 1; }
T=$(mktemp -d)
RECV_PID=
trap '[ -n "$RECV_PID" ] && kill "$RECV_PID" 2>/dev/null; rm -rf "$T"' EXIT
export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOTOOLCHAIN=local GO111MODULE=off
pass=0 fail=0

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
		echo "ok   push: $1 ($2)"
	else
		fail=$((fail + 1))
		echo "FAIL push: $1: got '$2', want '$3'"
	fi
}

# The samples (or, with -sample_index=cpu, nanoseconds) of a profile after ARGS's filters.
pprof_total() {
	local f=$1
	shift
	go tool pprof -raw "$@" "$f" 2>&1 |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1; n += $2 }
		END { print t + 0, n + 0 }'
}
stat() { "$PERCH" report --format=stats "$1" | awk -v k="$2" '$1 == k { print $2 }'; }
query() { tr '&' '\n' <"$1" | sed -n "s/^$2=//p"; }

go build -o "$T/receiver" tests/push/receiver.go || { echo "push: cannot build the receiver"; exit 1; }
mkdir "$T/in"
"$T/receiver" "$T/in" &
RECV_PID=$!
for _ in $(seq 100); do [ -s "$T/in/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/in/port")
URL=http://127.0.0.1:$PORT

"$BUILD/tests/mkrec" -n 3000 -s 40 -t 3 --regions "$T/a.data" >/dev/null
"$BUILD/tests/mkrec" -n 2000 -s 30 -t 2 --timeline --regions "$T/b.data" >/dev/null
"$PERCH" merge -o "$T/ab.data" --label=host-a --label=host-b "$T/a.data" "$T/b.data"

n=0
for rec in tests/golden/regions.data "$T/a.data" "$T/ab.data"; do
	name=$(basename "$rec" .data)
	"$PERCH" report --format=pprof -o "$T/$name.pb.gz" "$rec"
	want=$(stat "$rec" sampled)
	freq=$(stat "$rec" frequency)
	dur=$(stat "$rec" duration_ns)
	for form in pyroscope parca; do
		args=(--url="$URL" --name="app.$name{env=test}")
		[ $form = parca ] && args=(--parca --url="$URL" --name="app.$name")
		"$PERCH" push "${args[@]}" "$rec"
		check "$name $form: exit status" $? 0
		n=$((n + 1))
		cmp -s "$T/in/$n.pb.gz" "$T/$name.pb.gz"
		check "$name $form: the body's profile is perch report --format=pprof's" $? 0
		read -r got _ < <(pprof_total "$T/in/$n.pb.gz")
		check "$name $form: go tool pprof totals perch's samples" "$got" "$want"
		if [ $form = parca ]; then
			check "$name parca: __name__ label" "$(cat "$T/in/$n.query")" "__name__=app.$name"
			continue
		fi
		q=$T/in/$n.query
		check "$name pyroscope: name" "$(query "$q" name)" "app.$name%7Benv%3Dtest%7D"
		check "$name pyroscope: format, spyName" "$(query "$q" format),$(query "$q" spyName)" pprof,perch
		check "$name pyroscope: sampleRate" "$(query "$q" sampleRate)" "$freq"
		check "$name pyroscope: until - from (s)" $(($(query "$q" until) - $(query "$q" from))) \
			$(((dur + 999999999) / 1000000000))
	done
done

# origins: each input's samples under its label
for l in a b; do
	read -r got _ < <(pprof_total "$T/in/$n.pb.gz" -tagfocus="origin=^host-$l\$")
	check "merged: -tagfocus origin=host-$l totals $l.data's samples" "$got" "$(stat "$T/$l.data" sampled)"
done

# OTLP/HTTP (--otlp): POST /v1development/profiles, application/x-protobuf, gzip; the body,
# gunzipped, is byte for byte `perch report --format=otlp`'s, and tests/otlp_decode.py reads it
# (its dictionary's rules, its samples profile totalling perch's sampled)
PY=/usr/bin/python3.11
[ -x "$PY" ] || PY=python3
for rec in tests/golden/regions.data "$T/a.data"; do
	name=$(basename "$rec" .data)
	"$PERCH" report --format=otlp -o "$T/$name.otlp" "$rec"
	"$PERCH" push --otlp --url="$URL" "$rec"
	check "$name otlp: exit status" $? 0
	n=$((n + 1))
	check "$name otlp: headers" "$(cat "$T/in/$n.query")" \
		"content-type=application/x-protobuf&content-encoding=gzip"
	cmp -s "$T/in/$n.otlp" "$T/$name.otlp"
	check "$name otlp: the body is perch report --format=otlp's" $? 0
	"$PY" tests/otlp_decode.py "$T/in/$n.otlp" check >/dev/null
	check "$name otlp: the decoder reads it" $? 0
	got=$("$PY" tests/otlp_decode.py "$T/in/$n.otlp" folded samples | awk '{ t += $NF } END { print t + 0 }')
	check "$name otlp: its samples total perch's" "$got" "$(stat "$rec" sampled)"
done
"$PERCH" push --otlp --name=checkout --url="$URL" "$T/a.data"
n=$((n + 1))
check "otlp --name: service.name" "$("$PY" tests/otlp_decode.py "$T/in/$n.otlp" resource | sed -n 1p)" \
	"service.name=checkout"
"$PERCH" push --otlp --parca --url="$URL" "$T/a.data" 2>"$T/err" >/dev/null
check "--otlp with --parca: exit status" $? 64

# errors: one line on stderr each, distinct statuses
err_case() { # err_case WHAT STATUS ARGS... (perch push's, or a command line starting "timeout")
	local what=$1 want=$2
	shift 2
	[ "$1" = timeout ] || set -- "$PERCH" push "$@"
	"$@" 2>"$T/err" >/dev/null
	check "$what: exit status" $? "$want"
	check "$what: one line on stderr" "$(wc -l <"$T/err")" 1
}
kill "$RECV_PID" && wait "$RECV_PID" 2>/dev/null
RECV_PID=
err_case "refused connection" 76 --url="$URL" "$T/a.data"
"$T/receiver" "$T/in" &
RECV_PID=$!
for _ in $(seq 100); do [ "$(cat "$T/in/port" 2>/dev/null)" != "$PORT" ] && [ -s "$T/in/port" ] && break; sleep 0.05; done
URL=http://127.0.0.1:$(cat "$T/in/port")
err_case "HTTP 503" 78 --url="$URL/fail" "$T/a.data"
grep -q "answered 503" "$T/err"
check "HTTP 503: the line names the status" $? 0
err_case "https URL" 64 --url="https://127.0.0.1/" "$T/a.data"
err_case "no --url" 64 "$T/a.data"
err_case "missing recording" 66 --url="$URL" "$T/none.data"

# hostile servers (receiver.go's raw answers); each bounded by timeout(1) should perch hang
ms() { echo $(($(date +%s%N) / 1000000)); }
err_case "100 Continue then 500" 78 timeout 20 "$PERCH" push --url="$URL/continue500" "$T/a.data"
grep -q "answered 500 Internal Server Error: rejected$" "$T/err"
check "100 Continue then 500: the line names the final status" $? 0
t0=$(ms)
timeout 20 "$PERCH" push --timeout=5 --url="$URL/keepopen" "$T/a.data" 2>"$T/err"
check "a 200 on a kept-open connection: exit status" $? 0
check "a 200 on a kept-open connection: answered before --timeout" $(($(ms) - t0 < 4000)) 1
t0=$(ms)
err_case "a head dripped a byte every 1.5 s" 76 timeout 20 "$PERCH" push --timeout=2 --url="$URL/drip" \
	"$T/a.data"
t=$(($(ms) - t0))
check "a head dripped a byte every 1.5 s: --timeout=2 ends the exchange (${t} ms)" $((t < 3500)) 1
grep -q "did not answer within --timeout=2 s" "$T/err"
check "a head dripped a byte every 1.5 s: the line names the timeout" $? 0

echo "push: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
