#!/usr/bin/env bash
# Bad input a user can give perch: one line on stderr, its own exit status (sysexits).
#
#   tests/integration/bad-input.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin bad-input "${1:-build}"

expect "bad --max-size" 64 "bad size '12Q'" -- "$PERCH" record --timeline --max-size=12Q -o "$T/n.data" -- true
expect "no such pid" 68 "no such process: 999999" -- "$PERCH" record -o "$T/n.data" -p 999999
sleep 0.3 &
spid=$!
expect "pid exits during attach" 69 "process $spid exited while perch attached" -- \
	env PERCH_TEST_ATTACH_DELAY_MS=900 "$PERCH" record -q -o "$T/gone.data" -p "$spid"
if "$PERCH" report "$T/gone.data" >/dev/null 2>&1; then
	ok "pid exits during attach: recording still written and readable"
else
	bad "pid gone file" "recording not readable"
fi
expect "command not found" 127 "no-such-command-xyz: command not found" -- \
	"$PERCH" record -o "$T/n.data" -- no-such-command-xyz
printf '#!/bin/sh\n' >"$T/noexec.sh"
chmod 644 "$T/noexec.sh"
expect "command not executable" 126 "noexec.sh: permission denied" -- \
	"$PERCH" record -o "$T/n.data" -- "$T/noexec.sh"
expect "not root" 77 "missing CAP_BPF and CAP_PERFMON" -- \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$PERCH" record -o "$T/n.data" -- true
expect "no CAP_PERFMON" 77 "missing CAP_PERFMON (" -- \
	setpriv --bounding-set=-perfmon,-sys_admin --inh-caps=-perfmon,-sys_admin "$PERCH" record -o "$T/n.data" -- true
expect "kernel without BTF" 70 "kernel has no BTF" -- \
	env PERCH_SYSFS_BTF=/nonexistent/vmlinux "$PERCH" record -o "$T/n.data" -- true
# a frequency over the kernel's limit is refused before anything starts (the limit lowered for
# the check, and put back)
maxrate=$(sysctl -n kernel.perf_event_max_sample_rate)
sysctl -qw kernel.perf_event_max_sample_rate=5000
expect "frequency over the kernel's limit" 64 "over kernel.perf_event_max_sample_rate (5000 Hz)" -- \
	"$PERCH" record -F 6000 -o "$T/n.data" -- true
sysctl -qw kernel.perf_event_max_sample_rate="$maxrate"
expect "unknown record option" 64 "unknown option '--bogus'" -- "$PERCH" record --bogus -- true
expect "unknown report option" 64 "unknown option '--bogus'" -- "$PERCH" report --bogus
expect "unwritable output" 73 "cannot write /nonexistent/dir/x.data" -- \
	"$PERCH" record -o /nonexistent/dir/x.data -- true
expect "unwritable report output" 73 "cannot write /nonexistent/dir/x.pb.gz" -- \
	"$PERCH" report --format=pprof -o /nonexistent/dir/x.pb.gz "$(dirname "$0")/../corpus/shares.data"
expect "missing recording" 66 "cannot open recording" -- "$PERCH" report "$T/nothing.data"
expect "not a recording" 65 "not a perch recording" -- "$PERCH" report /etc/passwd

it_end
