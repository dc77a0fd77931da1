#!/bin/bash
# Queries checked against an independent path: for the recordings of tests/golden/ and
# tests/corpus/ and, in each, the functions most samples hold, the numbers of `perch report
# --select/--exclude/--fold/--callees` must equal what this script computes itself from the
# unfiltered `--format=folded` (each line's stack and count; regions and the thread's name are
# not functions):
#   - --exclude=F totals the unfiltered total minus the samples whose stack holds F;
#   - --select=F totals those samples; --fold=F keeps the total and no frame of F;
#   - --callees=F's [self] row is the samples whose leaf is F, in csv;
#   - speedscope (its sampled profiles' weights) agrees with folded under --exclude=F;
#   - where go is installed, `go tool pprof` reading --format=pprof --exclude=F counts the same
#     total, and under --fold=F lists no function F (flat or cum) and the unfiltered total.
# Needs nothing from this machine (no BPF, no root): bash tests/query.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
PERCH=${1:-build}/perch
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local
pass=0 fail=0

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL query: $1: got '$2', want '$3'"
	fi
}

# folded FILE: the functions of each line (no thread, no region:, no _[k] mark), ' ' count
functions() {
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); s = "";
	       for (i = 2; i <= k; i++) if (f[i] !~ /^region:/) { sub(/_\[k\]$/, "", f[i]); s = s ";" f[i] }
	       print substr(s, 2) "\t" n }' "$1"
}
# pprof_total FILE: the samples go tool pprof -raw lists; pprof_has FILE F: F's -top rows
pprof_total() {
	go tool pprof -raw "$1" 2>&1 | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+:/ { t += $1 } END { print t + 0 }'
}
pprof_has() {
	go tool pprof -top -functions -sample_index=samples -nodecount=1000000 -nodefraction=0 "$1" 2>&1 |
		awk -v f="$2" '/%/ && $NF == f' | wc -l
}
sum() { awk '{ s += $NF } END { print s + 0 }'; }
# holding F: the samples whose stack holds F; leaf F: those whose leaf is F
holding() { awk -F'\t' -v f="$2" '{ k = split($1, a, ";"); for (i = 1; i <= k; i++) if (a[i] == f) { s += $2; break } } END { print s + 0 }' "$1"; }
leafing() { awk -F'\t' -v f="$2" '{ k = split($1, a, ";"); if (a[k] == f) s += $2 } END { print s + 0 }' "$1"; }

for data in tests/golden/*.data tests/corpus/*.data; do
	"$PERCH" report --format=folded "$data" >"$T/all" 2>/dev/null || continue
	functions "$T/all" >"$T/funcs"
	all=$(sum <"$T/all")
	# the three functions most samples hold (names without a ';' or ',' the shell would split)
	for f in $(awk -F'\t' '{ delete seen; k = split($1, a, ";");
			for (i = 1; i <= k; i++) if (!(a[i] in seen)) { seen[a[i]]; t[a[i]] += $2 } }
		   END { for (x in t) print t[x] "\t" x }' "$T/funcs" | grep -v '[ ,]' |
		   grep -v '\[no stack\]' | sort -k1,1nr -k2 | head -3 | cut -f2); do
		name=$(basename "$data"):$f
		held=$(holding "$T/funcs" "$f")
		got=$("$PERCH" report --format=folded --exclude="$f" "$data" | sum)
		check "$name --exclude total" "$got" $((all - held))
		got=$("$PERCH" report --format=folded --select="$f" "$data" | sum)
		check "$name --select total" "$got" "$held"
		"$PERCH" report --format=folded --fold="$f" "$data" >"$T/fold"
		check "$name --fold total" "$(sum <"$T/fold")" "$all"
		functions "$T/fold" >"$T/foldf"
		check "$name --fold leaves no frame of it" "$(holding "$T/foldf" "$f")" 0
		got=$("$PERCH" report --format=csv --callees="$f" "$data" | awk -F, '$1 == "[self]" { print $2 }')
		check "$name --callees [self]" "${got:-0}" "$(leafing "$T/funcs" "$f")"
		# speedscope's sampled profiles (a recording with a time axis has evented ones: skipped)
		got=$("$PERCH" report --format=speedscope --exclude="$f" "$data" |
			python3 -c 'import json,sys; p = json.load(sys.stdin)["profiles"]
print(sum(sum(x["weights"]) for x in p) if all("weights" in x for x in p) else "evented")')
		[ "$got" = evented ] || check "$name speedscope --exclude total" "$got" $((all - held))
		command -v go >/dev/null || continue
		"$PERCH" report --format=pprof --exclude="$f" -o "$T/x.pb.gz" "$data"
		check "$name pprof --exclude total" "$(pprof_total "$T/x.pb.gz")" $((all - held))
		"$PERCH" report --format=pprof --fold="$f" -o "$T/f.pb.gz" "$data"
		check "$name pprof --fold total" "$(pprof_total "$T/f.pb.gz")" "$all"
		check "$name pprof --fold leaves no $f" "$(pprof_has "$T/f.pb.gz" "$f")" 0
	done
done
echo "query: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
