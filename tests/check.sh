#!/usr/bin/env bash
# make check: every check of both builds (build/ and build-san/, already built), in the least wall
# time two CPUs allow without one check disturbing another's measurements.
#
#   tests/check.sh
#
# Foreground, one after another: the format checks, the plain unit tests, the checks that time
# something (push: its --timeout deadlines), then the integration scenarios of both builds, which
# measure CPU shares and times. The integration scenarios leave most of the machine idle (their
# workloads sleep, block and run fixed wall times: about a third of two CPUs is busy), so the
# checks that measure nothing about time — the sanitizer unit tests and the checks of outputs
# against reference readers (golden, exports, queries, symbolization, the browser), both builds —
# run meanwhile in the background under SCHED_IDLE (chrt --idle): the scheduler gives them a CPU
# only when no other task wants it, and a waking foreground task preempts them at once, so the
# scenarios' workloads see the machine as if alone. Their output is held and printed after the
# foreground's. Exits non-zero when any part failed.
set -u
cd "$(dirname "$0")/.."
bg_log=$(mktemp /tmp/perch-check-bg.XXXXXX)
trap 'rm -f "$bg_log"' EXIT
t0=$SECONDS

# The background: sanitizer unit tests, then the output checks of each build (tests/parallel.sh:
# side by side, one a CPU; the sanitizer build's pages and outputs checked against build/'s).
background() {
	local rc=0
	make --no-print-directory BUILD=build-san SAN=1 san-unit || rc=1
	bash tests/parallel.sh build html speedscope chrome query golden symbolize readme pprof otlp \
		merge help || rc=1
	bash tests/parallel.sh build-san HTML_REFERENCE=build:html SAME_OUTPUT_REF=build:same-output \
		golden query symbolize readme pprof otlp merge help || rc=1
	return $rc
}
chrt --idle 0 bash -c "$(declare -f background); background" >"$bg_log" 2>&1 &
bg=$!

fail=()
step() { # step NAME COMMAND...: run in the foreground, note a failure
	local s=$SECONDS
	"${@:2}" || fail+=("$1")
	echo "== $1: $((SECONDS - s)) s"
}
step format make --no-print-directory check-format
step unit make --no-print-directory check-unit-plain
step push bash tests/push.sh build
step push-san bash tests/push.sh build-san
step integration bash tests/integration.sh build
echo "== again with perch built with -fsanitize=address,undefined"
step integration-san bash tests/integration.sh build-san

s=$SECONDS
wait "$bg" || fail+=(background)
echo "== background (sanitizer unit tests, output checks), held until now; waited $((SECONDS - s)) s for it"
cat "$bg_log"
echo "check: $((SECONDS - t0)) s; ${#fail[@]} parts failed${fail[*]:+: ${fail[*]}}"
[ ${#fail[@]} -eq 0 ]
