#!/usr/bin/env bash
# CPython frames in every stack, from the sampler's walk of the interpreter's frames: Debian's
# python3.11 (a stripped, statically linked distribution binary without frame pointers) running
# tests/workloads/pyshare.py, whose functions measure their own CPU time (time.thread_time()).
# Launched and attached: the Python functions' shares of the samples are the workload's (+-3
# points); zlib's native code sits under the Python function that called it; a 40-deep Python
# recursion is whole in the stacks and folds in the tree; no interpreter loop frame is left
# where its Python frames stand; pprof carries each frame's file and line; --off-cpu puts each block under the Python function it
# happened in; four threads and a forked child each have their own functions.
#
#   tests/integration/python.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin python "${1:-build}"

PY=/usr/bin/python3.11
WORK="$TESTS/workloads/pyshare.py"

# py_shares NAME: work_a/b/c/z and rec against the workload's CPU clocks, +-3 points
py_shares() {
	local name=$1 got want f out=() exp=() fails=0
	for f in work_a work_b work_c work_z rec; do
		got=$(share "$T/$name.folded" "$f")
		want=$(truth_pct "$T/$name.truth" "$f")
		within "$got" "$want" 3 || fails=$((fails + 1))
		out+=("$got")
		exp+=("$want")
	done
	if [ "$fails" -eq 0 ]; then
		ok "$name: work_a/b/c/z, rec = ${out[*]} % (the workload's CPU clocks: ${exp[*]}, +-3)"
	else
		bad "$name" "work_a/b/c/z, rec = ${out[*]} % (the workload's CPU clocks: ${exp[*]}, +-3)"
	fi
}

launch launched -- "$PY" "$WORK" 3
py_shares launched

# zlib's code (libz's deflate*) under the Python function that called zlib.compress
z=$(pct_within "$T/launched.folded" ';work_z;' ';deflate')
read -r zp zn <<<"$z"
if [ "${zn:-0}" -gt 20 ] && awk -v p="$zp" 'BEGIN { exit !(p >= 95) }'; then
	ok "C under Python: $zp % of the $zn samples in libz's deflate are under work_z"
else
	bad "C under Python" "$zp % of the ${zn:-0} samples in libz's deflate are under work_z"
fi

# the recursion: 40 rec_down frames in a row in the stacks, a handful of tree nodes
deep=$(awk "$FOLD_AWK"'{ parse(); run = 0; for (i = 1; i <= k; i++) { run = fr[i] == "rec_down" ? run + 1 : 0; if (run > best) best = run } } END { print best + 0 }' "$T/launched.folded")
nodes=$(call_tree "$T/launched.data" --min-percent=1 | grep -cE '%  rec_down$')
if [ "$deep" -eq 40 ] && [ "$nodes" -ge 1 ] && [ "$nodes" -le 3 ]; then
	ok "recursion: 40 rec_down frames deep in the stacks, $nodes tree nodes"
else
	bad "recursion" "$deep rec_down frames deep (want 40), $nodes tree nodes (want 1 to 3)"
fi

# lines, read by go tool pprof from the pprof export: spin's samples on the lines of its loop
# (the lines after its def, from the workload's source), most of them, and each of work_a's on
# its one line
"$PERCH" report --format=pprof -o "$T/launched.pb.gz" "$T/launched.data"
def=$(grep -n '^def spin' "$WORK" | cut -d: -f1)
lines=$(go tool pprof -top -lines "$T/launched.pb.gz" 2>/dev/null |
	awk -v f="$WORK" '$NF ~ /:[0-9]+$/ && $(NF - 1) == "spin" && index($NF, f ":") == 1 {
		n = $NF; sub(/.*:/, "", n); print n }' | sort -u | tr '\n' ' ')
inbody=$(for l in $lines; do [ "$l" -gt "$def" ] && [ "$l" -le $((def + 4)) ] && echo "$l"; done | wc -l)
if [ -n "$lines" ] && [ "$inbody" -eq "$(wc -w <<<"$lines")" ]; then
	ok "lines (go tool pprof -lines): spin's samples on lines $lines of its body (def at $def)"
else
	bad "lines" "spin's samples on lines '${lines}' (its body: $((def + 1)) to $((def + 4)))"
fi

# every interpreter loop activation stood in for by its Python frames
left=$(stack_pct "$T/launched.folded" '_PyEval_EvalFrameDefault')
unplaced=$(rec_stat "$T/launched.data" python_frames_unplaced)
unnamed=$(rec_stat "$T/launched.data" python_frames_unnamed)
if awk -v l="$left" 'BEGIN { exit !(l <= 1) }'; then
	ok "interpreter loop: on $left % of the stacks ($unplaced Python frames unplaced, $unnamed unnamed)"
else
	bad "interpreter loop" "_PyEval_EvalFrameDefault on $left % of the stacks ($unplaced Python frames unplaced, $unnamed unnamed)"
fi

# the interpreter from Debian's shared libpython3.11 (an embedding program's main)
launch shared -- "$WL/pyembed" "$WORK" 2
py_shares shared

# --off-cpu: the Python function each block happened in (time.sleep, a lock, a socket read),
# each one's share of the three's blocked time the workload's own (+-3 points)
perch_record off --off-cpu -- "$PY" "$WORK" off 2
folded "$T/off.data" --view=off >"$T/off.folded"
offs=$(awk '{ for (f = 1; f <= 3; f++) if (index($0, ";" fn[f] ";")) s[f] += $NF }
	BEGIN { fn[1] = "nap"; fn[2] = "wait_lock"; fn[3] = "read_sock" }
	END { t = s[1] + s[2] + s[3]; for (f = 1; f <= 3; f++) printf "%.2f ", t ? 100 * s[f] / t : 0 }' "$T/off.folded")
want=$(awk '$1 == "truth" { v[$2] = $3 } END { t = v["nap"] + v["wait_lock"] + v["read_sock"]
	printf "%.2f %.2f %.2f", 100 * v["nap"] / t, 100 * v["wait_lock"] / t, 100 * v["read_sock"] / t }' "$T/off.truth")
read -r o1 o2 o3 <<<"$offs"
read -r w1 w2 w3 <<<"$want"
if within "$o1" "$w1" 3 && within "$o2" "$w2" 3 && within "$o3" "$w3" 3; then
	ok "off-CPU: nap/wait_lock/read_sock = $o1/$o2/$o3 % of their blocked time (the workload's $w1/$w2/$w3, +-3)"
else
	bad "off-CPU" "nap/wait_lock/read_sock = $o1/$o2/$o3 % of their blocked time (the workload's $w1/$w2/$w3, +-3)"
fi

# four threads and a forked child (multiprocessing's fork): each thread's function, and the
# child's, its share of the CPU both processes measured (+-3 points)
launch many -- "$PY" "$WORK" many 2
total=$(awk '$1 == "truth" && ($2 == "cpu" || $2 == "forked_cpu") { s += $3 } END { print s }' "$T/many.truth")
got=() want=() fails=0
for f in work_t0 work_t1 work_t2 work_t3 work_forked; do
	g=$(share "$T/many.folded" "$f")
	w=$(pct "$(truth "$T/many.truth" "$f")" "$total")
	within "$g" "$w" 3 || fails=$((fails + 1))
	got+=("$g")
	want+=("$w")
done
if [ "$fails" -eq 0 ]; then
	ok "threads and a forked child: work_t0..3, work_forked = ${got[*]} % (their CPU clocks: ${want[*]}, +-3)"
else
	bad "threads and a forked child" "work_t0..3, work_forked = ${got[*]} % (their CPU clocks: ${want[*]}, +-3)"
fi

# attached to an interpreter that started before perch; its truth is what its clocks ran between
# a mark just before perch started and one just after it ended (SIGUSR1 each: the workload ends
# at the second), not its whole run: start-up and the time perch was not there mix otherwise
"$PY" "$WORK" 60 >"$T/attached.raw" &
wpid=$!
sleep 1
kill -USR1 "$wpid"
"$PERCH" record -q -p "$wpid" -d 2 -o "$T/attached.data" 2>"$T/attached.err" ||
	bad attached "perch failed: $(cat "$T/attached.err")"
kill -USR1 "$wpid"
wait "$wpid"
awk '$1 == "truth" && $2 ~ /^mark[12]\./ { split($2, k, "."); v[k[1], k[2]] = $3; n[k[2]] }
	END { for (f in n) printf "truth %s %.9f\n", f, v["mark2", f] - v["mark1", f] }' \
	"$T/attached.raw" >"$T/attached.truth"
folded "$T/attached.data" >"$T/attached.folded"
py_shares attached

it_end
