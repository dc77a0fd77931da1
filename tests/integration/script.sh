#!/usr/bin/env bash
# perch script: one entry per sample of a --timeline recording. The truth is the recording's
# other half and the workload: the entries' counts add up to the samples the report counts, each
# leaf function has as many entries as its self samples in the folded stacks, every time lies
# inside the recording's time span, and every entry names the launched process and its command.
# Without --timeline: one line, exit 64.
#
#   tests/integration/script.sh [BUILD_DIR]
set -u
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
it_begin script "${1:-build}"
export LC_ALL=C

perch_record tl --timeline -- "$WL/shares" 1
"$PERCH" script -i "$T/tl.data" >"$T/tl.script" 2>"$T/tl.err"
rc=$?
sampled=$(rec_stat "$T/tl.data" sampled)
pid=$(rec_stat "$T/tl.data" pids)
t0=$(rec_stat "$T/tl.data" time_start_ns)
t1=$(rec_stat "$T/tl.data" time_end_ns)
# headers "comm pid/tid S.US: COUNT EVENT:"; the first frame after each is the leaf (comm: the
# workload's, or perch's for a tick between the launched child's fork and its exec)
read -r entries counts outside others < <(awk -v p="$pid" -v t0="$t0" -v t1="$t1" '
	/^[^\t]/ && NF >= 5 { n++; c += $(NF - 1); split($2, id, "/"); if (id[1] != p || ($1 != "shares" && $1 != "perch")) o++
		t = $3; sub(":", "", t); split(t, f, "."); ns = f[1] * 1e9 + f[2] * 1e3
		if (ns < t0 - 1e3 || ns > t1) out++ }
	END { print n + 0, c + 0, out + 0, o + 0 }' "$T/tl.script")
if [ $rc -eq 0 ] && [ "$counts" -eq "$sampled" ] && [ "$entries" -eq "$sampled" ] && [ "$sampled" -gt 0 ]; then
	ok "tl: $entries entries, counts adding up to the report's $sampled samples"
else
	bad "tl counts" "exit $rc, $entries entries with counts $counts for $sampled samples: $(head -2 "$T/tl.err")"
fi
if [ "$outside" -eq 0 ] && [ "$others" -eq 0 ]; then
	ok "tl: every time inside the recording ($t0-$t1 ns), every entry pid $pid (comm shares, or perch before its exec)"
else
	bad "tl times" "$outside entries outside $t0-$t1 ns, $others not shares/$pid: $(grep -v "^shares\|^	\|^$" "$T/tl.script" | head -2)"
fi
# leaf functions: entries against folded self samples
awk '/^[^\t]/ { leaf = 1; next } leaf && /^\t/ { print $2; leaf = 0 }' "$T/tl.script" | sort | uniq -c |
	awk '{ print $2, $1 }' | sort >"$T/tl.leaves"
# (folded marks kernel frames NAME_[k])
folded "$T/tl.data" | awk '{ n = split($1, f, ";"); sub(/_\[k\]$/, "", f[n]); s[f[n]] += $2 }
	END { for (k in s) print k, s[k] }' |
	sort >"$T/tl.self"
if diff -q "$T/tl.leaves" "$T/tl.self" >/dev/null && grep -q "^work_a " "$T/tl.leaves"; then
	ok "tl: entries per leaf function = folded self samples ($(wc -l <"$T/tl.self") functions; work_a $(awk '$1 == "work_a" { print $2 }' "$T/tl.self"))"
else
	bad "tl leaves" "differ from folded self: $(diff "$T/tl.leaves" "$T/tl.self" | head -4 | tr '\n' ' ')"
fi

perch_record plain -- "$WL/shares" 0.3
expect "no timeline" 64 "no sample times: record with --timeline" -- "$PERCH" script -i "$T/plain.data"
expect "no recording" 66 "cannot open recording" -- "$PERCH" script "$T/missing.data"
it_end
