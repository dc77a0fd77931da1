#!/usr/bin/env bash
# Integration tests: the real BPF sampler on workloads whose answers are known (tests/workloads),
# and every bad input a user can give. One scenario per file in tests/integration/, each sourcing
# tests/lib.sh and runnable on its own (bash tests/integration/forks.sh build). Needs root and
# BPF; a kernel refusal is a failure.
#
#   tests/integration.sh [BUILD_DIR [SCENARIO...]]   SCENARIO: a file's name there, .sh optional
#
# Runs every scenario (or those named) one after another, showing each one's checks as it goes;
# then one line per scenario and the total. Exits non-zero when any check failed, or a scenario
# ended without its closing line.
set -u
dir=$(dirname "$0")/integration
build=${1:-build}
[ $# -gt 0 ] && shift

files=()
if [ $# -eq 0 ]; then
	files=("$dir"/*.sh)
else
	for s in "$@"; do
		f=$dir/${s%.sh}.sh
		if [ ! -f "$f" ]; then
			echo "integration: no scenario $s (tests/integration/ has: $(cd "$dir" && echo *.sh))" >&2
			exit 2
		fi
		files+=("$f")
	done
fi

log=$(mktemp /tmp/perch-integration-log.XXXXXX)
trap 'rm -f "$log"' EXIT
pass=0
fail=0
lines=()
start=$SECONDS
for f in "${files[@]}"; do
	name=$(basename "$f" .sh)
	t0=$SECONDS
	echo "== $name"
	bash "$f" "$build" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# the scenario's closing line, from lib.sh's it_end: "NAME: P passed, F failed"
	read -r p n < <(sed -n 's/^[^ ]*: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -1)
	note=""
	if [ -z "${p:-}" ]; then
		p=0 n=1
		note=" (ended, exit $rc, before its closing line)"
	elif [ "$rc" -ne 0 ] && [ "$n" -eq 0 ]; then
		n=1
		note=" (exit $rc)"
	fi
	pass=$((pass + p))
	fail=$((fail + n))
	lines+=("$(printf '%-16s %3d passed, %d failed%s  (%d s)' "$name" "$p" "$n" "$note" $((SECONDS - t0)))")
	unset p n
done

echo "== integration: ${#files[@]} scenarios"
printf '   %s\n' "${lines[@]}"
echo "integration: $pass passed, $fail failed ($((SECONDS - start)) s)"
[ "$fail" -eq 0 ]
