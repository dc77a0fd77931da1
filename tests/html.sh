#!/bin/bash
# --format=html in a real browser: Debian's chromium, headless, driven by playwright-core
# (tests/browser/, installed by scripts/install-deps.sh) through tests/browser/html_check.js, on
# the recordings of tests/golden/ and tests/corpus/ that load cleanly and on ones tests/mkrec
# writes (regions and time windows; one of 1M samples). Per recording: the page loads from
# file:// with no error and no request; its top functions equal `perch report`'s tables; the
# callers and callees of a function clicked into equal the ones counted from `--format=folded`;
# an exclude chip, then a fold chip, give folded's totals with the function's stacks dropped
# (its frames removed), and so does the "CLI:" line the page shows for that view, run (where
# perch has the query options); the link reproduces the view; a screenshot is kept (its path
# printed); on a live recording of C++ names holding commas, one typed as printed into the filter
# box selects its stacks, as the page's CLI line does run through bash; its Threads tab's rows equal `--format=folded --sort=comm,pid,tid` summed per thread
# (and a --per-thread page opens on that tab).
# With root and the CUDA fixtures, also a live `perch record --gpu` through the
# stand-in CUPTI: its GPU tab's kernels equal the text report's. `perch diff --format=html` of
# two pairs of recordings against `perch diff --format=csv` (tests/browser/html_diff_check.js).
# Bad input: an unwritable -o gives one line on stderr and its exit status.
#   bash tests/html.sh [BUILD]
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
PERCH=$BUILD/perch
MKREC=$BUILD/tests/mkrec
SHOTS=$(realpath -m "$BUILD/tests/html-shots")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
mkdir -p "$SHOTS"

check() { # check WHAT GOT WANT
	if [ "$2" = "$3" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL html: $1: got '$2', want '$3'"
	fi
}

if [ ! -f tests/browser/node_modules/playwright-core/package.json ] || ! command -v chromium >/dev/null; then
	check "chromium and playwright-core installed (make deps)" missing installed
	echo "html: $pass passed, $fail failed"
	exit 1
fi

recordings=(tests/golden/*.data tests/corpus/*.data)
if [ -x "$MKREC" ]; then
	"$MKREC" -n 4000 -s 40 -t 3 -d 10 --regions "$T/v4-regions.data" &&
		"$MKREC" -n 1000000 -s 2000 -t 8 -d 24 --regions "$T/v4-1M.data"
	check "mkrec writes version 4 recordings" "$?" 0
	recordings+=("$T"/v4-regions.data "$T"/v4-1M.data)
else
	check "$MKREC is built (make all)" missing built
fi

# A live one where it is cheap: `perch record --gpu` of tests/cuda/host through the stand-in
# CUPTI (as tests/integration/gpu-standin.sh; root, BPF and the CUDA toolkit's build), for the
# GPU and timeline sections.
B=$(realpath "$BUILD")
if [ "$(id -u)" = 0 ] && [ -x "$B/tests/cuda/host" ] && [ -e "$B/libperch_cuda.so" ]; then
	env LD_LIBRARY_PATH="$B/tests/cuda" HOST_SPIN_MS=300 HOST_SETTLE_MS=300 \
		"$PERCH" record -q --gpu -o "$T/live-gpu.data" -- "$B/tests/cuda/host" >/dev/null 2>"$T/err"
	check "perch record --gpu of tests/cuda/host" "$?:$(cat "$T/err")" "0:"
	recordings+=("$T/live-gpu.data")
else
	echo "html: live GPU stand-in recording skipped (needs root and perch built with CUDA: make cuda-fixtures)"
fi

# The CLI's own query options, where perch has them (model/query.c): the view's "CLI:" line is run
# and must count what the page does.
PERCH_CLI=
"$PERCH" report --help 2>&1 | grep -q -- '--exclude' && PERCH_CLI=$PERCH

# HTML_REFERENCE=BUILD (the Makefile's sanitizer pass: HTML_REFERENCE=build): each page is
# exported by this build's perch and by BUILD's, and must be the same bytes; the browser checks
# then hold as they did on BUILD's pages (run just before), and this pass does not repeat them.
REF=${HTML_REFERENCE:-}
# same_as_ref SHOT FILE CMD...: FILE equals what CMD... writes with BUILD's perch
same_as_ref() {
	local shot=$1 file=$2
	shift 2
	"$REF/perch" "$@" >"$T/$shot.ref" 2>/dev/null
	check "$shot: the same bytes as $REF/perch's" "$(cmp -s "$file" "$T/$shot.ref" && echo same)" same
	echo "html: $shot: $(wc -c <"$file") bytes; same as $REF/perch's"
}

# page SHOT DATA [OPTION...]: the page of DATA (with the report options given) in chromium
page() {
	local shot=$1 data=$2 out
	shift 2
	"$PERCH" report --format=html -o "$T/$shot.html" ${HTML_ONLY:+"$HTML_ONLY"} "$@" "$data" 2>"$T/err"
	check "$shot: export" "$?:$(cat "$T/err")" "0:"
	if [ -n "$REF" ]; then
		same_as_ref "$shot" "$T/$shot.html" report --format=html ${HTML_ONLY:+"$HTML_ONLY"} "$@" "$data"
		return
	fi
	"$PERCH" report "$@" "$data" >"$T/$shot.text" 2>/dev/null
	"$PERCH" report --format=folded "$@" "$data" >"$T/$shot.folded" 2>/dev/null
	"$PERCH" report --format=folded --sort=comm,pid,tid "$@" "$data" >"$T/$shot.threads" 2>/dev/null
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$shot" "$T/$shot.html" "$T/$shot.text" "$T/$shot.folded" \
		"$SHOTS/$shot.png" "$T/$shot.threads" >>"$T/jobs"
}

# in_browser: the pages given to page() checked in chromium, one browser for all of them
# (html_check.js --jobs); each page's result line is kept in $T/SHOT.out.
in_browser() {
	[ -n "$REF" ] || [ ! -s "$T/jobs" ] && return
	(cd tests/browser && PERCH_CLI=$PERCH_CLI node html_check.js --jobs "$T/jobs" >"$T/browser.out" 2>&1)
	local shot out
	while IFS=$'\t' read -r shot _; do
		out=$(awk -v p="$shot: " 'index($0, p) == 1 { print substr($0, length(p) + 1) }' "$T/browser.out")
		[ -n "$out" ] || out="FAIL no result: $(grep -v '^[^ ]*: ' "$T/browser.out" | head -3)"
		echo "$out" >"$T/$shot.out"
		check "$shot: in chromium" "$(echo "$out" | grep -v '^ok')" ""
		echo "html: $shot: $(wc -c <"$T/$shot.html") bytes; $(echo "$out" | grep '^ok' || echo failed); screenshot $SHOTS/$shot.png"
	done <"$T/jobs"
}

for data in "${recordings[@]}"; do
	shot=$(basename "$(dirname "$data")")-$(basename "$data" .data)
	[ "$(dirname "$data")" = "$T" ] && shot=$(basename "$data" .data) # made here
	"$PERCH" report --format=stats "$data" >/dev/null 2>&1 || continue # loads cleanly only
	page "$shot" "$data"
done
# The options that shape the data: functions by source line, and the samples of one region (the
# one with the most samples).
page golden-inlined-lines tests/golden/inlined.data --lines
region=$("$PERCH" report --format=csv tests/golden/regions-shape.data |
	awk -F, 'NR > 1 && $2 == "" { print $9, $1 }' | sort -rn | awk 'NR == 1 { print $2 }')
page "golden-regions-shape-region-$region" tests/golden/regions-shape.data --region="$region"
# --per-thread shapes the page's first view only (it opens on the Threads tab; the data is the
# same), so the CLI's outputs it is checked against are the plain ones
HTML_ONLY=--per-thread page golden-threads-per-thread tests/golden/threads.data

# C++ names holding commas (tests/workloads/cxxnames, recorded here: root and BPF), on a page
# whose own query names one (the CLI line quotes each of its options): the checks above, and one
# such name typed as printed into the filter box (html_check.js's checkCommaName).
if [ "$(id -u)" = 0 ] && [ -x "$BUILD/workloads/cxxnames" ]; then
	"$PERCH" record -q -o "$T/cxx-names.data" -- "$BUILD/workloads/cxxnames" 0.5 >/dev/null 2>"$T/err"
	check "perch record of cxxnames" "$?:$(cat "$T/err")" "0:"
	page cxx-names "$T/cxx-names.data" --exclude='q::operator<(q::Acc const&, q::Acc const&)'
	cxx=1
else
	echo "html: C++ names with commas skipped (needs root and $BUILD/workloads/cxxnames)"
fi
in_browser
[ -n "${cxx:-}" ] && [ -z "$REF" ] && check "cxx-names: a name with commas typed into the filter box" \
	"$(grep -c ' comma="' "$T/cxx-names.out")" 1

# `perch diff --format=html` (the viewer's diff mode) against `perch diff --format=csv`.
for pair in "tests/corpus/shares.data tests/corpus/shares-v4.data" \
	"tests/golden/threads.data tests/golden/forks.data"; do
	set -- $pair
	name=diff-$(basename "$1" .data)-$(basename "$2" .data)
	"$PERCH" diff --format=html "$1" "$2" >"$T/$name.html" 2>"$T/err"
	check "$name: export" "$?:$(cat "$T/err")" "0:"
	"$PERCH" diff --format=csv "$1" "$2" >"$T/$name.csv"
	if [ -n "$REF" ]; then
		same_as_ref "$name" "$T/$name.html" diff --format=html "$1" "$2"
		continue
	fi
	out=$(cd tests/browser && node html_diff_check.js "$T/$name.html" "$T/$name.csv" "$SHOTS/$name.png" 2>&1)
	check "$name: in chromium" "$(echo "$out" | grep -v '^ok')" ""
	echo "html: $name: $(wc -c <"$T/$name.html") bytes; $(echo "$out" | grep '^ok' || echo failed); screenshot $SHOTS/$name.png"
done

# Bad input: one line on stderr, the exit status of lib/exitcodes.h.
"$PERCH" report --format=html -o /nonexistent/dir/r.html tests/corpus/shares.data >/dev/null 2>"$T/err"
check "unwritable -o: status" "$?" 73
check "unwritable -o: one line" "$(wc -l <"$T/err")" 1
# stdout is the default, and the same bytes as -o
"$PERCH" report --format=html -o "$T/o.html" tests/corpus/shares.data
check "stdout equals -o" "$("$PERCH" report --format=html tests/corpus/shares.data | cmp - "$T/o.html" && echo same)" same
echo "html: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
