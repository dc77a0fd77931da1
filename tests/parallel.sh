#!/usr/bin/env bash
# Run test scripts that measure nothing about time (exports checked against reference readers,
# golden outputs, queries, symbolization) side by side, one a CPU: each script's output is held
# and printed whole, in the order given, once it is done; exits non-zero when any failed.
# The integration scenarios (shares of CPU, timings) never run here: they run alone.
#
#   tests/parallel.sh BUILD_DIR SCRIPT...   SCRIPT: tests/NAME.sh's NAME; VAR=VALUE:NAME sets
#                                           VAR in that script's environment
set -u
build=$1
shift
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
dir=$(mktemp -d /tmp/perch-parallel.XXXXXX)
trap 'rm -rf "$dir"' EXIT

run_one() { # I SPEC
	local spec=$2 env=() name
	name=${spec##*:}
	[ "$name" != "$spec" ] && env=("${spec%:*}")
	local t0=$SECONDS
	env "${env[@]}" bash "$(dirname "$0")/$name.sh" "$build" >"$dir/$1.out" 2>&1
	echo "$? $((SECONDS - t0))" >"$dir/$1.rc"
}

i=0
for spec in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	run_one "$i" "$spec" &
	i=$((i + 1))
done
wait

fail=0
summary=()
i=0
for spec in "$@"; do
	cat "$dir/$i.out"
	read -r rc secs <"$dir/$i.rc" || rc=1
	[ "$rc" -eq 0 ] || fail=$((fail + 1))
	summary+=("$(printf '%-24s exit %d  (%d s)' "${spec##*:}" "$rc" "${secs:-0}")")
	i=$((i + 1))
done
printf '== %s\n' "${summary[@]}"
echo "parallel: $# scripts, $fail failed"
[ "$fail" -eq 0 ]
