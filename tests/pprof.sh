#!/bin/bash
# --format=pprof read back by its reference reader: `go tool pprof` on what perch exports from
# the recordings of tests/golden/ and tests/corpus/ must count what perch counts.
#   - the total equals `--format=stats`'s sampled;
#   - every function's flat (self) and cum (total) sample counts equal perch's own, derived from
#     --format=folded (self: samples whose leaf is the function; total: samples whose stack holds
#     it), by function, with --lines and with --no-demangle;
#   - for each region NAME: -tagfocus on region_stack totals `perch report --region=NAME`, the
#     export with --region=NAME totals the same, and -tagfocus region=NAME (the innermost) totals
#     the samples whose innermost region is NAME.
# Recordings need nothing from this machine, and neither does this test (no BPF, no root).
#   bash tests/pprof.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
PERCH=${1:-build}/perch
command -v go >/dev/null || { echo "pprof: go not found (scripts/install-deps.sh installs golang-go)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export HOME=$T GOCACHE=$T/gocache GOPATH=$T/gopath GOFLAGS=-mod=mod GOTOOLCHAIN=local
pass=0 fail=0

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL pprof: $1: got '$2', want '$3'"
	fi
}

# pprof_top FILE ARGS...: go tool pprof -top by sample count, every node
pprof_top() {
	local f=$1
	shift
	go tool pprof -top -functions -sample_index=samples -nodecount=1000000 -nodefraction=0 \
		-edgefraction=0 "$@" "$f" 2>&1
}

# The samples of a profile after ARGS's filters: -raw lists them ("count ns: locations").
pprof_total() {
	local f=$1
	shift
	go tool pprof -raw "$@" "$f" 2>&1 |
		awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && /^ *[0-9]+ +[0-9]+:/ { t += $1 }
		END { print t + 0 }'
}

# "name flat cum" per function, sorted, from -top (pprof marks inlined nodes " (inline)", and
# " (partial-inline)" a name inlined in some places and not in others: glibc's inlined
# futex_wait beside the kernel's futex_wait in an --off-cpu recording).
pprof_funcs() {
	pprof_top "$@" | sed -n -E 's/^ *([0-9]+) +[0-9.]+% +[0-9.]+% +([0-9]+) +[0-9.]+% +(.*)$/\3\t\1\t\2/p' |
		sed -E 's/ \((partial-)?inline\)\t/\t/' | LC_ALL=C sort
}

# The same from perch's folded stacks: frames after the thread name, regions dropped, the
# kernel's "_[k]" mark taken off (pprof names functions by name alone).
folded_funcs() {
	"$PERCH" report --format=folded "$@" 2>/dev/null | awk '
	{
		count = $NF
		stack = substr($0, 1, length($0) - length(count) - 1)
		n = split(stack, f, ";")
		leaf = ""
		delete seen
		for (i = 2; i <= n; i++) {
			if (f[i] ~ /^region:/ || f[i] == "[no stack]")
				continue
			sub(/_\[k\]$/, "", f[i])
			leaf = f[i]
			if (!(f[i] in seen)) {
				seen[f[i]] = 1
				cum[f[i]] += count
			}
		}
		if (leaf != "")
			flat[leaf] += count
	}
	END { for (k in cum) printf "%s\t%d\t%d\n", k, flat[k], cum[k] }' | LC_ALL=C sort
}

# Samples of the folded stacks (with ARGS), or those whose innermost region is $REGION_INNER.
folded_total() {
	"$PERCH" report --format=folded "$@" 2>/dev/null | awk -v inner="${REGION_INNER:-}" '
	{
		n = split($0, f, ";")
		last = ""
		for (i = 2; i <= n; i++)
			if (f[i] ~ /^region:/)
				last = substr(f[i], 8)
		if (inner == "" || last == inner)
			t += $NF
	}
	END { print t + 0 }'
}

for data in tests/golden/*.data tests/corpus/*.data; do
	base=$(basename "$data" .data)
	"$PERCH" report --format=stats "$data" >/dev/null 2>&1 || continue # loads cleanly only
	pb=$T/$base.pb.gz
	"$PERCH" report --format=pprof -o "$pb" "$data" || { check "$base: export" failed ok; continue; }
	sampled=$("$PERCH" report --format=stats "$data" | awk '$1 == "sampled" { print $2 }')
	check "$base: total samples" "$(pprof_total "$pb")" "$sampled"
	for opts in "" "--lines" "--no-demangle"; do
		# shellcheck disable=SC2086
		"$PERCH" report --format=pprof $opts -o "$pb" "$data"
		# shellcheck disable=SC2086
		d=$(diff <(pprof_funcs "$pb") <(folded_funcs $opts "$data"))
		check "$base ${opts:-by function}: flat and cum per function" "${d:-same}" same
	done
	"$PERCH" report --format=pprof -o "$pb" "$data"
	for r in $("$PERCH" report --format=csv "$data" | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u); do
		want=$(folded_total --region="$r" "$data")
		check "$base: -tagfocus region_stack has $r" \
			"$(pprof_total "$pb" "-tagfocus=region_stack=(^|;)$r(;|$)")" "$want"
		"$PERCH" report --format=pprof --region="$r" -o "$T/r.pb.gz" "$data"
		check "$base: --region=$r export total" "$(pprof_total "$T/r.pb.gz")" "$want"
		check "$base: -tagfocus region=$r (innermost)" \
			"$(pprof_total "$pb" "-tagfocus=region=^$r\$")" "$(REGION_INNER=$r folded_total "$data")"
	done
done
# a version 4 recording (tests/mkrec) keeps its modules' build-ids: -raw lists them with the
# mappings; its sample types are samples/count and cpu/nanoseconds
if [ -x "${1:-build}/tests/mkrec" ]; then
	"${1:-build}/tests/mkrec" -n 3000 -s 20 -t 2 "$T/v4.data"
	"$PERCH" report --format=pprof -o "$T/v4.pb.gz" "$T/v4.data"
	check "v4: mapping build-id" "$(go tool pprof -raw "$T/v4.pb.gz" 2>/dev/null | awk '/^Mappings/ { m = 1; next } m { print $3, $4; exit }')" \
		"/usr/bin/mkrec-app 00112233445566778899aabbccddeeff00112233"
	check "v4: sample types" "$(go tool pprof -raw "$T/v4.pb.gz" 2>/dev/null | awk '/^Samples:/ { getline; $1 = $1; print; exit }')" \
		"samples/count cpu/nanoseconds"
	check "v4: total" "$(pprof_total "$T/v4.pb.gz")" 3000
fi
# an unwritable -o: one line naming it, exit status 73 (lib/exitcodes.h), nothing on stdout
out=$("$PERCH" report --format=pprof -o "$T/no/such/dir/x.pb.gz" tests/corpus/shares.data 2>"$T/err")
check "unwritable -o: exit status" "$?" 73
check "unwritable -o: message" "$(cat "$T/err")" "perch: cannot write $T/no/such/dir/x.pb.gz: No such file or directory"
check "unwritable -o: stdout" "$out" ""
echo "pprof: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
