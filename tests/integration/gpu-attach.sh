#!/usr/bin/env bash
# `perch record --gpu -p PID` (attach mode: uprobes on libcuda.so's entry points) against a
# STAND-IN libcuda.so.1 (tests/cuda/fake_libcuda.c): NOT a GPU test, no driver, nothing runs on a
# GPU. tests/cuda/attach_host links to the stand-in, resolves kernel_early, says it is ready and
# waits; perch attaches (-v: it says when its probes are in place) and then the host resolves
# kernel_a and kernel_b and calls, 20 rounds, from known call sites in known regions (see
# attach_host.c), and prints what it called as truth lines. Then, from the recording:
#   - STATS: every call the host made hit a probe and was written with its stack, none lost;
#     the launches of kernel_early (resolved before perch came) are the unnamed ones;
#   - the text report's attach-mode GPU section: "durations unavailable ...", launches per
#     kernel (kernel_a, kernel_b by name, kernel_early as kernel@0x<the host's handle>), copies
#     per direction with count and bytes, memsets, launches per call site (launch_site_a, _b,
#     _early), copies and memsets from copy_site, and per region (prep, solve, io), all exactly
#     the host's counts;
#   - CPU samples recorded beside them (host_spin), the unwinder's counters counting them only;
#   - a process that maps no libcuda.so: one note saying so, CPU shares as without --gpu;
#   - a process that maps libcuda.so only after perch attached (it execs the host): probed then,
#     every call written.
#
#   tests/integration/gpu-attach.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin gpu-attach "${1:-build}"
B=$(realpath "$BUILD")
if [ ! -e "$B/tests/cuda/attach_host" ] || [ ! -e "$B/tests/cuda/libcuda.so.1" ]; then
	echo "gpu-attach: skipped: no stand-in libcuda.so.1 (built where the CUDA toolkit's cuda.h is)"
	it_end
	exit
fi
echo "gpu-attach: stand-in libcuda.so.1 (tests/cuda/fake_libcuda.c), not a GPU test"

# wait_for FILE PATTERN: up to 30 s for PATTERN to appear in FILE
wait_for() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

"$B/tests/cuda/attach_host" "$T/go" 20 >"$T/host.out" 2>"$T/host.err" &
hpid=$!
wait_for "$T/host.out" '^ready ' || bad "host" "never ready: $(cat "$T/host.err")"
"$PERCH" record -v --gpu -p "$hpid" -o "$T/a.data" >/dev/null 2>"$T/perch.err" &
ppid_=$!
if wait_for "$T/perch.err" "gpu: process $hpid: [0-9]* uprobes on "; then
	touch "$T/go"
else
	bad "probes" "perch never said its probes were in place: $(grep -v debug "$T/perch.err")"
	touch "$T/go"
fi
wait "$hpid"
hrc=$?
wait "$ppid_"
prc=$?
[ $hrc = 0 ] && [ $prc = 0 ] && ok "host and perch record --gpu -p exit 0" ||
	bad "exit" "host $hrc ($(cat "$T/host.err")), perch $prc ($(grep -v debug "$T/perch.err"))"
d=$T/a.data

# truth_line KEY: the numbers of the host's "truth KEY N..." line
truth_line() { sed -n "s/^truth $1 //p" "$T/host.out"; }
calls=$(awk '$1 == "truth" && ($2 == "kernel" || $2 == "copy") { s += $(NF - ($2 == "copy")) } $1 == "truth" && $2 == "memsets" { s += $3 } END { print s }' "$T/host.out")
early=$(truth_line "kernel early")
got="$(rec_stat "$d" gpu_attach_calls) $(rec_stat "$d" gpu_attach_calls_written) $(rec_stat "$d" gpu_attach_calls_lost) $(rec_stat "$d" gpu_attach_launches_unnamed) $(rec_stat "$d" gpu_attach_processes)"
want="$calls $calls 0 $early 1"
[ "$got" = "$want" ] && [ "${calls:-0}" -gt 0 ] &&
	ok "stats: $calls probe hits, each written with its stack, none lost; $early launches of kernel_early unnamed" ||
	bad "stats" "calls written lost unnamed processes: $got (want $want)"

"$PERCH" report "$d" >"$T/a.txt"
sec() { sed -n '/^GPU (CUDA, attach mode/,/^  stacks /p' "$T/a.txt"; }
sec >"$T/gpu.txt"
grep -q '^  durations unavailable in attach mode (CUPTI was not injected)$' "$T/gpu.txt" &&
	ok "the GPU section says durations are unavailable in attach mode" ||
	bad "durations line" "$(cat "$T/gpu.txt")"

# the kernel table: name and launches
handle=$(sed -n 's/^handle kernel_early //p' "$T/host.out")
kern() { awk -v k="$1" '$1 == k && NF == 2 { print $2 }' "$T/gpu.txt"; }
got="$(kern kernel_a) $(kern kernel_b) $(kern "kernel@$handle")"
want="$(truth_line "kernel kernel_a") $(truth_line "kernel kernel_b") $early"
[ "$got" = "$want" ] &&
	ok "launches per kernel: kernel_a, kernel_b named from the lookups after attach, kernel@$handle (resolved before): $got" ||
	bad "kernels" "kernel_a kernel_b kernel@$handle: $got (want $want)"

# copies per direction and memsets: count and bytes
got=$(for k in HtoD DtoH DtoD memsets; do awk -v k="$k" '$1 == k && NF == 3 { printf "%s %s,", $2, $3 }' "$T/gpu.txt"; done)
want=$(for k in "copy HtoD" "copy DtoH" "copy DtoD" memsets; do printf '%s,' "$(truth_line "$k")"; done)
[ "$got" = "$want" ] && ok "copies per direction and memsets, count and bytes: $got" ||
	bad "copies" "HtoD DtoH DtoD memsets: $got (want $want)"

# per call path: the launches of the rows whose path runs through each call site
paths() { sed -n '/^  GPU calls by launching call path/,/^$/p' "$T/gpu.txt"; }
site() { paths | awk -v s="$1" -v c="$2" '$0 ~ (" " s "(\\.[a-z0-9.]*)? <- ") { n += $c } END { print n + 0 }'; }
got="$(site launch_site_a 1) $(site launch_site_b 1) $(site launch_site_early 1) $(site copy_site 2) $(site copy_site 3) $(site copy_site 4)"
io=$(truth_line "region io")
want="$(truth_line "site launch_site_a") $(truth_line "site launch_site_b") $(truth_line "site launch_site_early")"
copies=$(awk '$1 == "truth" && $2 == "copy" { s += $4 } END { print s }' "$T/host.out")
msets=$(truth_line memsets | cut -d' ' -f1)
want="$want $copies $msets ${io#* }"
[ "$got" = "$want" ] &&
	ok "per call path: launch_site_a, launch_site_b, launch_site_early launches, copy_site's copies, memsets and bytes: $got" ||
	bad "call paths" "$got (want $want): $(paths)"

# per region: launches, copies + memsets and bytes
reg() { sed -n '/^  GPU calls by region/,/^  stacks /p' "$T/gpu.txt" | awk -v r="$1" '$5 == r { print $1, $2 + $3, $4 }'; }
got="$(reg prep) / $(reg solve) / $(reg io)"
want="$(truth_line "region prep") 0 0 / $(truth_line "region solve") 0 0 / 0 $io"
[ "$got" = "$want" ] && ok "per region (launches, copies + memsets, bytes): prep $(reg prep), solve $(reg solve), io $(reg io)" ||
	bad "regions" "prep / solve / io: $got (want $want)"

"$PERCH" report --format=folded "$d" >"$T/a.folded"
spin=$(samples "$T/a.folded" 'host_spin')
[ "${spin:-0}" -gt 0 ] && ok "CPU samples recorded beside the GPU calls ($spin in host_spin)" ||
	bad "CPU samples" "none in host_spin"

# the probes' stacks are not ticks: the unwinder's counters stay within the samples
du=$(rec_stat "$d" dwarf_unwound)
ns=$(rec_stat "$d" samples)
[ "${du:-x}" -le "${ns:-0}" ] 2>/dev/null &&
	ok "the unwinder's counters count ticks only: dwarf_unwound $du <= samples $ns" ||
	bad "dwarf counters" "dwarf_unwound $du > samples $ns (the probes' stacks counted as ticks)"

# a process with no libcuda.so: one note, the CPU profile as without --gpu. The workload runs on
# well past perch's second: perch's start (its BPF programs loaded and verified) takes a second
# and more on a loaded machine, and a window that reached the workload's exit held its exit's
# stacks, without main (CI9, 1.6 s: main on 96.36 % of stacks, work_a 54.55 % against 58.98 %).
"$WL/shares" 3 >"$T/nocuda.truth" &
wpid=$!
sleep 0.3
"$PERCH" record -q --gpu -o "$T/nocuda.data" -p "$wpid" -d 1 2>"$T/nocuda.err"
rc=$?
wait "$wpid" 2>/dev/null
"$PERCH" report "$T/nocuda.data" >"$T/nocuda.txt"
notes=$(grep -c '^  note: ' "$T/nocuda.txt")
[ $rc = 0 ] && [ "$notes" = 1 ] &&
	grep -q "^  note: no GPU data for process $wpid: it never mapped libcuda.so" "$T/nocuda.txt" &&
	ok "a process without libcuda.so: exit 0 and one note saying so" ||
	bad "no libcuda" "exit $rc ($(cat "$T/nocuda.err")), $notes notes: $(sed -n '/^GPU/,/^$/p' "$T/nocuda.txt")"
folded "$T/nocuda.data" >"$T/nocuda.folded"
check_shares "no libcuda: CPU shares unchanged" "$T/nocuda.folded" "$T/nocuda.truth"

# a process that maps libcuda.so only after perch attached (here: it execs the host): probed
# then, every call counted
bash -c 'while [ ! -e "$1" ]; do sleep 0.01; done; exec "$2" "$3" 5' late "$T/go1" \
	"$B/tests/cuda/attach_host" "$T/go2" >"$T/late.out" 2>"$T/late.err" &
lpid=$!
"$PERCH" record -v --gpu -p "$lpid" -o "$T/late.data" >/dev/null 2>"$T/late.perr" &
ppid_=$!
wait_for "$T/late.perr" "gpu: process $lpid maps no libcuda.so yet" || bad "late" "no word of it"
touch "$T/go1"
wait_for "$T/late.perr" "gpu: process $lpid: [0-9]* uprobes on " || bad "late" "never probed"
touch "$T/go2"
wait "$lpid"
wait "$ppid_"
lcalls=$(awk '$1 == "truth" && ($2 == "kernel" || $2 == "copy") { s += $(NF - ($2 == "copy")) } $1 == "truth" && $2 == "memsets" { s += $3 } END { print s }' "$T/late.out")
got="$(rec_stat "$T/late.data" gpu_attach_calls_written) $(rec_stat "$T/late.data" gpu_attach_calls_lost) $(rec_stat "$T/late.data" gpu_attach_processes)"
[ "$got" = "$lcalls 0 1" ] && [ "${lcalls:-0}" -gt 0 ] &&
	! grep -q '^  note: ' <("$PERCH" report "$T/late.data") &&
	ok "libcuda.so mapped after attach (an exec): probed then, its $lcalls calls all written, no note" ||
	bad "late" "written lost processes: $got (want $lcalls 0 1): $(grep -v debug "$T/late.perr")"
it_end
