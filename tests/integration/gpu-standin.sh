#!/usr/bin/env bash
# `perch record --gpu` end to end against a STAND-IN CUPTI (tests/cuda/fake_cupti.c): NOT a GPU
# test, no driver, no kernel runs (tests/gpu/ is the GPU test). The real BPF sampler records
# tests/cuda/host, which loads the injection library perch hands it (CUDA_INJECTION64_PATH,
# PERCH_CUDA_FD) and drives known calls through the stand-in: spin_a launched 3 times, a graph
# launch of 4 graph_node kernels, a launch that runs nothing, an orphan kernel, a 1 MiB HtoD copy,
# a 4 KiB memset, 5 dropped records; every stand-in kernel lasts 1 ms, the copy 1.8 us, the
# memset 2.5 us. Then:
#   - STATS (--format=stats): 10 activities, 9 joined, 1 without launch, 1 launch without
#     activity, 5 dropped, as many probes as the host made launch, copy and memset calls;
#   - the Chrome export (machine-readable): each kernel's slices with the stand-in's durations,
#     the graph's kernels under the correlation id the host printed, the copy's bytes, one flow
#     per joined activity from the host's thread; tests/chrome_check.py holds it to the format;
#   - the text report's GPU section lists the kernels; CPU samples are still there (host_spin);
#   - the CPU side of the join (the uprobe on the library's perch_cuda_launch): a stack for each
#     of the 7 calls, none lost; spin_a's 3 ms attributed to launch_site_a, the graph's 4 ms to
#     launch_site_graph, the copy's 1.8 us to copy_site and the memset's 2.5 us to memset_site
#     (the host's call sites); GPU time per region in the csv (prep 7 ms: both launch sites,
#     solve 4 ms: the graph's, upload 4.3 us: the copy and the memset) and in the text region
#     table;
#   - pprof's gpu/nanoseconds read by go tool pprof (and OTLP's, tests/otlp_decode.py): per call site and region_stack tag the GPU
#     time of the host's launches from there (summed from the exported GPU slices of the
#     correlation ids the host printed), the total equal to the text report's GPU call tree, no
#     sample with both CPU and GPU time, the CPU samples the folded ones;
#   - with HOST_SYNCS (3 syncs on 2 threads, then a copy after an idle gap): the text rows of who
#     waited, the stats and the chrome sync slices equal to what the host printed; busy and idle
#     (stats) equal to those computed from the exported GPU slices; chrome_check on that trace;
#   - CUPTI busy (error 39): one note naming the holder, CPU samples unchanged;
#   - launches from Python (tests/cuda/pyhost.py, ctypes): the launch stacks name the Python
#     function that launched (py_launch_site) under the C ctypes ran;
#   - a command that never loads CUDA: the note that no GPU data came;
#   - a perch without libperch_cuda.so beside it: one line, exit 74.
#
#   tests/integration/gpu-standin.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin gpu-standin "${1:-build}"
B=$(realpath "$BUILD")
if [ ! -e "$B/libperch_cuda.so" ] || [ ! -e "$B/tests/cuda/host" ]; then
	echo "gpu-standin: skipped: perch was built without the CUDA toolkit (no libperch_cuda.so)"
	it_end
	exit
fi
echo "gpu-standin: stand-in CUPTI (tests/cuda/fake_cupti.c), not a GPU test"

# rec NAME [VAR=VALUE...]: perch record --gpu of the host, its stdout in NAME.out
rec() {
	local name=$1
	shift
	env LD_LIBRARY_PATH="$B/tests/cuda" HOST_SPIN_MS=300 HOST_SETTLE_MS=300 "$@" \
		"$PERCH" record -q --gpu -o "$T/$name.data" -- "$B/tests/cuda/host" \
		>"$T/$name.out" 2>"$T/$name.err"
	echo $? >"$T/$name.rc"
}

rec plain
d=$T/plain.data
[ "$(cat "$T/plain.rc")" = 0 ] && ok "perch record --gpu -- host: exit 0" ||
	bad "exit" "$(cat "$T/plain.rc"): $(cat "$T/plain.err")"
probes=$(grep -cE '^(launch|memcpy|memset) ' "$T/plain.out") # one probe per launch/copy/memset call
got=$(for k in gpu_activities gpu_activities_joined gpu_activities_without_launch \
	gpu_launches_without_activity gpu_records_dropped gpu_launch_probes; do
	printf '%s ' "$(rec_stat "$d" $k)"
done)
want="10 9 1 1 5 $probes "
[ "$got" = "$want" ] && [ "$probes" = 7 ] &&
	ok "stats: 10 activities, 9 joined, 1 without launch, 1 launch without activity, 5 dropped, $probes probes as the host made calls" ||
	bad "stats" "activities joined without_launch launches_unmatched dropped probes: $got (want $want)"

"$PERCH" report --format=chrome -o "$T/plain.json" "$d"
graph=$(sed -n 's/^launch graph //p' "$T/plain.out")
pid=$(rec_stat "$d" pids)
res=$(python3 - "$T/plain.json" "$graph" "$pid" <<'EOF'
import collections, json, sys
d = json.load(open(sys.argv[1]))
graph, pid = int(sys.argv[2]), int(sys.argv[3])
ev = d["traceEvents"]
gpu = [e for e in ev if e["ph"] == "X" and e.get("cat") == "gpu"]
k = collections.defaultdict(list)
for e in gpu:
    k[e["name"]].append(e)
def fail(why):
    print(why)
    sys.exit(0)
for name, n in (("spin_a", 3), ("graph_node", 4), ("orphan", 1)):
    if len(k[name]) != n or any(abs(e["dur"] - 1000.0) > 0.001 for e in k[name]):
        fail("%s: %r" % (name, [(e["dur"]) for e in k[name]]))
if any(e["args"]["correlation"] != graph or e["args"]["graph"] == 0 for e in k["graph_node"]):
    fail("graph kernels not under correlation %d" % graph)
c = k["memcpy HtoD"]
if len(c) != 1 or c[0]["args"]["bytes"] != 1 << 20 or abs(c[0]["dur"] - 1.8) > 0.001:
    fail("copy: %r" % c)
s = [e for e in ev if e["ph"] == "s"]
f = [e for e in ev if e["ph"] == "f"]
if len(s) != 9 or len(f) != 9 or any(e["pid"] != pid for e in s):
    fail("flows: %d s, %d f, pids %r" % (len(s), len(f), {e["pid"] for e in s}))
if not any(e["ph"] == "M" and e["args"]["name"] == "GPU 0" for e in ev):
    fail("no GPU 0 track")
print("ok")
EOF
)
[ "$res" = ok ] &&
	ok "chrome: spin_a 3 x 1 ms, graph_node 4 x 1 ms under the graph launch's id $graph, orphan 1 ms, HtoD 1 MiB in 1.8 us, 9 flows from pid $pid" ||
	bad "chrome GPU" "$res"
"$PERCH" report --format=folded "$d" >"$T/plain.folded"
"$PERCH" report --format=speedscope -o "$T/plain.ss.json" "$d"
"$PERCH" report --format=csv "$d" >"$T/plain.csv"
res=$(python3 "$TESTS/chrome_check.py" "$T/plain.json" "$(rec_stat "$d" duration_ns)" \
	"$T/plain.folded" "$T/plain.csv" "$T/plain.ss.json" - 2>&1)
[ "$res" = ok ] && ok "chrome_check: the trace with GPU tracks and flows is valid, its samples the report's" ||
	bad "chrome_check" "$res"

"$PERCH" report "$d" >"$T/plain.txt"
gpu_rows() { sed -n '/^GPU (CUDA/,/^$/p' "$1"; }
gpu_rows "$T/plain.txt" | grep -qE '^  spin_a +3 +3\.000 ms +1\.000 ms' &&
	gpu_rows "$T/plain.txt" | grep -qE '^  graph_node +4 +4\.000 ms' &&
	gpu_rows "$T/plain.txt" | grep -qE '^  HtoD +1 +1048576 ' &&
	ok "text report: the GPU section lists spin_a, graph_node and the HtoD copy" ||
	bad "text GPU section" "$(gpu_rows "$T/plain.txt")"
spin=$(samples "$T/plain.folded" 'host_spin')
[ "${spin:-0}" -gt 0 ] && ok "CPU samples recorded beside the GPU data ($spin in host_spin)" ||
	bad "CPU samples" "none in host_spin"

got="$(rec_stat "$d" gpu_launch_stacks) $(rec_stat "$d" gpu_launch_stacks_lost)"
[ "$got" = "7 0" ] && ok "launch stacks: one per launch, copy and memset call (7), none lost in the kernel" ||
	bad "launch stacks" "gpu_launch_stacks gpu_launch_stacks_lost: $got (want 7 0)"
paths() { sed -n '/^  GPU time by launching call path/,/^  stacks /p' "$1"; }
paths "$T/plain.txt" | grep -qE '^ +3\.000 ms +3  api_callback <- fake_cupti_launch <- launch_site_a <- main( |$)' &&
	paths "$T/plain.txt" | grep -qE '^ +4\.000 ms +4  api_callback <- fake_cupti_launch <- launch_site_graph <- main( |$)' &&
	paths "$T/plain.txt" | grep -qE '^ +1\.800 µs +1  api_callback <- fake_cupti_memcpy <- copy_site <- main( |$)' &&
	paths "$T/plain.txt" | grep -qE '^ +2\.500 µs +1  api_callback <- fake_cupti_memset <- memset_site <- main( |$)' &&
	[ "$(paths "$T/plain.txt" | grep -cE ' (ms|µs) +[0-9]+  ')" = 4 ] &&
	paths "$T/plain.txt" | grep -q '^  stacks     0 of 5 launches have no CPU stack' &&
	ok "GPU time by launching call path: spin_a's 3 ms from launch_site_a, the graph's 4 ms from launch_site_graph, the copy's 1.8 us from copy_site, the memset's 2.5 us from memset_site" ||
	bad "launch call paths" "$(paths "$T/plain.txt")"
got=$(awk -F, '$2 == "" && $1 != "name" { print $1 "=" $11 }' "$T/plain.csv" | sort | tr '\n' ' ')
[ "$(head -1 "$T/plain.csv" | awk -F, '{print $11}')" = gpu_s ] &&
	[ "$got" = "prep=0.007000000 solve=0.004000000 upload=0.000004300 " ] &&
	ok "csv: GPU time per region (prep 7 ms: both call sites, solve 4 ms: the graph launched inside it, upload 4.3 us: the copy and the memset)" ||
	bad "csv gpu_s" "$(head -1 "$T/plain.csv"): $got"
sed -n '/^Regions/,/^$/p' "$T/plain.txt" | grep -qE '^ +1 .* 7\.000 ms  prep$' &&
	sed -n '/^Regions/,/^$/p' "$T/plain.txt" | grep -qE '^ +1 .* 4\.000 ms  solve$' &&
	sed -n '/^Regions/,/^$/p' "$T/plain.txt" | grep -qE '^ +1 .* 4\.300 µs  upload$' &&
	ok "text region table: the gpu column (prep 7 ms, solve 4 ms, upload 4.3 us)" ||
	bad "region gpu column" "$(sed -n '/^Regions/,/^$/p' "$T/plain.txt")"

got="$(rec_stat "$d" gpu_launch_probes) $(($(rec_stat "$d" gpu_launch_stacks) + $(rec_stat "$d" gpu_launches_inherited)))"
[ "${got% *}" = "${got#* }" ] &&
	ok "every call probed or attributed to its site: $got" ||
	bad "probes against stacks + inherited" "$got"

# A launch storm (tests/cuda/storm: 20000 launches round robin from 4 call sites in region storm):
# with launch sites (the default) each site's stack is taken once (and re-checked every 1024th
# call), the other calls attributed to it; each site's GPU time (1 ms a kernel) must be what the
# storm says it launched from there, and every call must be counted.
storm() { # storm NAME [PERCH OPTION...]
	local name=$1
	shift
	env LD_LIBRARY_PATH="$B/tests/cuda" HOST_SETTLE_MS=300 STORM_REGIONS="${STORM_REGIONS:-}" \
		"$PERCH" record -q --gpu "$@" -o "$T/$name.data" -- "$B/tests/cuda/storm" 20000 \
		>"$T/$name.out" 2>"$T/$name.err"
	"$PERCH" report "$T/$name.data" >"$T/$name.txt"
}
site_rows() { # site_rows NAME: "count=storm_siteN" per call path row, sorted
	paths "$T/$1.txt" | sed -n 's/^ *[0-9.]* [mµ]*s *\([0-9]*\)  .*fake_cupti_launch <- \(storm_site[0-3]\) <- main.*/\1=\2/p' |
		sort -t= -k2 | tr '\n' ' '
}
storm sites
want=$(sed -n 's/.* per_site=\([0-9]*\),\([0-9]*\),\([0-9]*\),\([0-9]*\)$/\1=storm_site0 \2=storm_site1 \3=storm_site2 \4=storm_site3 /p' "$T/sites.out")
got=$(site_rows sites)
[ -n "$want" ] && [ "$got" = "$want" ] &&
	ok "storm, launch sites: each site's launches attributed to its own stack ($got)" ||
	bad "storm sites" "got '$got', storm launched '$want'"
sd=$T/sites.data
got="$(rec_stat "$sd" gpu_launch_probes) $(rec_stat "$sd" gpu_launch_stacks) $(rec_stat "$sd" gpu_launches_inherited) $(rec_stat "$sd" gpu_launches_inherited_lost) $(rec_stat "$sd" gpu_site_reprobes_differ)"
read -r probes stacks inherited lost differ <<<"$got"
[ "$probes" = 20000 ] && [ $((stacks + inherited)) = 20000 ] && [ "$inherited" -gt 0 ] &&
	[ "$lost" = 0 ] && [ "$differ" = 0 ] && [ "$(rec_stat "$sd" gpu_site_reprobes)" -gt 0 ] &&
	ok "storm, launch sites: 20000 calls = $stacks probed + $inherited attributed to their site; re-probes agree" ||
	bad "storm site stats" "probes stacks inherited inherited_lost reprobes_differ: $got"
got=$(awk -F, '$1 == "storm" && $2 == "" { print $11 }' <("$PERCH" report --format=csv "$sd"))
[ "$got" = 20.000000000 ] && ok "storm, launch sites: region storm holds the 20000 kernels' 20 s" ||
	bad "storm region gpu_s" "$got"
# The same sites in two regions, alternately: the region stack is part of a site's key, so each
# region gets its own launches' GPU time (10000 kernels, 10 s each), not its first caller's.
STORM_REGIONS=1 storm regions
got=$("$PERCH" report --format=csv "$T/regions.data" | awk -F, '$2 == "" && ($1 == "even" || $1 == "odd") { print $1 "=" $11 }' | sort | tr '\n' ' ')
[ "$got" = "even=10.000000000 odd=10.000000000 " ] &&
	[ "$(rec_stat "$T/regions.data" gpu_site_reprobes_differ)" = 0 ] &&
	ok "storm, launch sites in two regions by turns: each region its own launches' GPU time ($got)" ||
	bad "storm regions" "$got; re-probes differing $(rec_stat "$T/regions.data" gpu_site_reprobes_differ)"
storm every --gpu-stacks=every
sd=$T/every.data
nostack=$(paths "$T/every.txt" | sed -n 's/^  stacks *\([0-9]*\) of \([0-9]*\) launches.*/\1 \2/p')
sum=$(paths "$T/every.txt" | awk '$2 ~ /^(s|ms|µs)$/ && $3 ~ /^[0-9]+$/ { s += $3 } END { print s + 0 }')
# Every stack one of the 4 sites': a tick nesting into a probe's unwind on the same CPU once wrote
# over its frames (empty or foreign call paths).
sites_sum=$(site_rows every | tr ' =' '\n ' | awk '{ s += $1 } END { print s + 0 }')
[ "$(rec_stat "$sd" gpu_launches_inherited)" = 0 ] && [ "${nostack#* }" = 20000 ] &&
	[ $((sum + ${nostack% *})) = 20000 ] && [ "$sites_sum" = "$sum" ] &&
	ok "storm, --gpu-stacks=every: no site records; $sum launches with their own stack (all from the 4 sites), ${nostack% *} without (the launch ring ran over)" ||
	bad "storm every" "inherited $(rec_stat "$sd" gpu_launches_inherited), with stack $sum ($sites_sum from the sites), without '$nostack'"

# A command linked against libcudart (the stand-in's): --gpu turns itself on, with a note. (Without
# perch's library in CUDA_INJECTION64_PATH the host says so and exits 2: that is not checked.)
env LD_LIBRARY_PATH="$B/tests/cuda" HOST_SETTLE_MS=300 "$PERCH" record -o "$T/auto.data" -- \
	"$B/tests/cuda/host-linked" >/dev/null 2>"$T/auto.err"
grep -q '^perch: note: .*host-linked links CUDA: --gpu is on' "$T/auto.err" &&
	[ "$(rec_stat "$T/auto.data" gpu_activities)" = 10 ] &&
	ok "a command that links libcudart: --gpu on by itself, with a note; its 10 activities recorded" ||
	bad "auto --gpu" "$(head -2 "$T/auto.err"); activities $(rec_stat "$T/auto.data" gpu_activities)"
"$PERCH" record -o "$T/fatbin.data" -- "$B/tests/cuda/fatbin" >/dev/null 2>"$T/fatbin.err"
grep -q '^perch: note: .*fatbin links CUDA: --gpu is on' "$T/fatbin.err" &&
	grep -q '^  note: no GPU data' <("$PERCH" report "$T/fatbin.data") &&
	ok "a program with nvcc's .nv_fatbin section (a static CUDA runtime): --gpu on by itself" ||
	bad "auto --gpu, .nv_fatbin" "$(head -2 "$T/fatbin.err")"
env LD_LIBRARY_PATH="$B/tests/cuda" "$PERCH" record -q --no-gpu -o "$T/nogpu.data" -- \
	"$B/tests/cuda/host-linked" >/dev/null 2>"$T/nogpu.err"
"$PERCH" record -q -o "$T/plainhost.data" -- "$B/tests/cuda/host" >/dev/null 2>&1
[ "$("$PERCH" report --format=stats "$T/nogpu.data" | grep -c '^gpu_')" = 0 ] &&
	[ "$("$PERCH" report --format=stats "$T/plainhost.data" | grep -c '^gpu_')" = 0 ] &&
	! grep -q 'perch: note' "$T/nogpu.err" &&
	ok "--no-gpu, and a command that does not link CUDA: no GPU recording, no note" ||
	bad "no auto --gpu" "$(cat "$T/nogpu.err")"

# pprof's gpu/nanoseconds, read by go tool pprof. The truth: the GPU slices (the stand-in's
# records, as the chrome check above holds them) of the correlation ids the host printed for each
# call site; go tool pprof's total, its launch_site_* nodes and its region_stack tags must be
# those sums, the text report's GPU call tree the same total, and the CPU sample types untouched.
pprof_gpu() {
	local pb=$T/plain.pb.gz a g c top tags tree raw want_a want_g want_c total
	command -v go >/dev/null || { echo "go not found"; return 1; }
	"$PERCH" report --format=pprof -o "$pb" "$d" || return 1
	a=$(sed -n 's/^launch spin_a //p' "$T/plain.out" | paste -sd,)
	g=$(sed -n 's/^launch graph //p' "$T/plain.out")
	c=$(sed -n 's/^mem\(cpy\|set\) //p' "$T/plain.out" | paste -sd,) # the copy and the memset
	read -r want_a want_g want_c < <(python3 - "$T/plain.json" "$a" "$g" "$c" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ids = [set(int(c) for c in sys.argv[i].split(",")) for i in (2, 3, 4)]
ns = lambda ids: sum(round(e["dur"] * 1000) for e in ev
                     if e["ph"] == "X" and e.get("cat") == "gpu" and e["args"]["correlation"] in ids)
print(ns(ids[0]), ns(ids[1]), ns(ids[2]))
PY
)
	total=$((want_a + want_g + want_c))
	top=$(go tool pprof -sample_index=gpu -unit=ns -top -nodecount=1000000 -nodefraction=0 "$pb" 2>/dev/null)
	tags=$(go tool pprof -sample_index=gpu -unit=ns -tags "$pb" 2>/dev/null | sed -n '/region_stack:/,/^$/p')
	tree=$("$PERCH" report "$d" | sed -n 's/^  GPU call tree .*weighted by the GPU time they launched: *\([0-9.]*\) ms;.*/\1/p')
	echo "launch_site_a ${want_a} ns, launch_site_graph ${want_g} ns, copy_site and memset_site ${want_c} ns, text tree ${tree} ms"
	grep -q "of ${total}ns total" <<<"$top" || { echo "total: $top"; return 1; }
	grep -qE "^ +0 +0% +[0-9.]+% +${want_a}ns +[0-9.]+% +launch_site_a$" <<<"$top" &&
		grep -qE "^ +0 +0% +[0-9.]+% +${want_g}ns +[0-9.]+% +launch_site_graph$" <<<"$top" ||
		{ echo "call sites: $top"; return 1; }
	grep -qE "^ +${want_g}\.0ns .*: prep;solve$" <<<"$tags" && grep -qE "^ +${want_a}\.0ns .*: prep$" <<<"$tags" ||
		{ echo "region_stack tags: $tags"; return 1; }
	[ "$(awk -v t="$tree" 'BEGIN { printf "%d", t * 1e6 + 0.5 }')" = $(((total + 500) / 1000 * 1000)) ] ||
		{ echo "text GPU call tree total $tree ms"; return 1; }
	# the tree's call-site nodes: their share of it, all self time in the stand-in's callback
	"$PERCH" report "$d" | sed -n '/^  GPU call tree/,/^$/p' >"$T/plain.gputree"
	for site in "launch_site_a $want_a" "launch_site_graph $want_g"; do
		set -- $site
		grep -qE "^ +$(awk -v a="$2" -v t=$total 'BEGIN { printf "%.2f", 100 * a / t }')% +0\.00%  $1$" \
			"$T/plain.gputree" || { echo "tree node $1: $(cat "$T/plain.gputree")"; return 1; }
	done
	# every sample is CPU or GPU, never both; the CPU samples are the folded ones
	raw=$(go tool pprof -raw "$pb" 2>/dev/null | awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
		s && /:/ { split($0, v, ":"); n = split(v[1], x, " "); if (n == 3 && x[2] + 0 && x[3] + 0) bad++; c += x[1] }
		END { print bad + 0, c + 0 }')
	[ "$raw" = "0 $(awk '{ n += $NF } END { print n }' "$T/plain.folded")" ] ||
		{ echo "raw: samples with CPU and GPU time, CPU samples: $raw"; return 1; }
	# OTLP's gpu/nanoseconds profile (--format=otlp), read by tests/otlp_decode.py: the same
	# total and call-site sums, and its samples profile the folded CPU samples
	"$PERCH" report --format=otlp -o "$T/plain.otlp" "$d" || return 1
	python3 "$OTLP_DECODE" "$T/plain.otlp" check || { echo "otlp: the decoder's check failed"; return 1; }
	raw=$(python3 "$OTLP_DECODE" "$T/plain.otlp" folded gpu | awk '{ t += $NF
		if ($0 ~ /;launch_site_a(;| )/) a += $NF; if ($0 ~ /;launch_site_graph(;| )/) g += $NF }
		END { print t + 0, a + 0, g + 0 }')
	[ "$raw" = "$total $want_a $want_g" ] || { echo "otlp gpu: total, site a, graph: $raw"; return 1; }
	python3 "$OTLP_DECODE" "$T/plain.otlp" folded samples | LC_ALL=C sort >"$T/plain.otlp.folded"
	# folded may print one stack twice (two threads of one name); the decoder sums them
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); t[$0] += n } END { for (k in t) print k, t[k] }' \
		"$T/plain.folded" | LC_ALL=C sort | cmp -s - "$T/plain.otlp.folded" ||
		{ echo "otlp samples: not the folded stacks"; return 1; }
}
OTLP_DECODE=$(realpath "$(dirname "$0")/../otlp_decode.py")
res=$(pprof_gpu 2>&1)
[ $? = 0 ] && ok "pprof gpu/nanoseconds (go tool pprof), OTLP's (tests/otlp_decode.py): per call site and region stack the GPU time of its launches, total = the text GPU call tree, CPU types untouched (${res})" ||
	bad "pprof gpu/nanoseconds" "$res"

# Syncs and who waited, busy and idle: the host's HOST_SYNCS run prints each sync (type,
# correlation id, thread, wait); the text report's rows per thread, the stats and the chrome
# slices on the waiting threads must be those; busy and idle per device (stats) those of the GPU
# slices (the union, and the span from the first start to the last end minus it).
rec sync HOST_SYNCS=1
"$PERCH" report --format=chrome -o "$T/sync.json" "$T/sync.data"
"$PERCH" report "$T/sync.data" >"$T/sync.txt"
"$PERCH" report --format=stats "$T/sync.data" >"$T/sync.stats"
res=$(python3 - "$T/sync.out" "$T/sync.txt" "$T/sync.stats" "$T/sync.json" <<'PY'
import collections, json, re, sys
names = {1: "event", 2: "stream-wait", 3: "stream", 4: "context"}
syncs = [tuple(int(v) for v in l.split()[1:]) for l in open(sys.argv[1]) if l.startswith("sync ")]
text, stats = open(sys.argv[2]).read(), dict(l.split(None, 1) for l in open(sys.argv[3]))
ev = json.load(open(sys.argv[4]))["traceEvents"]
def fail(why):
    print(why)
    sys.exit(0)
def ms(ns):
    return "%.3f ms" % (ns / 1e6)
if len(syncs) != 3 or len({s[2] for s in syncs}) != 2:
    fail("host printed %r" % syncs)
per = collections.defaultdict(list)
for t, corr, tid, wait in syncs:
    per[tid].append((t, wait))
want = (len(syncs), sum(s[3] for s in syncs), len(per))
got = tuple(int(stats[k]) for k in ("gpu_syncs", "gpu_sync_wait_ns", "gpu_sync_threads"))
if got != want:
    fail("stats syncs, wait, threads: %r, want %r" % (got, want))
for tid, rows in per.items():
    types = ", ".join("%s %d" % (names[t], sum(1 for r in rows if r[0] == t)) for t in sorted({r[0] for r in rows}))
    line = r"^  \d+/%d +\S+ +%d +%s +%s  %s$" % (tid, len(rows), ms(sum(r[1] for r in rows)),
                                             ms(max(r[1] for r in rows)), types)
    if not re.search(line, text, re.M):
        fail("no row /%s/ in %s" % (line, text[text.find("  syncs"):][:400]))
sl = sorted((e["args"]["correlation"], e["tid"], e["name"], round(e["dur"] * 1000)) for e in ev
            if e["ph"] == "X" and e.get("cat") == "sync")
if sl != sorted((c, tid, "sync " + names[t], w) for t, c, tid, w in syncs):
    fail("chrome sync slices %r" % sl)
dev = collections.defaultdict(list)
for e in ev:
    if e["ph"] == "X" and e.get("cat") == "gpu":
        dev[e["pid"]].append((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)))
busy = idle = 0
for s in dev.values():
    s.sort()
    b, (start, end) = 0, s[0]
    for x, y in s[1:]:
        if x > end:
            b, start = b + end - start, x
        end = max(end, y)
    b += end - start
    busy, idle = busy + b, idle + (end - s[0][0]) - b
got = (int(stats["gpu_busy_ns"]), int(stats["gpu_idle_ns"]))
if got != (busy, idle) or idle <= 0:
    fail("stats busy, idle %r, from the slices %r" % (got, (busy, idle)))
print("ok %d syncs on %d threads waited %.3f ms; busy %.3f ms, idle %.3f ms" % (want[0], want[2], want[1] / 1e6, busy / 1e6, idle / 1e6))
PY
)
[ "${res%% *}" = ok ] && ok "syncs by waiting thread (text rows, stats, chrome slices) and busy/idle (stats vs the GPU slices): ${res#ok }" ||
	bad "syncs, busy/idle" "$res"
"$PERCH" report --format=folded "$T/sync.data" >"$T/sync.folded"
"$PERCH" report --format=speedscope -o "$T/sync.ss.json" "$T/sync.data"
"$PERCH" report --format=csv "$T/sync.data" >"$T/sync.csv"
res=$(python3 "$TESTS/chrome_check.py" "$T/sync.json" "$(rec_stat "$T/sync.data" duration_ns)" \
	"$T/sync.folded" "$T/sync.csv" "$T/sync.ss.json" - 2>&1)
[ "$res" = ok ] && ok "chrome_check: the trace with sync slices on the waiting threads is valid" ||
	bad "chrome_check sync" "$res"

rec busy FAKE_CUPTI_BUSY="Nsight Systems"
"$PERCH" report "$T/busy.data" >"$T/busy.txt"
notes=$(grep -c '^  note: ' "$T/busy.txt")
grep -q '^  note: CUPTI is in use by .*Nsight Systems (error 39)' "$T/busy.txt" && [ "$notes" = 1 ] &&
	[ "$(rec_stat "$T/busy.data" gpu_activities)" = 0 ] &&
	ok "CUPTI busy (error 39): one note naming Nsight Systems, no GPU activity" ||
	bad "busy note" "$(gpu_rows "$T/busy.txt")"
"$PERCH" report --format=folded "$T/busy.data" >"$T/busy.folded"
spin=$(samples "$T/busy.folded" 'host_spin')
[ "$(cat "$T/busy.rc")" = 0 ] && [ "${spin:-0}" -gt 0 ] &&
	ok "CUPTI busy: CPU profiling goes on ($spin samples in host_spin, exit 0)" ||
	bad "busy CPU" "exit $(cat "$T/busy.rc"), $spin samples"

# launches from Python (tests/cuda/pyhost.py through ctypes): the launch stacks carry the Python
# function that launched, in place of the interpreter's loop, under the C that ctypes runs
env LD_LIBRARY_PATH="$B/tests/cuda" "$PERCH" record -q --gpu -o "$T/py.data" -- \
	/usr/bin/python3.11 "$TESTS/cuda/pyhost.py" >"$T/py.out" 2>"$T/py.err"
"$PERCH" report "$T/py.data" >"$T/py.txt" 2>&1
paths "$T/py.txt" | grep -qE '^ +3\.000 ms +3  api_callback <- fake_cupti_launch <- .* <- ffi_call <- .* <- py_launch_site <- <module> <- ' &&
	ok "launches from Python: spin_a's 3 ms from py_launch_site, under ctypes' C" ||
	bad "launches from Python" "$(paths "$T/py.txt" | sed -n 3p | cut -c1-300) $(head -2 "$T/py.err")"

"$PERCH" record -q --gpu -o "$T/nocuda.data" -- sleep 0.2 >/dev/null 2>&1
grep -q '^  note: no GPU data' <("$PERCH" report "$T/nocuda.data") &&
	ok "a command that never loads CUDA: the note that no GPU data came" ||
	bad "no CUDA note" "$("$PERCH" report "$T/nocuda.data" | sed -n '/^GPU/,/^$/p')"

mkdir -p "$T/bin" && cp "$PERCH" "$T/bin/perch"
"$T/bin/perch" record -q --gpu -o "$T/nolib.data" -- true 2>"$T/nolib.err"
rc=$?
[ "$rc" = 74 ] && [ "$(wc -l <"$T/nolib.err")" = 1 ] && grep -q 'libperch_cuda.so' "$T/nolib.err" &&
	ok "no libperch_cuda.so beside perch: exit 74 and one line" ||
	bad "no library" "exit $rc: $(cat "$T/nolib.err")"
it_end
