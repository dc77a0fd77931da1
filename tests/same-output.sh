#!/usr/bin/env bash
# The sanitizer pass's check of the exporters: every recording of tests/golden/ and tests/corpus/
# that loads, in every format and the options that shape the data (by function, --lines,
# --no-demangle, --no-inline, --per-thread, each top-level --region), exported by BUILD's perch
# (built with -fsanitize=address,undefined, which stops at the first error) must be the same
# bytes as REF's (the plain build), whose outputs tests/speedscope.sh, tests/chrome.sh and
# tests/html.sh checked against their formats' rules and against perch's other outputs just
# before. What runs once per build instead of twice: the Python and browser checks.
#   bash tests/same-output.sh REF BUILD
#   SAME_OUTPUT_REF=REF bash tests/same-output.sh BUILD    (as tests/parallel.sh runs it)
set -u
cd "$(dirname "$0")/.." || exit 1
if [ $# -ge 2 ]; then
	REF=$1
	BUILD=$2
else
	REF=${SAME_OUTPUT_REF:-build}
	BUILD=${1:-build-san}
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

same() { # same WHAT ARGS...: perch report ARGS... from both builds, byte for byte
	local what=$1
	shift
	"$REF/perch" report "$@" >"$T/ref" 2>"$T/ref.err"
	local rs=$?
	"$BUILD/perch" report "$@" >"$T/out" 2>"$T/out.err"
	local bs=$?
	if [ "$rs" = "$bs" ] && cmp -s "$T/ref" "$T/out" && cmp -s "$T/ref.err" "$T/out.err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL same-output: $what: exit $bs vs $rs, $(cmp "$T/ref" "$T/out" 2>&1 | head -1)"
	fi
}

for data in tests/golden/*.data tests/corpus/*.data; do
	"$REF/perch" report --format=stats "$data" >/dev/null 2>&1 || continue # loads cleanly only
	base=$(basename "$(dirname "$data")")/$(basename "$data" .data)
	for fmt in text folded csv stats pprof speedscope chrome; do
		for opts in "" --lines --no-demangle --no-inline --per-thread; do
			# shellcheck disable=SC2086
			same "$base $fmt ${opts:-by function}" --format=$fmt $opts "$data"
		done
	done
	for r in $("$REF/perch" report --format=csv "$data" | awk -F, 'NR > 1 && $2 == "" { print $1 }' | sort -u); do
		for fmt in folded speedscope chrome; do
			same "$base $fmt --region=$r" --format=$fmt --region="$r" "$data"
		done
	done
done
echo "same-output: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
