#!/usr/bin/env bash
# Names the target controls, hostile (tests/mkrec --hostile: terminal escapes, XML and JSON
# specials, bytes that are no UTF-8, region names that are spreadsheet formulas), in every output:
# each read by a strict decoder (tests/hostile_check.py: python3's json and csv, the protobuf
# wire format with strict UTF-8 strings), the text outputs and every stderr line free of ESC, and
# push's error line quoting a hostile server reply. Needs no BPF; about 1 s.
#
#   tests/integration/hostile-names.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin hostile-names "${1:-build}"

CHECK="python3 $TESTS/hostile_check.py"
"$BUILD/tests/mkrec" -n 60 -s 6 -t 2 --timeline --regions --hostile "$T/h.data" >/dev/null

# decoded NAME KIND FILE: FILE to be read as KIND by the strict reader (all at once, at the end)
checks=()
n=0
decoded() { checks+=("$2" "$3" "$1"); }

# run NAME KIND OUTFILE CMD...: CMD exits 0 with OUTFILE decoded as KIND and no ESC on stderr
run() {
	local name=$1 kind=$2 out=$3
	shift 3
	n=$((n + 1))
	if ! "$@" 2>"$T/err.$n"; then
		bad "$name" "exit $?: $(head -c 300 "$T/err.$n")"
		return
	fi
	decoded "$name" "$kind" "$out"
	decoded "$name: stderr" text "$T/err.$n"
}

for f in text folded stats; do
	run "report --format=$f" text "$T/out.$f" sh -c '"$1" report --format="$2" "$3" >"$4"' \
		_ "$PERCH" "$f" "$T/h.data" "$T/out.$f"
done
run "report --format=csv" csv "$T/out.csv" "$PERCH" report --format=csv -o "$T/out.csv" "$T/h.data"
run "report --format=pprof" pprof "$T/out.pb.gz" \
	"$PERCH" report --format=pprof -o "$T/out.pb.gz" "$T/h.data"
for f in speedscope chrome; do
	run "report --format=$f" json "$T/out.$f" "$PERCH" report --format=$f -o "$T/out.$f" "$T/h.data"
done
run "report --format=html" html "$T/out.html" \
	"$PERCH" report --format=html -o "$T/out.html" "$T/h.data"
run "script" text "$T/out.script" sh -c '"$1" script "$2" >"$3"' _ "$PERCH" "$T/h.data" \
	"$T/out.script"
for f in text folded; do
	run "diff --format=$f" text "$T/diff.$f" sh -c '"$1" diff --format="$2" "$3" "$3" >"$4"' \
		_ "$PERCH" "$f" "$T/h.data" "$T/diff.$f"
done
run "diff --format=csv" csv "$T/diff.csv" sh -c '"$1" diff --format=csv "$2" "$2" >"$3"' \
	_ "$PERCH" "$T/h.data" "$T/diff.csv"

# ---- push: a server whose reply line holds terminal escapes --------------------------------
cat >"$T/server.py" <<'EOF'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
s.settimeout(10)
c, _ = s.accept()
c.settimeout(5)
data = b""
while b"\r\n\r\n" not in data:
    data += c.recv(65536)
head, body = data.split(b"\r\n\r\n", 1)
length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
while length and len(body) < length[0]:
    body += c.recv(65536)
c.sendall(b"HTTP/1.1 500 \x1b]0;pwned\x07\x1b[2Jbad\x9b31m\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
c.close()
EOF
coproc SERVER { python3 "$T/server.py"; }
server_pid=$SERVER_PID # bash unsets SERVER_PID once the coprocess ends
read -r -t 10 port <&"${SERVER[0]}"
timeout 20 "$PERCH" push --url="http://127.0.0.1:$port/" "$T/h.data" >/dev/null 2>"$T/err"
rc=$?
wait "$server_pid" 2>/dev/null
if [ $rc -ne 0 ] && grep -q 'answered 500 \\x1b\]0;pwned\\x07\\x1b\[2Jbad\\x9b31m' "$T/err"; then
	ok "push: exit $rc, the reply quoted escaped: $(cat "$T/err")"
else
	bad "push" "exit $rc: $(head -c 300 "$T/err" | od -c | head -5)"
fi
decoded "push: stderr" text "$T/err"

while read -r status line; do
	if [ "$status" = ok ]; then ok "$line"; else bad "${line%%:*}" "${line#*: }"; fi
done < <($CHECK "${checks[@]}")

it_end
